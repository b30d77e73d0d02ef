"""Seed 000's experiments (PCBE thesis, tables 5.1-5.3) against its published IRMaSim results:
the thesis's own input files, read as they are, each scheduler run by joulesim's deciders."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load_experiment_script

HERE = Path(__file__).resolve().parents[1] / "experiments" / "pcbe"


def load_script():
    return load_experiment_script("pcbe")


def worst(row: dict) -> float:
    return max(abs(row[k] - row["thesis_" + k]) / abs(row["thesis_" + k]) for k in ("makespan", "energy", "edp"))


@pytest.mark.parametrize("case", [f"{kind}_{i}" for kind in ("energy", "edp") for i in range(1, 5)])
def test_every_comparison_case_gives_the_thesis_figures(shared_data, case):
    rows = load_script().run_case(shared_data / "pcbe" / "comparison" / case)
    assert len(rows) == 6  # 4 PCBE variants, FCFS, SJF
    for row in rows:
        # To the digits of Batsim's CSVs (6 decimals on a few seconds and a few hundred joules).
        assert worst(row) < 2e-7, row


def test_the_scaling_case_gives_table_5_3(shared_data):
    rows = load_script().run_case(shared_data / "pcbe" / "scaling")
    by_decider = {row["decider"]: row for row in rows}
    assert len(rows) == 7
    for decider, row in by_decider.items():
        if decider.endswith("resource_selection=low_power"):
            # Today's IRMaSim low_power order differs from the one the thesis ran (4.4% makespan).
            assert 0.04 < worst(row) < 0.05, row
        else:
            assert worst(row) < 1e-9, row


def _cli(*args: str, cwd: Path):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)


def test_the_command_lines_of_the_issue_run_irmasim_files_three_ways(shared_data, tmp_path):
    """`joulesim run` (decider process), `--in-process`, and `simulate` + `decide` by hand give
    the same outputs: consumed_joules is the thesis's total energy, job ids are the file's."""
    import subprocess
    import sys

    import pandas as pd

    case = shared_data / "pcbe" / "comparison" / "edp_2"
    inputs = ["-p", str(case / "platform.json"), "-w", str(case / "workload.json"), "-E"]
    decider = ["pcbe", "--option", "criterion=edp", "--option", "job_prio=hi_first", "--option", "node_prio=lo_first"]
    for name, extra in (("process", []), ("inproc", ["--in-process"])):
        result = _cli("run", *inputs, "-d", decider[0], *decider[1:], "-e", str(tmp_path / name / "out"), *extra,
                      cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "node model            modelV1, idle power irmasim" in result.stdout
    endpoint = f"ipc://{tmp_path}/decider.sock"
    process = subprocess.Popen([sys.executable, "-m", "joulesim.cli.main", "decide", *decider, "-s", endpoint,
                                "--timeout", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        result = _cli("simulate", *inputs, "-e", str(tmp_path / "byhand" / "out"), "-s", endpoint, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert process.wait(30) == 0
    finally:
        process.kill()
    jobs = {name: (tmp_path / name / "out_jobs.csv").read_bytes() for name in ("process", "inproc", "byhand")}
    assert jobs["process"] == jobs["inproc"] == jobs["byhand"]
    schedule = pd.read_csv(tmp_path / "byhand" / "out_schedule.csv").iloc[0]
    published = pd.read_csv(case / "results.csv")["edp 1 0"]
    assert schedule["consumed_joules"] == pytest.approx(published[1], abs=1e-6)
    assert schedule["makespan"] == pytest.approx(published[0], abs=1e-6)
    workload_ids = {str(job["id"]) for job in __import__("json").loads((case / "workload.json").read_text())["jobs"]}
    assert set(pd.read_csv(tmp_path / "byhand" / "out_jobs.csv", dtype={"job_id": str})["job_id"]) == workload_ids
