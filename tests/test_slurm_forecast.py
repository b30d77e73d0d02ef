"""`joulesim slurm forecast` without a Slurm: the state read from recorded answers of Slurm 22.05
(tests/data/slurm: `sinfo --json` and `squeue --json` of a local cluster, n4 drained, jobs 10
and 11 running, 12 and 13 pending with 13 raised above 12 by `scontrol update priority`, 14
held; of the finished jobs squeue also listed, two are kept), the simulation built from it, the
command's refusals. On a real Slurm: tests/test_slurm_forecast_on_slurm.py."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from joulesim.adapters.slurm.forecast import forecast_inputs, forecast_platform, forecast_starts
from joulesim.adapters.slurm.slurm_commands import SlurmError
from joulesim.adapters.slurm.slurm_state import ClusterState, parse_jobs, parse_node_states

DATA = Path(__file__).resolve().parent / "data" / "slurm"
SINFO = (DATA / "sinfo_22.05.json").read_text()
SQUEUE = (DATA / "squeue_22.05.json").read_text()
NOW = 1795986155.0  # when squeue answered (its jobs started at ...149)


def no_expand(nodelist: str) -> list[str]:
    raise AssertionError(f"22.05 names each allocated node: {nodelist} needs no scontrol")


def recorded_state() -> ClusterState:
    usable = parse_node_states(SINFO)
    running, pending, held = parse_jobs(SQUEUE, no_expand)
    nodes = ["n1", "n2", "n3", "n4"]
    return ClusterState(NOW, nodes, [n for n in nodes if not usable[n]], running, pending, held)


def test_the_recorded_state_is_read_in_full():
    assert parse_node_states(SINFO) == {"n1": True, "n2": True, "n3": True, "n4": False}  # n4 drained
    running, pending, held = parse_jobs(SQUEUE, no_expand)
    assert [(j.slurm_id, j.nodes, j.start, j.limit_s) for j in running] == [
        ("10", ["n1"], 1795986149, 120.0), ("11", ["n2", "n3"], 1795986149, 180.0)]
    # Slurm's priority order: 13 (raised) before 12, though submitted after it.
    assert [(j.slurm_id, j.nodes, j.limit_s, j.priority) for j in pending] == [
        ("13", 1, 120.0, 4294967000), ("12", 2, 60.0, 4294901749)]
    assert held == ["14"]


def test_the_simulation_pins_running_jobs_and_queues_pending_ones_in_priority_order():
    inputs = forecast_inputs(recorded_state())
    jobs = inputs.workload["jobs"]
    # ids sort as the queue must run: running jobs, then pending ones by priority
    assert [j["id"] for j in jobs] == ["000000-10", "000001-11", "000002-13", "000003-12"]
    assert sorted(j["id"] for j in jobs) == [j["id"] for j in jobs]
    assert [(j["res"], j["walltime"]) for j in jobs] == [(1, 114.0), (2, 174.0), (1, 120.0), (2, 60.0)]
    assert inputs.pinned == {"w0!000000-10": "0", "w0!000001-11": "1 2"}
    assert inputs.events == [{"type": "machine_unavailable", "timestamp": 0, "resources": "3"}]
    assert inputs.slurm_ids == {"000002-13": "13", "000003-12": "12"}


@pytest.mark.parametrize("decider", ["easy", "fcfs", "conservative"])
def test_the_forecast_of_the_recorded_state(decider):
    # By hand: n4 is drained, n1 frees at 149+120 = 269, n2-n3 at 149+180 = 329. Job 13 (1 node,
    # first by priority) starts on n1 at 269; job 12 (2 nodes) at 329. Relative to now (155):
    # 114 and 174 s. Were 12 first (submission order), FCFS would hold 13 behind it until 329.
    assert forecast_starts(forecast_inputs(recorded_state()), decider) == {"13": 114.0, "12": 174.0}


@pytest.mark.parametrize("decider", ["easy", "conservative"])
def test_a_draining_node_ends_its_job_then_takes_no_other(decider):
    """n2 drained while job 11 runs on n2-n3: job 11 keeps it until 329, after which only n3 of
    the two is free; job 12 (2 nodes) then waits for job 13 to free n1 at 269 + 120 = 389."""
    state = recorded_state()
    state.unavailable = ["n2", "n4"]
    inputs = forecast_inputs(state)
    assert inputs.events == [{"type": "machine_unavailable", "timestamp": 0, "resources": "3"},
                             {"type": "machine_unavailable", "timestamp": 0.0005, "resources": "1"}]
    assert forecast_starts(inputs, decider) == {"13": 114.0, "12": 234.0}


def test_node_order_is_sinfos_whatever_the_names_sort_as():
    """Hosts from a platform file are numbered by name as strings (n1, n10, n2, ...); the forecast
    keeps `sinfo -N`'s order, the adapter's: resource i is node i."""
    nodes = [f"n{i}" for i in range(1, 12)]
    running = parse_jobs(SQUEUE, no_expand)[0]
    running = [type(running[0])("10", ["n10", "n11"], NOW - 10, 60.0)]
    state = ClusterState(NOW, nodes, [], running, [], [])
    inputs = forecast_inputs(state)
    assert inputs.pinned == {"w0!000000-10": "9 10"}
    assert [(host.id, host.name) for host in forecast_platform(inputs).compute_hosts] == list(enumerate(nodes))


def test_newer_slurms_shapes_read_the_same():
    """Slurm 23.02 and later: numbers as {"set", "infinite", "number"}, states as lists of flags,
    allocated nodes under job_resources.nodes.allocation."""
    data = json.loads(SQUEUE)
    for entry in data["jobs"]:
        limit = entry["time_limit"]
        entry["time_limit"] = {"set": limit is not None, "infinite": False, "number": limit or 0}
        entry["priority"] = {"set": True, "infinite": False, "number": entry["priority"]}
        entry["job_state"] = [entry["job_state"]]
        if entry.get("job_resources"):
            entry["job_resources"]["nodes"] = {"allocation": [{"name": n["nodename"]}
                                                              for n in entry["job_resources"].pop("allocated_nodes")]}
    assert parse_jobs(json.dumps(data), no_expand) == parse_jobs(SQUEUE, no_expand)
    nodes = json.loads(SINFO)
    for node in nodes["nodes"]:
        node["state"] = [node["state"].upper(), *node.pop("state_flags")]
    assert parse_node_states(json.dumps(nodes)) == parse_node_states(SINFO)


def squeue_with(change) -> str:
    data = json.loads(SQUEUE)
    change(data)
    return json.dumps(data)


def job(data: dict, job_id: int) -> dict:
    return next(j for j in data["jobs"] if j["job_id"] == job_id)


@pytest.mark.parametrize("text, message", [
    ("Unable to contact slurm controller", "squeue --json: not JSON"),
    ('{"jobs": 3}', "squeue --json: no list of objects under 'jobs'"),
    (squeue_with(lambda d: job(d, 12).update(job_state="WAITING")), "squeue --json: job 12: unknown job_state 'WAITING'"),
    (squeue_with(lambda d: job(d, 12).update(time_limit="1")), 'squeue --json: job 12: time_limit is "1", not a number'),
    (squeue_with(lambda d: job(d, 12).update(time_limit=None)), "squeue --json: job 12 has no time limit"),
    (squeue_with(lambda d: job(d, 10).update(start_time=None)), "squeue --json: job 10: start_time is null"),
    (squeue_with(lambda d: job(d, 13).pop("node_count")), "squeue --json: job 13: node_count is null"),
])
def test_a_malformed_squeue_answer_is_one_line_naming_the_command(text, message):
    with pytest.raises(SlurmError) as caught:
        parse_jobs(text, no_expand)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["nodes"][0].update(state="sleepy"), "sinfo --json: node n1: unknown state 'sleepy'"),
    (lambda d: d["nodes"][0].pop("name"), "sinfo --json: a node's name is null"),
    (lambda d: d.pop("nodes"), "sinfo --json: no list of objects under 'nodes'"),
])
def test_a_malformed_sinfo_answer_is_one_line_naming_the_command(change, message):
    data = json.loads(SINFO)
    change(data)
    with pytest.raises(SlurmError) as caught:
        parse_node_states(json.dumps(data))
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


# ------------------------------------------------------------------ the command line


def joulesim(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=env)


def fake_slurm(tmp_path: Path, squeue: str) -> dict[str, str]:
    """`sinfo` and `squeue` that answer as recorded (`squeue`: the text given)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "squeue.json").write_text(squeue)
    scripts = {"sinfo": f'if [ "$1" = --json ]; then cat {DATA / "sinfo_22.05.json"}; else printf "n1\\nn2\\nn3\\nn4\\n"; fi',
               "squeue": f"cat {tmp_path / 'squeue.json'}"}
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_the_command_prints_the_recorded_pending_jobs_in_priority_order(tmp_path):
    result = joulesim("slurm", "forecast", "--what-if", "fcfs", env=fake_slurm(tmp_path, SQUEUE))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "4 nodes (1 unavailable: n4), 2 running job(s) pinned to their nodes, 2 pending" in lines[0]
    assert lines[1].split() == ["job", "nodes", "limit", "easy", "start", "from", "now", "fcfs", "start", "from", "now"]
    assert [line.split()[:3] for line in lines[2:4]] == [["13", "1", "0:02:00"], ["12", "2", "0:01:00"]]
    assert "held (not forecast: they start only once released): 14" in result.stdout


def test_a_malformed_answer_through_the_command_is_one_line_and_status_8(tmp_path):
    result = joulesim("slurm", "forecast", env=fake_slurm(tmp_path, '{"jobs": [{"job_id": 1, "job_state": "ODD"}]}'))
    assert result.returncode == 8
    assert result.stderr == "joulesim: error: squeue --json: job 1: unknown job_state 'ODD'\n"


@pytest.mark.skipif(shutil.which("sinfo") is None, reason="no Slurm client commands")
def test_an_unreachable_slurm_is_one_line_naming_the_command(tmp_path):
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\nSlurmctldPort=16999\nAuthType=auth/munge\n"
                    "NodeName=z1 CPUs=1\nPartitionName=p Nodes=z1 Default=YES\n"
                    "MessageTimeout=2\n")  # the clients give up after 2 s, not 10
    result = joulesim("slurm", "forecast", "--slurm-conf", str(conf))
    assert result.returncode == 8, result.stderr
    assert result.stderr.startswith("joulesim: error: sinfo -h -N -o %N failed (status 1): ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize("args, status, message", [
    (["slurm"], 2, "Missing option '-w' / '--workload'."),
    (["slurm", "-w", "w.json", "forecast"], 2, "--workload belong(s) to `joulesim slurm -w WORKLOAD`"),
    (["slurm", "forecast", "-d", "energybud"], 2, "decider energybud cannot forecast"),
    (["slurm", "forecast", "-d", "easy", "-o", "tidle=1"], 2, "did you mean 't_idle'?"),
    (["slurm", "forecast", "--what-if", "eazy"], 2, "unknown decider 'eazy'"),
    (["slurm", "forecast", "--slurm-conf", "/nonexistent/slurm.conf"], 8, "--slurm-conf /nonexistent/slurm.conf: no such file"),
])
def test_bad_command_lines_are_refused_in_one_line(args, status, message):
    result = joulesim(*args)
    assert result.returncode == status and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_the_forecast_csv(tmp_path):
    env = fake_slurm(tmp_path, SQUEUE)
    result = joulesim("slurm", "forecast", "-e", str(tmp_path / "out" / "f"), env=env)
    assert result.returncode == 0, result.stderr
    import csv

    with open(tmp_path / "out" / "f_forecast.csv") as f:
        rows = list(csv.DictReader(f))
    assert [row["slurm_id"] for row in rows] == ["13", "12"]
    # Every running job started at ...149 with limits of 2 and 3 minutes: long over by now, they end
    # at once in the simulation (Slurm is about to end them): 13 starts now, 12 too (n2-n3 free).
    for row in rows:
        assert abs(float(row["easy_start"]) - float(row["now"])) < 0.01 and float(row["easy_in_s"]) < 0.01


def test_what_if_a_node_is_drained_now(tmp_path):
    """--what-if-drain n2: the recorded running jobs are long over by now (they end at once), n4 is
    drained already; with n2 drained too only n1 and n3 take jobs: 13 (1 node, 2 min) starts now on
    n1, and 12 (2 nodes) waits for it, 120 s; without the drain 12 starts now on n2-n3."""
    import csv

    env = fake_slurm(tmp_path, SQUEUE)
    result = joulesim("slurm", "forecast", "--what-if-drain", "n2", "-e", str(tmp_path / "f"), env=env)
    assert result.returncode == 0, result.stderr
    assert "easy, n2 drained start" in result.stdout.splitlines()[1]
    with open(tmp_path / "f_forecast.csv") as f:
        rows = {row["slurm_id"]: row for row in csv.DictReader(f)}
    assert float(rows["12"]["easy_in_s"]) < 0.01 and float(rows["13"]["easy_in_s"]) < 0.01
    assert float(rows["13"]["easy_drain_n2_in_s"]) < 0.01
    assert abs(float(rows["12"]["easy_drain_n2_in_s"]) - 120) < 0.01
    result = joulesim("slurm", "forecast", "--what-if-drain", "n9", env=env)
    assert result.returncode == 2 and "--what-if-drain n9: Slurm has no such node (its nodes: n1, n2, n3, n4)" in result.stderr
    assert "Traceback" not in result.stderr
