"""Seed 003: scheduling functions found by simulation and regression, against FCFS, WFP and UNICEF.

    python -m experiments.utility_policies.run                  # generate (or reuse), fit, evaluate
    python -m experiments.utility_policies.run --pairs 200      # training pairs (default 200)
    python -m experiments.utility_policies.run --seeds 10       # evaluation traces (default 10)
    python -m experiments.utility_policies.run --readme-only    # README.md from the committed results/

1. Training data: `joulesim learn generate` on PAIRS (S, Q) pairs of a Lublin trace (256
   processors, 16 + 32 jobs), 250,000 permutations each (the paper's number), reused from
   out/utility_policies/scores.parquet when present.
2. `joulesim learn fit`: every candidate form, ranked; our F1- and F2-shaped fits beside table 1.
3. Evaluation (the paper's figure 1): 30 days of a Lublin trace on 256 processors, one trace per
   seed, FCFS, WFP3, UNICEF, F1 and F2 with table 1's coefficients, F1/F2 shapes and the best form
   with our coefficients; without backfilling (the paper's setting) and with EASY (its stated
   future work); actual runtimes (walltime = runtime in the generated traces: the paper's
   "runtime" setting); AVEbsld with tau = 10 s over every job.
A run with the defaults writes results/ beside this script (committed: ranking.csv and
paper_forms.csv of the fit, avebsld.csv of the evaluation, traces.csv, run.json) and README.md's
tables and quoted figures from them; the scores, the fitted functions and the charts go to
out/utility_policies/. Other settings write their results there too and leave README.md alone.
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
DEFAULT_OUT = REPO_ROOT / "out" / "utility_policies"
RESULTS = HERE / "results"  # the default run's figures, committed
DEFAULTS = {"pairs": 200, "permutations": 250_000, "seeds": 10}
#: Table 1's claim this experiment checks: the learned functions' largest gain over the baselines.
PAPER_LARGEST_GAIN = 7.25
DAYS = 30
N_PROCS = 256
#: Arrival-time divisors: the model as it is (load ~0.5 on 256 processors), and twice as dense.
COMPRESSIONS = (1.0, 2.0)


def traces(seeds: int, compression: float = 1.0) -> list[dict]:
    """30 days of the Lublin model on 256 processors, one trace per seed (1, 2, ...); with
    `compression` c, arrival times are divided by c (c times the jobs in 30 days, same jobs)."""
    from joulesim.workload_tools.lublin import generate

    out = []
    for seed in range(1, seeds + 1):
        # walltime_factor 1 (the paper's "runtime" estimates; the generator's default when these
        # figures were measured, now 2): under Batsim's rule such jobs end at their walltime
        # (issue 48 reruns this experiment).
        workload = generate(jobs=int(4000 * compression), nb_res=N_PROCS, seed=seed, walltime_factor=1.0)
        for job in workload["jobs"]:
            job["subtime"] = job["subtime"] / compression
        jobs = [job for job in workload["jobs"] if job["subtime"] < DAYS * 86400]
        if len(jobs) == len(workload["jobs"]):
            raise RuntimeError("4,000 jobs do not cover 30 days: raise the count")
        out.append({**workload, "jobs": jobs})
    return out


def offered_load(workload: dict) -> float:
    """Requested processor-seconds (at actual run times) over the platform's 30 days."""
    profiles = workload["profiles"]
    work = sum(job["res"] * profiles[job["profile"]]["delay"] for job in workload["jobs"])
    return work / (N_PROCS * DAYS * 86400)


def policies(fitted: dict[str, str]) -> dict[str, tuple[str, dict[str, str]]]:
    table = {"FCFS": ("fcfs", {}), "WFP3": ("wfp", {"runtime": "profile"}),
             "UNICEF": ("unicef", {"runtime": "profile"}),
             "F1 (table 1)": ("utility", {"function": "F1", "runtime": "profile"}),
             "F2 (table 1)": ("utility", {"function": "F2", "runtime": "profile"})}
    for label, path in fitted.items():
        table[label] = ("utility", {"function": path, "runtime": "profile"})
    return table


def evaluate(workloads: list[dict], fitted: dict[str, str], compression: float = 1.0) -> pd.DataFrame:
    import joulesim

    rows = []
    platform = {"master": {"name": "master"}, "clusters": [{"id": "c", "prefix": "h", "count": N_PROCS,
                                                            "speed": "1Gf"}]}
    for backfill in ("none", "easy"):
        for label, (decider, options) in policies(fitted).items():
            if decider == "fcfs" and backfill == "easy":
                decider, options = "easy", {}
            elif decider != "fcfs":
                options = {**options, "backfill": backfill}
            for seed, workload in enumerate(workloads, start=1):
                started = time.perf_counter()
                result = joulesim.simulate(platform, workload, decider, options=options)
                rows.append({"compression": compression, "policy": label, "backfill": backfill, "seed": seed,
                             "avebsld": result.metrics["mean_bounded_slowdown"],  # tau = 10 s
                             "jobs": len(result.jobs), "wall_s": time.perf_counter() - started})
    return pd.DataFrame(rows)


def bar_chart(results: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=False)
    for axis, backfill in zip(axes, ("none", "easy")):
        rows = results[results.backfill == backfill]
        labels = list(dict.fromkeys(rows.policy))
        data = [rows[rows.policy == label].avebsld.to_numpy() for label in labels]
        axis.boxplot(data, showmeans=True)
        axis.set_xticks(range(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize=8)
        axis.set_yscale("log")
        axis.set_ylabel("AVEbsld (tau = 10 s)")
        axis.set_title(f"backfilling: {backfill}")
    fig.suptitle(f"Seed 003 figure 1: {len(set(results.seed))} Lublin traces of 30 days, 256 processors")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--pairs", type=int, default=DEFAULTS["pairs"])
    parser.add_argument("--permutations", type=int, default=DEFAULTS["permutations"])
    parser.add_argument("--seeds", type=int, default=DEFAULTS["seeds"])
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the committed results")
    args = parser.parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        return 0
    from joulesim.learn.function_fit import fit_forms, read_scores, write_fit
    from joulesim.learn.score_generation import generate_scores

    defaults = all(getattr(args, key) == value for key, value in DEFAULTS.items())
    results_dir = RESULTS if defaults else args.out / "results"
    args.out.mkdir(parents=True, exist_ok=True)
    scores = str(args.out / "scores.parquet")
    started = time.perf_counter()
    summary = generate_scores(scores, args.pairs, args.permutations, seed=0, progress=True)
    print(f"scores: {args.pairs} pairs x {args.permutations:,} permutations, {summary.computed} computed now in "
          f"{summary.wall_s:.1f} s")
    fit = fit_forms(read_scores(scores))
    write_fit(fit, str(args.out / "functions"), scores)
    fitted = {"F1 shape, ours": str(args.out / "functions" / "sqrt_r_times_n.json"),
              "F2 shape, ours": str(args.out / "functions" / "r_plus_sqrt_n.json"),
              f"best form ({fit.ranking.form[0]}), ours": str(args.out / "functions" / "best.json")}
    workloads = {c: traces(args.seeds, c) for c in COMPRESSIONS}
    results = pd.concat([evaluate(workloads[c], fitted, c) for c in COMPRESSIONS], ignore_index=True)
    results_dir.mkdir(parents=True, exist_ok=True)
    results.to_csv(results_dir / "avebsld.csv", index=False)
    fit.ranking.to_csv(results_dir / "ranking.csv", index=False)
    fit.paper.to_csv(results_dir / "paper_forms.csv", index=False)
    pd.DataFrame([{"compression": c, "seed": seed, "jobs": len(w["jobs"]), "offered_load": offered_load(w)}
                  for c, ws in workloads.items() for seed, w in enumerate(ws, start=1)]).to_csv(
        results_dir / "traces.csv", index=False)
    command = "python -m experiments.utility_policies.run" + "".join(
        f" --{key} {getattr(args, key)}" for key, value in DEFAULTS.items() if getattr(args, key) != value)
    write_run_record(results_dir, command, time.perf_counter() - started, event_grouping="batsim",
                     seeds={"pairs": 0, "traces": list(range(1, args.seeds + 1))}, pairs=args.pairs,
                     permutations=args.permutations, pairs_scored_now=summary.computed,
                     scoring_wall_s=round(summary.wall_s, 1))
    summary_table = results.groupby(["compression", "backfill", "policy"], sort=False).avebsld.agg(["mean", "median", "min", "max"])
    print(fit.ranking.head(8).to_string())
    print(fit.paper.to_string())
    print(summary_table.to_string())
    try:
        for c in COMPRESSIONS:
            bar_chart(results[results.compression == c], args.out / f"fig1_arrivals_x{c:g}.png")
    except ImportError:
        print("no chart: matplotlib is missing (pip install '.[plot]' in the joulesim checkout)")
    if defaults and not args.no_readme:
        write_readme(HERE / "README.md", *readme_figures(results_dir))
    return 0


def readme_figures(results_dir: Path) -> tuple[str, dict[str, str]]:
    """README.md's tables and every figure its prose quotes, from the committed results."""
    ranking = pd.read_csv(results_dir / "ranking.csv", keep_default_na=False)
    paper = pd.read_csv(results_dir / "paper_forms.csv", keep_default_na=False)
    results = pd.read_csv(results_dir / "avebsld.csv")
    trace_table = pd.read_csv(results_dir / "traces.csv")
    record = read_run_record(results_dir)
    means = results.groupby(["compression", "backfill", "policy"]).avebsld.mean()
    baselines = ("FCFS", "WFP3", "UNICEF")

    def mean(policy: str, compression: float = 1.0, backfill: str = "none") -> float:
        return float(means[(compression, backfill, policy)])

    def gains(policy: str, compression: float, backfill: str) -> tuple[float, float]:
        """The best baseline's mean over the policy's, and the largest per-trace such ratio."""
        rows = results[(results.compression == compression) & (results.backfill == backfill)]
        by_seed = rows.pivot(index="seed", columns="policy", values="avebsld")
        best_mean = min(mean(b, compression, backfill) for b in baselines)
        per_trace = by_seed[list(baselines)].min(axis=1) / by_seed[policy]
        return best_mean / mean(policy, compression, backfill), float(per_trace.max())

    f2_fit = ranking[ranking.form == "r_plus_sqrt_n"].iloc[0]
    f1_fit = ranking[ranking.form == "sqrt_r_times_n"].iloc[0]
    f1_rank = int(ranking.index[ranking.form == "sqrt_r_times_n"][0]) + 1
    f1_paper = paper[paper.alias == "F1"].iloc[0]
    f2_paper = paper[paper.alias == "F2"].iloc[0]
    table1 = ("F1 (table 1)", "F2 (table 1)")
    ratio_x1 = [gains(p, 1.0, "none")[0] for p in table1]
    largest = max(gains(p, c, b)[1] for p in (*table1, "F1 shape, ours", "F2 shape, ours")
                  for c in COMPRESSIONS for b in ("none", "easy"))
    f1_x2, f1_x2_max = gains("F1 (table 1)", 2.0, "none")
    f1_x2e, f1_x2e_max = gains("F1 (table 1)", 2.0, "easy")
    fcfs_gain = [gains(p, 1.0, "none")[1] for p in table1]
    rows_x1 = results[(results.compression == 1.0) & (results.backfill == "none")].pivot(
        index="seed", columns="policy", values="avebsld")
    over_fcfs = rows_x1["FCFS"] / rows_x1[list(table1)].min(axis=1)
    easy_lead = [mean("UNICEF", c, "easy") / mean(p, c, "easy") for p in table1 for c in COMPRESSIONS]

    def better(compression: float, backfill: str) -> str:
        f1, f2 = mean("F1 (table 1)", compression, backfill), mean("F2 (table 1)", compression, backfill)
        if round(f1, 1) == round(f2, 1):
            return f"neither (F1 {f1:.2f}, F2 {f2:.2f})"
        return f"F1 ({f1:.2f} against F2's {f2:.2f})" if f1 < f2 else f"F2 ({f2:.2f} against F1's {f1:.2f})"

    jobs = trace_table.groupby("compression")
    figures = {
        **record_figures(record),
        "pairs": f"{record['pairs']:,}", "permutations": f"{record['permutations']:,}",
        "traces": str(len(record["seeds"]["traces"])),
        "scoring": (f"{record['scoring_wall_s']:.0f} s for the {record['pairs_scored_now']} pairs scored in this run"
                    if record["pairs_scored_now"] else "reused from an earlier run"),
        "forms": str(len(ranking)),
        "jobs.x1": f"{jobs.jobs.mean()[1.0]:,.0f}", "jobs.x2": f"{jobs.jobs.mean()[2.0]:,.0f}",
        "load.x1": f"{jobs.offered_load.mean()[1.0]:.2f}", "load.x2": f"{jobs.offered_load.mean()[2.0]:.2f}",
        "f2.ours": f"({f2_fit.c1:.1e}, {f2_fit.c2:.1e}, {f2_fit.c3:.1e})",
        "f2.table1": f"({f2_paper.c1:.1e}, {f2_paper.c2:.1e}, {f2_paper.c3:.1e})",
        "f2.table1_mad": f"{f2_paper.mad:.4f}", "f2.ours_mad": f"{f2_fit.mad:.4f}",
        "f1.ours_product": f"{f1_fit.c1 * f1_fit.c2:.1e}", "f1.table1_product": f"{f1_paper.c1 * f1_paper.c2:.1e}",
        "f1.product_ratio": f"{(f1_paper.c1 * f1_paper.c2) / (f1_fit.c1 * f1_fit.c2):,.0f}",
        "f1.ours_c3": f"{f1_fit.c3:.1e}", "f1.table1_c3": f"{f1_paper.c3:.1e}",
        "f1.rank": f"{f1_rank}{'th' if 10 <= f1_rank % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(f1_rank % 10, 'th')}",
        "mad.spread": f"{100 * (ranking.mad.max() / ranking.mad.min() - 1):.0f} %",
        "mad.range": f"{ranking.mad.min():.4f} to {ranking.mad.max():.4f}",
        "f1.table1_mad": f"{f1_paper.mad:.3f}",
        "best_form": f"`{ranking.form[0]}`",
        "x1.f2": f"{mean('F2 (table 1)'):.1f}", "x1.f1": f"{mean('F1 (table 1)'):.1f}",
        "x1.unicef": f"{mean('UNICEF'):.1f}", "x1.wfp3": f"{mean('WFP3'):.1f}", "x1.fcfs": f"{mean('FCFS'):,.0f}",
        "x1.ratio": f"{min(ratio_x1):.2f}-{max(ratio_x1):.2f}x",
        "x1.ratio_max_trace": f"{max(fcfs_gain):.1f}x",
        "x2.f1": f"{f1_x2:.2f}x (up to {f1_x2_max:.1f}x)", "x2easy.f1": f"{f1_x2e:.2f}x (up to {f1_x2e_max:.1f}x)",
        "better.x2.none": better(2.0, "none"), "better.x2.easy": better(2.0, "easy"),
        "better.x1.none": better(1.0, "none"), "better.x1.easy": better(1.0, "easy"),
        "paper.largest_gain": f"{PAPER_LARGEST_GAIN:g}x",
        "largest_gain": f"{largest:.1f}x",
        "over_fcfs": f"{over_fcfs.min():.0f}-{over_fcfs.max():.0f}x",
        "easy.fcfs": f"{mean('FCFS'):,.0f} -> {mean('FCFS', 1.0, 'easy'):,.0f}",
        "easy.lead": f"{min(easy_lead):.1f}-{max(easy_lead):.1f}x",
    }
    return markdown(ranking, paper, results, record), figures


def markdown(ranking: pd.DataFrame, paper: pd.DataFrame, results: pd.DataFrame, record: dict) -> str:
    lines = [f"Training data: {record['pairs']} pairs x {record['permutations']:,} permutations; evaluation: "
             f"{len(record['seeds']['traces'])} traces of {DAYS} days per arrival density.", "",
             "Fitted forms (best 8 of the candidates, by mean absolute distance to the scores):", "",
             "| form | | c1 | c2 | c3 | mean abs. distance |", "|---|---|---:|---:|---:|---:|"]
    for row in ranking.head(8).itertuples():
        lines.append(f"| {row.form} | {row.alias} | {row.c1:.4g} | {row.c2:.4g} | {row.c3:.4g} | {row.mad:.5f} |")
    for row in paper.itertuples():
        lines.append(f"| {row.form} (table 1) | {row.alias} | {row.c1:.4g} | {row.c2:.4g} | {row.c3:.4g} | "
                     f"{row.mad:.5f} |")
    lines += ["", "AVEbsld (tau = 10 s) over the traces: mean (min - max); ratio = best baseline's mean / the "
              "policy's mean:", ""]
    for compression, backfill in [(c, b) for c in COMPRESSIONS for b in ("none", "easy")]:
        rows = results[(results.backfill == backfill) & (results.compression == compression)]
        jobs = int(rows.jobs.mean())
        means = rows.groupby("policy", sort=False).avebsld.mean()
        baseline = min(means[p] for p in ("FCFS", "WFP3", "UNICEF"))
        by_seed = rows.pivot(index="seed", columns="policy", values="avebsld")
        best_baseline = by_seed[["FCFS", "WFP3", "UNICEF"]].min(axis=1)  # per trace
        lines += [f"arrivals x{compression:g} ({jobs} jobs), backfilling **{backfill}**:", "",
                  "| policy | AVEbsld | ratio to the best baseline (means) | per trace: min - max ratio |",
                  "|---|---:|---:|---:|"]
        for policy, mean in means.items():
            group = rows[rows.policy == policy].avebsld
            ratios = best_baseline / by_seed[policy]
            lines.append(f"| {policy} | {mean:.2f} ({group.min():.2f} - {group.max():.2f}) | {baseline / mean:.2f} | "
                         f"{ratios.min():.2f} - {ratios.max():.2f} |")
        lines.append("")
    return "\n".join(lines).rstrip()


if __name__ == "__main__":
    sys.exit(main())
