"""Batsim 4.2.1's own runs (../shared/reference/batsim-energy-and-kills), replayed on joulesim:
the same decider gives the same messages, line for line and event for event, and the same jobs.

The cases were measured with real Batsim 4.2.1 + SimGrid 3.32 driven by joulesim's deciders:
reducepc and energybud with shutdown (machines switch off and on through their virtual pstates),
easy with shutdown, on a platform without links; and a decider that kills a running job (and
one that kills a job whose end it was told, on which Batsim aborts). What they guard:
- messages between Batsim's actors on the master host cross SimGrid's loopback link (1e-10 s)
  even on a platform without links;
- each switching machine has an actor that computes one flop at its virtual pstate;
- with energy, each read of a machine's joules that is not up to date is a simcall, which
  decides which actor's report reaches the server first;
- a kill is reported as JOB_COMPLETED (COMPLETED_KILLED) then JOB_KILLED, once the killer actor
  is done."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED_REFERENCE

REPLAYS = {  # case: the joulesim decider and its options, as the case's summary.json gives them
    "1_reducepc50": ("reducepc", ["budget=50%", "start=43200", "end=129600"]),
    "2_energybud60_shutdown": ("energybud", ["budget=60%", "start=43200", "end=129600", "t_idle=300"]),
    "3_easy_shutdown": ("easy", ["t_idle=300"]),
    "5_no_energy_fcfs": ("fcfs", []),
}


def cases() -> Path:
    if not SHARED_REFERENCE.is_dir():
        pytest.skip(f"{SHARED_REFERENCE} is absent: Batsim's measured cases live in ../shared/reference "
                    "beside the checkout")
    return SHARED_REFERENCE / "batsim-energy-and-kills"


def batsim_messages(case: str) -> list[tuple[str, dict]]:
    folder = cases() / "cases" / case / "batsim"
    packed = folder / "messages.jsonl.gz"
    text = gzip.open(packed, "rt").read() if packed.exists() else (folder / "messages.jsonl").read_text()
    return [(m["dir"], m["msg"]) for m in map(json.loads, text.splitlines())]


def joulesim_messages(log: str) -> list[tuple[str, dict]]:
    """The messages of `-v network-only` (one JSON line each, as sent and as received)."""
    out = []
    for line in log.splitlines():
        for tag, direction in (("joulesim: sent: ", "to_decider"), ("joulesim: received: ", "from_decider")):
            if line.startswith(tag):
                out.append((direction, json.loads(line[len(tag):])))
    return out


def begins(data: dict) -> dict:
    """SIMULATION_BEGINS but the folders of the workloads (absolute paths: the bundle's is written
    BUNDLE). The machines, their ids and names included, must be Batsim's: it numbers them in the
    string order of their names (host0, host1, host10, host100...), --mmax keeping the first."""
    return dict(data, workloads={name: Path(path).name for name, path in data["workloads"].items()})


def comparable(messages: list[tuple[str, dict]]) -> list[tuple[str, float, list]]:
    """Direction, `now` and events."""
    out = []
    for direction, message in messages:
        events = [dict(e, data=begins(e["data"])) if e["type"] == "SIMULATION_BEGINS" else e for e in message["events"]]
        out.append((direction, float(message["now"]), events))
    return out


def same(a, b) -> bool:
    """Equal, numbers too (an ANSWER's joules to the last bit: SimGrid's per-machine joules
    summed in long double, as Batsim sums them)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    return a == b


def assert_same_messages(expected: list, got: list) -> None:
    for index, (a, b) in enumerate(zip(comparable(expected), comparable(got))):
        assert same(a, b), f"message {index} differs:\nBatsim:   {a}\njoulesim: {b}"
    assert len(got) == len(expected)


def jobs_rows(path: Path) -> dict[str, tuple[str, str, str, str]]:
    """Each job's state, start, finish and hosts, as out_jobs.csv writes them."""
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    at = {name: header.index(name) for name in ("job_id", "final_state", "starting_time", "finish_time",
                                                  "allocated_resources")}
    rows = {}
    for line in lines[1:]:
        cells = line.split(",")
        rows[cells[at["job_id"]]] = tuple(cells[at[k]] for k in ("final_state", "starting_time", "finish_time",
                                                                 "allocated_resources"))
    return rows


def case_command(case: str) -> tuple[dict, list[str]]:
    summary = json.loads((cases() / "cases" / case / "summary.json").read_text())
    return summary, ["-p", summary["platform"], "-w", summary["workload"], *summary["flags"]]


@pytest.mark.parametrize("case", sorted(REPLAYS))
def test_joulesim_s_deciders_get_batsim_s_messages_and_jobs(tmp_path, case):
    decider, options = REPLAYS[case]
    _, inputs = case_command(case)
    command = [sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-d", decider,
               *[part for option in options for part in ("--option", option)], *inputs,
               "-e", str(tmp_path / "out"), "-v", "network-only"]
    run = subprocess.run(command, cwd=cases(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = joulesim_messages(run.stderr)
    assert_same_messages(batsim_messages(case), got)
    assert jobs_rows(tmp_path / "out_jobs.csv") == jobs_rows(cases() / "cases" / case / "batsim" / "out_jobs.csv")
    # As Batsim names workloads: the file joined to the working directory (getcwd: its real path,
    # whatever symbolic link ../shared is reached through)
    assert got[0][1]["events"][0]["data"]["workloads"] == {"w0": f"{os.path.realpath(cases())}/{inputs[3]}"}


def run_kill_decider(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess, str]:
    """The case's own kill decider (pyzmq, in its own process) driving `joulesim simulate`."""
    case = "4b_kill_running" if mode == "running" else "4a_kill_running_and_finished"
    _, inputs = case_command(case)
    endpoint = f"ipc://{tmp_path}/decider.sock"
    decider = subprocess.Popen([sys.executable, str(cases() / "tools" / "kill_decider.py"), endpoint, "250", mode],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        run = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "simulate", *inputs,
                              "-e", str(tmp_path / "out"), "-s", endpoint, "-v", "network-only", "--timeout", "60"],
                             cwd=cases(), capture_output=True, text=True, timeout=300)
    finally:
        decider.kill()  # (after a refusal it waits for a message that never comes, as with Batsim)
        said = decider.communicate()[0]
    return run, said


def test_a_kill_is_told_as_batsim_tells_it(tmp_path):
    run, said = run_kill_decider(tmp_path, "running")
    assert run.returncode == 0, run.stderr[-2000:]
    assert_same_messages(batsim_messages("4b_kill_running"), joulesim_messages(run.stderr))
    assert jobs_rows(tmp_path / "out_jobs.csv") == jobs_rows(cases() / "cases" / "4b_kill_running" / "batsim"
                                                             / "out_jobs.csv")
    assert "completed w0!11 COMPLETED_KILLED" in said  # (the decider frees its hosts on JOB_COMPLETED only)


def test_a_kill_naming_a_job_whose_end_was_told_is_refused_where_batsim_aborts(tmp_path):
    run, _ = run_kill_decider(tmp_path, "both")
    assert run.returncode != 0
    assert ("KILL_JOB at t=250): cannot kill job w0!1: it is already finished (COMPLETED_SUCCESSFULLY at "
            "t=45), and that end was already sent to the decider") in run.stderr
    assert "Traceback" not in run.stderr
    # Batsim aborts in the same message: what came before it is the same
    expected = batsim_messages("4a_kill_running_and_finished")
    got = joulesim_messages(run.stderr)
    assert_same_messages(expected[:len(expected) - 1], got[:len(expected) - 1])
