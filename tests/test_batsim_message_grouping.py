"""Which events reach the decider together, and when: Batsim 4.2.1's messages (issue 24 §2).

Expected values come from Batsim's code and SimGrid 3.32's kernel (see simulator/engine/batsim_actors.py
and simulator/engine/simgrid_kernel.py), checked against real Batsim 4.2.1 and batsched built outside the
repository; the public case of ../shared/reference/batsim-message-grouping/ is replayed line by line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripted_decider import ScriptedDecider

from conftest import jobs_by_id, read_csv, run_in_process, write_batsim_clusters, write_platform, write_workload

HOP = 1.0 / 1e9  # a message alone on its route: one byte at the route's slowest 1 GB/s


def cluster(tmp_path: Path) -> str:
    """4 nodes; their messages to the master cross 1 GB/s: each takes 1e-9 s, as every message
    from a job to Batsim's server and every decision on its way back."""
    return write_batsim_clusters(tmp_path, 4)


def fcfs(decider: ScriptedDecider, message: dict, hosts: int = 4, widest: int | None = None) -> None:
    """FCFS on the lowest free host ids, each job on as many hosts as it asks (as log_decider.py);
    jobs wider than `widest` hosts are rejected."""
    from joulesim.protocol.interval_set import canonical_runs, expand_runs
    state = decider.__dict__.setdefault("fcfs", {"free": set(range(hosts)), "queue": []})
    for event in message["events"]:
        if event["type"] == "JOB_SUBMITTED":
            state["queue"].append((event["data"]["job_id"], event["data"]["job"]["res"]))
        elif event["type"] == "JOB_COMPLETED":
            state["free"] |= set(expand_runs(canonical_runs(event["data"]["alloc"])[0]))
    for job_id, res in [job for job in state["queue"] if widest is not None and job[1] > widest]:
        state["queue"].remove((job_id, res))
        decider.reject_job(job_id)
    while state["queue"] and state["queue"][0][1] <= len(state["free"]):
        job_id, res = state["queue"].pop(0)
        hosts = sorted(state["free"])[:res]
        state["free"] -= set(hosts)
        decider.execute_job(job_id, hosts)


def grouped(decider: ScriptedDecider) -> list[tuple[float, list[tuple[str, str]]]]:
    return [(m["now"], [(e["type"], e["data"].get("job_id", "") if isinstance(e["data"], dict) else "")
                        for e in m["events"]]) for m in decider.messages]


def test_completions_in_one_step_share_a_message_the_next_one_waits_for_the_decider(tmp_path):
    # One message starts a, b and c at t=1 on hosts 0, 1, 2: each EXECUTE_JOB is a message to the
    # server, so they start at 1+h, 1+2h, 1+3h (h = 1e-9 s). a and b end in one step (b's rest,
    # 0.5e-9 s, is under SimGrid's 1e-9 s precision): one message, a first (its sleep is older).
    # c ends 2h after a: its completion reaches the server while the decider handles a's and b's,
    # so it comes alone, in the next message, at the same microsecond.
    workload = write_workload(tmp_path, [
        {"id": "a", "subtime": 1, "res": 1, "profile": "a"},
        {"id": "b", "subtime": 1, "res": 1, "profile": "b"},
        {"id": "c", "subtime": 1, "res": 1, "profile": "c"},
    ], {"a": {"type": "delay", "delay": 10}, "b": {"type": "delay", "delay": 10 - 0.5e-9},
        "c": {"type": "delay", "delay": 10 + HOP}})
    decider = ScriptedDecider(fcfs)
    run_in_process(decider, cluster(tmp_path), [workload], str(tmp_path / "out"), event_grouping="batsim")
    completions = [(round(now, 6), ids) for now, ids in grouped(decider) if ids[0][0] == "JOB_COMPLETED"]
    assert completions == [(11.0, [("JOB_COMPLETED", "w0!a"), ("JOB_COMPLETED", "w0!b")]),
                           (11.0, [("JOB_COMPLETED", "w0!c")])]


def test_per_time_grouping_puts_every_event_of_a_time_in_one_message(tmp_path):
    workload = write_workload(tmp_path, [
        {"id": "a", "subtime": 1, "res": 1, "delay": 10},
        {"id": "b", "subtime": 1, "res": 1, "delay": 10},
        {"id": "c", "subtime": 1, "res": 1, "delay": 10},
    ])
    decider = ScriptedDecider(fcfs)
    run_in_process(decider, cluster(tmp_path), [workload], str(tmp_path / "out"), event_grouping="per-time")
    assert grouped(decider)[2:] == [
        (11.0, [("JOB_COMPLETED", "w0!a"), ("JOB_COMPLETED", "w0!b"), ("JOB_COMPLETED", "w0!c")]),
        (11.0, [("SIMULATION_ENDS", "")])]


def test_exact_times_of_messages_and_jobs(tmp_path):
    # The submitter and the server share the master host: a submission reaches the server one
    # hop (master -> master through its cluster link, 1 GB/s) after its time. The submitter then
    # says goodbye; its message is in the server's mailbox before the decider's EXECUTE_JOB, so
    # the job starts two hops after the call. The decider reads times to the microsecond.
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 2, "res": 1, "delay": 5}])
    decider = ScriptedDecider(fcfs)
    records = run_keeping_records(decider, cluster(tmp_path), workload)
    # In float arithmetic, as SimGrid's clock adds the steps: the hello and the first call's
    # SCHED_READY cross the master's link one after the other (t = 1e-9, 2e-9), cutting the
    # submitter's sleep (until 2 s) in two steps, so the submission reaches the server at
    # 2.0000000009999996 (2 s + 1 hop, less a rounding); two hops later the job starts.
    assert (records["w0!a"].start, records["w0!a"].finish) == (2.000000003, 7.000000003)
    assert abs(records["w0!a"].start - (2.0 + 3 * HOP)) < 1e-15
    assert [m["now"] for m in decider.messages] == [0.0, 2.0, 2.0, 7.0, 7.0]
    from joulesim.simulator.engine.ipc_routes import MASTER, IpcRoutes
    from joulesim.simulator.platform.platform_loader import load_platform
    routes = IpcRoutes(load_platform(cluster(tmp_path)))
    assert routes.route(0, MASTER).rate == 1e9 and routes.route(MASTER, MASTER).rate == 1e9


def run_keeping_records(decider, platform: str, workload: str, **config):
    """run_in_process, returning the simulation's job records (their exact times)."""
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    sim = Simulation(SimulationConfig(platform=load_platform(platform), workloads=[load_workload(workload, "w0")],
                                      export_prefix=None, **config), DeciderLink(InProcessRequester(decider)))
    sim.run()
    return sim.records


def test_the_last_submission_and_the_notify_come_in_separate_messages(tmp_path):
    # The submitter sends its JOB_SUBMITTED, then its goodbye: the server has sent the first
    # to the decider before the goodbye arrives (Batsim's NOTIFY no_more_static_job_to_submit).
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 3, "res": 1, "delay": 5}])
    decider = ScriptedDecider(fcfs)
    run_in_process(decider, cluster(tmp_path), [workload], str(tmp_path / "out"), event_grouping="batsim")
    types = [[t for t, _ in ids] for _, ids in grouped(decider)]
    assert types == [["SIMULATION_BEGINS"], ["JOB_SUBMITTED"], ["NOTIFY"], ["JOB_COMPLETED"], ["SIMULATION_ENDS"]]


def test_a_decision_stamped_ahead_of_the_clock_waits_for_its_time(tmp_path):
    # Submitted at 2.9999996 s (hosts without links: messages are free, but for those between
    # actors on the master host, which cross SimGrid's loopback link in 1e-10 s). The decider
    # reads now = 3.000000 (Batsim's "%f") and stamps EXECUTE_JOB at 3.0: Batsim sleeps until
    # then, so the job starts at 3.0 (and the decision's hop to the server), not at 2.9999996.
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 2.9999996, "res": 1, "delay": 1}])

    def start(decider, message):
        for event in message["events"]:
            if event["type"] == "JOB_SUBMITTED":
                decider.execute_job(event["data"]["job_id"], [0])

    decider = ScriptedDecider(start)
    records = run_keeping_records(decider, platform, workload)
    assert decider.messages[1]["now"] == 3.0
    assert (records["w0!a"].start, records["w0!a"].finish) == (pytest.approx(3.0 + 1e-10, abs=1e-12),
                                                                pytest.approx(4.0 + 1e-10, abs=1e-12))
    decider = ScriptedDecider(start)
    records = run_keeping_records(decider, platform, workload, event_grouping="per-time")
    assert decider.messages[1]["now"] == 2.9999996
    assert (records["w0!a"].start, records["w0!a"].finish) == (2.9999996, 2.9999996 + 1)


def test_a_call_me_later_sleeps_at_least_ten_microseconds(tmp_path):
    # Batsim's waiter sleeps 1e-5 s when its target is closer than that (jobs_execution.cpp).
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 1, "res": 1, "delay": 1}])

    def script(decider, message):
        types = [e["type"] for e in message["events"]]
        if "JOB_SUBMITTED" in types:
            decider.call_me_later(message["now"] + 1e-7)
        if "REQUESTED_CALL" in types:
            decider.execute_job("w0!a", [0])

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"), event_grouping="batsim")
    calls = decider.events_of("REQUESTED_CALL")
    assert [now for now, _ in calls] == [round(1.0 + 1e-5, 6)]
    assert jobs_by_id(str(tmp_path / "out"))["a"]["starting_time"] == "1.000010"


def test_a_killed_job_leaves_no_step_behind(tmp_path):
    # The job's actor dies with its sleep: the simulation ends at the kill, not at the end the
    # job would have had (t=1000), which a leftover sleep would still reach.
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 1, "res": 1, "delay": 1000}])

    def script(decider, message):
        types = [e["type"] for e in message["events"]]
        if "JOB_SUBMITTED" in types:
            decider.execute_job("w0!a", [0])
            decider.call_me_later(5.0)
        if "REQUESTED_CALL" in types:
            decider.kill_jobs(["w0!a"])

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"), event_grouping="batsim")
    assert decider.messages[-1]["now"] == 5.0
    states = read_csv(str(tmp_path / "out_machine_states.csv"))
    assert float(states[-1]["time"]) == 5.0


PUBLIC_CASE = "batsim-message-grouping"


def test_the_public_case_gives_batsims_6001_messages_line_for_line(shared_reference, tmp_path):
    """Batsim 4.2.1's messages to a logging FCFS decider (its own process, written from the
    protocol alone), on 3,000 jobs and 32 hosts: the same messages, events and microseconds."""
    case = shared_reference / PUBLIC_CASE
    log = tmp_path / "ours.jsonl"
    endpoint = f"ipc://{tmp_path}/decider.sock"
    decider = subprocess.Popen([sys.executable, str(case / "log_decider.py"), endpoint],
                               env={**os.environ, "LOG_MESSAGES": str(log)})
    try:
        import joulesim
        joulesim.simulate(str(case / "platform32.xml"), str(case / "workload3000.json"),
                          socket_endpoint=endpoint, export=str(tmp_path / "out"))
    finally:
        assert decider.wait(timeout=60) == 0
    ours = log.read_text().splitlines()
    batsim = (case / "batsim_messages_fcfs.jsonl").read_text().splitlines()
    assert len(ours) == len(batsim) == 6001
    first_difference = next((i for i, (a, b) in enumerate(zip(ours, batsim)) if a != b), None)
    assert first_difference is None, f"message {first_difference}: ours {ours[first_difference]}, Batsim's {batsim[first_difference]}"
    # The jobs' times and allocations too (Batsim's output, columns it shares with ours).
    columns = ["job_id", "submission_time", "starting_time", "finish_time", "allocated_resources", "final_state"]
    theirs = {r["job_id"]: [r[c] for c in columns] for r in read_csv(str(case / "batsim_fcfs_jobs.csv"))}
    mine = {r["job_id"]: [r[c] for c in columns] for r in read_csv(str(tmp_path / "out_jobs.csv"))}
    assert mine == theirs


def workload_with_ties(path: Path, seed: int, count: int) -> str:
    """Jobs arriving together or close, with few distinct delays and walltimes: many ties."""
    import random

    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0
    for number in range(count):
        t += rng.choice([0, 0, 0, 1, 2, 5])
        delay = rng.choice([1, 2, 3, 5, 10, 10, 20, 0.5, 7.25])
        res = rng.choice([1, 1, 2, 4, 8, 16, 32])
        walltime = rng.choice([-1, 2 * delay, delay, delay / 2, 30])
        profiles[f"d{delay}"] = {"type": "delay", "delay": delay}
        job = {"id": number, "subtime": t + rng.choice([0, 0, 0.1, 0.3333]), "res": res, "profile": f"d{delay}"}
        if walltime > 0:
            job["walltime"] = walltime
        jobs.append(job)
    jobs.sort(key=lambda job: job["subtime"])
    path.write_text(json.dumps({"nb_res": 32, "jobs": jobs, "profiles": profiles}))
    return str(path)


def test_rows_of_the_jobs_output_come_in_batsims_order_and_walltimes_as_batsim_counts(tmp_path):
    # Batsim's server writes a finished job's row when it takes the job's JOB_COMPLETED message,
    # and a rejected job's row when it takes the REJECT_JOB: the order below is real Batsim
    # 4.2.1's, run with this decider (as a process) on this workload and platform.
    platform = write_batsim_clusters(tmp_path, 32)
    workload = workload_with_ties(tmp_path / "ties.json", seed=21, count=60)
    decider = ScriptedDecider(lambda decider, message: fcfs(decider, message, hosts=32, widest=8))
    run_in_process(decider, platform, [workload], str(tmp_path / "out"), event_grouping="batsim")
    rows = read_csv(str(tmp_path / "out_jobs.csv"))
    assert [row["job_id"] for row in rows] == (
        "0 1 4 5 7 8 2 9 10 6 14 3 15 18 13 19 21 17 22 24 27 23 16 11 28 25 29 12 34 36 33 20 39 32 38 35 31 40 "
        "42 37 43 26 44 45 30 47 41 46 50 48 51 52 49 54 57 56 58 59 53 55").split()
    # A delay job whose walltime equals its delay has reached its walltime (do_delay_task:
    # the whole delay is slept only when it is shorter than the walltime).
    equal = [row for row in rows if row["final_state"] != "REJECTED"
             and float(row["requested_time"]) == float(row["execution_time"])]
    assert equal and all(row["final_state"] == "COMPLETED_WALLTIME_REACHED" for row in equal)


def test_events_while_the_decider_thinks_wait_for_its_reply_time(tmp_path):
    # The decider answers the call at t=1 with now = 6 (it "thinks" 5 s): Batsim's REQ-REP actor
    # sends SCHED_READY only at 6, so b's submission, a's end (both at t=2) and the submitter's
    # goodbye reach the decider together, at 6, in this order (as real Batsim 4.2.1 sent them).
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 1, "res": 1, "delay": 1},
                                         {"id": "b", "subtime": 2, "res": 1, "delay": 1}])

    def script(decider, message):
        for event in message["events"]:
            if event["type"] == "JOB_SUBMITTED":
                decider.execute_job(event["data"]["job_id"], [0] if event["data"]["job_id"] == "w0!a" else [1])
        if message["now"] == 1.0:
            decider.think(5.0)

    decider = ScriptedDecider(script)
    records = run_keeping_records(decider, platform, workload)
    assert grouped(decider)[1:] == [
        (1.0, [("JOB_SUBMITTED", "w0!a")]),
        (6.0, [("JOB_SUBMITTED", "w0!b"), ("JOB_COMPLETED", "w0!a"), ("NOTIFY", "")]),
        (7.0, [("JOB_COMPLETED", "w0!b")]),
        (7.0, [("SIMULATION_ENDS", "")])]
    assert records["w0!b"].start == pytest.approx(6.0 + 2e-10, abs=1e-12)  # (two loopback hops on the master)
