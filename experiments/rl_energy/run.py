"""Seed 002, experiments 1-3: train the Energy scheduler (PPO) and compare it with the heuristics.

    python experiments/rl_energy/run.py                 # experiments 1 and 2: train, test, tables
    python experiments/rl_energy/run.py --exp3          # experiment 3 too (long: see README.md)
    python experiments/rl_energy/run.py --only exp2_edp # one configuration
    python experiments/rl_energy/run.py --retrain       # train again even where a model exists
    python experiments/rl_energy/run.py --runs 100      # test simulations per model (default 100)

For every configuration (a TOML file beside this script): train with `joulesim rl train`'s code
(unless out/rl_energy/NAME/model.pt exists), then run the model `--runs` times on the whole
workload with sampled actions (seeds 0..runs-1), as the thesis's test runs, and compare min /
mean / max energy and EDP with the heuristic grid (experiments/irmasim_grid) in the form of
tables 4.6, 4.11 and 4.14: percentage reductions against (a) the heuristic the thesis names as
best and (b) the best heuristic of the full grid here. Results in out/rl_energy/ (models,
curves, results.csv, bar charts) and between the markers of README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "rl_energy"  # /out/ is git-ignored

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


def _grid_module():
    spec = importlib.util.spec_from_file_location("irmasim_grid_run", REPO_ROOT / "experiments" / "irmasim_grid" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def heuristic_grid(experiment: str) -> pd.DataFrame:
    return _grid_module().run_grid(experiment, 0, INPUTS[experiment])


def train_and_test(name: str, out: Path, runs: int, retrain: bool, progress: bool) -> dict:
    from joulesim.rl.evaluation import evaluate_model
    from joulesim.rl.training import train
    from joulesim.rl.training_config import load_training_config

    config = load_training_config(HERE / f"{name}.toml")
    folder = out / name
    model = folder / "model.pt"
    trained_s = None
    if retrain or not model.is_file():
        outcome = train(config, folder, progress=progress)
        trained_s = outcome.wall_s
        (folder / "training_time.json").write_text(json.dumps({"wall_s": trained_s}))
    elif (folder / "training_time.json").is_file():
        trained_s = json.loads((folder / "training_time.json").read_text())["wall_s"]
    experiment = CONFIGURATIONS[name][0]
    inputs = INPUTS[experiment]
    started = time.perf_counter()
    evaluation = evaluate_model(model, inputs / "platform.json", inputs / "workload.json", runs, "sample", 0)
    pd.DataFrame(evaluation.runs).to_csv(folder / "test_runs.csv", index=False)
    return {"name": name, "experiment": experiment, "label": CONFIGURATIONS[name][1], "training_s": trained_s,
            "test_s": time.perf_counter() - started,
            **{f"{m}_{k}": v for m in ("energy", "edp", "makespan") for k, v in evaluation.stats(m).items()}}


def reductions(row: pd.Series, energy_ref: float, edp_ref: float) -> list[float]:
    """Table 4.6's six columns: energy min/avg/max, EDP min/avg/max (positive: better)."""
    from joulesim.rl.evaluation import reduction

    out = [reduction(energy_ref, row[f"energy_{k}"]) for k in ("min", "avg", "max")]
    return out + [reduction(edp_ref, row[f"edp_{k}"]) for k in ("min", "avg", "max")]


def markdown(results: pd.DataFrame, grids: dict[str, pd.DataFrame]) -> str:
    lines = []
    for experiment in sorted(results.experiment.unique()):
        rows = results[results.experiment == experiment]
        grid = grids[experiment]
        best_energy = grid.sort_values("energy").iloc[0]
        best_edp = grid.sort_values("edp").iloc[0]
        job, resource, _ = THESIS_BEST[experiment]
        named = grid[(grid.job_selection == job) & (grid.resource_selection == resource)].iloc[0]
        lines += [f"**{experiment}** - best heuristic of the grid: {best_energy.job_selection} / "
                  f"{best_energy.resource_selection}, {best_energy.energy:,.2f} J; best EDP "
                  f"{best_edp.job_selection} / {best_edp.resource_selection}, {best_edp.edp:,.0f} J s. The "
                  f"thesis's best heuristic {job} / {resource}: {named.energy:,.2f} J, {named.edp:,.0f} J s.", ""]
        header = ("| | energy min | avg | max | EDP min | avg | max |", "|---|---:|---:|---:|---:|---:|---:|")
        for title, energy_ref, edp_ref in (
                (f"reduction (%) against the thesis's best heuristic ({job} / {resource})", named.energy, named.edp),
                ("reduction (%) against the best heuristic of the grid (per metric)", best_energy.energy,
                 best_edp.edp)):
            lines += [f"{title}:", "", *header]
            for row in rows.itertuples():
                values = reductions(pd.Series(row._asdict()), energy_ref, edp_ref)
                lines.append(f"| {row.label} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
            lines.append("")
        lines += ["the thesis's table (its own runs, against its best heuristic):", "", *header]
        for label, values in THESIS_TABLES[experiment].items():
            lines.append(f"| {label} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
        lines += ["", "| configuration | energy J min / avg / max | EDP J s min / avg / max | training s |",
                  "|---|---|---|---:|"]
        for row in rows.itertuples():
            training = f"{row.training_s:.0f}" if row.training_s == row.training_s and row.training_s else "-"
            lines.append(f"| {row.name} | {row.energy_min:,.2f} / {row.energy_avg:,.2f} / {row.energy_max:,.2f} | "
                         f"{row.edp_min:,.0f} / {row.edp_avg:,.0f} / {row.edp_max:,.0f} | {training} |")
        lines.append("")
    return "\n".join(lines).rstrip()


def bar_chart(results: pd.DataFrame, grid: pd.DataFrame, experiment: str, metric: str, path: Path) -> None:
    """Figures 4.10/4.11 style: the RL models (mean, min-max) beside the thesis's four reference
    heuristics and the best of the grid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    references = [("first", "high_gflops"), ("first", "high_cores"), ("first", "high_mem_bw"), ("random", "random")]
    best = grid.sort_values(metric).iloc[0]
    labels, values, errors = [], [], [[], []]
    for job, resource in [(best.job_selection, best.resource_selection)] + references:
        row = grid[(grid.job_selection == job) & (grid.resource_selection == resource)].iloc[0]
        labels.append(f"{job} /\n{resource}")
        values.append(row[metric])
        errors[0].append(0)
        errors[1].append(0)
    for row in results[results.experiment == experiment].itertuples():
        labels.append(row.name.replace(f"{experiment}_", "RL ").replace("_", " "))
        mean = getattr(row, f"{metric}_avg")
        values.append(mean)
        errors[0].append(mean - getattr(row, f"{metric}_min"))
        errors[1].append(getattr(row, f"{metric}_max") - mean)
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(labels)), 4.5))
    colours = ["tab:green"] + ["tab:blue"] * len(references) + ["tab:orange"] * (len(labels) - 1 - len(references))
    ax.bar(range(len(labels)), values, yerr=errors, capsize=4, color=colours)
    ax.set_xticks(range(len(labels)), labels, fontsize=7, rotation=30, ha="right")
    ax.set_ylabel({"energy": "energy (J)", "edp": "energy-delay product (J s)"}[metric])
    ax.set_title(f"Seed 002 {experiment}: {metric} of the heuristics and of the trained models (100 test runs)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--exp3", action="store_true", help="include experiment 3 (about 30 min of training on 2 cores)")
    parser.add_argument("--only", action="append", choices=sorted(CONFIGURATIONS), help="only these configurations")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--retrain", action="store_true")
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--progress", action="store_true", help="progress bars while training")
    args = parser.parse_args(argv)
    names = args.only or [n for n in CONFIGURATIONS if args.exp3 or not n.startswith("exp3")]
    args.out.mkdir(parents=True, exist_ok=True)
    results_path = args.out / "results.csv"
    previous = pd.read_csv(results_path) if results_path.is_file() else pd.DataFrame()
    rows = []
    for name in names:
        print(f"{name}: training and {args.runs} test runs ...", flush=True)
        rows.append(train_and_test(name, args.out, args.runs, args.retrain, args.progress))
        print(f"  energy {rows[-1]['energy_min']:.2f} / {rows[-1]['energy_avg']:.2f} / {rows[-1]['energy_max']:.2f} J",
              flush=True)
    results = pd.DataFrame(rows)
    if len(previous):  # keep the configurations not rerun this time
        results = pd.concat([previous[~previous.name.isin(results.name)], results], ignore_index=True)
    results["order"] = results.name.map(list(CONFIGURATIONS).index)
    results = results.sort_values("order").drop(columns="order").reset_index(drop=True)
    results.to_csv(results_path, index=False)
    grids = {e: heuristic_grid(e) for e in results.experiment.unique()}
    try:
        for experiment, grid in grids.items():
            for metric in ("energy", "edp"):
                bar_chart(results, grid, experiment, metric, args.out / f"{experiment}_{metric}.png")
    except ImportError:
        print("no charts: matplotlib is missing (pip install '.[plot]' in the joulesim checkout)")
    text = markdown(results, grids)
    print(text)
    if not args.no_readme:
        _grid_module().replace_results(HERE / "README.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
