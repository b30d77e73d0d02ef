"""An energy run says when its jobs drew no computing power (issue 47, item 2).

A delay job leaves its hosts at idle power (Batsim's rule), so `-E` on a workload of delays
measures idle machines only: the README's headline energy example did, 153.0 kWh being 32 hosts
x 95 W x the makespan. The shipped `default_compute` holds the same jobs as computations.
"""

from __future__ import annotations

from click.testing import CliRunner

from joulesim.cli.main import main

from conftest import read_csv

WARNING = "warning               every job was a delay, which leaves its hosts at idle power"


def run(tmp_path, workload: str) -> tuple[str, float]:
    result = CliRunner().invoke(main, ["run", "--in-process", "--no-progress", "-p", "homogeneous240", "--mmax", "32",
                                       "-w", workload, "-E", "-e", str(tmp_path / workload)])
    assert result.exit_code == 0, result.output
    return result.output, float(read_csv(str(tmp_path / f"{workload}_schedule.csv"))[0]["consumed_joules"])


def test_a_run_of_delays_with_energy_says_its_machines_stayed_idle(tmp_path):
    summary, idle_joules = run(tmp_path, "default")
    assert WARNING in summary
    computing, joules = run(tmp_path, "default_compute")
    assert WARNING not in computing
    # the same schedule (the same run times), with the jobs' hosts computing: 263.7 kWh, not 153.0
    jobs = read_csv(str(tmp_path / "default_jobs.csv"))
    compute_jobs = read_csv(str(tmp_path / "default_compute_jobs.csv"))
    assert [(j["job_id"], j["starting_time"]) for j in jobs] == [(j["job_id"], j["starting_time"]) for j in compute_jobs]
    assert f"{idle_joules / 3.6e6:.1f}" == "153.0" and f"{joules / 3.6e6:.1f}" == "263.7"


def test_a_run_without_energy_gets_no_such_warning(tmp_path):
    result = CliRunner().invoke(main, ["run", "--in-process", "--no-progress", "-e", str(tmp_path / "out")])
    assert result.exit_code == 0 and "warning" not in result.output
