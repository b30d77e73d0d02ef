"""Seed 002, experiments 1-3: train the Energy scheduler (PPO) on several seeds and compare it
with its baselines and the heuristics.

    python -m experiments.rl_energy.run                 # experiments 1 and 2, seeds 0-9, tables
    python -m experiments.rl_energy.run --seeds 5       # seeds 0-4
    python -m experiments.rl_energy.run --exp3          # experiment 3 too (long: see README.md)
    python -m experiments.rl_energy.run --ablation      # the thesis's agent, and each change to it
    python -m experiments.rl_energy.run --maskable      # sb3-contrib's MaskablePPO too (extra rl-baselines)
    python -m experiments.rl_energy.run --only exp2_edp # one configuration
    python -m experiments.rl_energy.run --retrain       # train again even where a model exists
    python -m experiments.rl_energy.run --runs 100      # test simulations per model (default 100)

For every configuration (a TOML file beside this script) and every training seed 0..N-1 (the
file's own seed is not used: no seed is chosen): train with `joulesim rl train`'s code (unless
out/rl_energy/NAME/seed_K/model.pt exists), then run the model `--runs` times on the whole
workload with sampled actions (seeds 0..runs-1), as the thesis's test runs, and `--unseen-runs`
times on each of `--unseen` workloads it never saw (`unseen_workloads`). The same test runs for
the baselines on the same observation: the untrained agent of each seed, and a uniformly random
valid action (decider random-pairs). Tables: mean, standard deviation and range over the
training seeds of the test-mean energy's and EDP's reduction against (a) the best heuristic of
the grid run under the agent's own step rule (one job started per time step: what learning
adds), (b) the heuristic the thesis names as best and the grid's best, both starting every job
that fits (the thesis's comparison, which mixes learning with the step rule). Results in
out/rl_energy/ (models, curves, results.csv); a whole run commits results/results.csv (the per-seed
rows), results/grids.csv (the heuristic grid under both rules, on the training workload and on
each unseen one) and results/run.json (where and how), and writes README.md's tables and every
figure its prose quotes from them:

    python -m experiments.rl_energy.run --readme-only   # README.md again from the committed results/

Each finished training's rows go to results/tasks.jsonl beside this script as it finishes (its
configuration file's digest, seed and test settings the key, and the kernels torch ran it with),
committed, so the rerun, hours long on two cores, can span sessions: a later run takes the rows
of every training recorded under the same key instead of training again (--retrain does not).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.irmasim_grid.run import run_grid
from experiments.campaign_records import read_keyed_lines, write_keyed_lines
from experiments.readme_results import write_readme
from experiments.run_record import duration_text, read_run_record, record_figures, write_run_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "rl_energy"  # /out/ is git-ignored
RESULTS = HERE / "results"  # what README.md's figures are written from (committed)
RECORD = RESULTS / "results.csv"  # the per-seed rows behind README.md's tables
GRIDS = RESULTS / "grids.csv"  # the heuristic grid under both step rules, training and unseen workloads
# Each finished training's rows, committed as they come: the whole rerun takes hours on two
# cores, so it spans sessions (whose out/ folders do not survive) and resumes from these.
TASK_RECORDS = RESULTS / "tasks.jsonl"

#: Configuration -> (experiment, row label in the tables).
CONFIGURATIONS = {
    "exp1_energy": ("exp1", "energy objective, no wait action"),
    "exp1_edp": ("exp1", "EDP objective, no wait action"),
    "exp1_energy_wait": ("exp1", "energy objective, wait action"),
    "exp1_edp_wait": ("exp1", "EDP objective, wait action"),
    "exp2_energy": ("exp2", "energy objective, no wait action"),
    "exp2_edp": ("exp2", "EDP objective, no wait action"),
    "exp2_energy_wait": ("exp2", "energy objective, wait action"),
    "exp2_edp_wait": ("exp2", "EDP objective, wait action"),
    "exp2_energy_no_energy_features": ("exp2", "energy objective, no energy-related features"),
    # Which of the three changes to the thesis's agent matter (README, "Why the thesis's agent collapses").
    "exp2_energy_ablation_thesis": ("exp2", "ablation: the thesis's agent (N(0, 1), SELU logit, matrix, unscaled)"),
    "exp2_energy_ablation_snn": ("exp2", "ablation: SNN network only (matrix, unscaled)"),
    "exp2_energy_ablation_snn_columns": ("exp2", "ablation: SNN network, per-feature normalisation (unscaled)"),
    "exp3_energy": ("exp3", "energy objective (SWA)"),
    "exp3_edp": ("exp3", "EDP objective (SWA)"),
}
#: The best heuristic each experiment's text names, with its figures in the thesis.
THESIS_BEST = {"exp1": ("low_mem_ops", "high_mem_bw", 3575.07), "exp2": ("smallest", "high_mem_bw", 32093.8),
               "exp3": ("smallest", "high_mem", None)}
#: The thesis's own reductions (tables 4.6, 4.11, 4.14), energy then EDP, min / avg / max.
THESIS_TABLES = {
    "exp1": {"no wait action": (20.20, 11.84, 0.28, 35.04, 22.54, 5.26),
             "wait action, energy objective": (20.58, 14.05, 0.03, 55.58, 29.13, 2.20),
             "wait action, EDP objective": (20.58, 8.80, -0.09, 55.58, 20.01, 1.77)},
    "exp2": {"energy objective": (26.02, 26.01, 26.00, 48.60, 48.59, 48.57),
             "EDP objective": (28.46, 28.25, 24.71, 55.62, 55.24, 49.22),
             "no energy-related features": (28.45, 28.10, 23.22, 55.61, 54.96, 42.28)},
    "exp3": {"energy objective": (3.37, -19.52, -61.58, 3.21, -90.49, -286.22),
             "EDP objective": (3.46, -16.87, -59.99, 3.33, -79.63, -285.67)},
}
INPUTS = {"exp1": REPO_ROOT / "experiments" / "irmasim_grid" / "exp1",
          "exp2": REPO_ROOT / "experiments" / "irmasim_grid" / "exp2", "exp3": HERE / "exp3"}


def heuristic_grid(experiment: str, per_step: str = "all") -> pd.DataFrame:
    """The heuristic grid on the experiment's inputs: starting every job that fits (`all`, the
    thesis's heuristics) or one job per time step (`one`, the rule the agent acts under)."""
    return run_grid(experiment, 0, INPUTS[experiment], per_step=per_step)


#: Workloads the agent never saw come from the thesis's generator of experiments 1-3: the same
#: job types in the same numbers, one every 0.05 s (tables 4.3, 4.8, 4.12), here in another order.
#: Drawn from this seed (fixed: never chosen per result), distinct from each other and from the
#: training order.
UNSEEN_SEED = 20261129


def unseen_workloads(experiment: str, count: int, folder: Path) -> list[Path]:
    """`count` workloads of the experiment's jobs in orders the agent never trained on, written
    under `folder`; the same files for the same count, whatever ran before."""
    source = json.loads((INPUTS[experiment] / "workload.json").read_text())
    jobs = source["jobs"]

    def order_key(order) -> tuple:
        return tuple((jobs[i]["profile"], jobs[i]["res"]) for i in order)

    seen = {order_key(range(len(jobs)))}
    rng = np.random.default_rng(UNSEEN_SEED)
    paths: list[Path] = []
    for _ in range(100_000):
        if len(paths) == count:
            return paths
        order = rng.permutation(len(jobs))
        key = order_key(order)
        if key in seen:
            continue
        seen.add(key)
        # Position k keeps the training workload's k-th arrival time; the job there is another.
        reordered = [{**jobs[i], "id": f"J{k}", "subtime": jobs[k]["subtime"]} for k, i in enumerate(order)]
        path = folder / experiment / f"unseen_{len(paths) + 1:02d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"profiles": source["profiles"], "jobs": reordered}, indent=1))
        paths.append(path)
    raise SystemExit(f"{experiment}: only {len(paths)} orders of its {len(jobs)} jobs differ from the training "
                     f"order; give --unseen {len(paths)} or fewer")


METRICS = ("energy", "edp", "makespan")


def _stats(runs: list[dict[str, float]]) -> dict[str, float]:
    return {f"{m}_{k}": float(f(np.array([r[m] for r in runs])))
            for m in METRICS for k, f in (("min", np.min), ("avg", np.mean), ("max", np.max))}


def worker_torch():
    """torch for a training worker: loaded once joulesim.rl has pinned its CPU kernels (results
    depend on them: joulesim/rl/cpu_kernels.py; torch imported first would keep the CPU's own),
    on one thread (the trainings run side by side)."""
    import joulesim.rl  # noqa: F401  (before torch)
    import torch

    torch.set_num_threads(1)
    return torch


def train_and_test(name: str, seed: int, out: Path, runs: int, retrain: bool, unseen: list[Path] = (),
                   unseen_runs: int = 10) -> list[dict]:
    """Train configuration `name` with training seed `seed`, test it, and test the untrained
    agent of that seed on the same observation: two result rows on the training workload, then
    two per workload of `unseen` (`unseen_runs` test runs each)."""
    worker_torch()
    from joulesim.rl.evaluation import evaluate_model
    from joulesim.rl.model_file import save_agent
    from joulesim.rl.ppo import PPOAgent, PPOSettings
    from joulesim.rl.training import make_environment, model_metadata, train
    from joulesim.rl.training_config import load_training_config

    config = load_training_config(HERE / f"{name}.toml")
    config.seed = seed
    folder = out / name / f"seed_{seed}"
    model = folder / "model.pt"
    if retrain or not model.is_file():
        outcome = train(config, folder, progress=False)
        (folder / "training_time.json").write_text(json.dumps({"wall_s": outcome.wall_s}))
    trained_s = json.loads((folder / "training_time.json").read_text())["wall_s"]
    curve = pd.read_csv(folder / "training.csv")
    fifth = max(1, len(curve) // 5)
    # The agent as training starts (same seed, same settings): the untrained baseline.
    env = make_environment(config)
    agent = PPOAgent(env.n_actions, len(env.features), PPOSettings(seed=seed, **config.ppo))
    untrained = folder / "untrained.pt"
    save_agent(untrained, agent, {**model_metadata(config, env), "trained_simulations": 0})
    env.close()
    experiment, label = CONFIGURATIONS[name]
    inputs = INPUTS[experiment]
    rows = []
    for kind, path in (("trained", model), ("untrained", untrained)):
        evaluation = evaluate_model(path, inputs / "platform.json", inputs / "workload.json", runs, "sample", 0)
        pd.DataFrame(evaluation.runs).to_csv(folder / f"test_runs_{kind}.csv", index=False)
        rows.append({"name": name, "experiment": experiment, "label": label, "seed": seed, "kind": kind,
                     "workload": "training", "training_s": trained_s if kind == "trained" else 0.0,
                     "curve_first_fifth": float(curve.energy.iloc[:fifth].mean()),
                     "curve_last_fifth": float(curve.energy.iloc[-fifth:].mean()),
                     "final_entropy": float(curve.entropy.iloc[-1]), **_stats(evaluation.runs)})
        for workload in unseen:
            evaluation = evaluate_model(path, inputs / "platform.json", workload, unseen_runs, "sample", 0)
            rows.append({"name": name, "experiment": experiment, "label": label, "seed": seed, "kind": kind,
                         "workload": workload.stem, **_stats(evaluation.runs)})
    return rows


def maskable_train_and_test(name: str, seed: int, out: Path, runs: int, retrain: bool, unseen: list[Path] = (),
                            unseen_runs: int = 10) -> list[dict]:
    """The yardstick: sb3-contrib's MaskablePPO, same environment, hyperparameters and budget."""
    worker_torch()
    from joulesim.rl.maskable_baseline import evaluate_maskable, train_maskable
    from joulesim.rl.training_config import load_training_config

    config = load_training_config(HERE / f"{name}.toml")
    folder = out / name / f"seed_{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    model = folder / "maskable_ppo.zip"
    if retrain or not model.is_file():
        started = time.perf_counter()
        train_maskable(config, seed, model)
        (folder / "maskable_time.json").write_text(json.dumps({"wall_s": time.perf_counter() - started}))
    trained_s = json.loads((folder / "maskable_time.json").read_text())["wall_s"]
    runs_list = evaluate_maskable(model, config, runs)
    pd.DataFrame(runs_list).to_csv(folder / "test_runs_maskable.csv", index=False)
    experiment, label = CONFIGURATIONS[name]
    rows = [{"name": name, "experiment": experiment, "label": label, "seed": seed, "kind": "maskable",
             "workload": "training", "training_s": trained_s, **_stats(runs_list)}]
    for workload in unseen:
        rows.append({"name": name, "experiment": experiment, "label": label, "seed": seed, "kind": "maskable",
                     "workload": workload.stem,
                     **_stats(evaluate_maskable(model, config, unseen_runs, workload=workload))})
    return rows


def random_valid(name: str, runs: int, workload: Path | None = None) -> dict:
    """A uniformly random valid action at each step (decider random-pairs), `runs` seeds, on the
    steps configuration `name` trains on (its jobs in view, wait action and wait budget), on its
    training workload or on `workload`."""
    import joulesim
    from joulesim.rl.training import make_environment
    from joulesim.rl.training_config import load_training_config

    env = make_environment(load_training_config(HERE / f"{name}.toml"))
    options = {"num_jobs": str(env.num_jobs), "wait": str(env.wait_action).lower(),
               "wait_interval": repr(env.wait_interval), "max_waits": str(env.max_waits)}
    env.close()
    experiment, wait = CONFIGURATIONS[name][0], env.wait_action
    inputs = INPUTS[experiment]
    results = []
    for run in range(runs):
        result = joulesim.simulate(inputs / "platform.json", workload or inputs / "workload.json", "random-pairs",
                                   options={**options, "seed": str(run)}, energy=True, idle_power="irmasim")
        energy, makespan = float(result.schedule["consumed_joules"]), float(result.schedule["makespan"])
        results.append({"energy": energy, "makespan": makespan, "edp": energy * makespan})
    return {"name": f"{experiment}_random{'_wait' if wait else ''}", "experiment": experiment,
            "label": f"random valid action{', wait action' if wait else ''}", "seed": -1, "kind": "random",
            "workload": workload.stem if workload is not None else "training", "training_s": 0.0, **_stats(results)}


def _row_groups(rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Trained configurations, then their untrained agents (by observation), then random."""
    groups = []
    for name in [n for n in CONFIGURATIONS if n in set(rows.name)]:
        trained = rows[(rows.name == name) & (rows.kind == "trained")]
        if len(trained):
            groups.append((CONFIGURATIONS[name][1], trained))
    for name in [n for n in CONFIGURATIONS if n in set(rows.name)]:
        maskable = rows[(rows.name == name) & (rows.kind == "maskable")]
        if len(maskable):
            groups.append((f"MaskablePPO (sb3-contrib), {CONFIGURATIONS[name][1]}", maskable))
    seen = set()
    for name in [n for n in CONFIGURATIONS if n in set(rows.name)]:
        untrained = rows[(rows.name == name) & (rows.kind == "untrained")]
        # What the untrained agent depends on: its inputs, and for the ablations its network.
        observation = ("wait" in name, "no_energy" in name, name if "ablation" in name else "")
        if len(untrained) and observation not in seen:
            seen.add(observation)
            what = ", ".join(x for x in ("wait action" if observation[0] else "",
                                         "no energy-related features" if observation[1] else "",
                                         name.split("ablation_")[-1] + " ablation" if observation[2] else "") if x)
            groups.append((f"untrained agent{' (' + what + ')' if what else ''}", untrained))
    for name in sorted(set(rows[rows.kind == "random"].name)):
        group = rows[rows.name == name]
        groups.append((group.label.iloc[0], group))
    return groups


def _cell(values: list[float]) -> str:
    """mean ± standard deviation [min, max] over the seeds (one value alone: itself)."""
    values = [v for v in values if not np.isnan(v)]
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{np.mean(values):.2f} ± {np.std(values, ddof=1):.2f} [{min(values):.2f}, {max(values):.2f}]"


def heuristic_grids(experiments: list[str], unseen: dict[str, int]) -> pd.DataFrame:
    """Each experiment's heuristic grid as the thesis ran it (rule `all`: every job that fits
    starts) and under the agent's rule (`one`: one job per time step) on the training workload,
    and under the agent's rule on each of its first `unseen[experiment]` unseen workloads."""
    import tempfile

    frames = []
    for experiment in experiments:
        for rule in ("all", "one"):
            frames.append(heuristic_grid(experiment, rule).assign(experiment=experiment, rule=rule,
                                                                  workload="training"))
        with tempfile.TemporaryDirectory() as folder:
            for path in unseen_workloads(experiment, unseen.get(experiment, 0), Path(folder)):
                frames.append(run_grid(experiment, 0, INPUTS[experiment], per_step="one", workload=path)
                              .assign(experiment=experiment, rule="one", workload=path.stem))
    columns = ["experiment", "rule", "workload", "job_selection", "resource_selection", "energy", "makespan", "edp"]
    return pd.concat(frames, ignore_index=True)[columns]


def unseen_references(grids: pd.DataFrame, experiment: str) -> dict[str, tuple[float, float]]:
    """Per workload the agent never saw: the energy of the pair that was best on the training
    workload under the agent's rule, and the energy of that workload's own best pair (both one
    job per time step)."""
    own = grids[(grids.experiment == experiment) & (grids.rule == "one")]
    best = own[own.workload == "training"].sort_values("energy").iloc[0]
    references = {}
    for workload, grid in own[own.workload != "training"].groupby("workload"):
        chosen = grid[(grid.job_selection == best.job_selection)
                      & (grid.resource_selection == best.resource_selection)].energy.iloc[0]
        references[workload] = (float(chosen), float(grid.energy.min()))
    return references


def unseen_reductions(group: pd.DataFrame, unseen_rows: pd.DataFrame,
                      references: dict[str, tuple[float, float]]) -> tuple[list[float], list[float]]:
    """Per seed of `group` (one configuration and kind of agent), the mean over the unseen
    workloads of its test-mean energy's reduction against the pair best on the training workload,
    and against each workload's own best pair (unseen_references)."""
    from joulesim.rl.evaluation import reduction

    same_pair, own_best = [], []
    for seed in group.seed:
        seen = unseen_rows[(unseen_rows.name == group.name.iloc[0]) & (unseen_rows.kind == group.kind.iloc[0])
                           & (unseen_rows.seed == seed)]
        if len(seen) and references:
            pairs = list(zip(seen.workload, seen.energy_avg))
            same_pair.append(float(np.mean([reduction(references[w][0], e) for w, e in pairs])))
            own_best.append(float(np.mean([reduction(references[w][1], e) for w, e in pairs])))
    return same_pair, own_best


def markdown(results: pd.DataFrame, grids: pd.DataFrame) -> str:
    """The tables, from the per-seed rows and the heuristic grids (heuristic_grids)."""
    from joulesim.rl.evaluation import reduction

    lines = []
    for experiment in sorted(results.experiment.unique()):
        everything = results[results.experiment == experiment]
        rows = everything[everything.workload == "training"]
        unseen_rows = everything[everything.workload != "training"]
        unseen_names = sorted(set(unseen_rows.workload))
        seeds = sorted(rows[rows.kind == "trained"].seed.unique())
        training_grids = grids[(grids.experiment == experiment) & (grids.workload == "training")]
        grid = training_grids[training_grids.rule == "all"]
        same_rule = training_grids[training_grids.rule == "one"]
        best_one_energy = same_rule.sort_values("energy").iloc[0]
        best_one_edp = same_rule.sort_values("edp").iloc[0]
        best_energy = grid.sort_values("energy").iloc[0]
        best_edp = grid.sort_values("edp").iloc[0]
        job, resource, _ = THESIS_BEST[experiment]
        named = grid[(grid.job_selection == job) & (grid.resource_selection == resource)].iloc[0]
        references = unseen_references(grids, experiment) if unseen_names else {}
        lines += [f"**{experiment}** - training seeds {', '.join(map(str, seeds))}. The heuristic grid, one job "
                  f"started per time step as the agent acts: best {best_one_energy.job_selection} / "
                  f"{best_one_energy.resource_selection}, {best_one_energy.energy:,.2f} J; best EDP "
                  f"{best_one_edp.job_selection} / {best_one_edp.resource_selection}, {best_one_edp.edp:,.0f} J s. "
                  f"Every job that fits started, as the thesis ran it: best {best_energy.job_selection} / "
                  f"{best_energy.resource_selection}, {best_energy.energy:,.2f} J; best EDP "
                  f"{best_edp.job_selection} / {best_edp.resource_selection}, {best_edp.edp:,.0f} J s; the thesis's "
                  f"best {job} / {resource}: {named.energy:,.2f} J, {named.edp:,.0f} J s.", ""]
        unseen_text = (f"; on the {len(unseen_names)} workloads it never saw (the same jobs in other orders), "
                       "the mean over them of the test-mean energy's reduction against the pair best on the "
                       "training workload under the agent's rule, and against each workload's own best pair"
                       if unseen_names else "")
        lines += ["what learning adds: reduction (%) of the test-mean energy and EDP (sampled test runs) against the best heuristic of the grid under the agent's step rule (per "
                  f"metric){unseen_text}. Each cell: mean ± standard deviation [min, max] over the training seeds:",
                  "", "| | energy | EDP | unseen: energy against the same pair | unseen: against each one's best |",
                  "|---|---:|---:|---:|---:|"]
        for label, group in _row_groups(rows):
            energy = [reduction(best_one_energy.energy, v) for v in group.energy_avg]
            edp = [reduction(best_one_edp.edp, v) for v in group.edp_avg]
            same_pair, own_best = unseen_reductions(group, unseen_rows, references)
            lines.append(f"| {label} | {_cell(energy)} | {_cell(edp)} | {_cell(same_pair)} | {_cell(own_best)} |")
        lines += ["", "the thesis's comparison: reduction (%) of the test-mean energy and EDP against heuristics "
                  "that start every job that fits (this mixes learning with the step rule). Each cell: mean ± "
                  "standard deviation [min, max] over the training seeds:", "",
                  f"| | energy, against {job} / {resource} | EDP, against it | energy, against the grid's best | "
                  "EDP, against the grid's best |", "|---|---:|---:|---:|---:|"]
        for label, group in _row_groups(rows):
            lines.append(f"| {label} | " + " | ".join(_cell([reduction(ref, v) for v in group[column]]) for ref, column in (
                (named.energy, "energy_avg"), (named.edp, "edp_avg"), (best_energy.energy, "energy_avg"),
                (best_edp.edp, "edp_avg"))) + " |")
        header = ("| | energy min | avg | max | EDP min | avg | max |", "|---|---:|---:|---:|---:|---:|---:|")
        lines += ["", "the thesis's table (its own runs, the most promising of several trainings, against its best "
                  "heuristic; min and max are its best and worst test run):", "", *header]
        for label, values in THESIS_TABLES[experiment].items():
            lines.append(f"| {label} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
        lines += ["", "test-mean energy (J) of each training seed, the untrained agent of the same seed, the mean over "
                  "the unseen workloads, and the training curve (mean energy of the first and last fifth of the "
                  "training simulations):", "",
                  "| configuration | seed | trained | untrained | unseen | curve first -> last fifth | final entropy | "
                  "training s |", "|---|---:|---:|---:|---:|---|---:|---:|"]
        trained = rows[rows.kind.isin(["trained", "maskable"])]
        for row in trained.itertuples():
            base = rows[(rows.name == row.name) & (rows.seed == row.seed) & (rows.kind == "untrained")]
            untrained_avg = f"{base.energy_avg.iloc[0]:,.0f}" if len(base) else "-"
            seen = unseen_rows[(unseen_rows.name == row.name) & (unseen_rows.seed == row.seed)
                               & (unseen_rows.kind == row.kind)]
            unseen_avg = f"{seen.energy_avg.mean():,.0f}" if len(seen) else "-"
            if row.kind == "maskable":
                lines.append(f"| {row.name} (MaskablePPO) | {row.seed} | {row.energy_avg:,.0f} | - | {unseen_avg} | - | - | "
                             f"{row.training_s:.0f} |")
                continue
            lines.append(f"| {row.name} | {row.seed} | {row.energy_avg:,.0f} | {untrained_avg} | {unseen_avg} | "
                         f"{row.curve_first_fifth:,.0f} -> {row.curve_last_fifth:,.0f} | {row.final_entropy:.3f} | "
                         f"{row.training_s:.0f} |")
        lines.append("")
    return "\n".join(lines).rstrip()


# ---------------------------------------------------------------- README.md's figures
def _mean_sd(values: list[float]) -> str:
    """"26.82 ± 1.06 %": the mean and standard deviation over the training seeds."""
    return f"{np.mean(values):.2f} ± {np.std(values, ddof=1):.2f} %" if len(values) > 1 else f"{values[0]:.2f} %"


def _span(values, unit: str = " J", digits: int = 0) -> str:
    """"22,974-23,799 J": the range over the training seeds."""
    low, high = min(values), max(values)
    if f"{low:,.{digits}f}" == f"{high:,.{digits}f}":
        return f"{low:,.{digits}f}{unit}"
    return f"{low:,.{digits}f}-{high:,.{digits}f}{unit}"


def _count(k: int, n: int) -> str:
    """"all 10 seeds", "none of the 10 seeds", "3 of 10 seeds"."""
    return f"all {n} seeds" if k == n else f"none of the {n} seeds" if k == 0 else f"{k} of {n} seeds"


def configuration_figures(results: pd.DataFrame, grids: pd.DataFrame) -> dict[str, str]:
    """For each configuration's trained agents (KEY = its name), MaskablePPO's (maskable.KEY) and
    the untrained ones (untrained.KEY): their reductions against the thesis's named heuristic
    (KEY.named, KEY.named_edp), the grid's best (KEY.grid, KEY.grid_edp) and the grid's best under
    their own step rule (KEY.one); their test-mean energies (KEY.per_seed), their untrained
    agents' (KEY.untrained) and how many seeds end below them (KEY.below, KEY.closest: the
    smallest gap); how many learn nothing (KEY.flat: within 1 % of the untrained agent or above
    it); the test runs' extremes (KEY.runs); training times (KEY.training); on the unseen
    workloads (KEY.unseen_same, KEY.unseen_best). Per experiment: the random valid action's
    (EXP.random[_wait].one, .named, .energy), the grid's best under the agent's rule
    (EXP.one_best) and the thesis's named heuristic's energy (EXP.named_energy)."""
    from joulesim.rl.evaluation import reduction

    figures: dict[str, str] = {}
    training = results[results.workload == "training"]
    unseen_rows = results[results.workload != "training"]
    for experiment in sorted(training.experiment.unique()):
        grid = grids[(grids.experiment == experiment) & (grids.workload == "training")]
        thesis_rule, own_rule = grid[grid.rule == "all"], grid[grid.rule == "one"]
        job, resource, _ = THESIS_BEST[experiment]
        named = thesis_rule[(thesis_rule.job_selection == job) & (thesis_rule.resource_selection == resource)].iloc[0]
        references = unseen_references(grids, experiment) if len(unseen_rows) else {}
        for name in [n for n in CONFIGURATIONS if CONFIGURATIONS[n][0] == experiment]:
            untrained = training[(training.name == name) & (training.kind == "untrained")].set_index("seed")
            for kind, prefix in (("trained", ""), ("maskable", "maskable."), ("untrained", "untrained.")):
                group = training[(training.name == name) & (training.kind == kind)].sort_values("seed")
                if not len(group):
                    continue
                key = prefix + name
                energy, edp = group.energy_avg.tolist(), group.edp_avg.tolist()
                figures[f"{key}.named"] = _mean_sd([reduction(named.energy, v) for v in energy])
                figures[f"{key}.named_edp"] = _mean_sd([reduction(named.edp, v) for v in edp])
                figures[f"{key}.grid"] = _mean_sd([reduction(thesis_rule.energy.min(), v) for v in energy])
                figures[f"{key}.grid_edp"] = _mean_sd([reduction(thesis_rule.edp.min(), v) for v in edp])
                figures[f"{key}.one"] = _mean_sd([reduction(own_rule.energy.min(), v) for v in energy])
                figures[f"{key}.per_seed"] = _span(energy)
                figures[f"{key}.runs"] = f"{group.energy_min.min():,.2f} J and {group.energy_max.max():,.2f} J"
                figures[f"{key}.training"] = _span(group.training_s, " s")
                same, best = unseen_reductions(group, unseen_rows, references)
                figures[f"{key}.unseen_same"] = _mean_sd(same) if same else "not measured"
                figures[f"{key}.unseen_best"] = _mean_sd(best) if best else "not measured"
                if len(untrained) and kind != "untrained":  # (against its own untrained agent)
                    base = untrained.loc[group.seed, "energy_avg"].to_numpy()
                    gaps = base - group.energy_avg.to_numpy()
                    figures[f"{key}.untrained"] = _span(base)
                    figures[f"{key}.below"] = _count(int((gaps > 0).sum()), len(gaps))
                    figures[f"{key}.closest"] = f"{gaps.min():,.0f} J"
                    figures[f"{key}.flat"] = _count(int((gaps < 0.01 * base).sum()), len(gaps))
        for wait in (False, True):
            rows = training[(training.kind == "random") & (training.experiment == experiment)
                            & (training.label.str.contains("wait") == wait)]
            if len(rows):
                key = f"{experiment}.random{'_wait' if wait else ''}"
                figures[f"{key}.one"] = _mean_sd([reduction(own_rule.energy.min(), v) for v in rows.energy_avg])
                figures[f"{key}.named"] = _mean_sd([reduction(named.energy, v) for v in rows.energy_avg])
                figures[f"{key}.energy"] = f"{rows.energy_avg.iloc[0]:,.0f} J"
        figures[f"{experiment}.one_best"] = (f"{own_rule.sort_values('energy').iloc[0].energy:,.2f} J")
        figures[f"{experiment}.named_energy"] = f"{named.energy:,.2f} J"
    return figures


def same_rule_figure(results: pd.DataFrame, grids: pd.DataFrame) -> str:
    """Which trained configurations (MaskablePPO's too) beat, on average over their seeds, the
    grid's best under their own step rule on the test-mean energy."""
    from joulesim.rl.evaluation import reduction

    beaters, total = [], 0
    training = results[(results.workload == "training") & results.kind.isin(["trained", "maskable"])]
    for (name, kind), group in training.groupby(["name", "kind"], sort=True):
        experiment = CONFIGURATIONS[name][0]
        own = grids[(grids.experiment == experiment) & (grids.workload == "training") & (grids.rule == "one")]
        total += 1
        if np.mean([reduction(own.energy.min(), v) for v in group.energy_avg]) > 0:
            beaters.append(f"{'MaskablePPO, ' if kind == 'maskable' else ''}{experiment} {CONFIGURATIONS[name][1]}")
    if not beaters:
        return f"none of the {total} trained configurations beats"
    return f"{len(beaters)} of the {total} trained configurations ({'; '.join(beaters)}) " \
           f"beat{'s' if len(beaters) == 1 else ''}"


def diagnosis_figures(results: Path) -> dict[str, str]:
    """The figures of "Why the thesis's agent collapses", from experiments/rl_energy/diagnosis.py's
    results/diagnosis.json and results/three_nodes.csv."""
    diagnosis = json.loads((results / "diagnosis.json").read_text())
    first = diagnosis["first_observation"]
    spreads = first["thesis_pre_activation_std"][:-1]  # (the hidden layers; the last is the logit)
    ranges = first["feature_ranges"]
    others = max(high for name, (_, high) in ranges.items() if name != "energy_estimate")
    figures = {
        "diag.spreads": (", ".join(f"{v:.2g}" if v < 10 else f"{v:.0f}" for v in spreads[:-1])
                         + f" and {spreads[-1]:.0f}"),
        "diag.layers": str(len(spreads)),
        "diag.flat": f"{first['all_rows_flat']} of {first['initialisations']}",
        "diag.energy_estimate": _span(ranges["energy_estimate"], "", 2),
        "diag.others": f"{math.ceil(others * 100) / 100:.2f}",
        "diag.availability": _span(ranges["availability"], "", 4),
        "diag.clock_rate": _span(ranges["clock_rate"], "", 3),
    }
    losses = diagnosis["final_value_loss"]
    for name, key in (("exp2_energy_ablation_thesis", "thesis"), ("exp2_energy", "default")):
        values = losses[name]
        figures[f"diag.loss_{key}"] = (f"{np.median(values):.1e} (median of {len(values)} seeds; "
                                       f"{min(values):.1e} to {max(values):.1e})")
    figures["diag.loss_error"] = f"{math.sqrt(np.median(losses['exp2_energy_ablation_thesis'])):,.0f} J"
    rows = pd.read_csv(results / "three_nodes.csv")
    figures["diag.untrained"] = _span(rows[(rows.network == "snn") & (rows.normalisation == "columns")
                                           & (rows.reward_scale == "auto")].untrained_probability, "", 3)
    uniform = math.log(3)
    lines = ["| network | normalisation | reward scale | seeds above 0.9 | stuck uniform (entropy ln 3) | other |",
             "|---|---|---|---:|---:|---|"]
    for (network, normalisation, scale), group in rows.groupby(["network", "normalisation", "reward_scale"],
                                                               sort=False):
        above = group.probability > 0.9
        stuck = ~above & (abs(group.final_entropy - uniform) < 1e-3)
        other = group[~above & ~stuck]
        notes = ", ".join(f"seed {r.seed} at {r.probability:.2g}" for r in other.itertuples())
        label = "auto (default)" if (network, normalisation, scale) == ("snn", "columns", "auto") else scale
        lines.append(f"| {network} | {normalisation} | {label} | {int(above.sum())} / {len(group)} | "
                     f"{int(stuck.sum())} | {notes} |")
    figures["diag.three_nodes"] = "\n".join(lines)
    figures["diag.three_nodes_seeds"] = f"seeds {rows.seed.min()}-{rows.seed.max()}"
    return figures


#: results/known_optimum/'s files (known_optimum.py's --out), by the key README.md quotes them under.
#: The runs of the wider actor, by key suffix: cases 1-8 on seeds 0-9 and 10-19, then each later
#: eight cases drawn on seeds 0-9 (cases 33-40 drawn after the width was chosen).
WIDE_ACTOR_RUNS = {"": "cases01-08_seeds00-09", "_seeds": "cases01-08_seeds10-19", "_cases": "cases09-16",
                   "_fresh": "cases17-24", "_later": "cases25-32", "_new": "cases33-40"}
KNOWN_OPTIMUM = {"tiny": "tiny_case_settings", "lr": "lr0.003_8_episodes", "entropy": "lr0.003_8_episodes_entropy0.01",
                 "longer": "lr0.003_8_episodes_entropy0.01_near_ties_1200_episodes",
                 "work": "lr0.003_8_episodes_entropy0.01_requests_work",
                 "matrix": "lr0.003_8_episodes_entropy0.01_requests_work_matrix",
                 "anneal": "lr0.003_8_episodes_entropy0.1_to_0",
                 "openings": "lr0.003_8_episodes_entropy0.01_openings0.5",
                 "imitation": "lr0.003_8_episodes_entropy0.01_openings0.5_imitation1_800_episodes",
                 "imitation_longer": "lr0.003_8_episodes_entropy0.01_openings0.5_imitation1_1600_episodes",
                 "imitation75": "lr0.003_8_episodes_entropy0.01_openings0.75_imitation1_800_episodes",
                 "imitation75_seeds": "lr0.003_8_episodes_entropy0.01_openings0.75_imitation1_800_episodes_seeds10-19",
                 "imitation75_cases": "new_cases_lr0.003_8_episodes_entropy0.01_openings0.75_imitation1_800_episodes",
                 "imitation75_fresh": "fresh_cases_lr0.003_8_episodes_entropy0.01_openings0.75_imitation1_800_episodes",
                 "imitation3": "lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_800_episodes",
                 "imitation3_seeds": "lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_800_episodes_seeds10-19",
                 "imitation3_cases": "new_cases_lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_800_episodes",
                 "imitation3_fresh": "fresh_cases_lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_800_episodes",
                 "keep3": "lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_keep_best20000_800_episodes",
                 "keep3_seeds": "lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_keep_best20000_800_episodes"
                                "_seeds10-19",
                 "keep3_cases": "new_cases_lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_keep_best20000_800_episodes",
                 "keep3_fresh": "fresh_cases_lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_keep_best20000"
                                "_800_episodes",
                 "keep3_later": "cases25-32_lr0.003_8_episodes_entropy0.01_openings0.75_imitation3_keep_best20000"
                                "_800_episodes",
                 "keep1_misses": "misses_lr0.003_8_episodes_entropy0.01_openings0.75_imitation1_keep_best20000"
                                 "_800_episodes",
                 # The same settings as keep3, the actor's hidden layers twice as wide (--actor-widths
                 # 32 32 16 16 8 8), on every case drawn: results/known_optimum/wide_actor/.
                 **{f"wide{suffix}": f"wide_actor/{stem}" for suffix, stem in WIDE_ACTOR_RUNS.items()}}


def known_optimum_figures(folder: Path) -> dict[str, str]:
    """Per setting (ko.KEY): the trainings that reach the optimum, per case (ko.KEY.CASE), the
    cases reached on every seed (ko.KEY.every) and the trainings' time (ko.KEY.time summed,
    ko.KEY.per_training their mean); per case the next-best schedule's gap (ko.gap.CASE);
    draw_010's optimum and what its failing seeds learn with the entropy bonus
    (ko.draw_010.optimum, ko.draw_010.learnt)."""
    figures: dict[str, str] = {}
    frames = {}
    for key, stem in KNOWN_OPTIMUM.items():
        frame = frames[key] = pd.read_csv(folder / f"{stem}.csv")
        figures[f"ko.{key}"] = f"{int(frame.reached.sum())} of {len(frame)}"
        per_case = frame.groupby("case").reached.agg(["sum", "count"])
        for case, row in per_case.iterrows():
            figures[f"ko.{key}.{case}"] = f"{int(row['sum'])} of {int(row['count'])}"
        figures[f"ko.{key}.every"] = f"{int((per_case['sum'] == per_case['count']).sum())} of the {len(per_case)}"
        figures[f"ko.{key}.time"] = duration_text(float(frame.training_s.sum()))
        figures[f"ko.{key}.per_training"] = f"{frame.training_s.mean():.0f} s"
        figures[f"ko.{key}.episodes"] = f"{int(frame.simulations.iloc[0] * frame.trajectories.iloc[0]):,}"
        for case, gap in frame.groupby("case").second_gap_pct.first().items():
            figures[f"ko.gap.{case}"] = f"{gap:.1f} %"
        if "best_played_j" in frame:  # (self-imitation runs since the column: did each miss play the optimum?)
            missed = frame[~frame.reached]
            played = int(((missed.best_played_j - missed.optimum_j).abs() <= 1e-9 * missed.optimum_j).sum())
            figures[f"ko.{key}.missed_played"] = f"{played} of {len(missed)}"
        if "keep_best_taken" in frame:  # (keep_best: the trainings it moved, and those it could not)
            taken = frame.keep_best_taken
            figures[f"ko.{key}.kept_moved"] = f"{int((taken > 0).sum())} of {len(frame)}"
            figures[f"ko.{key}.kept_failed"] = f"{int(taken.isna().sum())} of {len(frame)}"
            for row in frame[taken > 0].itertuples():  # (each training's own: a case has several seeds)
                figures[f"ko.{key}.{row.case}.seed{row.seed}.steps"] = f"{int(row.keep_best_taken):,}"
    failing = frames["entropy"][(frames["entropy"].case == "draw_010") & ~frames["entropy"].reached]
    figures["ko.draw_010.optimum"] = str(frames["entropy"][frames["entropy"].case == "draw_010"].optimum.iloc[0])
    figures["ko.draw_010.learnt"] = str(failing.greedy.mode().iloc[0]) if len(failing) else "the optimum"
    cases = json.loads((folder / "landscape.json").read_text())
    figures.update(landscape_figures(cases, frames))
    figures.update(wide_actor_figures(cases, frames))
    for key in ("anneal", "openings", "imitation75"):  # the same runs with torch's AVX-512 kernels (avx512/)
        other = pd.read_csv(folder / "avx512" / f"{KNOWN_OPTIMUM[key]}.csv")
        both = frames[key].merge(other, on=["case", "seed"], suffixes=("", "_avx512"))
        figures[f"ko.avx512.{key}.moved"] = f"{int((both.greedy != both.greedy_avx512).sum())} of {len(both)}"
        figures[f"ko.avx512.{key}"] = f"{int(other.reached.sum())} of {len(other)}"
    return figures


def wide_actor_figures(cases: list[dict], frames: dict[str, pd.DataFrame]) -> dict[str, str]:
    """The wider actor's runs together (ko.wide_all.*): the trainings that reach the optimum, on
    the cases whose optimum the policy can express and on the others, the trainings keep_best
    moved on each kind, the cases reached on every seed, and the trainings' time. `cases`:
    landscape.json's records."""
    representable = {case["case"]: case["optimum_representable"] for case in cases}
    frame = pd.concat([frames[f"wide{suffix}"] for suffix in WIDE_ACTOR_RUNS], ignore_index=True)
    expressible = frame.case.map(representable)
    moved = frame.keep_best_taken > 0
    per_case = frame.groupby("case").reached.agg(["sum", "count"])
    inexpressible_cases = sorted(set(frame.case[~expressible]))
    return {"ko.wide_all": f"{int(frame.reached.sum())} of {len(frame)}",
            "ko.wide_all.cases": str(len(per_case)),
            "ko.wide_all.every": f"{int((per_case['sum'] == per_case['count']).sum())} of the {len(per_case)}",
            "ko.wide_all.expressible": f"{int(frame.reached[expressible].sum())} of {int(expressible.sum())}",
            "ko.wide_all.expressible_cases": str(frame.case[expressible].nunique()),
            "ko.wide_all.inexpressible": f"{int(frame.reached[~expressible].sum())} of {int((~expressible).sum())}",
            "ko.wide_all.inexpressible_cases": ", ".join(inexpressible_cases),
            "ko.wide_all.moved_expressible": f"{int(moved[expressible].sum())} of {int(expressible.sum())}",
            "ko.wide_all.moved_inexpressible": f"{int(moved[~expressible].sum())} of {int((~expressible).sum())}",
            "ko.wide_all.most_steps": f"{int(frame.keep_best_taken.max()):,}",
            "ko.wide_all.time": duration_text(float(frame.training_s.sum())),
            "ko.wide_all.per_training": f"{frame.training_s.mean():.0f} s"}


def landscape_figures(cases: list[dict], frames: dict[str, pd.DataFrame]) -> dict[str, str]:
    """From landscape.json's records (`cases`, known_optimum.py --landscape): how many of a setting's misses end on
    a local optimum (ko.KEY.local, the settings with the cases' own requests) and its trainings
    that reach the optimum on the cases whose optimum the policy can express (ko.KEY.expressible);
    the cases whose optimum it cannot express (ko.unrepresentable, of every case drawn); and of the
    first cases, each one's nearest other local optimum (ko.nearest_local) and those whose
    optimum starts with a decision that uniformly random later decisions do not favour
    (ko.deceptive)."""
    local = {case["case"]: set(case["local_optima"]) for case in cases}
    representable = {case["case"]: case["optimum_representable"] for case in cases}
    figures: dict[str, str] = {}
    for key, frame in frames.items():
        if (frame.requests != "constant").any() or not set(frame.case) <= set(local):
            continue  # (the landscape is of the cases with constant requests)
        missed = frame[~frame.reached]
        at_local = sum(greedy in local[case] for case, greedy in zip(missed.case, missed.greedy))
        figures[f"ko.{key}.local"] = f"{at_local} of {len(missed)}"
        expressible = frame[frame.case.map(representable)]
        figures[f"ko.{key}.expressible"] = f"{int(expressible.reached.sum())} of {len(expressible)}"
    figures["ko.count_all"] = str(len(cases))
    figures["ko.unrepresentable"] = ", ".join(case["case"] for case in cases if not case["optimum_representable"])
    figures["ko.representable"] = f"{sum(case['optimum_representable'] for case in cases)} of {len(cases)}"
    first = set(frames["entropy"].case)  # (the cases the settings were tried on: the first drawn)
    cases = [case for case in cases if case["case"] in first]
    nearest = []
    for case in cases:
        others = [(gap, schedule) for schedule, gap in zip(case["local_optima"], case["local_optima_pct_above"])
                  if schedule != case["optimum"]]
        nearest.append(f"{case['case']} {min(others)[0]:.1f} %" if others else f"{case['case']} none")
    figures["ko.nearest_local"] = ", ".join(nearest)
    figures["ko.deceptive"] = ", ".join(case["case"] for case in cases if not case["optimum_first_best_under_uniform"])
    return figures


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's tables and every figure its prose quotes, from results/ (results.csv, grids.csv,
    run.json, and diagnosis.py's diagnosis.json and three_nodes.csv)."""
    record = read_run_record(results)
    rows = read_results(results / RECORD.name)
    grids = pd.read_csv(results / GRIDS.name)
    seeds = record["seeds"]
    figures = {**record_figures(record), **configuration_figures(rows, grids), **diagnosis_figures(results),
               **known_optimum_figures(results / "known_optimum"),
               "run.seeds": f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else str(seeds[0]),
               "run.trainings": f"{record['trainings']} trainings, {duration_text(record['trainings_s'])} of training "
                                f"summed ({record['jobs']} at a time)",
               "run.unseen": f"{record['unseen']} workloads, {record['unseen_runs']} test runs each",
               "run.runs": str(record["runs"]),
               "same_rule": same_rule_figure(rows, grids)}
    return markdown(rows, grids), figures


def main(argv: list[str] | None = None) -> int:
    from joulesim.campaign.executors import default_workers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--exp3", action="store_true", help="include experiment 3 (about 30 min of training per seed)")
    parser.add_argument("--only", action="append", choices=sorted(CONFIGURATIONS), help="only these configurations")
    parser.add_argument("--seeds", type=int, default=10, help="training seeds 0..N-1 (default 10)")
    parser.add_argument("--runs", type=int, default=100, help="test simulations per model (default 100)")
    parser.add_argument("--unseen", type=int, default=10,
                        help="workloads the agent never saw, per experiment (default 10; 0: none)")
    parser.add_argument("--unseen-runs", type=int, default=10,
                        help="test simulations per model and unseen workload (default 10)")
    parser.add_argument("--jobs", type=int, default=default_workers(), help="trainings at a time (default: CPUs)")
    parser.add_argument("--ablation", action="store_true",
                        help="also the ablations of the changes to the thesis's agent (exp2, energy objective)")
    parser.add_argument("--maskable", action="store_true",
                        help="also train and test sb3-contrib's MaskablePPO (the rl-baselines extra)")
    parser.add_argument("--maskable-only", action="store_true", help="only MaskablePPO (keeps the other results)")
    parser.add_argument("--retrain", action="store_true")
    parser.add_argument("--records", type=Path, default=TASK_RECORDS,
                        help="each finished training's rows, reused by a later run with the same settings "
                             "(default: the committed results/tasks.jsonl)")
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--readme-only", action="store_true",
                        help="train nothing: write README.md again from the committed results/")
    args = parser.parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        return 0
    if args.seeds < 1 or args.runs < 1 or args.jobs < 1 or args.unseen_runs < 1:
        parser.error("--seeds, --runs, --unseen-runs and --jobs take integers >= 1")
    if args.unseen < 0:
        parser.error("--unseen takes an integer >= 0")
    began = time.perf_counter()
    names = args.only or [n for n in CONFIGURATIONS if (args.exp3 or not n.startswith("exp3"))
                          and (args.ablation or "ablation" not in n)]
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "results.csv"
    previous = read_results(results_path) if results_path.is_file() else pd.DataFrame()
    experiments = sorted({CONFIGURATIONS[name][0] for name in names})
    unseen = {e: unseen_workloads(e, args.unseen, args.out / "unseen") for e in experiments}
    workers = ([] if args.maskable_only else [train_and_test]) + \
        ([maskable_train_and_test] if args.maskable or args.maskable_only else [])
    tasks = [(work, name, seed) for work in workers for name in names for seed in range(args.seeds)]
    records = read_task_records(args.records)
    keys = {(work, name, seed): task_key(work.__name__, name, seed, args.runs, args.unseen, args.unseen_runs)
            for work, name, seed in tasks}
    # Rows depend on the kernels torch runs (joulesim/rl/cpu_kernels.py): only a record made with
    # this machine's are taken (joulesim.rl pins them before torch loads, here and in the workers).
    from joulesim.rl import cpu_kernels

    kernels = cpu_kernels.capability()
    kept = [task for task in tasks if not args.retrain and task_reusable(records.get(keys[task]), kernels)]
    others = [task for task in tasks if keys[task] in records and task not in kept and not args.retrain]
    if others:
        print(f"{len(others)} recorded training(s) ran with other CPU kernels than this machine's ({kernels}): "
              "trained again", flush=True)
    rows: list[dict] = [row for task in kept for row in records[keys[task]]["rows"]]
    if kept:
        print(f"{len(kept)} of {len(tasks)} trainings' rows taken from {args.records} (--retrain to run them again)",
              flush=True)
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_task, work, name, seed, args.out, args.runs, args.retrain,
                               unseen[CONFIGURATIONS[name][0]], args.unseen_runs): (work, name, seed)
                   for work, name, seed in tasks if (work, name, seed) not in kept}
        for done, future in enumerate(as_completed(futures), 1):
            work, name, seed = futures[future]
            outcome, kernels = future.result()
            rows += outcome
            records[keys[(work, name, seed)]] = {"key": keys[(work, name, seed)], "rows": outcome,
                                                 "cpu_kernels": kernels}
            write_task_records(args.records, records)
            training = [row for row in outcome if row["workload"] == "training"]
            unseen_energy = [row["energy_avg"] for row in outcome if row["workload"] != "training"
                             and row["kind"] == outcome[0]["kind"]]
            others = "".join(f", {row['kind']} {row['energy_avg']:,.0f} J" for row in training[1:])
            if unseen_energy:
                others += f", {outcome[0]['kind']} on the unseen workloads {np.mean(unseen_energy):,.0f} J"
            print(f"[{done}/{len(futures)}, {time.perf_counter() - started:.0f} s] {name} seed {seed}: "
                  f"{outcome[0]['kind']} test-mean energy {outcome[0]['energy_avg']:,.0f} J{others}, trained in "
                  f"{outcome[0]['training_s']:.0f} s", flush=True)
    # One random row per experiment and wait option, on the steps of its first configuration.
    firsts: dict[tuple[str, bool], str] = {}
    for name in names:
        firsts.setdefault((CONFIGURATIONS[name][0], "wait" in name), name)
    for name in firsts.values():
        rows.append(random_valid(name, args.runs))
        rows += [random_valid(name, args.unseen_runs, workload) for workload in unseen[CONFIGURATIONS[name][0]]]
    results = pd.DataFrame(rows)
    if len(previous):  # keep what was not rerun this time (by configuration and kind of agent)
        rerun = set(zip(results.name, results.kind))
        kept = previous[[(n, k) not in rerun for n, k in zip(previous.name, previous.kind)]]
        results = pd.concat([kept, results], ignore_index=True)
    results = results.sort_values(["experiment", "name", "kind", "seed", "workload"]).reset_index(drop=True)
    results.to_csv(results_path, index=False)
    command = " ".join(["python -m experiments.rl_energy.run", *(sys.argv[1:] if argv is None else argv)])
    return publish(results, not args.no_readme, command, time.perf_counter() - began,
                   {"seeds": list(range(args.seeds)), "runs": args.runs, "unseen": args.unseen,
                    "unseen_runs": args.unseen_runs, "jobs": args.jobs})


# ---------------------------------------------------------------- committed task records
def run_task(work, *arguments) -> tuple[list[dict], str]:
    """A training's rows and the kernels torch ran it with (its results depend on them:
    joulesim/rl/cpu_kernels.py), in the worker process."""
    rows = work(*arguments)
    from joulesim.rl import cpu_kernels

    return rows, cpu_kernels.capability()


def task_key(work: str, name: str, seed: int, runs: int, unseen: int, unseen_runs: int) -> str:
    """What a training's rows depend on: the worker, the configuration (its file's digest), the
    seed and the test settings. A record is reused only under the same key."""
    digest = hashlib.sha256((HERE / f"{name}.toml").read_bytes()).hexdigest()[:16]
    return json.dumps({"work": work, "name": name, "config_sha256": digest, "seed": seed, "runs": runs,
                       "unseen": unseen, "unseen_runs": unseen_runs}, sort_keys=True)


def task_reusable(record: dict | None, kernels: str) -> bool:
    """Whether a committed record serves this run: made with the same torch kernels."""
    return record is not None and record.get("cpu_kernels") == kernels


def read_task_records(path: Path) -> dict[str, dict]:
    """The committed records by key (none when the file does not exist yet)."""
    return read_keyed_lines(path, "key", "a task record")


def write_task_records(path: Path, records: dict[str, dict]) -> None:
    """One line per record, sorted by key (the same records give the same bytes), written whole."""
    write_keyed_lines(path, records)


def read_results(path: Path) -> pd.DataFrame:
    """results.csv; rows written before workloads the agent never saw were on the training one."""
    results = pd.read_csv(path)
    if "workload" not in results:
        results["workload"] = "training"
    results["workload"] = results["workload"].fillna("training")
    return results


def publish(results: pd.DataFrame, readme: bool, command: str, wall_s: float, settings: dict) -> int:
    """Print the tables; with `readme`, commit the rows and the heuristic grids under results/
    with the run's record, and write README.md from them (as read back: what the test checks)."""
    experiments = sorted(results.experiment.unique())
    unseen = {e: int(results[(results.experiment == e) & (results.workload != "training")].workload.nunique())
              for e in experiments}
    grids = heuristic_grids(experiments, unseen)
    if not readme:
        print(markdown(results, grids))
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    results.to_csv(RECORD, index=False, float_format="%.6f")
    grids.to_csv(GRIDS, index=False, float_format="%.6f")
    learned = results[results.kind.isin(["trained", "maskable"]) & (results.workload == "training")]
    write_run_record(RESULTS, command, wall_s, event_grouping="per-time (IRMaSim node platforms)",
                     trainings=len(learned), trainings_s=round(float(learned.training_s.sum()), 1), **settings)
    block, figures = readme_figures(RESULTS)
    print(block)
    write_readme(HERE / "README.md", block, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
