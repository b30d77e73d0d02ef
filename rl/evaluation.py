"""Test runs of a trained model, as seed 002 reports them (figures 4.10-4.11, tables 4.6, 4.11, 4.14).

Each run is a whole simulation of the workload with decider `rl` (in this process, through the
protocol like any decider), sampling its actions with seed 0, 1, 2, ... (`mode="sample"`, the
thesis's test runs) or taking the best valid pair (`greedy`, one run is enough). The energy is
Batsim's consumed_joules, the makespan the last job's end, EDP their product, as the heuristic
grid reports them, so that reductions against a heuristic compare like with like.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

__all__ = ["evaluate_model", "Evaluation", "reduction"]


@dataclass
class Evaluation:
    runs: list[dict[str, float]]  # energy, makespan, edp per run

    def stats(self, metric: str) -> dict[str, float]:
        values = [run[metric] for run in self.runs]
        return {"min": min(values), "avg": sum(values) / len(values), "max": max(values)}


def evaluate_model(model: str | os.PathLike, platform: Any, workload: Any, runs: int = 100,
                   mode: str = "sample", seed: int = 0, platform_name: str | None = None,
                   idle_power: str = "irmasim", progress: bool = False) -> Evaluation:
    import joulesim
    from joulesim.rl.model_file import load_agent
    from joulesim.rl.ppo import PPOSettings
    from joulesim.rl.trained_policy import RLPolicy
    from joulesim.simulation_inputs import platform_from

    platform_model = platform_from(platform, None, platform_name)  # read once for every run
    loaded = load_agent(model, settings=PPOSettings(seed=seed))  # so is the model
    results = []
    bar = None
    if progress:
        from joulesim.console.progress_bar import progress_bar
        bar = progress_bar(runs, "evaluating", "run")
    for run in range(runs):
        loaded[0].reseed(seed + run)  # as a fresh load with this seed would start
        decider = RLPolicy({"model": os.fspath(model), "mode": mode, "seed": str(seed + run)}, loaded=loaded)
        result = joulesim.simulate(platform_model, workload, decider, energy=True, idle_power=idle_power)
        energy = float(result.schedule["consumed_joules"])
        makespan = float(result.schedule["makespan"])
        results.append({"run": run, "energy": energy, "makespan": makespan, "edp": energy * makespan})
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return Evaluation(results)


def reduction(reference: float, value: float) -> float:
    """Percentage reduction of `value` against `reference` (positive: better than the reference)."""
    return 100.0 * (reference - value) / reference
