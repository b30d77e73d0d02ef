"""Batsim 4.2.1's runs on the platforms of ../shared/reference/batsim-energy-and-kills (section 6):
a Vivaldi zone, a Full zone declaring no route to the master, Floyd and Dijkstra zones. Each
case is replayed end to end (joulesim run, its FCFS decider in-process, Batsim's flags) and must
give Batsim's messages, one for one (events, data and times as Batsim wrote them), and Batsim's
jobs (start and finish to the microsecond Batsim writes, allocations).

Skipped, saying so, where ../shared is absent.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
BUNDLE = SHARED / "reference" / "batsim-energy-and-kills"
CASES = ["6_platform_vivaldi8", "6_platform_full_nomaster8", "6_platform_floyd8", "6_platform_dijkstra8"]


@pytest.fixture(scope="module")
def bundle() -> Path:
    if not BUNDLE.is_dir():
        pytest.skip(f"{BUNDLE} is absent: Batsim's reference runs live in ../shared/reference beside the checkout")
    return BUNDLE


def comparable(message: dict) -> dict:
    """A message as both simulators must write it. SIMULATION_BEGINS differs where the bundle's
    README says it does, for reasons of their own: Batsim adds "role": "" to each compute
    resource's properties, and writes workload paths absolute."""
    message = json.loads(json.dumps(message))
    for event in message.get("events", []):
        if event["type"] == "SIMULATION_BEGINS":
            data = event["data"]
            data["workloads"] = {name: Path(path).name for name, path in data.get("workloads", {}).items()}
            for resource in data.get("compute_resources", []):
                if resource.get("properties", {}).get("role") == "":
                    del resource["properties"]["role"]
    return message


def batsim_messages(case: Path) -> list[tuple[str, dict]]:
    lines = (case / "batsim" / "messages.jsonl").read_text().splitlines()
    return [(entry["dir"], comparable(entry["msg"])) for entry in map(json.loads, lines)]


def joulesim_messages(log: str) -> list[tuple[str, dict]]:
    found = []
    for line in log.splitlines():
        for prefix, direction in (("joulesim: sent: ", "to_decider"), ("joulesim: received: ", "from_decider")):
            if line.startswith(prefix):
                found.append((direction, comparable(json.loads(line[len(prefix):]))))
    return found


def jobs(path: Path) -> dict[str, tuple[float, float, str]]:
    with open(path, newline="") as f:
        return {row["job_id"]: (float(row["starting_time"]), float(row["finish_time"]), row["allocated_resources"])
                for row in csv.DictReader(f)}


@pytest.mark.parametrize("name", CASES)
def test_the_case_gives_batsims_messages_and_jobs(bundle, tmp_path, name):
    case = bundle / "cases" / name
    summary = json.loads((case / "summary.json").read_text())
    assert summary["batsim_rc"] == 0  # Batsim ran it to the end
    decider = summary["decider"].split()
    assert decider[:3] == ["joulesim", "decide", "fcfs"]
    run = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-d", "fcfs", "-p", summary["platform"],
                          "-w", summary["workload"], "-e", str(tmp_path / "out"), "-v", "network-only", *summary["flags"]],
                         cwd=bundle, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    ours, theirs = joulesim_messages(run.stderr), batsim_messages(case)
    assert len(theirs) == summary["batsim_messages"] == 34
    for index, (mine, batsim) in enumerate(zip(ours, theirs)):
        assert mine == batsim, f"message {index}: joulesim {mine}\nBatsim {batsim}"
    assert len(ours) == len(theirs)
    expected, got = jobs(case / "batsim" / "out_jobs.csv"), jobs(tmp_path / "out_jobs.csv")
    assert got.keys() == expected.keys() and len(got) == 8
    for job, (start, finish, allocation) in expected.items():
        assert got[job][0] == pytest.approx(start, abs=1e-6) and got[job][1] == pytest.approx(finish, abs=1e-6), job
        assert got[job][2] == allocation, job


def test_the_vivaldi_case_is_not_the_case_without_coordinates(bundle):
    """What the coordinates change in Batsim's run (so the comparison above has something to
    catch): job 3 starts 0.5 ms late, job 6 at 125.005531, the last job ends at 185.0015."""
    expected = jobs(bundle / "cases" / "6_platform_vivaldi8" / "batsim" / "out_jobs.csv")
    assert expected["3"][0] == pytest.approx(60.0005, abs=1e-7) and expected["6"][0] == pytest.approx(125.005531, abs=1e-7)
    assert max(finish for _, finish, _ in expected.values()) == pytest.approx(185.0015, abs=1e-7)
