"""Seed 002, experiments 1-3: train the Energy scheduler (PPO) on several seeds and compare it
with its baselines and the heuristics.

    python -m experiments.rl_energy.run                 # experiments 1 and 2, seeds 0-4, tables
    python -m experiments.rl_energy.run --seeds 8       # seeds 0-7
    python -m experiments.rl_energy.run --exp3          # experiment 3 too (long: see README.md)
    python -m experiments.rl_energy.run --ablation      # the thesis's agent, and each change to it
    python -m experiments.rl_energy.run --maskable      # sb3-contrib's MaskablePPO too (extra rl-baselines)
    python -m experiments.rl_energy.run --only exp2_edp # one configuration
    python -m experiments.rl_energy.run --retrain       # train again even where a model exists
    python -m experiments.rl_energy.run --runs 100      # test simulations per model (default 100)

For every configuration (a TOML file beside this script) and every training seed 0..N-1 (the
file's own seed is not used: no seed is chosen): train with `joulesim rl train`'s code (unless
out/rl_energy/NAME/seed_K/model.pt exists), then run the model `--runs` times on the whole
workload with sampled actions (seeds 0..runs-1), as the thesis's test runs. The same test runs
for the baselines on the same observation: the untrained agent of each seed, and a uniformly
random valid action (decider random-pairs). Tables in the form of 4.6, 4.11 and 4.14: mean and
standard deviation over the training seeds of each test metric's reduction against (a) the
heuristic the thesis names as best and (b) the best heuristic of the grid here. Results in
out/rl_energy/ (models, curves, results.csv), and the tables between the markers of README.md
with the per-seed figures they come from in results.csv beside it:

    python -m experiments.rl_energy.run --tables        # only write the tables again from results.csv
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.irmasim_grid.run import run_grid
from experiments.readme_results import replace_results

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "rl_energy"  # /out/ is git-ignored
RECORD = HERE / "results.csv"  # the rows behind README.md's tables (committed with them)

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


def heuristic_grid(experiment: str) -> pd.DataFrame:
    return run_grid(experiment, 0, INPUTS[experiment])


METRICS = ("energy", "edp", "makespan")


def _stats(runs: list[dict[str, float]]) -> dict[str, float]:
    return {f"{m}_{k}": float(f(np.array([r[m] for r in runs])))
            for m in METRICS for k, f in (("min", np.min), ("avg", np.mean), ("max", np.max))}


def train_and_test(name: str, seed: int, out: Path, runs: int, retrain: bool) -> list[dict]:
    """Train configuration `name` with training seed `seed`, test it, and test the untrained
    agent of that seed on the same observation: two result rows."""
    import torch

    from joulesim.rl.evaluation import evaluate_model
    from joulesim.rl.model_file import save_agent
    from joulesim.rl.ppo import PPOAgent, PPOSettings
    from joulesim.rl.training import make_environment, model_metadata, train
    from joulesim.rl.training_config import load_training_config

    torch.set_num_threads(1)
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
                     "training_s": trained_s if kind == "trained" else 0.0,
                     "curve_first_fifth": float(curve.energy.iloc[:fifth].mean()),
                     "curve_last_fifth": float(curve.energy.iloc[-fifth:].mean()),
                     "final_entropy": float(curve.entropy.iloc[-1]), **_stats(evaluation.runs)})
    return rows


def maskable_train_and_test(name: str, seed: int, out: Path, runs: int, retrain: bool) -> list[dict]:
    """The yardstick: sb3-contrib's MaskablePPO, same environment, hyperparameters and budget."""
    import torch

    from joulesim.rl.maskable_baseline import evaluate_maskable, train_maskable
    from joulesim.rl.training_config import load_training_config

    torch.set_num_threads(1)
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
    return [{"name": name, "experiment": experiment, "label": label, "seed": seed, "kind": "maskable",
             "training_s": trained_s, **_stats(runs_list)}]


def random_valid(name: str, runs: int) -> dict:
    """A uniformly random valid action at each step (decider random-pairs), `runs` seeds, on the
    steps configuration `name` trains on (its jobs in view, wait action and wait budget)."""
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
        result = joulesim.simulate(inputs / "platform.json", inputs / "workload.json", "random-pairs",
                                   options={**options, "seed": str(run)}, energy=True, idle_power="irmasim")
        energy, makespan = float(result.schedule["consumed_joules"]), float(result.schedule["makespan"])
        results.append({"energy": energy, "makespan": makespan, "edp": energy * makespan})
    return {"name": f"{experiment}_random{'_wait' if wait else ''}", "experiment": experiment,
            "label": f"random valid action{', wait action' if wait else ''}", "seed": -1, "kind": "random",
            "training_s": 0.0, **_stats(results)}


def reductions(row: pd.Series, energy_ref: float, edp_ref: float) -> list[float]:
    """Table 4.6's six columns: energy min/avg/max, EDP min/avg/max (positive: better)."""
    from joulesim.rl.evaluation import reduction

    out = [reduction(energy_ref, row[f"energy_{k}"]) for k in ("min", "avg", "max")]
    return out + [reduction(edp_ref, row[f"edp_{k}"]) for k in ("min", "avg", "max")]


def _mean_std(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{np.mean(values):.2f} ± {np.std(values, ddof=1):.2f}"


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


def markdown(results: pd.DataFrame, grids: dict[str, pd.DataFrame]) -> str:
    lines = []
    for experiment in sorted(results.experiment.unique()):
        rows = results[results.experiment == experiment]
        seeds = sorted(rows[rows.kind == "trained"].seed.unique())
        grid = grids[experiment]
        best_energy = grid.sort_values("energy").iloc[0]
        best_edp = grid.sort_values("edp").iloc[0]
        job, resource, _ = THESIS_BEST[experiment]
        named = grid[(grid.job_selection == job) & (grid.resource_selection == resource)].iloc[0]
        lines += [f"**{experiment}** - training seeds {', '.join(map(str, seeds))}; each cell: mean ± standard "
                  f"deviation over the seeds of the reduction of the 100 test runs' min / mean / max. Best "
                  f"heuristic of the grid: {best_energy.job_selection} / {best_energy.resource_selection}, "
                  f"{best_energy.energy:,.2f} J; best EDP {best_edp.job_selection} / {best_edp.resource_selection}, "
                  f"{best_edp.edp:,.0f} J s. The thesis's best heuristic {job} / {resource}: {named.energy:,.2f} J, "
                  f"{named.edp:,.0f} J s.", ""]
        header = ("| | energy min | avg | max | EDP min | avg | max |", "|---|---:|---:|---:|---:|---:|---:|")
        for title, energy_ref, edp_ref in (
                (f"reduction (%) against the thesis's best heuristic ({job} / {resource})", named.energy, named.edp),
                ("reduction (%) against the best heuristic of the grid (per metric)", best_energy.energy,
                 best_edp.edp)):
            lines += [f"{title}:", "", *header]
            for label, group in _row_groups(rows):
                values = np.array([reductions(row, energy_ref, edp_ref) for _, row in group.iterrows()])
                lines.append(f"| {label} | " + " | ".join(_mean_std(list(values[:, i])) for i in range(6)) + " |")
            lines.append("")
        lines += ["the thesis's table (its own runs, the most promising of several trainings, against its best "
                  "heuristic):", "", *header]
        for label, values in THESIS_TABLES[experiment].items():
            lines.append(f"| {label} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
        lines += ["", "test-mean energy (J) of each training seed, the untrained agent of the same seed, and the "
                  "training curve (mean energy of the first and last fifth of the training simulations):", "",
                  "| configuration | seed | trained | untrained | curve first -> last fifth | final entropy | "
                  "training s |", "|---|---:|---:|---:|---|---:|---:|"]
        trained = rows[rows.kind.isin(["trained", "maskable"])]
        for row in trained.itertuples():
            base = rows[(rows.name == row.name) & (rows.seed == row.seed) & (rows.kind == "untrained")]
            untrained_avg = f"{base.energy_avg.iloc[0]:,.0f}" if len(base) else "-"
            if row.kind == "maskable":
                lines.append(f"| {row.name} (MaskablePPO) | {row.seed} | {row.energy_avg:,.0f} | - | - | - | "
                             f"{row.training_s:.0f} |")
                continue
            lines.append(f"| {row.name} | {row.seed} | {row.energy_avg:,.0f} | {untrained_avg} | "
                         f"{row.curve_first_fifth:,.0f} -> {row.curve_last_fifth:,.0f} | {row.final_entropy:.3f} | "
                         f"{row.training_s:.0f} |")
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv: list[str] | None = None) -> int:
    from joulesim.campaign.executors import default_workers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--exp3", action="store_true", help="include experiment 3 (about 30 min of training per seed)")
    parser.add_argument("--only", action="append", choices=sorted(CONFIGURATIONS), help="only these configurations")
    parser.add_argument("--seeds", type=int, default=5, help="training seeds 0..N-1 (default 5)")
    parser.add_argument("--runs", type=int, default=100, help="test simulations per model (default 100)")
    parser.add_argument("--jobs", type=int, default=default_workers(), help="trainings at a time (default: CPUs)")
    parser.add_argument("--ablation", action="store_true",
                        help="also the ablations of the changes to the thesis's agent (exp2, energy objective)")
    parser.add_argument("--maskable", action="store_true",
                        help="also train and test sb3-contrib's MaskablePPO (the rl-baselines extra)")
    parser.add_argument("--maskable-only", action="store_true", help="only MaskablePPO (keeps the other results)")
    parser.add_argument("--retrain", action="store_true")
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--tables", action="store_true",
                        help="train nothing: write README.md's tables again from results.csv beside it")
    args = parser.parse_args(argv)
    if args.tables:
        if not RECORD.is_file():
            parser.error(f"--tables: {RECORD} is missing; run the experiments first")
        return write_tables(pd.read_csv(RECORD), readme=True)
    if args.seeds < 1 or args.runs < 1 or args.jobs < 1:
        parser.error("--seeds, --runs and --jobs take integers >= 1")
    names = args.only or [n for n in CONFIGURATIONS if (args.exp3 or not n.startswith("exp3"))
                          and (args.ablation or "ablation" not in n)]
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "results.csv"
    previous = pd.read_csv(results_path) if results_path.is_file() else pd.DataFrame()
    workers = ([] if args.maskable_only else [train_and_test]) + \
        ([maskable_train_and_test] if args.maskable or args.maskable_only else [])
    tasks = [(work, name, seed) for work in workers for name in names for seed in range(args.seeds)]
    rows: list[dict] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(work, name, seed, args.out, args.runs, args.retrain): (name, seed)
                   for work, name, seed in tasks}
        for done, future in enumerate(as_completed(futures), 1):
            name, seed = futures[future]
            outcome = future.result()
            rows += outcome
            others = "".join(f", {row['kind']} {row['energy_avg']:,.0f} J" for row in outcome[1:])
            print(f"[{done}/{len(tasks)}, {time.perf_counter() - started:.0f} s] {name} seed {seed}: "
                  f"{outcome[0]['kind']} test-mean energy {outcome[0]['energy_avg']:,.0f} J{others}, trained in "
                  f"{outcome[0]['training_s']:.0f} s", flush=True)
    # One random row per experiment and wait option, on the steps of its first configuration.
    firsts: dict[tuple[str, bool], str] = {}
    for name in names:
        firsts.setdefault((CONFIGURATIONS[name][0], "wait" in name), name)
    for name in firsts.values():
        rows.append(random_valid(name, args.runs))
    results = pd.DataFrame(rows)
    if len(previous):  # keep what was not rerun this time (by configuration and kind of agent)
        rerun = set(zip(results.name, results.kind))
        kept = previous[[(n, k) not in rerun for n, k in zip(previous.name, previous.kind)]]
        results = pd.concat([kept, results], ignore_index=True)
    results = results.sort_values(["experiment", "name", "kind", "seed"]).reset_index(drop=True)
    results.to_csv(results_path, index=False)
    return write_tables(results, readme=not args.no_readme)


def write_tables(results: pd.DataFrame, readme: bool) -> int:
    """Print the tables; with `readme`, put them in README.md and their rows in results.csv beside
    it, so that the published tables can be checked seed by seed."""
    grids = {e: heuristic_grid(e) for e in results.experiment.unique()}
    text = markdown(results, grids)
    print(text)
    if readme:
        results.to_csv(RECORD, index=False, float_format="%.6f")
        replace_results(HERE / "README.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
