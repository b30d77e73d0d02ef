"""Batsim 5's External Decision Components on joulesim (protocol/batprotocol): the C EASY as an
EDC library (examples/deciders/c/easy_edc.c) in-process and isolated, the Python FCFS process
EDC (examples/deciders/fcfs_edc.py) over ZeroMQ, both formats, each giving exactly the schedule
of the same algorithm on the Batsim 4 path; what the translation does that Batsim 4 does not
(call-me-later ids, periodic calls, kills reported as completions); and every bad library,
init and message: one line naming the library, a non-zero exit, the outputs kept."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import joulesim
from joulesim.protocol.batprotocol.batsim4_bridge import BridgeState, HostFacts, _fill_cores_first
from joulesim.protocol.batprotocol.binary_format import decode_message, encode_message
from joulesim.protocol.batprotocol.json_format import decode_json, encode_json
from joulesim.protocol.batprotocol.edc_connection import EdcRequester
from joulesim.protocol.errors import JoulesimError
from joulesim.run_simulation import configured_edc_run, run_configured
from joulesim.simulation_inputs import simulation_config


def MASTER_HOPS(t: float):  # noqa: N802 (reads as a time)
    """`t` plus the few 1e-10 s hops of messages between Batsim's actors on the master host: on
    a platform without links they cross SimGrid's loopback link (1 byte at 10 GBps)."""
    return pytest.approx(t, abs=1e-8)

ROOT = Path(__file__).resolve().parents[1]
C_SOURCE = ROOT / "examples" / "deciders" / "c"
COMPILER = shutil.which("cc") or shutil.which("gcc")
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no C compiler (cc or gcc): the C EDC cannot be built")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "simulate", *args], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def c_build(tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("c_edc")
    made = subprocess.run(["make", "-C", str(C_SOURCE), f"BUILD={build}"], capture_output=True, text=True)
    assert made.returncode == 0, ("building examples/deciders/c failed; it needs make, pkg-config, libzmq, "
                                  "jansson and jsmn (Debian: libjsmn-dev):\n" + made.stdout + made.stderr)
    return build


def random_workload(seed: int, hosts: int, count: int) -> dict:
    import random

    rng = random.Random(seed)
    t, jobs, profiles = 0.0, [], {}
    for i in range(count):
        t += rng.expovariate(1 / 40)
        runtime = rng.choice([5, 30, 120, 600]) * rng.uniform(0.3, 1.0)
        jobs.append({"id": i, "subtime": round(t, 3), "res": rng.choice([1, 2, 4, hosts // 2, hosts, hosts + 1]),
                     "walltime": round(runtime * rng.uniform(1, 3), 2), "profile": f"p{i}"})
        if rng.random() < 0.1:
            del jobs[-1]["walltime"]
        profiles[f"p{i}"] = {"type": "delay", "delay": round(runtime, 3)}
    return {"nb_res": hosts, "jobs": jobs, "profiles": profiles}


# ------------------------------------------------------------------ same schedules
@needs_compiler
@pytest.mark.parametrize("case", ["default", "random"])
def test_the_c_easy_edc_library_gives_the_easy_schedule(c_build, tmp_path, case):
    workload = "default"
    extra = []
    if case == "random":
        workload = str(tmp_path / "w.json")
        Path(workload).write_text(json.dumps(random_workload(7, 16, 300)))
        extra = ["--mmax", "16"]
    done = cli("-p", "cluster32", "-w", workload, *extra, "--edc-library", str(c_build / "libeasy_edc.so"),
               "-e", str(tmp_path / "edc" / "out"))
    assert done.returncode == 0, done.stderr
    python = joulesim.simulate("cluster32", workload, "easy", mmax=16 if extra else 0, export=tmp_path / "py" / "out")
    assert len(python.jobs) >= 300
    edc_jobs = (tmp_path / "edc" / "out_jobs.csv").read_text()
    # The same schedule. Batsim 4 rounds the times it sends to the microsecond and Batsim 5 does
    # not: a job submitted when the clock reads 20773.999999999996 starts then under batprotocol,
    # at 20774 under Batsim 4, so its waiting time prints -0.000000 instead of 0.000000.
    assert edc_jobs.replace(",-0.000000,", ",0.000000,") == (tmp_path / "py" / "out_jobs.csv").read_text()
    # the same library in a child process, from the Python API
    joulesim.simulate("cluster32", workload, edc_library=c_build / "libeasy_edc.so", edc_isolated=True,
                      mmax=16 if extra else 0, export=tmp_path / "iso" / "out")
    assert (tmp_path / "iso" / "out_jobs.csv").read_text() == edc_jobs


@needs_compiler
def test_batsim_5_s_own_spellings_of_the_edc_options(c_build, tmp_path):
    """Batsim 5's --edc-library-str PATH STRING and --edc-library-file PATH FILE (its -s is our
    Batsim 4 endpoint, so only the long forms)."""
    (tmp_path / "init").write_text("{}")
    for option, init in (("--edc-library-str", "{}"), ("--edc-library-file", str(tmp_path / "init"))):
        done = cli("-p", "cluster32", "-w", "default", option, str(c_build / "libeasy_edc.so"), init,
                   "-e", str(tmp_path / option / "out"))
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "--edc-library-str" / "out_jobs.csv").read_bytes() == \
        (tmp_path / "--edc-library-file" / "out_jobs.csv").read_bytes()


@needs_compiler
def test_batsim_5_s_other_options_run_as_batsim_5_s_command_lines_give_them(c_build, tmp_path):
    """--energy-host (-E), --ee/--external-events (--events), the tracing switches (joulesim
    writes those files anyway; Batsim 5.0.0-rc2 never applies --trace-probe-data) and
    --edc-library-load-method dlopen: the same outputs as joulesim's own spellings."""
    # (one event that changes nothing: an events file without any is refused)
    (tmp_path / "events.txt").write_text('{"type": "machine_available", "resources": "0", "timestamp": 0}\n')
    library = str(c_build / "libeasy_edc.so")
    ours = cli("-p", "energy2", "-w", "mixed", "-E", "--events", str(tmp_path / "events.txt"), "--edc-library", library,
               "-e", str(tmp_path / "ours" / "out"))
    theirs = cli("-p", "energy2", "-w", "mixed", "--energy-host", "--ee", str(tmp_path / "events.txt"),
                 "--trace-machine-state", "--trace-pstate-changes", "--trace-probe-data", "auto",
                 "--edc-library-load-method", "DLOPEN", "--edc-library", library, "-e", str(tmp_path / "theirs" / "out"))
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    for name in ("jobs", "consumed_energy", "machine_states", "pstate_changes"):
        assert (tmp_path / "ours" / f"out_{name}.csv").read_bytes() == (tmp_path / "theirs" / f"out_{name}.csv").read_bytes()


@pytest.mark.parametrize("args, expected", [
    (["--energy-link"], "joulesim accounts the hosts' energy only, not the links'"),
    (["--edc-library-load-method", "dlmopen"], "use --edc-isolated"),
])
def test_batsim_5_options_joulesim_cannot_honour_are_refused(tmp_path, args, expected):
    done = cli("-p", "energy2", "-w", "mixed", *args, "--edc-library", str(tmp_path / "none.so"))
    assert done.returncode == 2 and expected in done.stderr and "Traceback" not in done.stderr


def run_fcfs_edc(tmp_path: Path, init: dict, *args: str) -> str:
    """`joulesim simulate ARGS` decided by examples/deciders/fcfs_edc.py in its own process (over
    ZeroMQ, given `init`); both must exit 0. The EDC's standard output."""
    endpoint = f"ipc://{tmp_path}/edc.sock"
    edc = subprocess.Popen([sys.executable, str(ROOT / "examples" / "deciders" / "fcfs_edc.py"), endpoint],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        done = cli(*args, "--edc-socket", endpoint, "--edc-init", json.dumps(init), "--timeout", "60")
        assert done.returncode == 0, done.stderr
        out, err = edc.communicate(timeout=30)  # (reads its output as it ends: no pipe left to fill)
        assert edc.returncode == 0, err
    finally:
        edc.kill()
    return out


@pytest.mark.parametrize("json_format", [False, True])
def test_the_python_process_edc_gives_the_fcfs_schedule(tmp_path, json_format):
    run_fcfs_edc(tmp_path, {"format_json": json_format}, "-p", "cluster32", "-w", "default",
                 "-e", str(tmp_path / "edc" / "out"))
    joulesim.simulate("cluster32", "default", "fcfs", export=tmp_path / "py" / "out")
    edc_jobs = (tmp_path / "edc" / "out_jobs.csv").read_text()  # (-0.000000: see the test above)
    assert edc_jobs.replace(",-0.000000,", ",0.000000,") == (tmp_path / "py" / "out_jobs.csv").read_text()


# ------------------------------------------------------------------ the translation
class PythonChannel:
    """An EDC written in Python behind the binary format (what a library does, without C)."""

    name = "python-edc"

    def __init__(self, decide, features: dict | None = None, json_format: bool = False):
        self.decide, self.features, self.seen, self.json = decide, features or {}, [], json_format

    def _encode(self, message: dict) -> bytes:
        return encode_json(message) + b"\0" if self.json else encode_message(message)

    def init(self, data: bytes):
        hello = {"batprotocol_version": "0.1.0", "decision_component_name": "t", "decision_component_version": "1",
                 "requested_simulation_features": self.features}
        return 0x2 if self.json else 0x1, self._encode({"now": 0.0, "events": [
            {"timestamp": 0.0, "event_type": "EDCHelloEvent", "event": hello}]})

    def exchange(self, data: bytes) -> bytes:
        message = decode_json(data) if self.json else decode_message(data)
        self.seen.append(message)
        events = self.decide(message)
        return self._encode({"now": message["now"], "events": [
            {"timestamp": message["now"], "event_type": kind, "event": body} for kind, body in events]})

    def close(self):
        pass


def run_channel(channel: PythonChannel, jobs: list[dict], hosts: str = "small4", grouping: str = "batsim",
                export: str | None = None, workload: dict | None = None, energy: bool = False,
                events: list[dict] | None = None) -> joulesim.RunResult:
    """Run `channel` as the EDC of a simulation (`jobs` of 10 s delays on 4 hosts, or `workload`;
    external `events`), in this process, configured as joulesim.simulate configures an EDC's run
    (with a time limit: a run that never ends fails rather than hangs)."""
    if workload is None:
        workload = {"nb_res": 4, "jobs": jobs, "profiles": {"d10": {"type": "delay", "delay": 10}}}
    edc = EdcRequester(channel, b"")

    config = configured_edc_run(edc, lambda flags: simulation_config(
        hosts, workload, export_prefix=export, energy=energy, master_host=None, add_role_to_hosts=None,
        platform_name=None, idle_power="irmasim", event_grouping=grouping, mmax=0, mmax_workload=False,
        sched_config=None, sched_config_file=None, events=events, disable_machine_state_tracing=False,
        verbosity="quiet", no_sched=False, workflows=[], workflow_starts=[], workflow_jobs_limit=0,
        ignore_beyond_last_workflow=False, timeout=60, progress=False, **flags))
    from joulesim.run_result import RunResult

    return RunResult(run_configured(config, edc, time_limit=30), export or "t")


class PybatsimLikeChannel(PythonChannel):
    """What pybatsim's batprotocol API sends (pybatsim/batsim/batsim.py): JSON only, a hello whose
    batprotocol_version is its placeholder "undefined" (or a given one), with its commit and
    scheduling constraints, and replies written by json.dumps without a trailing NUL."""

    def __init__(self, decide, version: str):
        super().__init__(decide, json_format=True)
        self.version = version

    def _encode(self, message: dict) -> bytes:
        return orjson.dumps(message)

    def init(self, data: bytes):
        hello = {"batprotocol_version": self.version, "requested_simulation_features": {
            "dynamic_registration": False, "profile_reuse": False, "acknowledge_dynamic_jobs": False,
            "forward_profiles_on_job_submission": False, "forward_profiles_on_jobs_killed": False,
            "forward_profiles_on_simulation_begins": False, "forward_unknown_external_events": False},
            "scheduling_constraints": {"compute_sharing": False, "storage_sharing": True,
                                       "job_allocation_validation_strategy": "MatchJobRequestExactly"},
            "decision_component_name": "UnknownEDC", "decision_component_version": "v0.0",
            "decision_component_commit": ""}
        return 0x2, self._encode({"now": 0.0, "events": [{"timestamp": 0.0, "event_type": "EDCHelloEvent",
                                                          "event": hello}]})


@pytest.mark.parametrize("version", ["undefined", "1.0.0", "0.1.0"])
def test_a_pybatsim_edc_runs_whatever_version_placeholder_its_hello_carries(version):
    def reject_all(message):
        return [("RejectJobEvent", {"job_id": e["event"]["job_id"]}) for e in message["events"]
                if e["event_type"] == "JobSubmittedEvent"]

    channel = PybatsimLikeChannel(reject_all, version)
    result = run_channel(channel, [{"id": i, "subtime": i, "res": 1, "profile": "d10"} for i in range(3)])
    assert result.jobs["final_state"].tolist() == ["REJECTED"] * 3


def requested(channel: PythonChannel) -> list[tuple[float, str, bool]]:
    return [(m["now"], e["event"]["call_me_later_id"], e["event"]["last_periodic_call"]) for m in channel.seen
            for e in m["events"] if e["event_type"] == "RequestedCallEvent"]


def test_periodic_and_one_shot_calls_arrive_on_batsim_5_s_grid():
    def decide(message):
        if message["events"][0]["event_type"] == "SimulationBeginsEvent":
            return [("CallMeLaterEvent", {"call_me_later_id": "fast", "when_type": "Periodic", "when": {
                        "period": 10, "time_unit": "Millisecond", "mode_type": "FinitePeriodNumber",
                        "mode": {"nb_periods": 3}}}),
                    ("CallMeLaterEvent", {"call_me_later_id": "slow", "when_type": "Periodic", "when": {
                        "period": 30, "time_unit": "Millisecond", "mode_type": "FinitePeriodNumber",
                        "mode": {"nb_periods": 2}}}),
                    ("CallMeLaterEvent", {"call_me_later_id": "once", "when_type": "OneShot",
                                          "when": {"time": 1, "time_unit": "Second"}})]
        return []

    channel = PythonChannel(decide)
    run_channel(channel, [])
    calls = requested(channel)
    # 10, 20, 30 ms (the third the last); 30 and 60 ms (the second the last); 1 s; the 30 ms
    # calls of both periods in one message
    # (each call comes a few 1e-10 s after its time: the messages between Batsim's actors on the
    # master host cross SimGrid's loopback link)
    assert calls == [(MASTER_HOPS(0.01), "fast", False), (MASTER_HOPS(0.02), "fast", False),
                     (MASTER_HOPS(0.03), "fast", True), (MASTER_HOPS(0.03), "slow", False),
                     (MASTER_HOPS(0.06), "slow", True), (MASTER_HOPS(1.0), "once", False)]  # (due together: by id)
    assert [len(m["events"]) for m in channel.seen if m["now"] == MASTER_HOPS(0.03)] == [2]


def test_periodic_calls_keep_their_grid_whatever_the_clock_reads():
    """Calls every 10, 100 and 1000 ms (150, 15 and 2 of them) beside jobs submitted every 0.3 s:
    the simulator's clock, adding up intervals, reaches some instants a hair early (it read
    0.8999999999999999 for 0.9), yet each call comes once, at its multiple of the period, the
    calls of one instant in one message, the last of each flagged (what Batsim 5's periodic test
    EDC checks)."""
    periods = {10: 150, 100: 15, 1000: 2}

    def decide(message):
        if message["events"][0]["event_type"] == "SimulationBeginsEvent":
            return [("CallMeLaterEvent", {"call_me_later_id": f"every{p}", "when_type": "Periodic", "when": {
                "period": p, "time_unit": "Millisecond", "mode_type": "FinitePeriodNumber", "mode": {"nb_periods": n}}})
                for p, n in periods.items()]
        return [("RejectJobEvent", {"job_id": e["event"]["job_id"]}) for e in message["events"]
                if e["event_type"] == "JobSubmittedEvent"]

    channel = PythonChannel(decide)
    run_channel(channel, [{"id": i, "subtime": i * 0.3, "res": 1, "profile": "d10"} for i in range(5)])
    calls = requested(channel)
    for period, count in periods.items():
        mine = [(now, last) for now, call, last in calls if call == f"every{period}"]
        assert len(mine) == count and [last for _, last in mine] == [False] * (count - 1) + [True]
        assert all(abs(now - k * period / 1000) < 1e-9 for k, (now, _) in enumerate(mine, start=1))
    at_once = [len([e for e in m["events"] if e["event_type"] == "RequestedCallEvent"]) for m in channel.seen
               if abs(m["now"] - 1.0) < 1e-9]
    assert at_once == [3]  # 1 s: a call of each period, in one message


def test_a_stopped_call_never_comes_and_the_edc_is_not_called_for_it():
    def decide(message):
        kinds = [e["event_type"] for e in message["events"]]
        if "SimulationBeginsEvent" in kinds:
            return [("CallMeLaterEvent", {"call_me_later_id": "tick", "when_type": "Periodic", "when": {
                "period": 1, "time_unit": "Second", "mode_type": "Infinite", "mode": {}}})]
        if message["now"] >= 3:
            return [("StopCallMeLaterEvent", {"call_me_later_id": "tick"})]
        return []

    channel = PythonChannel(decide)
    run_channel(channel, [])
    assert requested(channel) == [(MASTER_HOPS(1.0), "tick", False), (MASTER_HOPS(2.0), "tick", False),
                                  (MASTER_HOPS(3.0), "tick", False)]
    assert channel.seen[-1]["events"][-1]["event_type"] == "SimulationEndsEvent"
    assert all(m["events"] for m in channel.seen)  # (no empty message: the stopped call's time said nothing)


def test_a_killed_job_is_reported_completed_then_killed_as_batsim_5_does():
    def decide(message):
        out = []
        for event in message["events"]:
            if event["event_type"] == "JobSubmittedEvent":
                out.append(("ExecuteJobEvent", {"job_id": event["event"]["job_id"], "allocation": {
                    "host_allocation": "0", "executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
                    "executor_placement": {}}}))
                out.append(("CallMeLaterEvent", {"call_me_later_id": "kill", "when_type": "OneShot",
                                                 "when": {"time": 4, "time_unit": "Second"}}))
            if event["event_type"] == "RequestedCallEvent":
                out.append(("KillJobsEvent", {"job_ids": ["w0!1"]}))
        return out

    channel = PythonChannel(decide)
    result = run_channel(channel, [{"id": 1, "subtime": 0, "res": 1, "profile": "d10"}])
    killed = next(m for m in channel.seen if any(e["event_type"] == "JobsKilledEvent" for e in m["events"]))
    assert [e["event_type"] for e in killed["events"]] == ["JobCompletedEvent", "JobsKilledEvent"]
    completed, report = (e["event"] for e in killed["events"])
    assert (completed["job_id"], completed["state"], completed["return_code"]) == ("w0!1", "COMPLETED_KILLED", 2 ** 32 - 2)
    progress = report["progresses"][0]["wrapper"]
    assert report["job_ids"] == ["w0!1"] and progress["kill_progress_type"] == "KillProgressAtomicProfile"
    assert progress["kill_progress"] == {"profile_id": "w0!d10", "progress": pytest.approx(0.4)}
    assert killed["now"] == MASTER_HOPS(4.0) and result.jobs["final_state"].tolist() == ["COMPLETED_KILLED"]


@pytest.mark.parametrize("json_format, expected", [(False, 1 / 3), (True, 0.333333333333)])
def test_times_travel_as_batsim_5_sends_them_not_rounded_as_batsim_4_prints_them(json_format, expected):
    """Binary: the double itself; JSON: 12 decimals, as flatbuffers prints it (Batsim 4: 0.333333)."""
    channel = PythonChannel(lambda message: [("RejectJobEvent", {"job_id": e["event"]["job_id"]})
                                             for e in message["events"] if e["event_type"] == "JobSubmittedEvent"],
                            json_format=json_format)
    run_channel(channel, [{"id": 1, "subtime": 1 / 3, "res": 1, "profile": "d10", "walltime": 100 / 3}])
    message = next(m for m in channel.seen if any(e["event_type"] == "JobSubmittedEvent" for e in m["events"]))
    submitted = message["events"][0]
    assert submitted["event"]["submission_time"] == expected
    # (the submitter's message to the server crosses the master's loopback: 1e-10 s later)
    assert submitted["timestamp"] == message["now"] == MASTER_HOPS(expected)
    assert submitted["event"]["job"]["walltime"] == (100 / 3 if not json_format else 33.333333333333)


@needs_compiler
def test_a_campaign_runs_an_edc_library_beside_a_decider(c_build, tmp_path):
    from joulesim.campaign.runner import run_campaign

    (tmp_path / "study.toml").write_text(f"""
[campaign]
name = "edc"

[[platforms]]
path = "cluster32"

[[workloads]]
path = "default"

[[deciders]]
decider = "easy"

[[deciders]]
name = "easy-edc"
edc_library = "{c_build / 'libeasy_edc.so'}"
edc_init = ["", "{{}}"]
edc_isolated = true
""")
    summary = run_campaign(str(tmp_path / "study.toml"), str(tmp_path / "res"), workers=2, progress=False)
    assert summary.failed == []
    import pandas as pd

    table = pd.read_csv(tmp_path / "res" / "results.csv")
    assert sorted(table["decider"]) == ["easy", "easy-edc", "easy-edc"]
    # (the empty init string reads back from the CSV table as empty, like the Python decider's none)
    assert sorted(table["option.edc_init"].fillna("").astype(str)) == ["", "", "{}"]
    python = table[table["decider"] == "easy"].iloc[0]
    for _, row in table[table["decider"] == "easy-edc"].iterrows():  # the same schedule, both inits
        assert row["makespan"] == python["makespan"]
        assert row["mean_waiting_time"] == pytest.approx(python["mean_waiting_time"], abs=1e-9)


def test_the_json_format_prints_doubles_as_flatbuffers_does():
    from joulesim.protocol.batprotocol.json_format import as_flatbuffers_prints

    # flatbuffers' FloatToString(t, 12): fixed, 12 decimals (batprotocol's C++ library wrote
    # "now": 1000000.333333333372 and "timestamp": 0.3 for these)
    assert as_flatbuffers_prints({"now": 1e6 + 1 / 3, "e": [0.1 + 0.2]}) == {"now": float("1000000.333333333372"),
                                                                              "e": [0.3]}
    assert as_flatbuffers_prints(20773.999999999996) == 20773.999999999996
    from joulesim.protocol.batprotocol.json_format import flatbuffers_double

    assert flatbuffers_double(1e6 + 1 / 3) == float("1000000.333333333372") and flatbuffers_double(0.1 + 0.2) == 0.3


_near_powers_of_two = st.integers(-60, 60).flatmap(lambda k: st.sampled_from(
    [2.0 ** k, math.nextafter(2.0 ** k, 0), math.nextafter(2.0 ** k, math.inf)]))


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.floats(-1e7, 1e7), _near_powers_of_two,
                 st.floats(1000, 20000)))
def test_a_double_reads_back_as_flatbuffers_prints_it_whatever_its_size(value):
    """(flatbuffers_double skips the printing from 2**14 on, where it cannot change the value)"""
    from joulesim.protocol.batprotocol.json_format import flatbuffers_double

    assert flatbuffers_double(value) == float(f"{value:.12f}")


def _run_then_stop(message):
    """Each job on its own host; at 15 s (a call asked at the start), stop the simulation."""
    out = []
    for event in message["events"]:
        if event["event_type"] == "SimulationBeginsEvent":
            out.append(("CallMeLaterEvent", {"call_me_later_id": "stop", "when_type": "OneShot",
                                             "when": {"time": 15, "time_unit": "Second"}}))
        elif event["event_type"] == "JobSubmittedEvent":
            host = int(event["event"]["job_id"].split("!")[1]) - 1
            out.append(("ExecuteJobEvent", {"job_id": event["event"]["job_id"], "allocation": {
                "host_allocation": str(host), "executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
                "executor_placement": {}}}))
        elif event["event_type"] == "RequestedCallEvent":
            out.append(("ForceSimulationStopEvent", {}))
            # (after the stop: dropped, as by Batsim 5; applied, rejecting a running job would fail)
            out.append(("RejectJobEvent", {"job_id": "w0!4"}))
    return out


def test_a_forced_stop_ends_the_run_at_once_as_batsim_5_does(tmp_path):
    """Jobs of 10 s at 0, 2, 4, 6 s and one at 20 s; the EDC stops the run at 15 s: the jobs
    that ended are written, the one running (from 6 s) and the one not yet submitted are not,
    the decision after the stop is dropped, and SIMULATION_ENDS comes at 15 s."""
    jobs = [{"id": i + 1, "subtime": 2 * i, "res": 1, "profile": "d10"} for i in range(4)]
    jobs.append({"id": 9, "subtime": 20, "res": 1, "profile": "d10"})
    channel = PythonChannel(_run_then_stop)
    run_channel(channel, jobs, export=str(tmp_path / "out"))
    written = (tmp_path / "out_jobs.csv").read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in written] == ["1", "2", "3"]
    last = channel.seen[-1]
    assert [e["event_type"] for e in last["events"]] == ["SimulationEndsEvent"] and last["now"] == MASTER_HOPS(15.0)
    with pytest.raises(JoulesimError, match="a forced stop needs Batsim's event grouping"):
        run_channel(PythonChannel(_run_then_stop), jobs, grouping="per-time")


def test_fill_one_host_cores_first_maps_executors_by_cores():
    state = BridgeState(hosts={0: HostFacts((1.0,), 0, 2), 3: HostFacts((1.0,), 0, 2)}, job_sizes={"w!1": 3})
    body = {"job_id": "w!1", "allocation": {"host_allocation": "0 3"}}
    assert _fill_cores_first(body, state, "x") == {"0": 0, "1": 0, "2": 1}
    state.job_sizes["w!1"] = 5
    with pytest.raises(JoulesimError, match="places 5 executors on hosts holding 4 cores"):
        _fill_cores_first(body, state, "x")
    for allocation, problem in (("0-999999999999", "names hosts the platform lacks"), ("x", "host_allocation: ")):
        with pytest.raises(JoulesimError, match=problem):  # (at once: no range of a trillion expanded)
            _fill_cores_first({"job_id": "w!1", "allocation": {"host_allocation": allocation}}, state, "x")


# ------------------------------------------------------------------ bad EDCs
BAD_EDC = textwrap.dedent(r"""
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    static char reply[4096];
    static int calls;
    static uint8_t *text(const char *s, uint32_t *size) { strcpy(reply, s); *size = strlen(reply) + 1; return (uint8_t *)reply; }
    #define HELLO(V) "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"EDCHelloEvent\",\"event\":" \
        "{\"batprotocol_version\":\"" V "\",\"decision_component_name\":\"bad\",\"decision_component_version\":\"1\"}}]}"
    #if MODE != 1
    uint8_t batsim_edc_init(const uint8_t *d, uint32_t n, uint32_t *flags, uint8_t **r, uint32_t *rs) {
        (void)d; (void)n;
        *flags = MODE == 7 ? 0x3 : 0x2;
        *r = text(MODE == 4 ? HELLO("9.1.0") : HELLO("0.1.0"), rs);
        return MODE == 2 ? 3 : 0;
    }
    uint8_t batsim_edc_deinit(void) { return 0; }
    uint8_t batsim_edc_take_decisions(const uint8_t *w, uint32_t n, uint8_t **r, uint32_t *rs) {
        (void)w; (void)n;
        if (MODE == 3) { *r = text("{\"now\": 0, \"events\": [{\"oops\"", rs); return 0; }
        if (MODE == 5) { *r = text("{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"RejectJobEvent\","
                                   "\"event\":{\"job_id\":\"w0!nope\"}}]}", rs); return 0; }
        if (MODE == 6 && ++calls == 3) { volatile int *p = 0; *p = 1; }
        if (MODE == 8 && strstr((const char *)w, "\"w0!1\"")) {
            *r = text("{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"ExecuteJobEvent\",\"event\":"
                      "{\"job_id\":\"w0!1\",\"allocation\":{\"host_allocation\":\"40\",\"executor_placement_type\":"
                      "\"PredefinedExecutorPlacementStrategyWrapper\",\"executor_placement\":{}}}}]}", rs); return 0; }
        const char *now = strstr((const char *)w, "\"now\":");
        snprintf(reply, sizeof reply, "{\"now\":%g,\"events\":[]}", now ? atof(now + 6) : 0.0);
        *rs = strlen(reply) + 1; *r = (uint8_t *)reply;
        return 0;
    }
    #else
    int not_an_edc(void) { return 0; }
    #endif
""").replace("#include <string.h>", "#include <string.h>\n#include <stdio.h>")
# MODE: 0 good (answers nothing), 1 no symbols, 2 init fails, 3 garbage reply, 4 unknown version,
# 5 decision for an unknown job, 6 crashes on its third call, 7 both formats in its flags,
# 8 runs job w0!1 on host 40 of a 32-host platform


@pytest.fixture(scope="module")
def bad_edcs(tmp_path_factory) -> dict[int, Path]:
    if COMPILER is None:
        pytest.skip("no C compiler (cc or gcc): the test EDCs cannot be built")
    folder = tmp_path_factory.mktemp("bad_edcs")
    (folder / "bad.c").write_text(BAD_EDC)
    built = {}
    for mode in range(9):
        target = folder / f"libbad{mode}.so"
        made = subprocess.run([COMPILER, "-shared", "-fPIC", f"-DMODE={mode}", "-o", str(target), str(folder / "bad.c")],
                              capture_output=True, text=True)
        assert made.returncode == 0, made.stderr
        built[mode] = target
    return built


@pytest.mark.parametrize("mode, isolated, expected", [
    (1, False, "{lib}: is not an EDC library: it does not export batsim_edc_init, batsim_edc_take_decisions, batsim_edc_deinit"),
    (2, False, "{lib}: batsim_edc_init returned 3 (not 0: the library could not initialise itself"),
    (3, False, "{lib}: its reply at t=0 is not a valid batprotocol message in JSON: message: is not JSON"),
    (4, False, "{lib}: its hello speaks batprotocol version '9.1.0', which joulesim does not know"),
    (5, False, "{lib}: event 0 (RejectJobEvent, t=0): names job 'w0!nope', which was never submitted"),
    (6, True, "{lib}: the isolated process (--edc-isolated) died of SIGSEGV in batsim_edc_take_decisions"),
    # (loaded, then initialised, in the child only: its refusals reach the simulator, said once)
    (1, True, "{lib}: is not an EDC library: it does not export batsim_edc_init, batsim_edc_take_decisions, batsim_edc_deinit"),
    (2, True, "{lib}: batsim_edc_init returned 3 (not 0: the library could not initialise itself"),
    (7, False, "{lib}: batsim_edc_init set flags 0x3; they must be exactly one format"),
    (3, True, "{lib}: its reply at t=0 is not a valid batprotocol message in JSON"),
    # (the job's call comes at 3e-10 s: Batsim's actors on the master pass it on in 1-byte messages
    # through SimGrid's loopback link, 10 GBps; its EXECUTE_JOB is dated 0, as the EDC wrote it)
    (8, False, "{lib}: decider reply to the call at t=3e-10, events[0] (EXECUTE_JOB at t=0)"),
])
def test_a_bad_edc_is_one_line_naming_the_library(bad_edcs, tmp_path, mode, isolated, expected):
    library = str(bad_edcs[mode])
    out = tmp_path / "out"
    done = cli("-p", "cluster32", "-w", "default", "--edc-library", library,
               *(["--edc-isolated"] if isolated else []), "-e", str(out), "--timeout", "30")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert expected.format(lib=library) in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("joulesim: error")]
    assert len(lines) == 1, done.stderr
    # input and command-line values, the library and its init data included, exit 2 (before any
    # output); a reply that is not batprotocol 3, a decision that cannot apply 4, a crash 5
    assert done.returncode == {1: 2, 2: 2, 3: 3, 4: 3, 5: 4, 6: 5, 7: 3, 8: 4}[mode], done.stderr
    if mode == 6:  # the run had started: what was written so far is kept
        assert "outputs written so far are kept" in done.stderr and (tmp_path / "out_jobs.csv").exists()


def test_a_good_edc_library_that_decides_nothing_leaves_jobs_waiting(bad_edcs, tmp_path):
    done = cli("-p", "cluster32", "-w", "default", "--edc-library", str(bad_edcs[0]), "-e", str(tmp_path / "out"))
    assert done.returncode != 0 and "the decider left" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("args, expected", [
    (["--protocol", "batprotocol"], "--protocol batprotocol needs an EDC"),
    (["--edc-init", "{}"], "--edc-init, --edc-init-file and --edc-isolated go with --edc-library or --edc-socket"),
    (["--edc-library", "x.so", "--protocol", "batsim4"], "speak batprotocol: drop --protocol batsim4"),
    (["--edc-library", "x.so", "--edc-init", "a", "--edc-init-file", "f"], "give --edc-init or --edc-init-file, not both"),
    (["--edc-library", "nothing/here.so"], "nothing/here.so: no such EDC library file"),
    (["--edc-library", "x.so", "--edc-socket", "ipc:///tmp/x"], "give an EDC library (--edc-library PATH) or an EDC socket"),
    (["--edc-socket", "ipc:///tmp/x", "--edc-isolated"], "--edc-isolated loads a library in a child process"),
    (["--edc-library", "x.so", "--enable-dynamic-jobs"], "its hello sets what --enable-dynamic-jobs set"),
    (["--edc-library-str", "x.so", "", "--edc-init", "a"], "give one EDC: one of --edc-library-str"),
    (["--edc-library-str", "x.so", "", "--edc-socket-file", "ipc:///tmp/x", "f"], "give one EDC"),
    (["--edc-library-file", "x.so", "missing.init"], "missing.init: cannot read the EDC's init data file: No such file or directory"),
])
def test_edc_options_that_do_not_go_together_are_told(tmp_path, args, expected):
    (tmp_path / "x.so").write_text("not a library")
    done = cli("-p", "cluster32", "-w", "default", *args, "-e", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode != 0 and expected in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_file_that_is_not_a_library_is_told(tmp_path):
    (tmp_path / "x.so").write_text("not a library")
    done = cli("-p", "cluster32", "-w", "default", "--edc-library", str(tmp_path / "x.so"), "-e", str(tmp_path / "o"))
    assert done.returncode != 0 and "cannot be loaded as a shared library" in done.stderr


def test_the_batsim_5_comparison_says_what_it_misses(tmp_path):
    """experiments/batsim5_edcs needs Batsim 5's sources and its test EDCs, built by the user:
    without them, one line saying so."""
    done = subprocess.run([sys.executable, "-m", "experiments.batsim5_edcs.run", "--batsim", str(tmp_path / "b5"),
                           "--edcs", str(tmp_path / "libs")], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode != 0 and "not found:" in done.stderr and "built by you" in done.stderr
    from experiments.batsim5_edcs.run import periodic_cases

    assert len(periodic_cases()) == 48  # Batsim 5's test_periodic.py cases: start0 (8, calls or probes) and rand (40)


def test_an_edc_socket_nobody_serves_is_told_with_the_edc_s_hint(tmp_path):
    done = cli("-p", "cluster32", "-w", "default", "--edc-socket", f"ipc://{tmp_path}/none.sock", "--timeout", "1",
               "-e", str(tmp_path / "out"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "did not answer within 1 s" in done.stderr and "start the process EDC so that it binds" in done.stderr


# ------------------------------------------------------------------ host states (Batsim 5's later revision, JSON)
DVFS_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/>
  <host id="h0" speed="1Gf, 500Mf" pstate="0"><prop id="wattage_per_state" value="100:200, 50:100"/></host>
  <host id="h1" speed="1Gf, 500Mf" pstate="0"><prop id="wattage_per_state" value="100:200, 50:100"/></host>
</zone></platform>
"""


def test_host_pstate_changes_of_batsim_5_s_later_revision_run_in_json(tmp_path):
    """ChangeHostsPStateEvent (JSON only: its binary numbering is not public) sets a computation
    pstate at once and is reported by HostsPStateChangedEvent, as Batsim 5.0.0-rc2 does; a job
    then computes at the new speed."""
    (tmp_path / "dvfs.xml").write_text(DVFS_PLATFORM)

    def decide(message):
        kinds = [e["event_type"] for e in message["events"]]
        if "SimulationBeginsEvent" in kinds:
            return [("ChangeHostsPStateEvent", {"host_ids": "1 0", "pstate": 1})]
        return [("ExecuteJobEvent", {"job_id": e["event"]["job_id"], "allocation": {
            "host_allocation": "0", "executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
            "executor_placement": {"strategy": "SpreadOverHostsFirst"}}})
            for e in message["events"] if e["event_type"] == "JobSubmittedEvent"]

    channel = PythonChannel(decide, json_format=True)
    workload = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 1, "res": 1, "profile": "f"}],
                "profiles": {"f": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}
    result = run_channel(channel, [], str(tmp_path / "dvfs.xml"), export=str(tmp_path / "out"), workload=workload,
                         energy=True)
    changed = [(m["now"], e["event"]) for m in channel.seen for e in m["events"]
               if e["event_type"] == "HostsPStateChangedEvent"]
    assert changed == [(MASTER_HOPS(0.0), {"host_ids": "0-1", "pstate": 1})]
    assert result.jobs["execution_time"].tolist() == [2.0]  # 1e9 flop at 500 Mflop/s


def test_host_state_events_have_no_binary_form_here():
    from joulesim.protocol.batprotocol.binary_format import BatprotocolError

    with pytest.raises(BatprotocolError, match="HostsPStateChangedEvent has no binary numbering .* use the JSON format"):
        encode_message({"now": 0.0, "events": [{"timestamp": 0.0, "event_type": "HostsPStateChangedEvent",
                                                "event": {"host_ids": "0", "pstate": 1}}]})


def test_turning_hosts_off_and_on_goes_through_their_transitions_and_is_reported(tmp_path):
    """TurnOnOffHostsEvent to a sleep pstate and back (energy2: off in 1 / 0.1639... = 6.1 s, on
    in 1 / 0.0066 = 151.52 s through its virtual pstates): each is reported by
    HostsTurnedOnOffEvent once its transition is over, as Batsim 4's RESOURCE_STATE_CHANGED is."""
    def decide(message):
        kinds = [e["event_type"] for e in message["events"]]
        if "SimulationBeginsEvent" in kinds:
            return [("TurnOnOffHostsEvent", {"host_ids": "1", "state": 1})]
        if "HostsTurnedOnOffEvent" in kinds and message["now"] < 10:
            return [("TurnOnOffHostsEvent", {"host_ids": "1", "state": 0})]
        return []

    channel = PythonChannel(decide, json_format=True)
    run_channel(channel, [], "energy2", export=str(tmp_path / "out"), workload={"nb_res": 2, "jobs": [], "profiles": {}},
                energy=True)
    reported = [(m["now"], e["event"]) for m in channel.seen for e in m["events"]
                if e["event_type"] == "HostsTurnedOnOffEvent"]
    assert [event for _, event in reported] == [{"host_ids": "1", "state": 1}, {"host_ids": "1", "state": 0}]
    assert [now for now, _ in reported] == [pytest.approx(1 / 0.16393442622950818),
                                            pytest.approx(1 / 0.16393442622950818 + 1 / 0.006599788806758184)]


# ------------------------------------------------------------------ external events
GENERIC_EVENTS = [{"type": "generic", "timestamp": 20, "data": "third line"},
                  {"type": "machine_unavailable", "timestamp": 5, "resources": "3"},
                  {"type": "generic", "timestamp": 0, "data": "{\"json\": \"stays text\"}"},
                  {"type": "generic", "timestamp": 20, "data": "fourth line"}]


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_generic_external_events_reach_the_edc_as_batsim_5_sends_them(grouping):
    """Each generic event of the events file reaches a JSON EDC at its time as an
    ExternalEventOccurredEvent: id "ee0!N" (N its place in the file, from 0, as Batsim 5.0.0-rc2
    numbers every event of its first file), its data as the file gives it; a machine event
    changes the machines and is not told; then AllStaticExternalEventsHaveBeenInjectedEvent."""
    channel = PythonChannel(lambda message: [], json_format=True)
    run_channel(channel, [], grouping=grouping, events=GENERIC_EVENTS)
    told = [(m["now"], e["event_type"], e["event"]) for m in channel.seen for e in m["events"]
            if e["event_type"] in ("ExternalEventOccurredEvent", "AllStaticExternalEventsHaveBeenInjectedEvent")]
    generic = lambda id_, data: {"id": id_, "external_event_type": "GenericExternalEvent",  # noqa: E731
                                 "external_event": {"data": data}}
    assert told == [(MASTER_HOPS(0.0), "ExternalEventOccurredEvent", generic("ee0!2", '{"json": "stays text"}')),
                    (MASTER_HOPS(20.0), "ExternalEventOccurredEvent", generic("ee0!0", "third line")),
                    (MASTER_HOPS(20.0), "ExternalEventOccurredEvent", generic("ee0!3", "fourth line")),
                    (MASTER_HOPS(20.0), "AllStaticExternalEventsHaveBeenInjectedEvent", {})]


def test_generic_external_events_need_the_json_format():
    with pytest.raises(JoulesimError, match="python-edc: the external events hold 3 generic events, which reach an "
                                            "EDC as ExternalEventOccurredEvent.* JSON format only"):
        run_channel(PythonChannel(lambda message: []), [], events=GENERIC_EVENTS)


@pytest.mark.parametrize("event, expected", [
    ({"type": "surprise", "timestamp": 1}, r"<events list>: line 2: field 'type': unknown event type 'surprise' "
                                           r"\(with a Batsim 5 EDC, an event is 'generic'"),
    ({"type": "generic", "timestamp": 1}, r"<events list>: line 2: field 'data': is missing \(a generic event carries "
                                          "its data as a string"),
    ({"type": "generic", "timestamp": 1, "data": {"a": 1}}, r"<events list>: line 2: field 'data': is an object \(a generic"),
])
def test_external_events_batsim_5_cannot_read_are_refused_naming_the_line(event, expected):
    with pytest.raises(JoulesimError, match=expected):
        run_channel(PythonChannel(lambda message: [], json_format=True), [], events=[GENERIC_EVENTS[0], event])


def test_the_process_edc_example_prints_the_generic_events_it_gets(tmp_path):
    """From the command line (Batsim 5's --ee, twice: two files) to examples/deciders/fcfs_edc.py
    over ZeroMQ: each generic event arrives at its time with its id (eeK!N: file K, place N) and
    data, the files merged by time, ties in file order; the schedule is fcfs's."""
    generic = [e for e in GENERIC_EVENTS if e["type"] == "generic"]
    (tmp_path / "a.txt").write_text("\n".join(json.dumps(e) for e in generic[:2]) + "\n")
    (tmp_path / "b.txt").write_text(json.dumps(generic[2]) + "\n")
    out = run_fcfs_edc(tmp_path, {"format_json": True}, "-p", "cluster32", "-w", "default",
                       "--ee", str(tmp_path / "a.txt"), "--ee", str(tmp_path / "b.txt"), "-e", str(tmp_path / "edc" / "out"))
    printed = [line.split(" ", 4)[2:] for line in out.splitlines()]  # (time, id, data)
    # (at their times, plus the latency of the messages between Batsim's actors on cluster32's
    # master host: 2e-10 s)
    assert [(float(time), id_, data) for time, id_, data in printed] == [
        (pytest.approx(0.0, abs=1e-9), "ee0!1", "'{\"json\": \"stays text\"}'"),
        (pytest.approx(20.0, abs=1e-9), "ee0!0", "'third line'"), (pytest.approx(20.0, abs=1e-9), "ee1!0", "'fourth line'")]
    joulesim.simulate("cluster32", "default", "fcfs", export=tmp_path / "py" / "out")
    assert (tmp_path / "edc" / "out_jobs.csv").read_text().replace(",-0.000000,", ",0.000000,") == \
        (tmp_path / "py" / "out_jobs.csv").read_text()
