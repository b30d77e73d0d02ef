"""Seed 000 (PCBE) tables 5.1-5.3 on joulesim, against the thesis's own IRMaSim results.

    python -m experiments.pcbe.run                  # all 8 comparison cases and the scaling case
    python -m experiments.pcbe.run --comparison     # the 8 small cases only (a second)
    python -m experiments.pcbe.run --no-readme      # print the table, leave README.md alone

Inputs are the thesis's experiment files (IRMaSim formats) in ../shared/data/pcbe, read as they
are. Each results.csv column is one scheduler run by the thesis: `heuristic A B` is IRMaSim's
heuristic with job selection A and resource selection B (indexes into IRMaSim's lists, below),
`energy J N` / `edp J N` PCBE with the energy or EDP criterion, job_prio and node_prio lo_first
(0) or hi_first (1). The script runs the same schedulers with joulesim's `heuristic` and `pcbe`
deciders and writes the side-by-side table into README.md beside it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from experiments.readme_results import replace_results

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
PCBE_DATA = REPO_ROOT.parent / "shared" / "data" / "pcbe"
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
            "thesis_edp": theirs[2], "wall_s": wall})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| case | thesis column | joulesim decider | makespan s | thesis | energy J | thesis | EDP J s | thesis | max rel. diff |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        diff = max(abs(r[k] - r["thesis_" + k]) / abs(r["thesis_" + k]) for k in ("makespan", "energy", "edp"))
        lines.append(f"| {r['case']} | `{r['scheduler']}` | `{r['decider']}` | {r['makespan']:.6g} | {r['thesis_makespan']:.6g} | "
                     f"{r['energy']:.6g} | {r['thesis_energy']:.6g} | {r['edp']:.6g} | {r['thesis_edp']:.6g} | "
                     f"{diff:.2e} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparison", action="store_true", help="only the 8 comparison cases")
    parser.add_argument("--no-readme", action="store_true", help="do not rewrite README.md")
    args = parser.parse_args(argv)
    if not PCBE_DATA.is_dir():
        print(f"skipped: {PCBE_DATA} is absent (the thesis's inputs live in ../shared/data/pcbe)")
        return 0
    rows = []
    for name in COMPARISON_CASES:
        rows += run_case(PCBE_DATA / "comparison" / name)
    if not args.comparison:
        rows += run_case(PCBE_DATA / "scaling")
    text = table(rows)
    worst = max(max(abs(r[k] - r["thesis_" + k]) / abs(r["thesis_" + k]) for k in ("makespan", "energy", "edp"))
                for r in rows)
    summary = (f"{len(rows)} runs; largest relative difference from the thesis's figures: {worst:.2e}; "
               f"joulesim wall time {sum(r['wall_s'] for r in rows):.2f} s in all.")
    print(text)
    print(summary)
    if not args.no_readme:
        replace_results(HERE / "README.md", f"{text}\n\n{summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
