"""Seed 000 (PCBE) tables 5.1-5.3 on joulesim, against the thesis's own IRMaSim results.

    python -m experiments.pcbe.run                  # all 8 comparison cases and the scaling case
    python -m experiments.pcbe.run --comparison     # the 8 small cases only (a second)
    python -m experiments.pcbe.run --no-readme      # print the table, leave README.md alone
    python -m experiments.pcbe.run --readme-only    # README.md from the committed results/, no run

Inputs are the thesis's experiment files (IRMaSim formats) in ../shared/data/pcbe, read as they
are. Each results.csv column is one scheduler run by the thesis: `heuristic A B` is IRMaSim's
heuristic with job selection A and resource selection B (indexes into IRMaSim's lists, below),
`energy J N` / `edp J N` PCBE with the energy or EDP criterion, job_prio and node_prio lo_first
(0) or hi_first (1). The script runs the same schedulers with joulesim's `heuristic` and `pcbe`
deciders, keeps every run's figures in results/runs.csv (committed) and writes README.md's table
and the figures its prose quotes from that file.
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
PCBE_DATA = REPO_ROOT.parent / "shared" / "data" / "pcbe"
RESULTS = HERE / "results"
# IRMaSim's option lists, in the order the thesis's column names index them.
JOB_SELECTIONS = ["random", "first", "shortest", "smallest", "low_mem", "low_mem_ops"]
RESOURCE_SELECTIONS = ["random", "first", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power"]
PRIORITIES = ["lo_first", "hi_first"]
COMPARISON_CASES = [f"{kind}_{i}" for kind in ("energy", "edp") for i in range(1, 5)]


def decider_for(column: str) -> tuple[str, dict[str, str]]:
    """The joulesim decider and options of one results.csv column."""
    kind, first, second = column.split()
    if kind == "heuristic":
        return "heuristic", {"job_selection": JOB_SELECTIONS[int(first)],
                             "resource_selection": RESOURCE_SELECTIONS[int(second)]}
    return "pcbe", {"criterion": kind, "job_prio": PRIORITIES[int(first)], "node_prio": PRIORITIES[int(second)]}


def run_case(case: Path, workload: str = "workload.json") -> list[dict]:
    import joulesim

    published = pd.read_csv(case / "results.csv")
    nodes = sum(group["number"] for cluster in json.loads((case / "platform.json").read_text())["platform"]
                ["the_platform"]["clusters"] for group in cluster["nodes"])
    rows = []
    runs = [(column, *decider_for(column)) for column in published.columns]
    for column, decider, options in list(runs):
        if options.get("resource_selection") == "low_power":
            # IRMaSim sorted low_power the other way before January 2024 (commit fffb0b9): the
            # thesis ran that version. Our `high_power` is that order.
            runs.append((column, decider, dict(options, resource_selection="high_power")))
    for column, decider, options in runs:
        started = time.perf_counter()
        result = joulesim.simulate(case / "platform.json", case / workload, decider, options=options, energy=True)
        wall = time.perf_counter() - started
        makespan = float(result.schedule["makespan"])
        energy = float(result.schedule["consumed_joules"])
        theirs = published[column].tolist()
        rows.append({"case": case.name, "scheduler": column, "decider": decider + " " + " ".join(
            f"{k}={v}" for k, v in options.items()), "makespan": makespan, "energy": energy,
            "edp": makespan * energy, "thesis_makespan": theirs[0], "thesis_energy": theirs[1],
            "thesis_edp": theirs[2], "jobs": len(result.jobs), "nodes": nodes, "wall_s": wall})
    return rows


def relative_difference(r: pd.Series) -> float:
    """The largest relative difference from the thesis of a run's makespan, energy and EDP."""
    return max(abs(r[k] - r["thesis_" + k]) / abs(r["thesis_" + k]) for k in ("makespan", "energy", "edp"))


def table(runs: pd.DataFrame) -> str:
    lines = ["| case | thesis column | joulesim decider | makespan s | thesis | energy J | thesis | EDP J s | thesis | max rel. diff |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for _, r in runs.iterrows():
        lines.append(f"| {r['case']} | `{r['scheduler']}` | `{r['decider']}` | {r['makespan']:.6g} | {r['thesis_makespan']:.6g} | "
                     f"{r['energy']:.6g} | {r['thesis_energy']:.6g} | {r['edp']:.6g} | {r['thesis_edp']:.6g} | "
                     f"{relative_difference(r):.2e} |")
    return "\n".join(lines)


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's results block and the figures its prose quotes, from the committed results."""
    runs = pd.read_csv(results / "runs.csv")
    runs["diff"] = runs.apply(relative_difference, axis=1)
    low_power = runs["decider"].str.contains("resource_selection=low_power")
    high_power = runs["decider"].str.contains("resource_selection=high_power")
    scaling = runs["case"] == "scaling"
    summary = (f"{len(runs)} runs; largest relative difference from the thesis's figures: {runs['diff'].max():.2e}; "
               f"joulesim wall time {runs['wall_s'].sum():.2f} s in all.")
    figures = {
        **record_figures(read_run_record(results)),
        "runs": str(len(runs)),
        "comparison.worst": f"{runs.loc[~scaling, 'diff'].max():.0e}",
        "scaling.jobs": f"{runs.loc[scaling, 'jobs'].iloc[0]:,}",
        "scaling.nodes": f"{runs.loc[scaling, 'nodes'].iloc[0]:,}",
        "scaling.worst_agreeing": f"{runs.loc[scaling & ~low_power & ~high_power, 'diff'].max():.0e}",
        "low_power.diff": f"{100 * runs.loc[scaling & low_power, 'diff'].max():.1f}%",
        "high_power.diff": f"{runs.loc[scaling & high_power, 'diff'].max():.0e}",
    }
    return f"{table(runs)}\n\n{summary}", figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparison", action="store_true",
                        help="only the 8 comparison cases (results in out/pcbe, README.md untouched)")
    parser.add_argument("--no-readme", action="store_true", help="do not rewrite README.md")
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the committed results")
    parser.add_argument("--results", type=Path, default=None,
                        help=f"where the results go (default: {RESULTS.relative_to(REPO_ROOT)} for the whole run)")
    args = parser.parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        return 0
    if not PCBE_DATA.is_dir():
        print(f"skipped: {PCBE_DATA} is absent (the thesis's inputs live in ../shared/data/pcbe)")
        return 0
    partial = args.comparison
    results = args.results or (REPO_ROOT / "out" / "pcbe" if partial else RESULTS)
    began = time.perf_counter()
    rows = []
    for name in COMPARISON_CASES:
        rows += run_case(PCBE_DATA / "comparison" / name)
    if not partial:
        rows += run_case(PCBE_DATA / "scaling")
    results.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(results / "runs.csv", index=False)
    write_run_record(results, "python -m experiments.pcbe.run" + (" --comparison" if partial else ""),
                     time.perf_counter() - began, event_grouping="per-time (IRMaSim node platforms)", seeds=None)
    print(table(pd.DataFrame(rows)))
    if not (args.no_readme or partial or args.results):
        write_readme(HERE / "README.md", *readme_figures(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
