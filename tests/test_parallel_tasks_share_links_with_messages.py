"""Parallel tasks and Batsim's messages on one linear system, stepped as ptask_L07 steps it.

Measured with a real Batsim 4.2.1 + SimGrid 3.32 (built outside the repository) driven by
joulesim's deciders in their own process, 2026-11-28; the inputs and Batsim's messages are in
tests/data/batsim_measured/links32_ptasks (32 Taurus-like hosts in a <cluster> with 1.25 GBps
links and backbone, 150 parallel-homogeneous jobs with and without transfers; see its README).

What they guard:
- a message between Batsim's actors (1 byte) whose route crosses a link that a job's task uses
  takes its fair share of that link, and the task held back by that link slows down while it is
  there (SimGrid's fair-bottleneck rule; the backbone's half for each): a 16-host job's end moves
  by 0.6 ns when another job's end message crosses the backbone;
- every task's progress moves at each step of the clock by its rate x the step, and a task is
  over when less than 1e-14 of it is left; its latency too is decremented at each step and over
  below 1e-9 s (HostL07Model::update_actions_state). The last bits of the clock decide whether a
  task's end and another actor's event fall in one step or two, hence Batsim's message grouping.
Before, joulesim solved the tasks apart from the messages and ended each task at its predicted
time: on the reducepc case below 3 messages came in another order; with easy and shutdown, 13
of 150 jobs started elsewhere or later, the messages differing from the 77th of 802.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import joulesim
from joulesim.simulator.engine import resumable_batsim_actors, simulation
from test_batsim_reference_cases import assert_same_messages, jobs_rows, joulesim_messages

MEASURED = Path(__file__).parent / "data" / "batsim_measured"
CASE = MEASURED / "links32_ptasks"
REPLAYS = {  # the measured run: its folder, platform, workload, the decider and its options
    "reducepc60": ("links32_ptasks", "energy_links32.xml", "links32_ptasks.json",
                   ["reducepc", "--option", "budget=60%", "--option", "start=3600", "--option", "end=14400"]),
    "easy_t300": ("links32_ptasks", "energy_links32.xml", "links32_ptasks.json", ["easy", "--option", "t_idle=300"]),
    "fcfs": ("links64_mixed", "energy_links64.xml", "links64_mixed.json", ["fcfs"]),
}


def clocks_of_job_ends(monkeypatch, workload: dict, tmp_path) -> dict[str, str]:
    """The clock (to 1e-12 s, as Batsim's log prints it) of the message that tells each job's
    end: the clock before Batsim's number format rounds the message's `now` to 1e-6."""
    seen: dict[str, str] = {}
    # Batsim's actors interpreted (a compiled module's functions call each other directly: a
    # patched name would not be seen), with the number format spied on.
    monkeypatch.setattr(simulation, "BatsimActors", resumable_batsim_actors.BatsimActors)
    format_as_batsim = resumable_batsim_actors.as_batsim_writes

    def spy(message):
        for event in message["events"]:
            if event["type"] == "JOB_COMPLETED":
                seen[event["data"]["job_id"]] = "%.12f" % message["now"]
        return format_as_batsim(message)

    monkeypatch.setattr(resumable_batsim_actors, "as_batsim_writes", spy)
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    joulesim.simulate(str(CASE / "energy_links32.xml"), str(path), "fcfs")
    return seen


def two_jobs(first: str | None) -> dict:
    """Job 2: 16 hosts, 120 Gflop each and 5e8 bytes between each pair, at t=120; job 0, at
    t=60 on 8 hosts: `first` (c3: the same work; c2: computation only), or none."""
    profiles = json.loads((CASE / "links32_ptasks.json").read_text())["profiles"]
    jobs = [{"id": 2, "subtime": 120, "res": 16, "walltime": 20000, "profile": "c3"}]
    if first is not None:
        jobs.insert(0, {"id": 0, "subtime": 60, "res": 8, "walltime": 20000, "profile": first})
    return {"nb_res": 32, "jobs": jobs, "profiles": profiles}


def test_a_task_alone_ends_as_in_batsim(monkeypatch, tmp_path):
    assert clocks_of_job_ends(monkeypatch, two_jobs(None), tmp_path) == {"w0!2": "240.000000097100"}


def test_a_job_end_message_takes_its_share_of_a_busy_backbone_and_slows_the_task_there(monkeypatch, tmp_path):
    """Job 0's end message (host0 to the master, across the backbone) gets half the backbone
    beside job 2's transfers: its byte takes 1.6 ns instead of 0.8 ns (Batsim: 180.0000000978,
    not 180.0000000970), and job 2, held back there meanwhile, ends 0.7 ns later than alone."""
    assert clocks_of_job_ends(monkeypatch, two_jobs("c3"), tmp_path) == {"w0!0": "180.000000097800",
                                                                          "w0!2": "240.000000097800"}


def test_a_message_beside_a_task_that_uses_no_link_is_not_slowed(monkeypatch, tmp_path):
    assert clocks_of_job_ends(monkeypatch, two_jobs("c2"), tmp_path) == {"w0!2": "240.000000097200",
                                                                          "w0!0": "360.000000049000"}


@pytest.mark.parametrize("case, process", [(case, False) for case in sorted(REPLAYS)] + [("fcfs", True)])
def test_deciders_on_parallel_tasks_get_batsim_s_messages_and_jobs(tmp_path, case, process):
    """reducepc: 532 messages; easy with shutdown after 300 s idle: 802; fcfs on 64 hosts where
    many jobs reach their walltime: 968, every one line for line, and every job's times.

    At a walltime Batsim's job actor stops waiting for its task, reports and ends, and only its
    end cancels the task: meanwhile the task still loads the links its report crosses (without
    that, 18 jobs of the fcfs case started 1 us off, in the 6th decimal). `process`: the
    decider in its own process (joulesim decide, over ZeroMQ), as Batsim ran it."""
    folder, platform, workload, decider = REPLAYS[case]
    command = [sys.executable, "-m", "joulesim.cli.main", "run", *([] if process else ["--in-process"]), "-d", *decider,
               "-p", platform, "-w", workload, "-E", "-e", str(tmp_path / "out"), "-v", "network-only"]
    run = subprocess.run(command, cwd=MEASURED / folder, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    batsim = [(m["dir"], m["msg"]) for m in map(json.loads, gzip.open(MEASURED / folder / f"{case}_messages.jsonl.gz",
                                                                      "rt"))]
    got = joulesim_messages(run.stderr)
    for message in batsim + got:  # (the workload's folder is where each ran)
        for event in message[1]["events"]:
            if event["type"] == "SIMULATION_BEGINS":
                event["data"]["workloads"] = {}
    assert_same_messages(batsim, got)
    assert jobs_rows(tmp_path / "out_jobs.csv") == jobs_rows(MEASURED / folder / f"{case}_out_jobs.csv")


@pytest.mark.parametrize("first", ["c2", "c3"])
def test_the_per_time_grouping_runs_the_same_jobs(tmp_path, first):
    """The other grouping (no Batsim actors) keeps its own runner; the jobs end at the same
    microsecond."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps(two_jobs(first)))
    result = joulesim.simulate(str(CASE / "energy_links32.xml"), str(path), "fcfs", event_grouping="per-time")
    assert sorted(round(t, 6) for t in result.jobs["finish_time"]) == sorted(
        [240.0, 180.0 if first == "c3" else 360.0])
