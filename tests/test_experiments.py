"""experiments/energy_shutdown/run.py on a small slice of KTH-SP2: EASY and opportunistic shutdown."""

from __future__ import annotations

import csv
import subprocess

from conftest import REPO_ROOT, experiment_command

SCRIPT = experiment_command("energy_shutdown")  # run from the repository root (cwd=REPO_ROOT)

EXPECTED_COLUMNS = ["instance", "algorithm", "parameters", "energy_J", "energy_norm",
                    "energy_idle_compute_J", "energy_idle_compute_norm", "mean_waiting_time_s",
                    "mean_bounded_slowdown", "max_waiting_time_s", "nb_machine_switches", "makespan_s",
                    "wall_time_s", "nb_jobs", "nb_jobs_killed", "time_computing_s"]


def test_energy_shutdown_script_on_a_slice(shared_data, tmp_path):
    trace = shared_data / "swf" / "KTH-SP2-1996-2.1-cln.swf"
    proc = subprocess.run(
        [*SCRIPT, "--jobs", "300", "--workers", "2", "--only", "easy,os_tidle0",
         "--trace", str(trace), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr

    with open(tmp_path / "results.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == EXPECTED_COLUMNS
        rows = {row["instance"]: row for row in reader}
    assert set(rows) == {"easy", "os_tidle0"}
    easy, os0 = rows["easy"], rows["os_tidle0"]

    assert float(easy["energy_norm"]) == 1.0  # the reference, exactly
    assert float(easy["energy_idle_compute_norm"]) == 1.0
    assert int(easy["nb_machine_switches"]) == 0
    assert int(easy["nb_jobs"]) == int(os0["nb_jobs"]) == 300
    assert float(os0["energy_J"]) < float(easy["energy_J"])
    assert 0 < float(os0["energy_norm"]) < 1
    assert int(os0["nb_machine_switches"]) > 0
    # Switching machines on before jobs can start only delays them.
    assert float(os0["mean_waiting_time_s"]) >= float(easy["mean_waiting_time_s"])

    # With compute jobs and no switches, EASY's energy with computing hosts at idle power is
    # the idle power of every machine over the makespan: 100 x 95 W x makespan.
    assert abs(float(easy["energy_idle_compute_J"]) - 100 * 95.0 * float(easy["makespan_s"])) < 1.0

    assert "| easy |" in (tmp_path / "results.md").read_text()
    for name in ("fig7_2_energy_vs_mean_waiting_time.png", "fig7_4_energy_vs_switches.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_energy_shutdown_script_without_trace(tmp_path):
    proc = subprocess.run(
        [*SCRIPT, "--trace", str(tmp_path / "absent.swf"), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert proc.returncode == 2
    assert "not found" in proc.stderr and "../shared/data" in proc.stderr
