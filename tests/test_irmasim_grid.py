"""Seed 002 experiments 1 and 2 (IRMaSim's heuristic grid): the thesis's figures, and IRMaSim's
own (run side by side here at commit 7a51f14: every pair of the grid agreed to 1e-10)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load_experiment_script

import joulesim

HERE = Path(__file__).resolve().parents[1] / "experiments" / "irmasim_grid"


def energy_and_makespan(experiment: str, job_selection: str, resource_selection: str, **kwargs) -> tuple[float, float]:
    folder = HERE / experiment
    result = joulesim.simulate(folder / "platform.json", folder / "workload.json", "heuristic", energy=True,
                               options={"job_selection": job_selection, "resource_selection": resource_selection},
                               **kwargs)
    return float(result.schedule["consumed_joules"]), float(result.schedule["makespan"])


def test_experiment_1_low_mem_ops_high_mem_bw_gives_the_thesis_energy():
    energy, makespan = energy_and_makespan("exp1", "low_mem_ops", "high_mem_bw")
    assert energy == pytest.approx(3575.0696, abs=1e-4)  # thesis: 3575.07 J
    assert makespan == pytest.approx(86.146044, abs=1e-6)


def test_experiment_1_under_the_physical_idle_rule_draws_more():
    # Min power from t=0 (the 8-core node idles 0.1 s before its first task): 3575.1305 J.
    energy, _ = energy_and_makespan("exp1", "low_mem_ops", "high_mem_bw", idle_power="always")
    assert energy == pytest.approx(3575.1305, abs=1e-4)


def test_experiment_2_smallest_high_mem_bw_gives_the_thesis_energy():
    energy, _ = energy_and_makespan("exp2", "smallest", "high_mem_bw")
    assert energy == pytest.approx(32093.767, abs=1e-3)  # thesis: 32,093.8 J


def test_the_best_heuristic_of_experiment_1_is_irmasims():
    # IRMaSim's grid ranks smallest / high_cores first (3559.93 J), below the thesis's figure.
    energy, makespan = energy_and_makespan("exp1", "smallest", "high_cores")
    assert energy == pytest.approx(3559.9286, abs=1e-4)
    assert makespan == pytest.approx(81.7252, abs=1e-4)


def test_the_script_runs_the_whole_grid_and_draws_the_charts(tmp_path):
    module = load_experiment_script("irmasim_grid")
    assert module.main(["--out", str(tmp_path), "--results", str(tmp_path / "results")]) == 0
    import pandas as pd

    grid = pd.read_csv(tmp_path / "results" / "grid.csv")
    assert len(grid) == 2 * 6 * 7
    assert {p.name for p in tmp_path.glob("*.png")} == {f"{e}_{m}.png" for e in ("exp1", "exp2") for m in ("energy", "edp")}
