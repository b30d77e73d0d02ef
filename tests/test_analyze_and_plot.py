"""`joulesim analyze` and `joulesim plot` on runs whose figures are computed by hand."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import run_in_process, write_platform, write_workload

from joulesim.deciders import load_decider

JOULESIM = [sys.executable, "-m", "joulesim.cli.main"]


def joulesim(*args: str, cwd=None):
    return subprocess.run([*JOULESIM, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def fcfs_run(tmp_path):
    """4 hosts, FCFS: A (2 hosts) 0-100; B (4 hosts, submitted at 0) 100-105; C (1 host,
    submitted at 10) waits behind B, 105-1105."""
    platform = write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [
        {"id": "A", "subtime": 0, "res": 2, "delay": 100},
        {"id": "B", "subtime": 0, "res": 4, "delay": 5},
        {"id": "C", "subtime": 10, "res": 1, "delay": 1000},
    ])
    prefix = str(tmp_path / "fcfs" / "out")
    run_in_process(load_decider("fcfs", {}), platform, [workload], prefix)
    return prefix


def test_analyze_json_gives_the_hand_computed_metrics(fcfs_run):
    result = joulesim("analyze", fcfs_run, "--json")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert (row["nb_jobs"], row["nb_jobs_success"], row["nb_jobs_rejected"]) == (3, 3, 0)
    assert row["makespan"] == 1105
    assert row["mean_waiting_time"] == pytest.approx((0 + 100 + 95) / 3)
    assert row["max_waiting_time"] == 100
    # Bounded slowdown, tau = 10 s: A 100/100 = 1, B 105/max(5, 10) = 10.5, C 1095/1000.
    assert row["mean_bounded_slowdown"] == pytest.approx((1 + 10.5 + 1.095) / 3)
    assert row["max_bounded_slowdown"] == pytest.approx(10.5)
    # Machine-seconds 2x100 + 4x5 + 1x1000 over 4 hosts x 1105 s.
    assert row["utilization"] == pytest.approx(1220 / (4 * 1105))
    tau_60 = json.loads(joulesim("analyze", fcfs_run, "--json", "--tau", "60").stdout)[0]
    assert tau_60["max_bounded_slowdown"] == pytest.approx(105 / 60)


def test_analyze_compares_runs_side_by_side(fcfs_run, tmp_path):
    other = str(tmp_path / "again" / "out")
    run_in_process(load_decider("easy", {}), str(tmp_path / "platform.xml"), [str(tmp_path / "workload.json")], other)
    result = joulesim("analyze", fcfs_run, other)
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert fcfs_run in header and other in header
    makespan = next(r for r in rows if r.startswith("makespan"))
    assert "1,105.0" in makespan


def test_analyze_names_a_missing_output(tmp_path):
    result = joulesim("analyze", str(tmp_path / "nothing"))
    assert result.returncode != 0
    assert "nothing_jobs.csv" in result.stderr and "Traceback" not in result.stderr


def test_plot_writes_readable_pngs(fcfs_run, tmp_path):
    image = pytest.importorskip("matplotlib.image", reason="matplotlib is in the test extras")
    result = joulesim("plot", fcfs_run, "-o", str(tmp_path / "plots"))
    assert result.returncode == 0, result.stderr
    pngs = sorted((tmp_path / "plots").glob("*.png"))
    assert [p.name.split("_")[-1] for p in pngs] == ["gantt.png", "states.png"]
    for png in pngs:
        height, width, _ = image.imread(png).shape
        assert width >= 800 and height >= 400
    compare = tmp_path / "compare.png"
    result = joulesim("plot", "--compare", fcfs_run, fcfs_run, "-o", str(compare))
    assert result.returncode == 0, result.stderr
    assert image.imread(compare).shape[1] >= 800


def test_power_plot_when_the_run_has_energy(fcfs_run, tmp_path):
    """Batsim's out_consumed_energy.csv: cumulative joules at each event (here 100 W, then 50 W)."""
    image = pytest.importorskip("matplotlib.image", reason="matplotlib is in the test extras")
    with open(f"{fcfs_run}_consumed_energy.csv", "w") as f:
        f.write("time,energy,event_type,wattmin,epower\n"
                "0,0,s,40,100\n10,1000,e,40,50\n20,1500,s,40,50\n")
    result = joulesim("plot", fcfs_run, "-o", str(tmp_path / "plots"))
    assert result.returncode == 0, result.stderr
    [power] = (tmp_path / "plots").glob("*power*.png")
    assert image.imread(power).shape[1] >= 800


def test_analyze_and_plot_a_run_simulated_with_energy(tmp_path):
    """A real -E run (its consumed-energy file has NA epower cells, as Batsim's has): two jobs of
    10 s on the 95 W / 190.74 W hosts of energy2, so 2 x 190.74 x 10 J."""
    pytest.importorskip("matplotlib", reason="matplotlib is in the test extras")
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 1, "profile": "ten"},
        {"id": 2, "subtime": 0, "res": 1, "profile": "ten"},
    ], {"ten": {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0}})
    prefix = str(tmp_path / "energy" / "out")
    run_in_process(load_decider("fcfs", {}), "energy2", [workload], prefix, energy=True)
    with open(f"{prefix}_consumed_energy.csv") as f:
        assert ",NA\n" in f.read()
    result = joulesim("analyze", prefix, "--json")
    assert result.returncode == 0, result.stderr
    [metrics] = json.loads(result.stdout)
    assert metrics["consumed_joules"] == pytest.approx(2 * 190.74 * 10)
    plotted = joulesim("plot", prefix, "-o", str(tmp_path / "plots"))
    assert plotted.returncode == 0, plotted.stderr
    assert list((tmp_path / "plots").glob("*power*.png"))
