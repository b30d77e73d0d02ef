"""Seed 002 experiments 1 and 2: IRMaSim's heuristic grid on joulesim (figures 4.10 / 4.18 style).

    python -m experiments.irmasim_grid.run               # both experiments: results/, README.md, bar charts
    python -m experiments.irmasim_grid.run --out DIR     # where the charts go (default out/irmasim_grid)
    python -m experiments.irmasim_grid.run --no-readme   # leave README.md alone
    python -m experiments.irmasim_grid.run --readme-only # README.md from the committed results/

Inputs: exp1/ and exp2/ beside this script, IRMaSim files written from the thesis's tables
4.2-4.4 and 4.7-4.9 (see README.md). Every pair of job selection x resource selection runs with
`heuristic`; `random` draws from `--seed`. The grid goes to results/grid.csv (committed, with
results/run.json), and README.md's tables and quoted figures are written from it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd

from experiments.readme_results import write_readme
from experiments.run_record import read_run_record, record_figures, write_run_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "irmasim_grid"  # /out/ is git-ignored
RESULTS = HERE / "results"  # committed
# The thesis's best heuristics (seed 002, §4): the pair and its energy in J, as it prints them.
THESIS_BEST = {"exp1": ("low_mem_ops", "high_mem_bw", "3575.07"), "exp2": ("smallest", "high_mem_bw", "32,093.8")}
EXPERIMENTS = ("exp1", "exp2")
JOB_SELECTIONS = ("random", "first", "shortest", "smallest", "low_mem", "low_mem_ops")
RESOURCE_SELECTIONS = ("random", "first", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power")


def run_pair(experiment: str, job_selection: str, resource_selection: str, seed: int = 0,
             folder: Path | None = None, idle_power: str = "irmasim", per_step: str = "all",
             workload: Path | None = None) -> dict:
    """One heuristic pair: energy (J), makespan (s), EDP (J s); the inputs are in `folder`
    (default: the experiment's folder beside this script), the workload `workload` if given. `per_step="one"` starts one job per
    time step, as the learned scheduler acts (the thesis's heuristics start all that fit)."""
    import joulesim

    folder = folder or HERE / experiment
    result = joulesim.simulate(folder / "platform.json", workload or folder / "workload.json", "heuristic", energy=True,
                               idle_power=idle_power, options={"job_selection": job_selection,
                                                               "resource_selection": resource_selection, "seed": seed,
                                                               "per_step": per_step})
    energy = float(result.schedule["consumed_joules"])
    makespan = float(result.schedule["makespan"])
    return {"experiment": experiment, "job_selection": job_selection, "resource_selection": resource_selection,
            "energy": energy, "makespan": makespan, "edp": energy * makespan}


def run_c_on_two_cores(seed: int = 0) -> dict:
    """Experiment 2's thesis pair with profile C's jobs on 2 cores, as the thesis's text says
    (its table 4.8, which the inputs follow, says 4)."""
    import json
    import tempfile

    workload = json.loads((HERE / "exp2" / "workload.json").read_text())
    for job in workload["jobs"]:
        if job["profile"] == "C":
            job["res"] = 2
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "workload.json").write_text(json.dumps(workload))
        job_selection, resource_selection, _ = THESIS_BEST["exp2"]
        return run_pair("exp2", job_selection, resource_selection, seed, workload=Path(folder) / "workload.json")


def run_grid(experiment: str, seed: int = 0, folder: Path | None = None, per_step: str = "all",
             workload: Path | None = None) -> pd.DataFrame:
    """One row per heuristic pair of the grid (see run_pair)."""
    return pd.DataFrame([run_pair(experiment, job_selection, resource_selection, seed, folder, per_step=per_step,
                                  workload=workload)
                         for job_selection in JOB_SELECTIONS for resource_selection in RESOURCE_SELECTIONS])


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


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's tables and the figures its prose quotes, from the committed results."""
    grid = pd.read_csv(results / "grid.csv")
    always = pd.read_csv(results / "idle_power_always.csv").iloc[0]
    record = read_run_record(results)

    def energy(experiment: str, job_selection: str, resource_selection: str) -> float:
        row = grid[(grid.experiment == experiment) & (grid.job_selection == job_selection)
                   & (grid.resource_selection == resource_selection)]
        return float(row.energy.iloc[0])

    figures = {**record_figures(record), "runs": str(len(grid)), "seed": str(record["seeds"][0]),
               "exp1.always": f"{always.energy:.4f}", "exp2.a_jobs": str(sum(
                   job["profile"] == "A" for job in json.loads((HERE / "exp2" / "workload.json").read_text())["jobs"])),
               "exp2.c_on_two_cores": f"{pd.read_csv(results / 'c_on_two_cores.csv').energy.iloc[0]:,.0f}"}
    for experiment, (job_selection, resource_selection, thesis) in THESIS_BEST.items():
        rows = grid[grid.experiment == experiment]
        figures[f"{experiment}.thesis"] = thesis
        figures[f"{experiment}.thesis_pair_energy"] = f"{energy(experiment, job_selection, resource_selection):,.4f}"
        # The pairs that beat the thesis's best, `random` aside (its figure is one seed's draw).
        drawn = (rows.job_selection == "random") | (rows.resource_selection == "random")
        better = rows[~drawn & (rows.energy < energy(experiment, job_selection, resource_selection) - 1e-6)]
        lowest = better[better.energy == better.energy.min()]
        figures[f"{experiment}.better_count"] = str(len(better))
        figures[f"{experiment}.best_fixed"] = (", ".join(f"`{r.job_selection} / {r.resource_selection}`"
                                                         for r in lowest.itertuples())
                                               + f": {lowest.energy.min():,.2f} J") if len(lowest) else "none"
        random_pair = rows[(rows.job_selection == "random") & (rows.resource_selection == "random")]
        figures[f"{experiment}.random_random"] = f"{random_pair.energy.iloc[0]:,.2f} J"
    return markdown(grid), figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the bar charts (default: out/irmasim_grid)")
    parser.add_argument("--results", type=Path, default=None,
                        help="where the results go (default: results/ beside this script, and README.md is rewritten)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random selections")
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the committed results")
    args = parser.parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        return 0
    began = time.perf_counter()
    results = args.results or RESULTS
    table = pd.concat([run_grid(e, args.seed) for e in EXPERIMENTS], ignore_index=True)
    results.mkdir(parents=True, exist_ok=True)
    table.to_csv(results / "grid.csv", index=False)
    # IRMaSim's energy rule (a processor draws nothing before its first task) against min power
    # from t = 0, on the thesis's best pair of experiment 1.
    job_selection, resource_selection, _ = THESIS_BEST["exp1"]
    pd.DataFrame([run_pair("exp1", job_selection, resource_selection, args.seed, idle_power="always")]).to_csv(
        results / "idle_power_always.csv", index=False)
    pd.DataFrame([run_c_on_two_cores(args.seed)]).to_csv(results / "c_on_two_cores.csv", index=False)
    write_run_record(results, "python -m experiments.irmasim_grid.run" + (f" --seed {args.seed}" if args.seed else ""),
                     time.perf_counter() - began, event_grouping="per-time (IRMaSim node platforms)",
                     seeds=[args.seed])
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        for experiment in EXPERIMENTS:
            for metric in ("energy", "edp"):
                bar_chart(table, experiment, metric, args.out / f"{experiment}_{metric}.png")
        print(f"charts in {args.out}")
    except ImportError:
        print("no charts: matplotlib is missing (pip install '.[plot]' in the joulesim checkout)")
    print(markdown(table))
    if not (args.no_readme or args.results):
        write_readme(HERE / "README.md", *readme_figures(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
