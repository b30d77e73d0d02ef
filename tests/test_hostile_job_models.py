"""Issue 46, job models, workloads and platforms: inputs that used to end in a traceback, a hang,
a silent acceptance or a wrong answer (each test names the case it guards).

Workflows at scale (Batsim's -W): 1 -> 5,000 tasks, 3,000 -> 1, a chain, tasks whose children
each have a child, a random DAG, all in-process with the fcfs decider on 4 hosts.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest
from scripted_decider import ScriptedDecider, submitted

import joulesim
from joulesim.deciders.common.decider_options import label_ids_option
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.platform.platform_xml_export import export_xml
from joulesim.simulator.platform.vivaldi_coordinates import parse_coordinates
from joulesim.simulator.workload.dax_workflow import load_workflow
from joulesim.simulator.workload.external_events import load_external_events
from joulesim.simulator.workload.profiles import MAX_COM_VALUES
from joulesim.simulator.workload.smpi_traces import load_smpi_traces
from joulesim.simulator.workload.usage_traces import load_usage_traces
from joulesim.simulator.workload.workload_loader import load_workload, workload_from_bytes

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


# ====================================================================== sizes before allocations


def test_a_batsim5_parallel_task_of_200000_executors_is_refused_before_its_matrix_is_built():
    """Batsim 5 fills a ParallelTaskProfile's missing `com` with n x n zeros: [0] * 4e10 was a
    MemoryError. The size is checked first, naming the profile and the limit."""
    doc = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 4, "profile": "huge"}],
           "profiles": {"huge": {"type": "ParallelTaskProfile", "cpu": [1e9] * 200_000}}}
    with pytest.raises(InputError) as raised:
        workload_from_bytes("w.json", json.dumps(doc).encode(), "w0")
    assert str(raised.value).startswith("w.json: profile 'huge': field 'cpu': lists 200,000 executors")
    assert f"joulesim's limit of {MAX_COM_VALUES:,}" in str(raised.value) and raised.value.exit_code == 2
    # Batsim 4's form says the same before reading a com list of the wrong size
    doc["profiles"]["huge"] = {"type": "parallel", "cpu": [1e9] * 4000, "com": [0]}
    with pytest.raises(InputError, match="lists 4,000 executors, so its communication matrix"):
        workload_from_bytes("w.json", json.dumps(doc).encode(), "w0")
    doc["profiles"]["huge"] = {"type": "ParallelTaskProfile", "cpu": [1e9] * 3000}  # within the limit
    doc["jobs"][0]["res"] = 3000
    assert workload_from_bytes("w.json", json.dumps(doc).encode(), "w0").jobs[0].profile == "huge"


# ====================================================================== named pipes


@contextmanager
def fifo_nobody_writes(path: Path):
    """A FIFO no process writes to, as the loaders see it. Opening it for reading would wait
    for ever; so that a regression fails instead of hanging, a thread waits to open it for
    writing (which returns once a reader opens it) and closes it at once: a loader that opens it
    then reads an empty file. At the end the test opens it itself to let that thread go."""
    os.mkfifo(path)

    def writer() -> None:
        with open(path, "wb"):
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield str(path)
    finally:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # (never waits)
        thread.join()
        os.close(fd)


NAMED_PIPE = "is a named pipe (FIFO)"


def test_a_fifo_as_a_usage_trace_rank_file_is_refused(tmp_path):
    with fifo_nobody_writes(tmp_path / "rank0.txt"):
        (tmp_path / "listing.txt").write_text("rank0.txt\n")
        with pytest.raises(InputError, match=rf"rank0.txt: p: the trace of rank 0 .*: {re.escape(NAMED_PIPE)}"):
            load_usage_traces(str(tmp_path / "listing.txt"), "p")
    with fifo_nobody_writes(tmp_path / "fifo_listing.txt"):
        with pytest.raises(InputError, match=re.escape(NAMED_PIPE)):
            load_usage_traces(str(tmp_path / "fifo_listing.txt"), "p")


def test_a_fifo_as_an_smpi_rank_file_is_refused(tmp_path):
    with fifo_nobody_writes(tmp_path / "rank0.txt"):
        (tmp_path / "listing.txt").write_text("rank0.txt\n")
        with pytest.raises(InputError, match=re.escape(NAMED_PIPE)):
            load_smpi_traces(str(tmp_path / "listing.txt"))


def test_a_fifo_as_a_dax_is_refused(tmp_path):
    with fifo_nobody_writes(tmp_path / "workflow.dax") as path:
        with pytest.raises(InputError, match=f"workflow.dax: file: {re.escape(NAMED_PIPE)}"):
            load_workflow(path, "wf0")


def test_a_fifo_as_export_xml_input_and_as_a_platform_is_refused(tmp_path):
    with fifo_nobody_writes(tmp_path / "platform.json") as path:
        with pytest.raises(InputError, match=f"platform.json: platform: {re.escape(NAMED_PIPE)}"):
            export_xml(path)
        with pytest.raises(InputError, match=re.escape(NAMED_PIPE)):
            load_platform(path)


def test_a_fifo_as_a_workload_or_an_events_file_is_refused(tmp_path):
    with fifo_nobody_writes(tmp_path / "workload.json") as path:
        with pytest.raises(InputError, match=re.escape(NAMED_PIPE)):
            load_workload(path, "w0")
    with fifo_nobody_writes(tmp_path / "events.txt") as path:
        with pytest.raises(InputError, match=re.escape(NAMED_PIPE)):
            load_external_events(path, 4)


def test_an_anonymous_pipe_is_still_read(tmp_path):
    """What the shell's `-W <(command)` gives: a pipe that already has its writer."""
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as out:
        out.write("<adag><job id='a' runtime='3'/></adag>")
    try:
        assert list(load_workflow(f"/dev/fd/{read_end}", "wf0").tasks) == ["a"]
    finally:
        os.close(read_end)


# ====================================================================== accepted without a word


@pytest.mark.parametrize("text", ["", "\n\n", " \n"])
def test_an_empty_events_file_is_refused(tmp_path, text):
    (tmp_path / "events.txt").write_text(text)
    with pytest.raises(InputError, match="events.txt: file: holds no event"):
        load_external_events(str(tmp_path / "events.txt"), 4)


@pytest.mark.parametrize("rank_text", ["", "\n# nothing\n", "1 m_usage 0.5 1e9\n"])
def test_a_usage_trace_rank_without_lines_is_refused(tmp_path, rank_text):
    (tmp_path / "rank0.txt").write_text(rank_text)
    (tmp_path / "rank1.txt").write_text("1 m_usage 0.5 1e9\n")
    (tmp_path / "listing.txt").write_text("rank0.txt\nrank1.txt\n")
    with pytest.raises(InputError, match=r"rank0.txt: p: the trace of rank 0 .*: has no line for rank 0"):
        load_usage_traces(str(tmp_path / "listing.txt"), "p")


@pytest.mark.parametrize("rank_text", ["", "\n# nothing\n"])
def test_an_empty_smpi_rank_file_is_refused(tmp_path, rank_text):
    (tmp_path / "rank0.txt").write_text("0 init\n0 compute 1e9\n")
    (tmp_path / "rank1.txt").write_text(rank_text)
    (tmp_path / "listing.txt").write_text("rank0.txt\nrank1.txt\n")
    with pytest.raises(InputError, match=r"rank1.txt: the trace of rank 1 \(listed in .*\): has no action line"):
        load_smpi_traces(str(tmp_path / "listing.txt"))
    (tmp_path / "rank1.txt").write_text("1 finalize\n")  # (an action that takes no time is one)
    assert load_smpi_traces(str(tmp_path / "listing.txt")).nb_ranks == 2


def test_a_storage_label_mapped_twice_is_refused():
    with pytest.raises(JoulesimError, match=r"each label once \(here 'a' is mapped to 2 and to 3\)"):
        label_ids_option("FCFS", {"storage_mapping": "a:2,a:3,b:3"}, "storage_mapping")
    assert label_ids_option("FCFS", {"storage_mapping": "a:2,b:3"}, "storage_mapping") == {"a": 2, "b": 3}


def test_a_megabyte_of_coordinates_is_refused(tmp_path):
    """SimGrid reads three numbers with std::stod; "0.000...01" of a megabyte is a valid decimal."""
    huge = "0." + "0" * 1_000_000 + "1 0 0"
    with pytest.raises(InputError, match="coordinates: is 1,000,007 characters long, more than joulesim's limit of 256"):
        parse_coordinates("p.xml", "host 'h'", huge)
    assert parse_coordinates("p.xml", "host 'h'", "-1.2345678901234567e-300 2.5 0") == (-1.2345678901234567e-300, 2.5, 0.0)
    path = tmp_path / "p.xml"
    path.write_text('<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">'
                    f'<host id="master" speed="1Gf"/><host id="h" speed="1Gf" coordinates="{huge}"/></zone></platform>')
    with pytest.raises(InputError, match="host 'h', coordinates: is 1,000,007 characters long"):
        load_platform(str(path))


def test_a_dax_without_jobs_is_refused(tmp_path):
    for text in ("<adag/>", "<adag xmlns='http://pegasus.isi.edu/schema/DAX'><file name='f'/></adag>"):
        (tmp_path / "empty.dax").write_text(text)
        with pytest.raises(InputError, match=r"empty.dax: <adag>: has no <job>"):
            load_workflow(str(tmp_path / "empty.dax"), "wf0")


def test_a_registered_parallel_task_of_200000_executors_is_refused_before_its_matrix_is_built():
    """The same through batprotocol (an EDC's RegisterProfileEvent, Batsim 5): the profile's Batsim
    4 form was built before any check, a MemoryError; now the decision is refused, naming it."""
    from joulesim.protocol.batprotocol.batsim4_bridge import batsim4_profile
    from joulesim.protocol.errors import DecisionError

    with pytest.raises(DecisionError, match=r"REGISTER: cpu lists 200,000 executors, .* limit of 10,000,000"):
        batsim4_profile("ParallelTaskProfile", {"computation_vector": [1e9] * 200_000}, "REGISTER")
    assert batsim4_profile("ParallelTaskProfile", {"computation_vector": [1e9] * 3}, "REGISTER")["com"] == [0] * 9
