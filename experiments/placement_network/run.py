#!/usr/bin/env python3
"""Placement variants of conservative backfilling vs communication (Batsim thesis, figure 5.1).

Draws 300-job parallel-task workloads from the CEA-Curie trace (seed 001, §5.5.1), runs
conservative backfilling with each of the five placement variants of §5.5.2 on the
`griffon8x16` platform (§5.5.3) for every seed and communication factor F_comm, then writes
a table (CSV + markdown) and the figure: makespan against F_comm, one facet per variant,
with a linear trend.

    python -m experiments.placement_network.run [--seeds N] [--fcomm-steps K] [--jobs N]
                                                [--workers K] [--out DIR]
    python -m experiments.placement_network.run --host-link-bw 1.25e8 --fcomm-stride 4
    python -m experiments.placement_network.run --quick          # both sweeps, small (README untouched)
    python -m experiments.placement_network.run --readme-only    # README.md from the committed results/

The two whole sweeps (the defaults, on the platform as printed; and host links of 1.25e8 B/s,
every 4th F_comm) write their figures to results/ and results/hostlink_1.25e8/ beside this file
(committed), and README.md is rewritten from them; any other run writes only under --out.
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

from experiments.readme_results import render_readme, write_readme
from experiments.run_prerequisites import prerequisites_missing
from experiments.run_record import read_run_record, record_figures, write_run_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_TRACE = REPO_ROOT.parent / "shared" / "data" / "swf" / "CEA-Curie-2011-2.1-cln.swf.gz"
DEFAULT_OUT = REPO_ROOT / "out" / "placement_network"  # /out/ is git-ignored
QUICK_OUT = REPO_ROOT / "out" / "reproduce_quick" / "placement_network"
RESULTS = HERE / "results"  # the whole sweeps' figures, committed; README.md is written from them

PLATFORM = "griffon8x16"
NB_HOSTS = 128
CLUSTER_SIZE = 16  # jobs must fit in one cluster (§5.5.1)
VARIANTS = ("basic", "best_effort_contiguous", "best_effort_local", "contiguous", "local")
F_COMP = 1e6  # flops per host per second of trace run time (§5.5.3)
F_WALL = 1e3  # walltime >= run time x F_w (§5.5.3)
F_COMM_STEP = 1e7  # F_comm = 0, 1e7, 2e7, ... (§5.5.3)
P_LOWER, P_UPPER = 3600.0, 4 * 3600.0  # run time bounds, s (§5.5.3)
EVENT_GROUPING = "batsim"  # SimulationConfig's default, passed explicitly so that run.json states what ran
# The whole sweeps: the README's figures come from runs with exactly these settings.
WHOLE_SEEDS, WHOLE_FCOMM_STEPS, WHOLE_JOBS = 20, 40, 300
# The second whole sweep: Griffon's host links as SimGrid's own griffon.xml has them (125 MBps),
# where §5.5.3 prints 1.25e6 B/s; every 4th F_comm, to keep it a quarter of the first one's time.
HOST_LINK_BW, HOST_LINK_STRIDE = 1.25e8, 4
# --quick: both sweeps on 2 seeds (a spread needs two), every 8th F_comm, 100-job workloads.
QUICK_SEEDS, QUICK_STRIDE, QUICK_JOBS = 2, 8, 100

COLUMNS = ["variant", "seed", "f_comm", "makespan_s", "mean_waiting_time_s", "nb_jobs",
           "nb_jobs_killed", "wall_time_s"]


def _sci(value: float, digits: int = 3) -> str:
    """1e7, 1.25e6, 3.9e8, 0: how the README (and folder names) write amounts."""
    return f"{value:.{digits}g}".replace("e+0", "e").replace("e+", "e")


HOST_LINK_RESULTS = f"hostlink_{_sci(HOST_LINK_BW)}"  # the host-link sweep's folder under RESULTS


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
                    nb_jobs: int) -> tuple[dict[tuple[int, float], Path], list]:
    """One workload file per (seed, F_comm); the same jobs for every F_comm of a seed.
    Returns the paths and the trace's eligible jobs."""
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
    return paths, eligible


def workload_facts(trace: Path, eligible: list) -> dict:
    """What the README says of the trace and its eligible jobs: job lines, and eligible jobs by size."""
    from collections import Counter

    from joulesim.workload_tools.swf import read_swf

    sizes = Counter(job.size for job in eligible)
    return {"trace": trace.name, "job_lines": sum(1 for _ in read_swf(str(trace))), "eligible": len(eligible),
            "eligible_by_size": {str(size): sizes[size] for size in sorted(sizes)},
            "p_lower_s": P_LOWER, "p_upper_s": P_UPPER, "max_size": CLUSTER_SIZE}


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
                                  export_prefix=os.path.join(directory, "run"), event_grouping=EVENT_GROUPING)
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


def read_rows(path: Path) -> list[dict]:
    """The rows of a sweep's results.csv, typed as the sweep made them."""
    with open(path, newline="") as f:
        return [{"variant": r["variant"], "seed": int(r["seed"]), "f_comm": float(r["f_comm"]),
                 "makespan_s": float(r["makespan_s"]), "mean_waiting_time_s": float(r["mean_waiting_time_s"]),
                 "nb_jobs": int(r["nb_jobs"]), "nb_jobs_killed": int(r["nb_jobs_killed"]),
                 "wall_time_s": float(r["wall_time_s"])} for r in csv.DictReader(f)]


def _platform_label(platform: str) -> str:
    """A shipped platform's name, or a platform file's name without .xml (for titles)."""
    return Path(platform).name.removesuffix(".xml")


def replot(out_dir: Path, no_plots: bool) -> int:
    """Rebuild the report of the sweep in `out_dir` from its results.csv and run_info.json."""
    try:
        rows = read_rows(out_dir / "results.csv")
        saved = json.loads((out_dir / "run_info.json").read_text())
    except OSError as exc:
        print(f"error: nothing to replot in {out_dir}: {exc}", file=sys.stderr)
        return 2
    info = {**saved, "failed": [],  # failed runs are not in results.csv: only their count survives
            "workload": f"{saved['jobs']} CEA-Curie jobs (1 h <= run time <= 4 h, <= {CLUSTER_SIZE} hosts)",
            "nb_seeds": len(saved["seeds"]), "platform": _platform_label(saved.get("platform_path") or saved["platform"])}
    info.pop("trend", None)
    report(rows, info, out_dir, no_plots)
    return 0


# ----------------------------------------------------------------------------- README
LABELS = {"basic": "basic", "best_effort_contiguous": "best-effort contiguous",
          "best_effort_local": "best-effort local", "contiguous": "contiguous", "local": "local"}
# Rows of the README's two tables (the largest F_comm swept is added): round values, and on the
# host-link sweep every other swept value from the one where the variants have parted.
PRINTED_TABLE_F_COMM = (0.0, 1e7, 1e8)
HOST_LINK_TABLE_F_COMM = (8e7, 1.6e8, 2.4e8)
# A locality variant within 1 % of basic's makespan improves on it only "barely": a difference
# of packing (see the README), not of placement.
BARELY = 0.01
# The forced constraints are "more stable" when their spread across seeds is at least 10 %
# below the relaxed variant's: smaller differences are within what 20 seeds can tell apart.
STABLER = 0.1
GROUPING_TEXT = {"batsim": "Batsim's message grouping"}


def platform_facts() -> dict[str, float]:
    """Host speed (flop/s) and host-link, cluster-switch and main-switch bandwidths (B/s) of the
    shipped platform, read from its XML: the README's arithmetic starts from them."""
    from importlib.resources import files

    from joulesim.simulator.platform.platform_checks import parse_bandwidth, parse_speed

    path = files("joulesim.platforms") / f"{PLATFORM}.xml"
    root = ET.fromstring(path.read_text())
    clusters = list(root.iter("cluster"))
    facts = {(c.get("speed"), c.get("bw"), c.get("bb_bw")) for c in clusters}
    if len(facts) != 1:
        raise RuntimeError(f"{path}: the README describes one kind of cluster, found {sorted(facts)}")
    speed, bw, bb_bw = facts.pop()
    main_switch = [link.get("bandwidth") for link in root.iter("link") if link.get("id") == "main_switch"]
    if len(main_switch) != 1:
        raise RuntimeError(f"{path}: no single main_switch link")
    return {"speed": parse_speed(str(path), "cluster", speed), "host_bw": parse_bandwidth(str(path), "cluster", bw),
            "switch_bw": parse_bandwidth(str(path), "cluster", bb_bw),
            "main_bw": parse_bandwidth(str(path), "main_switch", main_switch[0])}


def _span(values, fmt: str = ".2f") -> str:
    """"0.30-0.34", or one value when they agree at that precision."""
    low, high = format(min(values), fmt), format(max(values), fmt)
    return low if low == high else f"{low}-{high}"


def _ratio(summary: dict, variant: str, f_comm: float) -> float:
    return summary[variant]["per_f"][f_comm]["mean"] / summary["basic"]["per_f"][f_comm]["mean"]


def ratio_table(summary: dict, wanted: tuple[float, ...]) -> list[str]:
    """Mean makespan of each variant / basic's, at the wanted F_comm that were swept (and the largest)."""
    swept = sorted(summary["basic"]["per_f"])
    shown = list(dict.fromkeys((*wanted, swept[-1])))
    if not set(shown) <= set(swept):  # a sweep over other values (reduced, --quick): a few of its own
        shown = _picked_values(swept, 4)
    lines = ["| F_comm | " + " | ".join(LABELS[v] for v in VARIANTS) + " |", "| --- " * (len(VARIANTS) + 1) + "|"]
    lines += [f"| {_sci(x)} | " + " | ".join(f"{_ratio(summary, v, x):.3f}" for v in VARIANTS) + " |" for x in shown]
    return lines


def findings(summary: dict) -> tuple[dict[str, str], int]:
    """The thesis's five findings (§5.5.3) checked on one sweep, over every F_comm > 0 swept: a
    verdict and its figures per finding, and how many hold ("yes"). A finding that holds at some
    F_comm only is a "no" that names the F_comm where it fails."""
    f_pos = [x for x in sorted(summary["basic"]["per_f"]) if x > 0]
    if not f_pos:
        raise ValueError("the findings are about communication: the sweep has no F_comm > 0")
    # Three decimals when the variants stay within 5 % of basic: two would show them all as 1.00.
    near = max(abs(_ratio(summary, v, x) - 1) for v in VARIANTS for x in f_pos) < 0.05
    digits = ".3f" if near else ".2f"

    def span(variant: str) -> str:
        return _span([_ratio(summary, variant, x) for x in f_pos], digits)

    def verdict(holds_at) -> tuple[str, bool]:
        """"yes", "no", or "no (not at F_comm = ...)" when it holds at some F_comm only."""
        failing = [x for x in f_pos if not holds_at(x)]
        if not failing:
            return "yes", True
        if len(failing) == len(f_pos):
            return "no", False
        return f"no (not at F_comm = {', '.join(_sci(x) for x in failing)})", False

    def below(a: str, b: str):
        return lambda x: _ratio(summary, a, x) < _ratio(summary, b, x)

    text, holds = {}, []
    worst_at = {x: max(VARIANTS, key=lambda v: summary[v]["per_f"][x]["mean"]) for x in f_pos}
    said, held = verdict(lambda x: worst_at[x] == "basic")
    if held:
        text["worst"] = "yes, at every F_comm > 0"
    else:
        worst = max((v for v in VARIANTS if v != "basic"), key=list(worst_at.values()).count)
        if said == "no":  # never basic: which variant is, and how far the others stand from basic
            others = [v for v in VARIANTS if v not in ("basic", worst)]
            spread = max(abs(_ratio(summary, v, x) - 1) for v in others for x in f_pos)
            text["worst"] = f"no: {LABELS[worst]} is worst ({span(worst)} of basic), the others within {100 * spread:.1f} %"
        else:  # basic is worst but at a few F_comm: what is worst there
            there = sorted({worst_at[x] for x in f_pos if worst_at[x] != "basic"}, key=VARIANTS.index)
            text["worst"] = f"{said}: {' and '.join(LABELS[v] for v in there)} worst there"
    holds.append(held)

    said, held = verdict(lambda x: all(_ratio(summary, v, x) < 1 for v in ("best_effort_contiguous", "contiguous")))
    text["contiguity"] = f"{said}: best-effort contiguous {span('best_effort_contiguous')}, contiguous {span('contiguous')} of basic"
    holds.append(held)

    said, held = verdict(lambda x: below("local", "contiguous")(x) and below("best_effort_local", "best_effort_contiguous")(x))
    if held and not all(_ratio(summary, v, x) < 1 - BARELY for v in ("local", "best_effort_local") for x in f_pos):
        said, held = "barely", False
    text["locality"] = f"{said}: local {span('local')}, best-effort local {span('best_effort_local')} of basic"
    holds.append(held)

    said, held = verdict(lambda x: below("contiguous", "best_effort_contiguous")(x) and below("local", "best_effort_local")(x))
    text["strict"] = (f"{said}: contiguous {span('contiguous')} against {span('best_effort_contiguous')}, "
                      f"local {span('local')} against {span('best_effort_local')}")
    holds.append(held)

    cv = {v: summary[v]["mean_cv"] for v in VARIANTS}
    stable = all(cv[a] < (1 - STABLER) * cv[b] for a, b in (("contiguous", "best_effort_contiguous"),
                                                             ("local", "best_effort_local")))
    if not stable and max(cv.values()) < min(cv.values()) / (1 - STABLER):
        text["stable"] = f"no (spreads {_span(cv.values(), '.3f')} for all)"
    else:
        text["stable"] = (f"{'yes' if stable else 'no'}: spread {cv['contiguous']:.3f} against "
                          f"{cv['best_effort_contiguous']:.3f}, {cv['local']:.3f} against {cv['best_effort_local']:.3f}")
    holds.append(stable)
    return text, sum(holds)


def _how_many(count: int) -> str:
    if count == 0:
        return "none of the five findings appears"
    if count == 5:
        return "all five findings appear"
    return f"{count} of the five findings appear{'s' if count == 1 else ''}"


def _sweep_text(record: dict) -> str:
    return (f"{len(record['seeds'])} seeds x {len(record['f_comm'])} F_comm x {len(record['variants'])} variants = "
            f"{record['runs']:,} runs")


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's tables and every figure its prose quotes, from the committed results: the
    sweep on the platform as printed (results/) and the one with faster host links (its folder)."""
    host_link = results / HOST_LINK_RESULTS
    for folder in (results, host_link):
        if not (folder / "results.csv").is_file():
            sys.exit(f"{folder / 'results.csv'}: no results: run the whole sweeps first (README.md says how)")
    printed_rows, host_rows = read_rows(results / "results.csv"), read_rows(host_link / "results.csv")
    printed, host = summarise(printed_rows), summarise(host_rows)
    record, host_record = read_run_record(results), read_run_record(host_link)
    trace = json.loads((results / "workload.json").read_text())
    plat = platform_facts()

    block = ["**The platform as the thesis prints it** (host links of "
             f"{_sci(plat['host_bw'])} B/s; {_sweep_text(record)}). Mean makespan relative to basic's:", "",
             *ratio_table(printed, PRINTED_TABLE_F_COMM), "",
             f"**With host links of {_sci(HOST_LINK_BW)} B/s** ({_sweep_text(host_record)}). "
             "Mean makespan relative to basic's:", "",
             *ratio_table(host, HOST_LINK_TABLE_F_COMM)]

    by_size = trace["eligible_by_size"]
    common = sorted(by_size, key=lambda size: -by_size[size])[:4]
    sizes = ", ".join(f"{by_size[size]:,} of {size}" + (" processors" if i == 0 else "") for i, size in enumerate(common))
    computation = F_COMP / plat["speed"]  # s of simulation per s of trace run time
    per_step = F_COMM_STEP / plat["host_bw"]  # s of communication per s of run time, per peer, per F_comm step
    wide = (CLUSTER_SIZE - 1) * per_step  # a whole-cluster job at F_comm = one step

    def walltime_reached(hosts: int) -> float:
        """F_comm from which a job on `hosts` hosts communicates for run time x F_w."""
        return F_WALL * plat["host_bw"] / (hosts - 1)

    printed_slopes = [printed[v]["slope"] * F_COMM_STEP for v in VARIANTS]
    killed = [r["f_comm"] for r in printed_rows if r["nb_jobs_killed"] > 0]
    host_killed = sum(1 for r in host_rows if r["nb_jobs_killed"] > 0)
    printed_text, printed_count = findings(printed)
    host_text, host_count = findings(host)

    def settings(rec: dict) -> dict[str, str]:
        return {"run.grouping": GROUPING_TEXT.get(rec["event_grouping"], rec["event_grouping"]),
                "run.seeds": f"{min(rec['seeds'])} to {max(rec['seeds'])}", "run.decider": rec["decider"]}

    # The README states the two sweeps' settings once: as one value when they agree, else both.
    both = {key: value if value == settings(host_record)[key] else f"{value} (host links: {settings(host_record)[key]})"
            for key, value in settings(record).items()}

    figures = {
        **record_figures(record), **{f"hostlink.{key}": value for key, value in record_figures(host_record).items()},
        **both,
        "f_comm.max": _sci((WHOLE_FCOMM_STEPS - 1) * F_COMM_STEP),
        "trace.job_lines": f"{trace['job_lines']:,}", "trace.eligible": f"{trace['eligible']:,}",
        "trace.sizes": sizes,
        "platform.speed": f"{plat['speed'] / 1e3:g}", "platform.host_bw": _sci(plat["host_bw"]),
        "platform.switch_bw": _sci(plat["switch_bw"]), "platform.main_bw": _sci(plat["main_bw"]),
        "computation": f"{computation:.1f}",
        "computation.hours": f"{P_LOWER / 3600 * computation:.1f} h to {P_UPPER / 3600 * computation:.0f} h",
        "comm.per_step": f"{per_step:g}", "comm.wide": f"{wide:g}", "comm.wide_vs_computation": f"{wide / computation:.0f}",
        "walltime.wide": _sci(walltime_reached(CLUSTER_SIZE), 2), "walltime.half": _sci(walltime_reached(CLUSTER_SIZE // 2), 2),
        "wide.share": f"{100 * by_size.get(str(CLUSTER_SIZE), 0) / trace['eligible']:.0f} % of the eligible jobs",
        "switch.most": _sci(CLUSTER_SIZE * plat["host_bw"]), "main.most": _sci(NB_HOSTS * plat["host_bw"]),
        "hostlink.cluster_sends": _sci(CLUSTER_SIZE * HOST_LINK_BW),
        "printed.first_kill": _sci(min(killed)) if killed else "none of the F_comm swept",
        "printed.slopes": (f"{_span([x / 1e6 for x in printed_slopes])}e6"),
        "hostlink.slopes": ", ".join(f"{LABELS[v]} {host[v]['slope'] * F_COMM_STEP / 1e6:.2f}e6" for v in VARIANTS),
        "hostlink.killed": ("no job reaches its walltime" if host_killed == 0 else
                            f"{host_killed:,} of {len(host_rows):,} runs kill jobs at their walltime"),
        "hostlink.spreads": ", ".join(f"{host[v]['mean_cv']:.3f}" for v in VARIANTS),
        **{f"printed.{key}": value for key, value in printed_text.items()},
        **{f"hostlink.{key}": value for key, value in host_text.items()},
        "printed.findings": _how_many(printed_count), "hostlink.findings": _how_many(host_count),
        "barely": f"{100 * BARELY:g} %", "stabler": f"{100 * STABLER:g} %",
        "quick": f"{QUICK_SEEDS} seeds, every {QUICK_STRIDE}th F_comm and {QUICK_JOBS}-job workloads",
    }
    return "\n".join(block), figures


# ----------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=WHOLE_SEEDS, metavar="N",
                        help=f"seeds 0..N-1 (default: {WHOLE_SEEDS})")
    parser.add_argument("--fcomm-steps", type=int, default=WHOLE_FCOMM_STEPS, metavar="K",
                        help=f"F_comm = 0, {F_COMM_STEP:g}, ..., (K-1) x {F_COMM_STEP:g} (default: {WHOLE_FCOMM_STEPS})")
    parser.add_argument("--fcomm-stride", type=int, default=1, metavar="S",
                        help="keep every S-th of those values (a coarser sweep over the same range; "
                             "default: 1)")
    parser.add_argument("--jobs", type=int, default=WHOLE_JOBS, metavar="N",
                        help=f"jobs per workload (default: {WHOLE_JOBS})")
    parser.add_argument("--workers", type=int, default=2, metavar="K",
                        help="simulations run in parallel (default: 2)")
    parser.add_argument("--variants", default=",".join(VARIANTS), metavar="NAMES",
                        help="comma-separated placement variants (default: all five)")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help=f"output directory (default: {DEFAULT_OUT.relative_to(REPO_ROOT)}, or "
                             f"{DEFAULT_OUT.relative_to(REPO_ROOT)}/hostlink_B with --host-link-bw B, or "
                             f"{QUICK_OUT.relative_to(REPO_ROOT)} with --quick; git-ignored). Another folder "
                             "never writes results/ nor README.md")
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE, help="the CEA-Curie SWF trace")
    parser.add_argument("--host-link-bw", type=float, default=None, metavar="B_PER_S",
                        help=f"run on a copy of {PLATFORM} whose host links have this bandwidth "
                             "(bytes/s; default: the shipped platform, 1.25e6)")
    parser.add_argument("--run-timeout", type=float, default=600.0, metavar="S",
                        help="give up on one simulation after S seconds of wall time (default: 600)")
    parser.add_argument("--no-plots", action="store_true", help="skip the figures")
    parser.add_argument("--replot", action="store_true",
                        help="run nothing: rebuild results.md and the figures from OUT/results.csv")
    parser.add_argument("--quick", action="store_true",
                        help=f"both sweeps (as printed, and host links of {_sci(HOST_LINK_BW)} B/s) on "
                             f"{QUICK_SEEDS} seeds, every {QUICK_STRIDE}th F_comm, {QUICK_JOBS} jobs; writes "
                             "OUT/results/ and OUT/README.md (the page as these figures would write it), "
                             "never results/ nor README.md")
    parser.add_argument("--readme-only", action="store_true",
                        help="run nothing: rewrite README.md from the committed results/")
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
    if args.quick:
        # The quick sizes are the point of --quick: mixing them with sweep options would be ambiguous.
        given = [f"--{n.replace('_', '-')}" for n in ("seeds", "fcomm_steps", "fcomm_stride", "jobs", "host_link_bw")
                 if getattr(args, n) != parser.get_default(n)]
        if given or args.variants != list(VARIANTS) or args.replot:
            parser.error(f"--quick sets the sweep itself: drop {', '.join(given) or '--variants/--replot'}")
    return args


def default_out(host_link_bw: float | None) -> Path:
    """The output folder of a run without --out: one per platform, so that the two whole sweeps
    do not write over each other's workloads and tables."""
    return DEFAULT_OUT if host_link_bw is None else DEFAULT_OUT / f"hostlink_{_sci(host_link_bw)}"


def results_folder(args: argparse.Namespace) -> Path | None:
    """Where this run's figures are committed (results/ or its host-link folder), or None: only
    the two whole sweeps, with every default (trace, seeds, jobs, F_comm, variants, output
    folder), write there. A reduced run must never replace the README's figures."""
    whole = (not args.quick and args.seeds == WHOLE_SEEDS and args.fcomm_steps == WHOLE_FCOMM_STEPS
             and args.jobs == WHOLE_JOBS and args.variants == list(VARIANTS)
             and args.trace.resolve() == DEFAULT_TRACE.resolve()
             and (args.out is None or args.out.resolve() == default_out(args.host_link_bw).resolve()))
    if whole and args.host_link_bw is None and args.fcomm_stride == 1:
        return RESULTS
    if whole and args.host_link_bw == HOST_LINK_BW and args.fcomm_stride == HOST_LINK_STRIDE:
        return RESULTS / HOST_LINK_RESULTS
    return None


def sweep(trace: Path, out_dir: Path, seeds: list[int], f_comms: list[float], jobs: int, variants: list[str],
          host_link_bw: float | None, workers: int, run_timeout: float, no_plots: bool) -> tuple[list, dict]:
    """Every (seed, F_comm, variant) run on one platform; writes OUT's tables and figures.
    Returns the rows of the runs that finished and the sweep's info (its failed runs in info["failed"])."""
    out_dir.mkdir(parents=True, exist_ok=True)
    platform = PLATFORM
    if host_link_bw is not None:
        platform = str(platform_with_host_link_bw(host_link_bw, out_dir))
        print(f"platform: {platform} (host links {host_link_bw:.4g} B/s)")

    started = time.perf_counter()
    workloads, eligible = write_workloads(trace, out_dir, seeds, f_comms, jobs)
    print(f"workloads: {len(workloads)} in {out_dir / 'workloads'} ({jobs} jobs each, drawn from "
          f"{len(eligible)} eligible jobs of {trace.name}; {time.perf_counter() - started:.1f} s)")

    # Seed-major order, variants innermost: a sweep stopped early still covers all variants.
    specs = [RunSpec(v, s, f, str(workloads[(s, f)]), platform, run_timeout)
             for s in seeds for f in f_comms for v in variants]
    rows, failed = [], []
    sweep_start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
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
    info = {"workload": f"{jobs} CEA-Curie jobs (1 h <= run time <= 4 h, <= {CLUSTER_SIZE} hosts)",
            "platform": _platform_label(platform),
            "nb_seeds": len(seeds), "workers": workers, "sweep_wall_time_s": sweep_wall,
            "failed": failed, "trace": str(trace), "eligible_jobs": len(eligible), "jobs": jobs,
            "seeds": seeds, "f_comm": f_comms, "platform_path": platform, "variants": variants,
            "runs": len(specs), "eligible": eligible}
    if not rows:
        return rows, info
    order = {v: i for i, v in enumerate(VARIANTS)}
    rows.sort(key=lambda r: (order[r["variant"]], r["seed"], r["f_comm"]))
    report(rows, {k: v for k, v in info.items() if k != "eligible"}, out_dir, no_plots)
    return rows, info


def write_results(folder: Path, out_dir: Path, info: dict, trace: Path, command: str, wall_s: float) -> None:
    """The committed form of a sweep: its table, the trace's facts and run.json (how, when, where)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(out_dir / "results.csv", folder / "results.csv")
    (folder / "workload.json").write_text(json.dumps(workload_facts(trace, info["eligible"]), indent=1) + "\n")
    write_run_record(folder, command, wall_s, event_grouping=EVENT_GROUPING, seeds=info["seeds"],
                     workers=info["workers"], decider="conservative, in-process (Python API)",
                     platform=info["platform"], jobs=info["jobs"], f_comm=info["f_comm"], variants=info["variants"],
                     runs=info["runs"])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        return 0
    out_base = (args.out or (QUICK_OUT if args.quick else default_out(args.host_link_bw))).resolve()
    if args.replot:
        return replot(out_base, args.no_plots)
    if prerequisites_missing(args.trace, "CEA-Curie"):
        return 2

    command = "python -m experiments.placement_network.run"
    if args.quick:
        # Both sweeps, small, each into its own folder; OUT/results/ mirrors results/ so that the
        # README's figures can be computed from it (OUT/README.md), the committed page untouched.
        plans = [(None, out_base / "printed", out_base / "results", command + " --quick"),
                 (HOST_LINK_BW, out_base / "hostlink", out_base / "results" / HOST_LINK_RESULTS,
                  command + " --quick")]
        seeds, jobs, stride = list(range(QUICK_SEEDS)), QUICK_JOBS, QUICK_STRIDE
    else:
        folder = results_folder(args)
        if args.host_link_bw is not None:
            command += f" --host-link-bw {_sci(args.host_link_bw)} --fcomm-stride {args.fcomm_stride}"
        plans = [(args.host_link_bw, out_base, folder, command)]
        seeds, jobs, stride = list(range(args.seeds)), args.jobs, args.fcomm_stride
    f_comms = [k * F_COMM_STEP for k in range(0, args.fcomm_steps, stride)]

    any_failed = False
    for host_link_bw, out_dir, folder, record_command in plans:
        began = time.perf_counter()
        rows, info = sweep(args.trace, out_dir, seeds, f_comms, jobs, args.variants, host_link_bw,
                           args.workers, args.run_timeout, args.no_plots)
        if not rows:
            print("error: every run failed", file=sys.stderr)
            return 1
        any_failed |= bool(info["failed"])
        if folder is None:
            continue
        if info["failed"]:
            print(f"{len(info['failed'])} run(s) failed: {folder} and README.md left as they were",
                  file=sys.stderr)
            continue
        write_results(folder, out_dir, info, args.trace, record_command, time.perf_counter() - began)
        print(f"results: {folder}")

    if args.quick and not any_failed:
        readme = out_base / "README.md"
        readme.write_text(render_readme((HERE / "README.md").read_text(), *readme_figures(out_base / "results"),
                                        name=str(readme)))
        print(f"README as these figures would write it: {readme}")
    elif plans[0][2] is not None and not any_failed:
        missing = [f for f in (RESULTS, RESULTS / HOST_LINK_RESULTS) if not (f / "run.json").is_file()]
        if missing:
            print(f"README.md not rewritten: it quotes both sweeps, and {', '.join(map(str, missing))} has none "
                  f"yet (run `{command.split(' --')[0]}` and `... --host-link-bw {_sci(HOST_LINK_BW)} "
                  f"--fcomm-stride {HOST_LINK_STRIDE}`)", file=sys.stderr)
        else:
            write_readme(HERE / "README.md", *readme_figures(RESULTS))
            print("README.md rewritten from results/")
    return 1 if any_failed else 0


if __name__ == "__main__":
    sys.exit(main())
