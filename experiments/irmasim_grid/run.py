"""Seed 002 experiments 1 and 2: IRMaSim's heuristic grid on joulesim (figures 4.10 / 4.18 style).

    python -m experiments.irmasim_grid.run               # both experiments, table + bar charts
    python -m experiments.irmasim_grid.run --out DIR     # where the charts and CSV go (default out/irmasim_grid)
    python -m experiments.irmasim_grid.run --no-readme   # leave README.md alone

Inputs: exp1/ and exp2/ beside this script, IRMaSim files written from the thesis's tables
4.2-4.4 and 4.7-4.9 (see README.md). Every pair of job selection x resource selection runs with
`heuristic`; `random` draws from `--seed` (IRMaSim's own random stream cannot be reproduced).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from experiments.readme_results import replace_results

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "irmasim_grid"  # /out/ is git-ignored
EXPERIMENTS = ("exp1", "exp2")
JOB_SELECTIONS = ("random", "first", "shortest", "smallest", "low_mem", "low_mem_ops")
RESOURCE_SELECTIONS = ("random", "first", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power")


def run_grid(experiment: str, seed: int = 0, folder: Path | None = None) -> pd.DataFrame:
    """One row per heuristic pair: energy (J), makespan (s), EDP (J s); the inputs are in
    `folder` (default: the experiment's folder beside this script)."""
    import joulesim

    folder = folder or HERE / experiment
    rows = []
    for job_selection in JOB_SELECTIONS:
        for resource_selection in RESOURCE_SELECTIONS:
            result = joulesim.simulate(folder / "platform.json", folder / "workload.json", "heuristic", energy=True,
                                       options={"job_selection": job_selection,
                                                "resource_selection": resource_selection, "seed": seed})
            energy = float(result.schedule["consumed_joules"])
            makespan = float(result.schedule["makespan"])
            rows.append({"experiment": experiment, "job_selection": job_selection,
                         "resource_selection": resource_selection, "energy": energy, "makespan": makespan,
                         "edp": energy * makespan})
    return pd.DataFrame(rows)


def bar_chart(table: pd.DataFrame, experiment: str, metric: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = table[table.experiment == experiment].sort_values(metric)
    labels = [f"{j} / {r}" for j, r in zip(rows.job_selection, rows.resource_selection)]
    fig, ax = plt.subplots(figsize=(7, 9))
    ax.barh(labels, rows[metric], color=["tab:green" if i == 0 else "tab:blue" for i in range(len(rows))])
    ax.invert_yaxis()
    ax.set_xlabel({"energy": "energy (J)", "edp": "energy-delay product (J s)"}[metric])
    lower = rows[metric].min()
    ax.set_xlim(lower * 0.95, rows[metric].max() * 1.02)
    ax.set_title(f"Seed 002 {experiment}: every heuristic of the grid ({metric})")
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown(table: pd.DataFrame) -> str:
    lines = []
    for experiment in EXPERIMENTS:
        rows = table[table.experiment == experiment].sort_values("energy")
        best = rows.iloc[0]
        lines += [f"**{experiment}**: best energy {best.energy:.2f} J ({best.job_selection} / "
                  f"{best.resource_selection}); best EDP {rows.edp.min():,.0f} J s.", "",
                  "| job selection | resource selection | energy J | makespan s | EDP J s |", "|---|---|---:|---:|---:|"]
        lines += [f"| {r.job_selection} | {r.resource_selection} | {r.energy:.4f} | {r.makespan:.4f} | {r.edp:,.1f} |"
                  for r in rows.itertuples()]
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random selections")
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args(argv)
    table = pd.concat([run_grid(e, args.seed) for e in EXPERIMENTS], ignore_index=True)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "grid.csv", index=False)
    try:
        for experiment in EXPERIMENTS:
            for metric in ("energy", "edp"):
                bar_chart(table, experiment, metric, args.out / f"{experiment}_{metric}.png")
        print(f"charts in {args.out}")
    except ImportError:
        print("no charts: matplotlib is missing (pip install '.[plot]' in the joulesim checkout)")
    text = markdown(table)
    print(text)
    if not args.no_readme:
        replace_results(HERE / "README.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
