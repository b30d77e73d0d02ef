"""Seed 001 chapter 6 (§6.5): EASY under an energy budget, rebuilt as a joulesim campaign.

    python -m experiments.energy_budget.run                 # default subset, ~20-25 min on 2 cores
    python -m experiments.energy_budget.run --full          # the 980 instances, ~1.5 h on 2 cores
    python -m experiments.energy_budget.run --analyze-only --out DIR
    python -m experiments.energy_budget.run --select-weeks  # recompute the weeks of campaign.toml
    python -m experiments.energy_budget.run --readme-only   # README.md from the committed results/

Runs `campaign.toml` (the default subset: SDSC-BLUE's 10 weeks and Curie's two weeks of highest
load, 588 instances), then normalizes the measures as §6.5.3 ([Mor08]: between-subject
normalization, each trace week a subject), draws figures 6.2-6.4 and table 6.2, and writes
OUT/results.md with the thesis's claims checked one by one. See README.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from experiments import campaign_records
from experiments.campaign_records import report_restored, save_records
from experiments.readme_results import write_readme
from experiments.run_record import duration_text, read_run_record, record_figures, write_run_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
CAMPAIGN = HERE / "campaign.toml"
DEFAULT_OUT = REPO_ROOT / "out" / "energy_budget"  # /out/ is git-ignored
# The campaign's finished instances, committed: it spans sessions (experiments/campaign_records.py).
RESULTS = HERE / "results"
RECORDS = RESULTS / "instances.jsonl"
SHARED_SWF = REPO_ROOT.parent / "shared" / "data" / "swf"
TRACES = {"curie": ("CEA-Curie-2011-2.1-cln.swf.gz", 80640), "sdsc-blue": ("SDSC-BLUE-2000-4.2-cln.swf.gz", 1152)}
#: The default subset: every SDSC-BLUE week, the two Curie weeks of highest offered load.
DEFAULT_CURIE_WEEKS = ["7", "11"]
WEEK = 7 * 86400.0
P_COMPUTING = 190.74  # W, table 6.1: a host computing at full load
BUDGETS = [100, 90, 80, 70, 60, 50, 49, 30]
ALGORITHMS = ["PC", "reducePC", "energyBud"]
#: Table 6.2 of the thesis: percentage change with opportunistic shutdown, by algorithm.
THESIS_INSTANCES = 1470  # its three traces x 10 weeks x 49 configurations
THESIS_TABLE_6_2 = {
    "AVEbsld": {"PC": 0.16, "reducePC": 0.88, "energyBud": -8.61},
    "utilization": {"PC": -0.05, "reducePC": 4.95, "energyBud": 5.74},
    "jobs started": {"PC": -0.05, "reducePC": 1.4, "energyBud": 1.47},
    "energy": {"PC": -4.74, "reducePC": -1.78, "energyBud": -1.42},
}
MEASURES = {"utilization": "window_utilization", "AVEbsld": "mean_bounded_slowdown",
            "jobs started": "window_jobs_started", "energy": "relative_energy"}


def select_weeks(count: int = 10) -> dict[str, list[int]]:
    """The `count` disjoint weeks of highest offered load of each trace: run time x processors
    of the jobs submitted in the week over the week's capacity, weeks counted from the first
    job of the trace converted as the campaign converts it."""
    from joulesim.workload_tools.swf import convert_swf

    weeks = {}
    for name, (file_name, nb_res) in TRACES.items():
        document, _ = convert_swf(str(SHARED_SWF / file_name), nb_res=nb_res)
        submit = np.array([job["subtime"] for job in document["jobs"]], dtype=float)
        profiles = document["profiles"]
        work = np.array([profiles[job["profile"]]["delay"] * job["res"] for job in document["jobs"]], dtype=float)
        load = np.bincount((submit // WEEK).astype(int), weights=work) / (nb_res * WEEK)
        weeks[name] = sorted(np.argsort(-load, kind="stable")[:count].tolist())
    return weeks


def run(out: Path, full: bool, workers: int | None, quick: bool = False, records: Path | None = None) -> None:
    """Run the campaign (the subset, --full or --quick) into `out`, resuming from `records` (the
    committed records: experiments/campaign_records.py) and writing them back as parts finish."""
    from joulesim.campaign.runner import run_campaign

    if records is not None:
        report_restored(records, out)
    summaries = []
    if quick:  # every configuration on one SDSC-BLUE week
        study = tomllib.loads(CAMPAIGN.read_text())
        first = next(w for w in study["workloads"] if w["name"] == "sdsc-blue")["weeks"][0]
        summaries.append(run_campaign(str(CAMPAIGN), str(out), workers=workers,
                                      where={"workload": ["sdsc-blue"], "week": [str(first)]}))
    elif full:
        summaries.append(run_campaign(str(CAMPAIGN), str(out), workers=workers))
    else:  # the two parts of the subset, into the same results folder
        for part in ({"workload": ["sdsc-blue"]}, {"workload": ["curie"], "week": DEFAULT_CURIE_WEEKS}):
            summaries.append(run_campaign(str(CAMPAIGN), str(out), workers=workers, where=part))
    if records is not None:
        save_records(out, records)
    failed = sum(len(s.failed) for s in summaries)
    wall = sum(s.wall_time for s in summaries)
    ran = sum(s.nb_run for s in summaries)
    print(f"campaign: {sum(s.nb_instances for s in summaries)} instances, {ran} run now, {failed} failed, "
          f"{wall:.0f} s" + (f" ({wall / ran:.2f} s per instance)" if ran else ""))
    if failed:
        raise SystemExit(f"{failed} instances failed: see {out}/instances/")


# ---------------------------------------------------------------- analysis
def load_results(out: Path) -> pd.DataFrame:
    """The succeeded instances of the results folder `out` with the columns of the analysis:
    trace, week, algorithm, budget (%), and the four measures of §6.5.3."""
    from joulesim.campaign.results_store import ResultsStore
    from joulesim.campaign.runner import instances_of

    # From the instance records, so that a campaign still running (or interrupted) can be
    # looked at: instances without a record yet are left out.
    _, instances, _ = instances_of(str(CAMPAIGN))
    return _analysis_frame(ResultsStore(str(out)).table(instances), str(out))


def committed_results(results: Path) -> pd.DataFrame:
    """The same from the committed records in `results` (their parameters are in each record:
    the traces are not read, so a checkout without ../shared can write README.md)."""
    return _analysis_frame(campaign_records.records_table(results / RECORDS.name), str(results / RECORDS.name))


def _analysis_frame(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    if "status" in frame.columns:
        frame = frame[frame["status"] == "ok"].copy()
    if frame.empty:
        raise SystemExit(f"no finished instance in {source}: run the campaign first")
    frame["trace"] = frame["workload"]
    frame["algorithm"] = frame["decider"]
    budget = frame["option.budget"] if "option.budget" in frame.columns else pd.Series("100%", index=frame.index)
    frame["budget"] = budget.fillna("100%").astype(str).str.rstrip("%").astype(float)
    machines = frame["trace"].map(lambda t: TRACES[t][1])
    frame["relative_energy"] = frame["window_energy"] / (machines * P_COMPUTING * WEEK)
    return frame


def campaign_size() -> int:
    """The whole campaign's instances (--full), counted from campaign.toml: each trace's weeks x
    each decider's budgets."""
    study = tomllib.loads(CAMPAIGN.read_text())
    configurations = sum(len(d.get("grid", {}).get("budget", [None])) for d in study["deciders"])
    return sum(len(w["weeks"]) for w in study["workloads"]) * configurations


def normalize(frame: pd.DataFrame) -> pd.DataFrame:
    """[Mor08]: y - mean of y over the subject's conditions + grand mean, each trace week a
    subject (the between-subject variable), so that traces of very different clusters and
    loads can be averaged."""
    result = frame.copy()
    subject = [result["trace"], result["week"]]
    for column in MEASURES.values():
        result[column] = (result[column] - result.groupby(subject)[column].transform("mean")
                          + result[column].mean())
    return result


def condition_means(normalized: pd.DataFrame) -> pd.DataFrame:
    """Mean normalized measure per (algorithm, budget)."""
    return normalized.groupby(["algorithm", "budget"])[list(MEASURES.values())].mean()


def baseline(u_easy: float, budget: float) -> float:
    """§6.5.6: f(budget) = u_EASY x (3/7 x budget + 4/7), budget as a fraction."""
    return u_easy * (3 / 7 * budget / 100 + 4 / 7)


def table_6_2(means: pd.DataFrame) -> pd.DataFrame:
    """Mean over budgets of (y_SHUT - y_IDLE) / y_IDLE, in %, per algorithm and measure."""
    rows = {}
    for measure, column in MEASURES.items():
        row = {}
        for algorithm in ALGORITHMS:
            idle = means.loc[algorithm, column]
            shut = means.loc[f"{algorithm}_SHUT", column]
            row[algorithm] = float(((shut - idle) / idle).mean() * 100)
        rows[measure] = row
    return pd.DataFrame(rows).T[ALGORITHMS]


def draw(means: pd.DataFrame, out: Path) -> list[Path]:
    from joulesim.analysis.plotting import pyplot, save

    plt = pyplot()
    styles = {"PC": ("tab:blue", "o"), "reducePC": ("tab:orange", "s"), "energyBud": ("tab:green", "^")}
    written = []
    figures = [("fig6_2_utilization.png", "window_utilization", "normalized mean utilization (week)"),
               ("fig6_3_avebsld.png", "mean_bounded_slowdown", "normalized mean AVEbsld (tau = 10 s)"),
               ("fig6_4_energy.png", "relative_energy", "normalized mean energy / max. consumable (week)")]
    for name, column, label in figures:
        fig, ax = plt.subplots(figsize=(8, 5.5), layout="constrained")
        for algorithm in ALGORITHMS:
            color, marker = styles[algorithm]
            for suffix, line in (("", "-"), ("_SHUT", "--")):
                series = means.loc[f"{algorithm}{suffix}", column].sort_index()
                ax.plot(series.index, series.values, line, color=color, marker=marker,
                        label=f"{algorithm}{suffix}")
        easy = float(means.loc[("EASY", 100.0), column])
        ax.scatter([100], [easy], color="black", marker="*", s=150, zorder=5, label="EASY")
        if column == "window_utilization":
            xs = np.array([30.0, 100.0])
            ax.plot(xs, [baseline(easy, x) for x in xs], color="black", linewidth=1, label="3/7 budget + 4/7")
        ax.set_xlabel("energy budget (% of the platform computing for the 3 days)")
        ax.set_ylabel(label)
        ax.invert_xaxis()
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
        written.append(Path(save(fig, str(out / name))))
    return written


def claims(means: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """The thesis's statements of §6.5.4-6.5.6, each checked on our means."""
    u, b, e = "window_utilization", "mean_bounded_slowdown", "relative_energy"
    lines = []

    def at(algorithm: str, budget: float, column: str) -> float:
        return float(means.loc[(algorithm, budget), column])

    budgeted = [f"{a}{s}" for a in ALGORITHMS for s in ("", "_SHUT")]
    budgets = [x for x in BUDGETS if x < 100]
    best_u = {x: max(budgeted, key=lambda a: at(a, x, u)) for x in budgets}
    lines.append("6.2 (thesis: energyBud best): best utilization per budget: "
                 + ", ".join(f"{x}% {best_u[x]}" for x in budgets))
    wins = [x for x in budgets if at("reducePC_SHUT", x, u) > at("energyBud", x, u)]
    lines.append(f"6.2: reducePC_SHUT above energyBud (no shutdown) at budgets {wins} of {budgets}")
    same = all(abs(at(a, 49, c) - at(a, 30, c)) < 1e-9 and abs(at(a, 49, c) - at("PC", 49, c)) < 1e-9
               for a in ("PC", "reducePC", "energyBud") for c in (u, b, e))
    lines.append(f"6.2: at 49% and 30%, the three algorithms without shutdown give the same results: {same}")
    gap = max(abs(at("PC", x, u) - at("PC_SHUT", x, u)) for x in BUDGETS)
    lines.append(f"6.2: PC and PC_SHUT have close utilizations (largest gap {gap:.4f})")
    best_b = {x: min(budgeted, key=lambda a: at(a, x, b)) for x in budgets}
    lines.append("6.3 (thesis: energyBud best): lowest AVEbsld per budget: "
                 + ", ".join(f"{x}% {best_b[x]}" for x in budgets))
    above_30 = [a for a in ("PC", "reducePC", "energyBud") if at(a, 30, e) > 0.30]
    lines.append(f"6.4: at 30%, algorithms without shutdown consuming more than 30% of the maximum: {above_30}")
    lower = all(at(f"{a}_SHUT", x, e) < at(a, x, e) for a in ALGORITHMS for x in BUDGETS)
    lines.append(f"6.4: every _SHUT variant consumes less than its idle counterpart at every budget: {lower}")
    order = {x: sorted(ALGORITHMS, key=lambda a: -at(a, x, e)) for x in budgets}
    lines.append("6.4 (thesis: energyBud > reducePC > PC): energy order without shutdown, most first: "
                 + ", ".join(f"{x}%: {' > '.join(order[x])}" for x in budgets))
    signs = []
    for measure, row in THESIS_TABLE_6_2.items():
        for algorithm, value in row.items():
            ours = table.loc[measure, algorithm]
            signs.append(np.sign(ours) == np.sign(value))
    lines.append(f"table 6.2: {sum(signs)} of {len(signs)} signs as in the thesis")
    easy = at("EASY", 100, u)
    for algorithm in budgeted:
        above = [x for x in BUDGETS if at(algorithm, x, u) >= baseline(easy, x)]
        lines.append(f"6.5.6: {algorithm} on or above the 3/7 x budget + 4/7 line at budgets {above}")
    return lines


def markdown_table(means: pd.DataFrame) -> list[str]:
    lines = ["| algorithm | budget | " + " | ".join(MEASURES) + " |", "|---|---|" + "---|" * len(MEASURES)]
    for (algorithm, budget), row in means.iterrows():
        lines.append(f"| {algorithm} | {budget:g}% | " + " | ".join(f"{row[c]:.4f}" for c in MEASURES.values()) + " |")
    return lines


def analyze(out: Path) -> None:
    frame = load_results(out)
    normalized = normalize(frame)
    means = condition_means(normalized)
    table = table_6_2(means)
    figures = draw(means, out)
    subjects = frame.groupby(["trace"])["week"].nunique().to_dict()
    lines = ["# Energy budget (seed 001 §6.5) on joulesim", "",
             f"{len(frame)} instances, trace weeks: {subjects}", "",
             "## Mean normalized measures per condition", "",
             *markdown_table(means), "",
             "## Table 6.2: % change with opportunistic shutdown (thesis in parentheses)", "",
             "| measure | " + " | ".join(ALGORITHMS) + " |", "|---|---|---|---|"]
    for measure in MEASURES:
        lines.append(f"| {measure} | " + " | ".join(
            f"{table.loc[measure, a]:+.2f} % ({THESIS_TABLE_6_2[measure][a]:+.2f} %)" for a in ALGORITHMS) + " |")
    lines += ["", "## The thesis's statements, checked", ""] + [f"- {line}" for line in claims(means, table)]
    lines += ["", "Figures: " + ", ".join(p.name for p in figures)]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---------------------------------------------------------------- README.md from the results
def _budgets_text(budgets: list[float], every: list[float]) -> str:
    """"every budget", "none", or "90, 80 and 70 %"."""
    if not budgets:
        return "none"
    if list(budgets) == list(every):
        return "every budget"
    numbers = [f"{x:g}" for x in budgets]
    return (", ".join(numbers[:-1]) + " and " + numbers[-1] if len(numbers) > 1 else numbers[0]) + " %"


def _by_choice(choice: dict[float, str], every: list[float]) -> str:
    """Budgets grouped by what was chosen at them: "energyBud_SHUT at 90, 80 and 30 %; PC at 70 %"."""
    groups: dict[str, list[float]] = {}
    for budget, name in choice.items():
        groups.setdefault(name, []).append(budget)
    return "; ".join(f"{name} at {_budgets_text(budgets, every)}" for name, budgets in groups.items())


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's table 6.2 and every figure its prose quotes, from the committed records
    (results/instances.jsonl) and results/run.json."""
    record = read_run_record(results)
    frame = committed_results(results)
    means = condition_means(normalize(frame))
    table = table_6_2(means)
    u, b, e = "window_utilization", "mean_bounded_slowdown", "relative_energy"

    def at(algorithm: str, budget: float, column: str) -> float:
        return float(means.loc[(algorithm, budget), column])

    budgets = [x for x in BUDGETS if x < 100]
    budgeted = [f"{a}{s}" for a in ALGORITHMS for s in ("", "_SHUT")]
    best_u = {x: max(budgeted, key=lambda a: at(a, x, u)) for x in budgets}
    best_b = {x: min(budgeted, key=lambda a: at(a, x, b)) for x in budgets}
    rpc_shut_wins = [x for x in budgets if at("reducePC_SHUT", x, u) > at("energyBud", x, u)]
    pc_last = [x for x in BUDGETS if at("PC", x, u) < min(at("reducePC", x, u), at("energyBud", x, u))]
    pc_above_eb = [x for x in BUDGETS if at("PC", x, u) > at("energyBud", x, u)]
    shut_less = [(a, x) for a in ALGORITHMS for x in BUDGETS if not at(f"{a}_SHUT", x, e) < at(a, x, e)]
    order = {x: " > ".join(sorted(ALGORITHMS, key=lambda a: -at(a, x, e))) for x in budgets}
    signs = sum(np.sign(table.loc[m, a]) == np.sign(v) for m, row in THESIS_TABLE_6_2.items() for a, v in row.items())
    easy = at("EASY", 100, u)
    line = {a: [x for x in BUDGETS if at(a, x, u) >= baseline(easy, x)] for a in budgeted}
    weeks = frame.groupby("trace")["week"].unique()
    per_instance = frame.groupby("trace")["wall_time"]
    slowest = frame.loc[frame["wall_time"].idxmax()]
    rows = ["| measure | PC (thesis) | reducePC (thesis) | energyBud (thesis) |", "|---|---|---|---|"]
    for measure in MEASURES:
        rows.append(f"| {measure} | " + " | ".join(
            f"{table.loc[measure, a]:+.2f} % ({THESIS_TABLE_6_2[measure][a]:+.2f} %)" for a in ALGORITHMS) + " |")
    figures = {
        **record_figures(record),
        "instances": f"{len(frame):,}",
        "subjects": "; ".join(f"{trace}: weeks {', '.join(str(w) for w in sorted(ws, key=int))}"
                              for trace, ws in weeks.items()),
        "best_u": _by_choice(best_u, budgets), "best_b": _by_choice(best_b, budgets),
        "rpc_shut_wins": _budgets_text(rpc_shut_wins, budgets),
        "pc_last": _budgets_text(pc_last, BUDGETS), "pc_above_eb": _budgets_text(pc_above_eb, BUDGETS),
        "u.49": " / ".join(f"{a} {at(a, 49, u):.4f}" for a in ALGORITHMS),
        "u.30": " / ".join(f"{a} {at(a, 30, u):.4f}" for a in ALGORITHMS),
        "pc_gap": f"{max(abs(at('PC', x, u) - at('PC_SHUT', x, u)) for x in BUDGETS):.4f}",
        "shut_less": ("at every budget" if not shut_less else
                      "except " + ", ".join(f"{a} at {x:g} %" for a, x in shut_less)),
        "above_30": ", ".join(a for a in ALGORITHMS if at(a, 30, e) > 0.30) or "none",
        "energy_order": "; ".join(f"{x:g} %: {o}" for x, o in order.items()),
        "signs": f"{signs} of {sum(len(r) for r in THESIS_TABLE_6_2.values())}",
        "table_6_2": "\n".join(rows),
        "line": "; ".join(f"{a} at {_budgets_text(xs, BUDGETS)}" for a, xs in line.items()),
        "cost.total": duration_text(float(frame["wall_time"].sum())),
        "cost.per_trace": "; ".join(f"{trace} {seconds:.1f} s" for trace, seconds in per_instance.mean().items()),
        "full.extra": f"{campaign_size() - len(frame):,}", "full.instances": f"{campaign_size():,}",
        "cost.slowest": (f"{slowest['wall_time']:.0f} s ({slowest['algorithm']} at {slowest['budget']:g} %, "
                         f"{slowest['trace']} week {slowest['week']})"),
    }
    block = "\n".join(markdown_table(means))
    return block, figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results folder (default: out/energy_budget)")
    parser.add_argument("--full", action="store_true", help="all 980 instances (default: the subset)")
    parser.add_argument("--quick", action="store_true", help="every configuration on one SDSC-BLUE week (minutes)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: the cores)")
    parser.add_argument("--analyze-only", action="store_true", help="analyze the results already in --out")
    parser.add_argument("--select-weeks", action="store_true", help="print the weeks of highest load and exit")
    campaign_records.add_arguments(parser, str(RECORDS.relative_to(HERE)))
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the committed results")
    args = parser.parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        print(f"{HERE / 'README.md'} written from {RESULTS}")
        return 0
    records = campaign_records.chosen_records(args, RECORDS)
    if args.records_only:
        return campaign_records.write_records_only(parser, args.out, records)
    if not args.analyze_only and not SHARED_SWF.is_dir():
        print(f"run.py: the traces are read from {SHARED_SWF} (../shared/data beside the checkout), which is "
              "absent; nothing to run", file=sys.stderr)
        return 2
    if args.select_weeks:
        for name, weeks in select_weeks().items():
            print(f"{name}: weeks = {weeks}")
        return 0
    began = time.perf_counter()
    if not args.analyze_only:
        run(args.out, args.full, args.workers, args.quick, records)
    analyze(args.out)
    # The committed figures: the default subset (or the whole campaign) from the committed records.
    if not args.analyze_only and not args.quick and records == RECORDS:
        write_run_record(RESULTS, "python -m experiments.energy_budget.run" + (" --full" if args.full else ""),
                         time.perf_counter() - began, event_grouping="batsim", seeds=[],
                         workers=args.workers or os.cpu_count(), instances=len(load_results(args.out)))
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
