"""Issue 46, job models, workloads and platforms: inputs that used to end in a traceback, a hang,
a silent acceptance or a wrong answer (each test names the case it guards).

Workflows at scale (Batsim's -W): 1 -> 5,000 tasks, 3,000 -> 1, a chain, tasks whose children
each have a child, a random DAG, all in-process with the fcfs decider on 4 hosts.
"""

from __future__ import annotations

import random

import pytest
from scripted_decider import ScriptedDecider, submitted

import joulesim

EMPTY_WORKLOAD = {"nb_res": 4, "jobs": [], "profiles": {}}


def write_dax(tmp_path, tasks: list[str], edges: list[tuple[str, str]], runtime: float = 1.0) -> str:
    """A DAX of `tasks` (each `runtime` s) and (parent, child) `edges`."""
    parents: dict[str, list[str]] = {}
    for parent, child in edges:
        parents.setdefault(child, []).append(parent)
    lines = ["<adag>", *(f'<job id="{task}" runtime="{runtime:g}"/>' for task in tasks)]
    lines += [f'<child ref="{child}">' + "".join(f'<parent ref="{p}"/>' for p in ps) + "</child>"
              for child, ps in parents.items()]
    path = tmp_path / "workflow.dax"
    path.write_text("\n".join(lines + ["</adag>"]))
    return str(path)


def _names(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i:05d}" for i in range(count)]


def _shape(name: str) -> tuple[list[str], list[tuple[str, str]], float]:
    """(tasks, edges, makespan on 4 hosts of 1 s tasks under fcfs)."""
    if name == "fan_out":  # the case: it stopped at t=1 with tasks "left waiting"
        children = _names("c", 5000)
        return ["root", *children], [("root", c) for c in children], 1 + 5000 / 4
    if name == "fan_in":
        parents = _names("p", 3000)
        return [*parents, "sink"], [(p, "sink") for p in parents], 3000 / 4 + 1
    if name == "chain":
        tasks = _names("t", 2000)
        return tasks, list(zip(tasks, tasks[1:])), 2000
    if name == "children_with_a_child":  # ends while the submitter submits: a deadlock in Batsim
        first, second = _names("a", 1000), _names("b", 1000)
        return ["root", *first, *second], [("root", a) for a in first] + list(zip(first, second)), 1 + 2000 / 4
    assert name == "random"
    rng = random.Random(46)
    tasks = _names("x", 1500)
    edges = {(tasks[rng.randrange(max(0, i - 40), i)], tasks[i]) for i in range(1, len(tasks)) for _ in range(rng.randint(1, 3))}
    return tasks, sorted(edges), None


@pytest.mark.parametrize("shape", ["fan_out", "fan_in", "chain", "children_with_a_child", "random"])
def test_workflows_at_scale_run_every_task_after_its_parents(tmp_path, shape):
    tasks, edges, makespan = _shape(shape)
    result = joulesim.simulate("small4", EMPTY_WORKLOAD, "fcfs", workflows=[write_dax(tmp_path, tasks, edges)])
    jobs = result.jobs
    assert len(jobs) == len(tasks) and set(jobs["final_state"]) == {"COMPLETED_SUCCESSFULLY"}
    task_of = dict(zip(jobs["profile"].str.removeprefix("wf0_"), zip(jobs["starting_time"], jobs["finish_time"])))
    assert set(task_of) == set(tasks)
    for parent, child in edges:
        assert task_of[child][0] >= task_of[parent][1], (parent, child)
    if makespan is not None:  # (Batsim's actors add microseconds of messages)
        assert jobs["finish_time"].max() == pytest.approx(makespan, abs=0.01)


def test_a_workflow_fan_out_in_per_time_grouping(tmp_path):
    tasks, edges, makespan = _shape("children_with_a_child")
    result = joulesim.simulate("small4", EMPTY_WORKLOAD, "fcfs", workflows=[write_dax(tmp_path, tasks, edges)],
                               event_grouping="per-time")
    assert len(result.jobs) == len(tasks) and result.jobs["finish_time"].max() == pytest.approx(makespan)


def test_a_killed_workflow_task_lets_its_children_run(tmp_path):
    """The server called a workflow back for a kill only when a later decision came: a kill
    answered by no other decision left the workflow waiting for ever."""
    def script(decider, message):
        for job in submitted(message):
            decider.execute_job(job["job_id"], "0")
            if job["job_id"] == "wf0!0":
                decider.call_me_later(5)
        if any(event["type"] == "REQUESTED_CALL" for event in message["events"]):
            decider.kill_jobs(["wf0!0"])
    path = write_dax(tmp_path, ["a", "b"], [("a", "b")], runtime=10)
    for grouping in ("batsim", "per-time"):
        jobs = joulesim.simulate("small4", EMPTY_WORKLOAD, ScriptedDecider(script), workflows=[path],
                                 event_grouping=grouping).jobs
        assert list(jobs["final_state"]) == ["COMPLETED_KILLED", "COMPLETED_SUCCESSFULLY"], grouping
        assert list(jobs["starting_time"]) == pytest.approx([0, 5], abs=1e-3), grouping
