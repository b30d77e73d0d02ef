#!/usr/bin/env python3
"""Energy vs responsiveness of shutdown policies on KTH-SP2 (Batsim thesis, sections 7.5-7.6).

Converts the KTH-SP2 trace to compute-only jobs, runs EASY, EASY with opportunistic shutdown
(OS) and inertial shutdown on 100 machines of the `homogeneous240` platform with energy on,
then writes a table (CSV + markdown) and the plots of figures 7.2 and 7.4.

    python -m experiments.energy_shutdown.run [--jobs N] [--workers K] [--out DIR]

See README.md beside this file for the choices made and how they map to the thesis.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from experiments.readme_results import write_readme
from experiments.run_prerequisites import prerequisites_missing
from experiments.run_record import read_run_record, record_figures, write_run_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_TRACE = REPO_ROOT.parent / "shared" / "data" / "swf" / "KTH-SP2-1996-2.1-cln.swf"
DEFAULT_OUT = REPO_ROOT / "out" / "energy_shutdown"  # /out/ is git-ignored

PLATFORM = "homogeneous240"
NB_MACHINES = 100  # KTH-SP2 has 100 nodes; the thesis uses 100 of the 240 hosts
HOST_SPEED = 1e9  # flop/s of pstate 0 of homogeneous240: run time (s) x speed = flops per host
TAU = 10.0  # bound of the bounded slowdown, seconds (thesis eq. 2.2)
V_UB = "1e4"  # inertial threshold of figures 7.2-7.4 (section 7.6.2)


@dataclass(frozen=True)
class Instance:
    name: str
    family: str  # EASY, OS or inertial: one colour per family in the plots
    label: str  # legend text
    decider: str
    options: dict[str, str] = field(default_factory=dict)

    def run_args(self) -> list[str]:
        args = ["-d", self.decider]
        for key, value in self.options.items():
            args += ["--option", f"{key}={value}"]
        return args


def instances() -> list[Instance]:
    result = [Instance("easy", "EASY", "EASY", "easy")]
    for t_idle in (0, 300, 600):
        result.append(Instance(f"os_tidle{t_idle}", "OS", f"OS, t_idle = {t_idle} s", "easy",
                               {"t_idle": str(t_idle)}))
    for period in (60, 300, 600):
        # The thesis's "inertial" instances (section 7.6.1): inertial shutdown alone, opportunistic
        # shutdown off (t_idle = inf); f(n) = n + 1 and future switches allowed (the thesis found
        # both choices negligible; these are the first values of table 7.1).
        result.append(Instance(f"inertial_T{period}", "inertial", f"inertial, T = {period} s", "inertial",
                               {"period": str(period), "v_ub": V_UB, "f": "n+1",
                                "future_switches": "true", "t_idle": "inf"}))
    return result


# ----------------------------------------------------------------------------- workload
def runtime_of(profile: dict) -> float:
    """Run time (s) of a compute profile written by `from-swf --profile compute --speed 1e9`."""
    return float(profile["cpu"]) / HOST_SPEED


def make_workload(trace: Path, out_dir: Path, nb_jobs: int | None) -> tuple[Path, dict]:
    """Convert the trace with `joulesim workload from-swf`, then apply the thesis's extra
    cleaning step (section 7.5): drop jobs whose run time or walltime is invalid."""
    raw = out_dir / "workload" / "kth_sp2_from_swf.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    report_path = raw.with_suffix(".report.json")
    cmd = [*joulesim_cmd(), "workload", "from-swf", str(trace), "--profile", "compute",
           "--speed", f"{HOST_SPEED:g}", "-o", str(raw), "--report-json", str(report_path)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    workload = json.loads(raw.read_text())
    profiles = workload["profiles"]

    kept, dropped = [], {"run time <= 0": 0, "walltime <= 0": 0, "run time > walltime": 0}
    for job in workload["jobs"]:
        runtime, walltime = runtime_of(profiles[job["profile"]]), float(job.get("walltime", -1))
        if runtime <= 0:
            dropped["run time <= 0"] += 1
        elif walltime <= 0:
            dropped["walltime <= 0"] += 1
        elif runtime > walltime:  # the log says it ran past its limit: inconsistent, not simulable as is
            dropped["run time > walltime"] += 1
        else:
            kept.append(job)
    if nb_jobs is not None:
        kept = kept[:nb_jobs]
    used = {job["profile"] for job in kept}
    workload["jobs"] = kept
    workload["profiles"] = {name: p for name, p in profiles.items() if name in used}

    suffix = "all" if nb_jobs is None else f"first{nb_jobs}"
    path = out_dir / "workload" / f"kth_sp2_compute_{suffix}.json"
    path.write_text(json.dumps(workload))
    raw.unlink()  # the filtered workload is the one that matters; keep only its report
    cleaning = {"from_swf_report": json.loads(report_path.read_text()),
                "extra_cleaning_dropped": dropped, "jobs_kept": len(kept)}
    (out_dir / "workload" / f"cleaning_{suffix}.json").write_text(json.dumps(cleaning, indent=2))
    return path, cleaning


# ----------------------------------------------------------------------------- runs
def joulesim_cmd() -> list[str]:
    # The interpreter running this script, so that the joulesim it imports is the one that runs.
    return [sys.executable, "-m", "joulesim.cli.main"]


def unavailable_reason(instance: Instance) -> str | None:
    """Why the decider of `instance` cannot be loaded (missing module, unknown option), or None."""
    from joulesim.deciders import load_decider
    try:
        load_decider(instance.decider, dict(instance.options))
    except Exception as exc:  # JoulesimError, ImportError...: all mean "cannot run this one yet"
        return f"{type(exc).__name__}: {exc}"
    return None


def run_instance(instance: Instance, workload: Path, runs_dir: Path, in_process: bool,
                 timeout: float) -> dict:
    """One simulation in a child process; returns its prefix, wall time and status."""
    prefix = runs_dir / instance.name
    cmd = [*joulesim_cmd(), "run", "-p", PLATFORM, "--mmax", str(NB_MACHINES), "-E",
           "-w", str(workload), "-e", str(prefix), "--no-progress", "--timeout", str(timeout),
           *instance.run_args()]
    if in_process:
        cmd.append("--in-process")
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    return {"name": instance.name, "prefix": str(prefix), "wall_time_s": wall,
            "returncode": proc.returncode, "stderr": proc.stderr[-2000:], "command": cmd}


# ----------------------------------------------------------------------------- metrics
def host_powers() -> tuple[float, float, float]:
    """(idle W, full-load W, sleeping W) of the platform's hosts: pstates 0 and 1, from its XML."""
    from importlib.resources import files
    root = ET.fromstring((files("joulesim.platforms") / f"{PLATFORM}.xml").read_text())
    for host in root.iter("host"):
        for prop in host.iter("prop"):
            if prop.get("id") == "wattage_per_state":
                states = [state.split(":") for state in prop.get("value").split(",")]
                return float(states[0][0]), float(states[0][1]), float(states[1][0])
    raise RuntimeError(f"{PLATFORM}: no wattage_per_state property")


def dynamic_power_per_host() -> tuple[float, float]:
    """(idle W, full-load W) of pstate 0 of the platform."""
    return host_powers()[:2]


def read_metrics(prefix: Path) -> dict:
    """Figures of one run from its Batsim outputs (jobs and schedule files)."""
    with open(f"{prefix}_schedule.csv", newline="") as f:
        schedule = next(csv.DictReader(f))
    waits, slowdowns = [], []
    with open(f"{prefix}_jobs.csv", newline="") as f:
        for row in csv.DictReader(f):
            if not row["starting_time"]:
                continue  # rejected: no waiting time
            wait, turnaround = float(row["waiting_time"]), float(row["turnaround_time"])
            waits.append(wait)
            slowdowns.append(max(turnaround / max(float(row["execution_time"]), TAU), 1.0))
    return {
        "energy_J": float(schedule["consumed_joules"]),
        "time_computing": float(schedule["time_computing"]),
        "mean_waiting_time_s": sum(waits) / len(waits),
        "mean_bounded_slowdown": sum(slowdowns) / len(slowdowns),
        "max_waiting_time_s": max(waits),
        "nb_machine_switches": int(schedule["nb_machine_switches"]),
        "makespan_s": float(schedule["makespan"]),
        "nb_jobs": int(schedule["nb_jobs"]),
        "nb_jobs_killed": int(schedule["nb_jobs_killed"]),
    }


COLUMNS = ["instance", "algorithm", "parameters", "energy_J", "energy_norm",
           "energy_idle_compute_J", "energy_idle_compute_norm", "mean_waiting_time_s",
           "mean_bounded_slowdown", "max_waiting_time_s", "nb_machine_switches", "makespan_s",
           "wall_time_s", "nb_jobs", "nb_jobs_killed", "time_computing_s"]
RESULTS = HERE / "results"  # the whole trace's figures, committed
#: The thesis's figures this experiment compares with (chapter 7): EASY's energy on KTH-SP2 (J),
#: and inertial shutdown's saving ("about 20 %").
THESIS_EASY_ENERGY_J = 2.73e11
THESIS_INERTIAL_SAVING = "about 20 %"
THESIS_INERTIAL_T_IDLE = (6000, "inf")  # §7.6.1: its inertial instances' opportunistic t_idle


def build_rows(done: list[tuple[Instance, dict]]) -> list[dict]:
    idle_w, full_w = dynamic_power_per_host()
    rows = []
    for instance, run in done:
        m = read_metrics(Path(run["prefix"]))
        # Energy had computing hosts drawn idle power instead (the SimGrid of the thesis did not
        # charge parallel tasks above idle: simgrid/simgrid#189): comparable to the thesis's joules.
        m["time_computing_s"] = m.pop("time_computing")
        idle_compute = m["energy_J"] - (full_w - idle_w) * m["time_computing_s"]
        params = "; ".join(f"{k}={v}" for k, v in instance.options.items()) or "-"
        rows.append({"instance": instance.name, "algorithm": instance.family, "parameters": params,
                     "energy_idle_compute_J": idle_compute, "wall_time_s": run["wall_time_s"], **m})
    easy = next((r for r in rows if r["instance"] == "easy"), None)
    for r in rows:
        r["energy_norm"] = r["energy_J"] / easy["energy_J"] if easy else math.nan
        r["energy_idle_compute_norm"] = (r["energy_idle_compute_J"] / easy["energy_idle_compute_J"]
                                         if easy else math.nan)
    return [{c: r[c] for c in COLUMNS} for r in rows]


def write_tables(rows: list[dict], out_dir: Path, not_run: list[tuple[Instance, str]],
                 cleaning: dict) -> tuple[Path, Path]:
    csv_path, md_path = out_dir / "results.csv", out_dir / "results.md"
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)

    headers = ["instance", "energy (J)", "energy / EASY", "energy / EASY, computing at idle W",
               "mean wait (s)", "mean bounded slowdown", "max wait (s)", "switches", "makespan (s)",
               "wall time (s)"]
    lines = [f"# KTH-SP2, {cleaning['jobs_kept']} jobs, {NB_MACHINES} machines of {PLATFORM}", "",
             "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        cells = [r["instance"], f"{r['energy_J']:.4e}", f"{r['energy_norm']:.4f}",
                 f"{r['energy_idle_compute_norm']:.4f}", f"{r['mean_waiting_time_s']:,.1f}",
                 f"{r['mean_bounded_slowdown']:.2f}", f"{r['max_waiting_time_s']:,.0f}",
                 f"{r['nb_machine_switches']:,}", f"{r['makespan_s']:,.0f}", f"{r['wall_time_s']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Bounded slowdown with tau = {TAU:g} s. Parameters per instance are in results.csv.",
              "'computing at idle W': energy minus the dynamic power of computing hosts, as the "
              "thesis's SimGrid measured it (see README.md)."]
    if not_run:
        lines += ["", "Not run (decider not available):"]
        lines += [f"- {inst.name}: {reason}" for inst, reason in not_run]
    md_path.write_text("\n".join(lines) + "\n")
    return csv_path, md_path


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's table and every figure its prose quotes, from the committed results."""
    import pandas as pd

    rows = pd.read_csv(results / "results.csv").set_index("instance")
    cleaning = json.loads((results / "cleaning.json").read_text())
    record = read_run_record(results)
    idle_w, full_w, sleep_w = host_powers()
    easy = rows.loc["easy"]
    os_rows = rows[rows.index.str.startswith("os_")]
    inertial = rows[rows.index.str.startswith("inertial_")]
    shut = rows.drop(index="easy")
    wait_cost = 100 * (shut.mean_waiting_time_s / easy.mean_waiting_time_s - 1)
    idle_share = 1 - easy.time_computing_s / (NB_MACHINES * easy.makespan_s)
    # What sleeping through all of EASY's idle time would save, on the thesis's measure.
    ceiling = idle_share * NB_MACHINES * easy.makespan_s * (idle_w - sleep_w) / easy.energy_idle_compute_J
    switch_ratio = [o / i for o in os_rows.nb_machine_switches for i in inertial.nb_machine_switches]
    fewer_waits = [name for name, r in inertial.iterrows() if r.mean_waiting_time_s < os_rows.mean_waiting_time_s.min()]
    dropped = cleaning["extra_cleaning_dropped"]

    def triple(frame: pd.DataFrame, column: str, fmt: str) -> str:
        return " / ".join(format(v, fmt) for v in frame[column])

    def thousands(frame: pd.DataFrame) -> str:
        return " / ".join(f"{v / 1000:.0f}k" for v in frame.nb_machine_switches)

    os_values = " / ".join(os_rows.parameters.str.extract(r"t_idle=(\w+)")[0])
    periods = inertial.parameters.str.extract(r"period=(\w+)")[0]
    table = ["| | energy / EASY | same, thesis's measure | mean wait (s) | switches |",
             "| --- | --- | --- | --- | --- |",
             f"| EASY | 1 | 1 | {easy.mean_waiting_time_s:,.0f} | {easy.nb_machine_switches:,.0f} |",
             f"| OS, t_idle = {os_values} s | "
             f"{triple(os_rows, 'energy_norm', '.3f')} | {triple(os_rows, 'energy_idle_compute_norm', '.3f')} | "
             f"{triple(os_rows, 'mean_waiting_time_s', ',.0f')} | {thousands(os_rows)} |",
             f"| inertial, T = {' / '.join(periods)} s | "
             f"{triple(inertial, 'energy_norm', '.3f')} | {triple(inertial, 'energy_idle_compute_norm', '.3f')} | "
             f"{triple(inertial, 'mean_waiting_time_s', ',.0f')} | {thousands(inertial)} |"]
    figures = {
        **record_figures(record),
        "jobs": f"{int(easy.nb_jobs):,}", "machines": str(NB_MACHINES),
        "dropped.runtime": f"{dropped['run time <= 0']:,}", "dropped.walltime": f"{dropped['walltime <= 0']:,}",
        "dropped.past_limit": f"{dropped['run time > walltime']:,}",
        "converted": f"{cleaning['jobs_kept'] + sum(dropped.values()):,}", "kept": f"{cleaning['jobs_kept']:,}",
        "thesis.easy_energy": f"{THESIS_EASY_ENERGY_J:.2e}".replace("e+", "e"), "idle_w": f"{idle_w:g}", "full_w": f"{full_w:g}",
        "sleep_saving_w": f"{idle_w - sleep_w:g}",
        "easy.makespan": f"{easy.makespan_s:,.0f}",
        "easy.idle_energy": f"{NB_MACHINES * idle_w * easy.makespan_s:.4e}".replace("e+", "e"),
        "easy.energy": f"{easy.energy_J:.2e}".replace("e+", "e"), "easy.energy_thesis_measure": f"{easy.energy_idle_compute_J:.4e}".replace("e+", "e"),
        "wait_cost": f"+{wait_cost.min():.0f} % to +{wait_cost.max():.0f} %",
        "inertial.saving": f"{100 * (1 - inertial.energy_idle_compute_norm.max()):.0f}-"
                           f"{100 * (1 - inertial.energy_idle_compute_norm.min()):.0f} %",
        "thesis.inertial_saving": THESIS_INERTIAL_SAVING,
        "switch_ratio": f"{min(switch_ratio):.0f}-{max(switch_ratio):.0f}",
        "os.saving": f"{100 * (1 - os_rows.energy_idle_compute_norm.min()):.0f} %",
        "ceiling": f"{100 * ceiling:.0f} %", "idle_share": f"{100 * idle_share:.0f} %",
        "fewer_waits": ("no inertial instance" if not fewer_waits else
                        "only " + ", ".join(f"T = {periods[name]} s" for name in fewer_waits)),
        "os_saves_more": "OS saves more" if os_rows.energy_idle_compute_norm.min() <
        inertial.energy_idle_compute_norm.min() else "inertial saves more",
    }
    return "\n".join(table), figures


# ----------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    names = [i.name for i in instances()]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="keep only the first N jobs after cleaning (default: the whole trace)")
    parser.add_argument("--workers", type=int, default=2, metavar="K",
                        help="simulations run in parallel (default: 2)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
                        help=f"output directory (default: {DEFAULT_OUT.relative_to(REPO_ROOT)}, git-ignored)")
    parser.add_argument("--only", default=None, metavar="NAMES",
                        help=f"comma-separated instances among {', '.join(names)} (EASY always runs: "
                             "it is the energy reference)")
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE, help="the KTH-SP2 SWF trace")
    parser.add_argument("--in-process", action="store_true",
                        help="decider inside the simulator process (same messages, faster)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds to wait for each decider reply (default: 600)")
    parser.add_argument("--no-plots", action="store_true", help="skip the figures")
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the committed results")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be >= 1")
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    if args.only is not None:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = sorted(wanted - set(names))
        if unknown:
            parser.error(f"unknown instance(s) {', '.join(unknown)}; known: {', '.join(names)}")
        args.only = wanted | {"easy"}
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        return 0
    began = time.perf_counter()
    if prerequisites_missing(args.trace, "KTH-SP2"):
        return 2

    out_dir = args.out.resolve()
    runs_dir = out_dir / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)

    selected = [i for i in instances() if args.only is None or i.name in args.only]
    runnable, not_run = [], []
    for inst in selected:
        reason = unavailable_reason(inst)
        (not_run.append((inst, reason)) if reason else runnable.append(inst))
    for inst, _ in not_run:
        print(f"skipping {inst.name}: decider not available (details at the end)", file=sys.stderr)
    if not any(i.name == "easy" for i in runnable):
        print("error: EASY cannot run, and every energy is normalised by it", file=sys.stderr)
        return 1

    workload, cleaning = make_workload(args.trace, out_dir, args.jobs)
    print(f"workload: {workload} ({cleaning['jobs_kept']} jobs; extra cleaning dropped "
          f"{cleaning['extra_cleaning_dropped']})")

    done: dict[str, dict] = {}
    failed: list[tuple[Instance, dict]] = []
    by_name = {i.name: i for i in runnable}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(run_instance, inst, workload, runs_dir, args.in_process, args.timeout)
                   for inst in runnable]
        for future in as_completed(futures):
            run = future.result()
            inst = by_name[run["name"]]
            if run["returncode"] == 0:
                done[inst.name] = run
                print(f"done {inst.name:16s} {run['wall_time_s']:7.1f} s")
            else:
                failed.append((inst, run))
                print(f"FAILED {inst.name} (exit {run['returncode']}):\n{run['stderr']}", file=sys.stderr)
    if "easy" not in done:
        print("error: the EASY run failed; no table without the reference", file=sys.stderr)
        return 1

    ordered = [(i, done[i.name]) for i in runnable if i.name in done]
    rows = build_rows(ordered)
    not_run_all = not_run + [(i, f"run failed (exit {r['returncode']})") for i, r in failed]
    csv_path, md_path = write_tables(rows, out_dir, not_run_all, cleaning)
    print(md_path.read_text())
    print(f"table: {csv_path}\n       {md_path}")
    whole = args.jobs is None and args.only is None and args.trace == DEFAULT_TRACE and not not_run_all
    if whole:  # the README's figures: the whole trace, every instance
        RESULTS.mkdir(exist_ok=True)
        shutil.copy(csv_path, RESULTS / "results.csv")
        (RESULTS / "cleaning.json").write_text(json.dumps(cleaning, indent=2) + "\n")
        write_run_record(RESULTS, "python -m experiments.energy_shutdown.run" + (" --in-process" if args.in_process
                                                                                  else ""),
                         time.perf_counter() - began, event_grouping="batsim", seeds=None, workers=args.workers,
                         decider="in-process" if args.in_process else "its own process (ZeroMQ)")
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        print(f"results: {RESULTS} (and README.md)")

    if not args.no_plots:
        try:
            from experiments.energy_shutdown.tradeoff_plots import plot_all
        except ImportError as exc:
            print(f"no figures: {exc} (pip install matplotlib)", file=sys.stderr)
        else:
            title = f"KTH-SP2 ({cleaning['jobs_kept']} jobs, {NB_MACHINES} machines)"
            for path in plot_all(rows, {i.name: i for i in runnable}, out_dir, title):
                print(f"figure: {path}")

    if not_run_all:
        print("\nNot run:", file=sys.stderr)
        for inst, reason in not_run_all:
            cmd = " ".join(["joulesim run", "-p", PLATFORM, "--mmax", str(NB_MACHINES), "-E", "-w",
                            str(workload), "-e", str(runs_dir / inst.name), *inst.run_args()])
            print(f"  {inst.name}: {reason}\n    {cmd}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
