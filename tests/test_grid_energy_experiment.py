"""Seed 004 figures 1-2 experiment (experiments/grid_energy/run.py): T_be, exact energies of a
hand-computed case with and without shutdown, h_j on a hand-made queue, and --quick end to end."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import joulesim
from conftest import load_experiment_script

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "experiments" / "grid_energy" / "run.py"


@pytest.fixture(scope="module")
def ge():
    return load_experiment_script("grid_energy")


def test_break_even(ge):
    # P_idle T = E_sd + E_wu + P_sleep (T - t_sd - t_wu) at T = T_be
    t = ge.T_BE
    assert ge.IDLE_W * t == pytest.approx(ge.E_SD + ge.E_WU + ge.SLEEP_W * (t - ge.T_SD - ge.T_WU))
    assert ge.IDLE_W == pytest.approx(223.6) and ge.SLEEP_W == pytest.approx(15.6)
    # by hand: E_sd = 223.6*101/95*6.10, E_wu = 223.6*125.17/95*151.52
    e_sd = 223.6 * 101 / 95 * 6.10
    e_wu = 223.6 * 125.17 / 95 * 151.52
    assert t == pytest.approx((e_sd + e_wu - 15.6 * 157.62) / 208.0)
    assert t == pytest.approx(209.77, abs=0.01)
    assert ge.break_even(100.0, 300.0, 20.0, 10.0, 1.0, 4.0) == pytest.approx((400 - 50) / 10.0)


def _tiny():
    return {"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 1000, "profile": "p"},
                                  {"id": 2, "subtime": 2000, "res": 2, "walltime": 1000, "profile": "p"}],
            "profiles": {"p": {"type": "delay", "delay": 1000}}}


def test_energy_without_shutdown(ge):
    run = joulesim.simulate(ge.platform(2), ge.computing(_tiny()), "easy", energy=True)
    # [0, 3000]: host0 computes 0-1000 and 2000-3000, host1 2000-3000, idle otherwise
    expected = 520 * 3000 + 223.6 * 3000
    assert run.metrics["consumed_joules"] == pytest.approx(expected, rel=1e-12)
    assert ge.switch_ons(run.pstate_changes) == 0


def test_energy_with_shutdown(ge):
    run = joulesim.simulate(ge.platform(2), ge.computing(_tiny()), "easy", options={"t_idle": 100},
                            energy=True)
    t_end = 2000 + ge.T_WU + 1000
    # host0: compute 0-1000, idle 100 s, switch-off, sleep to 2000, switch-on, compute 1000 s
    host0 = 520 * 1000 + 223.6 * 100 + ge.P_SD * ge.T_SD + 15.6 * (2000 - 1100 - ge.T_SD) \
        + ge.P_WU * ge.T_WU + 520 * 1000
    # host1: idle 0-100, switch-off, sleep to 2000, switch-on, compute 1000 s
    host1 = 223.6 * 100 + ge.P_SD * ge.T_SD + 15.6 * (2000 - 100 - ge.T_SD) + ge.P_WU * ge.T_WU + 520 * 1000
    assert run.metrics["makespan"] == pytest.approx(t_end)
    assert run.metrics["consumed_joules"] == pytest.approx(host0 + host1, rel=1e-9)
    assert ge.switch_ons(run.pstate_changes) == 2
    assert run.metrics["nb_machine_switches"] == 4
    jobs = run.jobs.sort_values("job_id")
    assert ge.mean_queue_length(jobs) == pytest.approx(ge.T_WU / t_end)


def test_queue_estimates_by_hand(ge):
    # 4 nodes. job0: t=0, 4 wide, 100 s (runs 0-100). job1: t=10, 2 x 50 (queued until 100).
    # job2: t=20, 1 x 30 (queued until 100). job3: t=30: queue = job1 + job2 = 100 + 30 area.
    sub = np.array([0.0, 10, 20, 30])
    start = np.array([0.0, 100, 100, 100])
    finish = np.array([100.0, 150, 130, 140])
    width = np.array([4.0, 2, 1, 1])
    wall = np.array([100.0, 50, 30, 40])
    h_queue, h_ahead = ge.queue_estimates(sub, start, finish, width, wall, 4, chunk=3)
    assert h_queue.tolist() == pytest.approx([0, 0, 100 / 4, 130 / 4])
    # running: job0 with 100 - t left on 4 nodes
    assert h_ahead.tolist() == pytest.approx([0, 90, 100 / 4 + 80, 130 / 4 + 70])
    r = ge.estimate_ratios(np.array([0.0, 90, 80, 70]), h_queue, h_ahead)
    assert r["queued_share"] == 0.5
    assert r["ratio_queue"] == pytest.approx(150 / (130 / 4 + 100 / 4))
    assert r["wait_share"] == pytest.approx(150 / 240)
    assert ge.count_machines("0-3 7 9-10") == 7


def test_quick_end_to_end_leaves_the_readme_and_the_committed_results(ge, tmp_path):
    committed = {path: path.read_bytes() for path in [RUN.parent / "README.md", *sorted(ge.RESULTS.iterdir())]}
    out = tmp_path / "out"
    assert ge.main(["--quick", "--out", str(out), "--workers", "1"]) == 0
    for name in ("results/fig1.csv", "results/fig2.csv", "results/run.json", "fig1.png", "fig2.png"):
        assert (out / name).stat().st_size > 0
    fig1 = pd.read_csv(out / "results" / "fig1.csv")
    assert set(fig1["policy"]) == {"no shutdown", "shutdown"}
    s = ge.fig1_summary(fig1)
    assert (s["energy_kwh_shutdown"] < s["energy_kwh_no_shutdown"]).all()
    assert '"command": "python -m experiments.grid_energy.run --quick"' in (out / "results" / "run.json").read_text()
    assert {path: path.read_bytes() for path in committed} == committed
