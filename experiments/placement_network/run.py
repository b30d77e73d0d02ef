#!/usr/bin/env python3
"""Placement variants of conservative backfilling vs communication (Batsim thesis, figure 5.1).

Draws 300-job parallel-task workloads from the CEA-Curie trace (seed 001, §5.5.1), runs
conservative backfilling with each of the five placement variants of §5.5.2 on the
`griffon8x16` platform (§5.5.3) for every seed and communication factor F_comm, then writes
a table (CSV + markdown) and the figure: makespan against F_comm, one facet per variant,
with a linear trend.

    python -m experiments.placement_network.run [--seeds N] [--fcomm-steps K] [--jobs N]
                                                [--workers K] [--out DIR]

See README.md beside this file for the choices made and how they map to the thesis.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TRACE = REPO_ROOT.parent / "shared" / "data" / "swf" / "CEA-Curie-2011-2.1-cln.swf.gz"
DEFAULT_OUT = REPO_ROOT / "out" / "placement_network"  # /out/ is git-ignored

PLATFORM = "griffon8x16"
NB_HOSTS = 128
CLUSTER_SIZE = 16  # jobs must fit in one cluster (§5.5.1)
VARIANTS = ("basic", "best_effort_contiguous", "best_effort_local", "contiguous", "local")
F_COMP = 1e6  # flops per host per second of trace run time (§5.5.3)
F_WALL = 1e3  # walltime >= run time x F_w (§5.5.3)
F_COMM_STEP = 1e7  # F_comm = 0, 1e7, 2e7, ... (§5.5.3)
P_LOWER, P_UPPER = 3600.0, 4 * 3600.0  # run time bounds, s (§5.5.3)

COLUMNS = ["variant", "seed", "f_comm", "makespan_s", "mean_waiting_time_s", "nb_jobs",
           "nb_jobs_killed", "wall_time_s"]


@dataclass(frozen=True)
class RunSpec:
    variant: str
    seed: int
    f_comm: float
    workload: str  # path
    platform: str  # shipped name or path
    timeout_s: float


# ----------------------------------------------------------------------------- workloads
def write_workloads(trace: Path, out_dir: Path, seeds: list[int], f_comms: list[float],
                    nb_jobs: int) -> tuple[dict[tuple[int, float], Path], int]:
    """One workload file per (seed, F_comm); the same jobs for every F_comm of a seed.
    Returns the paths and the number of eligible jobs in the trace."""
    from joulesim.workload_tools.ptask_from_swf import PtaskParams, eligible_jobs, pick_jobs, ptask_workload
    from joulesim.workload_tools.swf import write_workload

    eligible = eligible_jobs(str(trace), p_lower=P_LOWER, p_upper=P_UPPER, max_size=CLUSTER_SIZE)
    directory = out_dir / "workloads"
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for seed in seeds:
        jobs = pick_jobs(eligible, nb_jobs, seed)
        for f_comm in f_comms:
            params = PtaskParams(f_comp=F_COMP, f_comm=f_comm, f_wall=F_WALL, nb_res=NB_HOSTS)
            path = directory / f"curie_{nb_jobs}jobs_seed{seed:02d}_fcomm{f_comm:.2e}.json"
            write_workload(ptask_workload(jobs, params), str(path))
            paths[(seed, f_comm)] = path
    return paths, len(eligible)


def platform_with_host_link_bw(bandwidth: float, out_dir: Path) -> Path:
    """A copy of griffon8x16 whose host links have `bandwidth` B/s (everything else unchanged),
    written under `out_dir`: to test how the host-link bandwidth shapes figure 5.1."""
    from importlib.resources import files

    root = ET.fromstring((files("joulesim.platforms") / f"{PLATFORM}.xml").read_text())
    clusters = list(root.iter("cluster"))
    if not clusters:
        raise RuntimeError(f"{PLATFORM}.xml has no <cluster>: cannot change its host links")
    for cluster in clusters:
        cluster.set("bw", f"{bandwidth:.10g}Bps")
    path = out_dir / "platform" / f"{PLATFORM}_hostlink{bandwidth:.3g}Bps.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("<?xml version='1.0'?>\n" + ET.tostring(root, encoding="unicode") + "\n")
    return path


# ----------------------------------------------------------------------------- runs
class RunTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise RunTimeout()


_PLATFORMS: dict[str, object] = {}  # per worker process: load each platform once


def run_one(spec: RunSpec) -> dict:
    """One simulation in this (worker) process, decider in-process; the row of the table.
    Batsim's output files go to a temporary directory, deleted after: the row has the figures."""
    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    row = {"variant": spec.variant, "seed": spec.seed, "f_comm": spec.f_comm}
    directory = tempfile.mkdtemp(prefix="placement_network_")
    previous = signal.signal(signal.SIGALRM, _on_alarm)  # a hung run must not hang the sweep
    signal.setitimer(signal.ITIMER_REAL, spec.timeout_s)
    start = time.perf_counter()
    try:
        if spec.platform not in _PLATFORMS:
            _PLATFORMS[spec.platform] = load_platform(spec.platform)
        config = SimulationConfig(platform=_PLATFORMS[spec.platform],
                                  workloads=[load_workload(spec.workload, "w0")],
                                  export_prefix=os.path.join(directory, "run"))
        # cluster_size as well as the platform's `cluster` zone property: the same clusters,
        # and the local variants still work on a platform file without the property.
        decider = load_decider("conservative", {"placement": spec.variant, "cluster_size": str(CLUSTER_SIZE)})
        result = Simulation(config, DeciderLink(InProcessRequester(decider))).run()
        stats = result.stats
        row.update(makespan_s=stats.makespan, mean_waiting_time_s=stats.mean_waiting,
                   nb_jobs=stats.nb_jobs, nb_jobs_killed=stats.nb_killed, error="")
    except RunTimeout:
        row["error"] = f"no result after {spec.timeout_s:g} s (--run-timeout)"
    except Exception as exc:  # one failed run must not lose the others
        row["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        shutil.rmtree(directory, ignore_errors=True)
    row["wall_time_s"] = time.perf_counter() - start
    return row


# ----------------------------------------------------------------------------- tables
def linear_trend(f_comm: np.ndarray, makespan: np.ndarray) -> tuple[float, float, float]:
    """(slope, intercept, R^2) of the least-squares line makespan = slope x F_comm + intercept."""
    if np.unique(f_comm).size < 2:
        return math.nan, float(np.mean(makespan)), math.nan
    slope, intercept = np.polyfit(f_comm, makespan, 1)
    residual = makespan - (slope * f_comm + intercept)
    total = np.sum((makespan - makespan.mean()) ** 2)
    return float(slope), float(intercept), float(1 - np.sum(residual ** 2) / total) if total > 0 else math.nan


def summarise(rows: list[dict]) -> dict[str, dict]:
    """Per variant: trend, mean makespan per F_comm, spread across seeds, killed jobs."""
    summary = {}
    for variant in VARIANTS:
        mine = [r for r in rows if r["variant"] == variant]
        if not mine:
            continue
        f = np.array([r["f_comm"] for r in mine])
        m = np.array([r["makespan_s"] for r in mine])
        slope, intercept, r2 = linear_trend(f, m)
        # Trend before walltime kills cap the makespan: F_comm below the first value where a run killed a job.
        killed_at = [x for r, x in zip(mine, f.tolist()) if r["nb_jobs_killed"] > 0]
        no_kill = f < min(killed_at) if killed_at else np.ones(f.shape, dtype=bool)
        slope_no_kill = linear_trend(f[no_kill], m[no_kill])[0] if no_kill.any() else math.nan
        f_no_kill = float(f[no_kill].max()) if no_kill.any() else math.nan
        per_f = {}
        for value in sorted(set(f.tolist())):
            at = m[f == value]
            per_f[value] = {"mean": float(at.mean()), "std": float(at.std(ddof=1)) if at.size > 1 else 0.0,
                            "n": int(at.size)}
        # Stability: spread across seeds at equal F_comm, relative to the mean (averaged over F_comm).
        cvs = [v["std"] / v["mean"] for v in per_f.values() if v["n"] > 1 and v["mean"] > 0]
        summary[variant] = {
            "slope": slope, "intercept": intercept, "r2": r2,
            "slope_no_kill": slope_no_kill, "f_no_kill": f_no_kill,
            "per_f": per_f, "mean_cv": float(np.mean(cvs)) if cvs else math.nan,
            # Jobs killed at their walltime: communication made them last over runtime x F_w.
            "killed_at_max": float(np.mean([r["nb_jobs_killed"] for r in mine if r["f_comm"] == f.max()])),
            "runs": len(mine),
        }
    return summary


def write_tables(rows: list[dict], summary: dict, out_dir: Path, info: dict) -> tuple[Path, Path]:
    csv_path, md_path = out_dir / "results.csv", out_dir / "results.md"
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)

    variants = [v for v in VARIANTS if v in summary]
    all_f = sorted({r["f_comm"] for r in rows})
    shown_f = [x for x in all_f if x in _picked_values(all_f)]
    lines = [f"# Figure 5.1: makespan vs F_comm, {info['workload']}", "",
             f"Platform {info['platform']}; {info['nb_seeds']} seed(s); F_comm in "
             f"[{all_f[0]:.3g}, {all_f[-1]:.3g}] ({len(all_f)} values); {len(rows)} runs; "
             f"sweep wall time {info['sweep_wall_time_s']:.0f} s on {info['workers']} worker(s).", "",
             "## Linear trend per variant (least squares over every run)", "",
             f"| variant | slope: makespan s per +{F_COMM_STEP:g} of F_comm | intercept (s) | R^2 | "
             "slope, F_comm without any killed job | killed jobs per run, at the largest F_comm | "
             "spread across seeds (mean CV) |",
             "|---|---|---|---|---|---|---|"]
    for v in variants:
        s = summary[v]
        lines.append(f"| {v} | {s['slope'] * F_COMM_STEP:,.0f} | {s['intercept']:,.0f} | {s['r2']:.3f} | "
                     f"{s['slope_no_kill'] * F_COMM_STEP:,.0f} (F_comm <= {s['f_no_kill']:.2g}) | "
                     f"{s['killed_at_max']:.1f} | {s['mean_cv']:.3f} |")
    lines += ["", "## Mean makespan (s) across seeds, +- standard deviation", "",
              "| F_comm | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    for x in shown_f:
        cells = []
        for v in variants:
            at = summary[v]["per_f"].get(x)
            cells.append("-" if at is None else f"{at['mean']:,.0f} +- {at['std']:,.0f}")
        lines.append(f"| {x:.2g} | " + " | ".join(cells) + " |")
    lines += ["", "Makespan relative to basic (ratio of the means):", "",
              "| F_comm | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    for x in shown_f:
        base = summary.get("basic", {}).get("per_f", {}).get(x)
        cells = []
        for v in variants:
            at = summary[v]["per_f"].get(x)
            cells.append("-" if at is None or base is None else f"{at['mean'] / base['mean']:.3f}")
        lines.append(f"| {x:.2g} | " + " | ".join(cells) + " |")
    failed = info.get("failed", [])
    if failed:
        lines += ["", f"Failed runs ({len(failed)}), left out of every figure above:"]
        lines += [f"- {r['variant']} seed {r['seed']} F_comm {r['f_comm']:.3g}: {r['error']}" for r in failed]
    lines += ["", "Every run: results.csv. CV: standard deviation / mean of the makespans of the seeds "
              "at one F_comm, averaged over the F_comm values."]
    md_path.write_text("\n".join(lines) + "\n")
    return csv_path, md_path


def _picked_values(values: list[float], count: int = 7) -> list[float]:
    """A few F_comm values for the short tables: round ones when swept, else spread evenly."""
    round_ones = [x for x in (0.0, 1e7, 5e7, 1e8, 2e8, 3e8) if x in values] + values[-1:]
    if len(set(round_ones)) >= 4:
        return sorted(set(round_ones))
    if len(values) <= count:
        return values
    index = np.unique(np.round(np.linspace(0, len(values) - 1, count)).astype(int))
    return [values[i] for i in index]


def report(rows: list[dict], info: dict, out_dir: Path, no_plots: bool) -> None:
    """Tables, run_info.json and figures of a finished sweep."""
    summary = summarise(rows)
    csv_path, md_path = write_tables(rows, summary, out_dir, info)
    (out_dir / "run_info.json").write_text(json.dumps({
        **{k: v for k, v in info.items() if k not in ("failed", "workload")},
        "f_comp": F_COMP, "f_wall": F_WALL, "p_lower": P_LOWER, "p_upper": P_UPPER,
        "failed": len(info["failed"]),
        "mean_run_wall_time_s": float(np.mean([r["wall_time_s"] for r in rows])),
        "trend": {v: {k: s[k] for k in ("slope", "intercept", "r2", "slope_no_kill", "f_no_kill", "mean_cv",
                                       "killed_at_max")}
                  for v, s in summary.items()},
    }, indent=2))
    print(md_path.read_text())
    print(f"table: {csv_path}\n       {md_path}")
    if no_plots:
        return
    try:
        from experiments.placement_network.makespan_plots import plot_all
    except ImportError as exc:
        print(f"no figures: {exc} (pip install matplotlib)", file=sys.stderr)
        return
    title = f"{info['jobs']} CEA-Curie jobs, {info['nb_seeds']} seed(s), {info['platform']}"
    for path in plot_all(rows, summary, list(VARIANTS), out_dir, title):
        print(f"figure: {path}")


def _platform_label(platform: str) -> str:
    """A shipped platform's name, or a platform file's name without .xml (for titles)."""
    return Path(platform).name.removesuffix(".xml")


def replot(out_dir: Path, no_plots: bool) -> int:
    """Rebuild the report of the sweep in `out_dir` from its results.csv and run_info.json."""
    try:
        with open(out_dir / "results.csv", newline="") as f:
            raw = list(csv.DictReader(f))
        saved = json.loads((out_dir / "run_info.json").read_text())
    except OSError as exc:
        print(f"error: nothing to replot in {out_dir}: {exc}", file=sys.stderr)
        return 2
    rows = [{"variant": r["variant"], "seed": int(r["seed"]), "f_comm": float(r["f_comm"]),
             "makespan_s": float(r["makespan_s"]), "mean_waiting_time_s": float(r["mean_waiting_time_s"]),
             "nb_jobs": int(r["nb_jobs"]), "nb_jobs_killed": int(r["nb_jobs_killed"]),
             "wall_time_s": float(r["wall_time_s"])} for r in raw]
    info = {**saved, "failed": [],  # failed runs are not in results.csv: only their count survives
            "workload": f"{saved['jobs']} CEA-Curie jobs (1 h <= run time <= 4 h, <= {CLUSTER_SIZE} hosts)",
            "nb_seeds": len(saved["seeds"]), "platform": _platform_label(saved.get("platform_path") or saved["platform"])}
    info.pop("trend", None)
    report(rows, info, out_dir, no_plots)
    return 0


# ----------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, metavar="N", help="seeds 0..N-1 (default: 20)")
    parser.add_argument("--fcomm-steps", type=int, default=40, metavar="K",
                        help=f"F_comm = 0, {F_COMM_STEP:g}, ..., (K-1) x {F_COMM_STEP:g} (default: 40)")
    parser.add_argument("--fcomm-stride", type=int, default=1, metavar="S",
                        help="keep every S-th of those values (a coarser sweep over the same range; "
                             "default: 1)")
    parser.add_argument("--jobs", type=int, default=300, metavar="N", help="jobs per workload (default: 300)")
    parser.add_argument("--workers", type=int, default=2, metavar="K",
                        help="simulations run in parallel (default: 2)")
    parser.add_argument("--variants", default=",".join(VARIANTS), metavar="NAMES",
                        help="comma-separated placement variants (default: all five)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
                        help=f"output directory (default: {DEFAULT_OUT.relative_to(REPO_ROOT)}, git-ignored)")
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE, help="the CEA-Curie SWF trace")
    parser.add_argument("--host-link-bw", type=float, default=None, metavar="B_PER_S",
                        help=f"run on a copy of {PLATFORM} whose host links have this bandwidth "
                             "(bytes/s; default: the shipped platform, 1.25e6)")
    parser.add_argument("--run-timeout", type=float, default=600.0, metavar="S",
                        help="give up on one simulation after S seconds of wall time (default: 600)")
    parser.add_argument("--no-plots", action="store_true", help="skip the figures")
    parser.add_argument("--replot", action="store_true",
                        help="run nothing: rebuild results.md and the figures from OUT/results.csv")
    args = parser.parse_args(argv)
    for name in ("seeds", "fcomm_steps", "fcomm_stride", "jobs", "workers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    args.variants = [v for v in VARIANTS if v in variants]
    if args.host_link_bw is not None and not (math.isfinite(args.host_link_bw) and args.host_link_bw > 0):
        parser.error("--host-link-bw must be a bandwidth > 0 in bytes/s")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.replot:
        return replot(args.out.resolve(), args.no_plots)
    if not args.trace.is_file():
        print(f"error: trace {args.trace} not found. This experiment reads the CEA-Curie log from "
              "../shared/data/swf/ beside the checkout (see ../shared/data/MANIFEST.md); pass "
              "--trace PATH to use a copy elsewhere.", file=sys.stderr)
        return 2
    try:
        import joulesim  # noqa: F401
    except ImportError:
        print("error: joulesim is not importable: install it first (pip install -e '.[plot]')",
              file=sys.stderr)
        return 2

    out_dir = args.out.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.seeds))
    f_comms = [k * F_COMM_STEP for k in range(0, args.fcomm_steps, args.fcomm_stride)]
    platform = PLATFORM
    if args.host_link_bw is not None:
        platform = str(platform_with_host_link_bw(args.host_link_bw, out_dir))
        print(f"platform: {platform} (host links {args.host_link_bw:.4g} B/s)")

    started = time.perf_counter()
    workloads, nb_eligible = write_workloads(args.trace, out_dir, seeds, f_comms, args.jobs)
    print(f"workloads: {len(workloads)} in {out_dir / 'workloads'} ({args.jobs} jobs each, drawn from "
          f"{nb_eligible} eligible jobs of {args.trace.name}; {time.perf_counter() - started:.1f} s)")

    # Seed-major order, variants innermost: a sweep stopped early still covers all variants.
    specs = [RunSpec(v, s, f, str(workloads[(s, f)]), platform, args.run_timeout)
             for s in seeds for f in f_comms for v in args.variants]
    rows, failed = [], []
    sweep_start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(run_one, spec) for spec in specs]
        for done, future in enumerate(as_completed(futures), 1):
            row = future.result()
            (failed if row["error"] else rows).append(row)
            if row["error"]:
                print(f"FAILED {row['variant']} seed {row['seed']} F_comm {row['f_comm']:.3g}: {row['error']}",
                      file=sys.stderr)
            if done % 50 == 0 or done == len(specs):
                elapsed = time.perf_counter() - sweep_start
                print(f"  {done}/{len(specs)} runs, {elapsed:.0f} s "
                      f"(~{elapsed / done * (len(specs) - done):.0f} s left)", flush=True)
    sweep_wall = time.perf_counter() - sweep_start
    if not rows:
        print("error: every run failed", file=sys.stderr)
        return 1

    order = {v: i for i, v in enumerate(VARIANTS)}
    rows.sort(key=lambda r: (order[r["variant"]], r["seed"], r["f_comm"]))
    info = {"workload": f"{args.jobs} CEA-Curie jobs (1 h <= run time <= 4 h, <= {CLUSTER_SIZE} hosts)",
            "platform": _platform_label(platform),
            "nb_seeds": len(seeds), "workers": args.workers, "sweep_wall_time_s": sweep_wall,
            "failed": failed, "trace": str(args.trace), "eligible_jobs": nb_eligible, "jobs": args.jobs,
            "seeds": seeds, "f_comm": f_comms, "platform_path": platform, "variants": args.variants,
            "runs": len(specs)}
    report(rows, info, out_dir, args.no_plots)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
