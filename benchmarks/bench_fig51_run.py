"""Time whole runs of the figure-5.1 workload (Batsim thesis §5.5.3, experiments/placement_network).

Input: 300 jobs drawn with seed 0 from the CEA-Curie trace (1 h <= run time <= 4 h, <= 16
hosts; release 0; cpu = run time x 1e6 flops per host, com = run time x F_comm bytes per
ordered pair; walltime = max(requested, run time x 1e3)) on `griffon8x16`, conservative
backfilling with each placement variant, decider in-process, F_comm = 1e8 and 2e8.

Each run goes in a fresh process (spawned), so that its peak memory (max RSS) is its own.
Prints per run: wall time of Simulation.run(), jobs/s, decider calls, rate re-solves (calls
of the fair-bottleneck solver, counted by wrapping it from outside), re-solves/s, peak RSS.

    python benchmarks/bench_fig51_run.py [--fcomm 1e8 2e8] [--variants basic,local] [--platform P]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue as queue_module
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = REPO_ROOT.parent / "shared" / "data" / "swf" / "CEA-Curie-2011-2.1-cln.swf.gz"
VARIANTS = ("basic", "best_effort_contiguous", "best_effort_local", "contiguous", "local")


def one_run(workload: str, platform: str, variant: str, queue) -> None:
    """In a spawned child: one simulation; puts its figures on `queue`."""
    import shutil

    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    directory = tempfile.mkdtemp(prefix="bench_fig51_")
    try:
        config = SimulationConfig(platform=load_platform(platform), workloads=[load_workload(workload, "w0")],
                                  export_prefix=os.path.join(directory, "run"))
        decider = load_decider("conservative", {"placement": variant, "cluster_size": "16"})
        start = time.perf_counter()
        simulation = Simulation(config, DeciderLink(InProcessRequester(decider)))
        result = simulation.run()
        wall = time.perf_counter() - start
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    queue.put({"wall": wall, "jobs": result.stats.nb_jobs, "killed": result.stats.nb_killed,
               "makespan": result.stats.makespan, "calls": result.decider_calls, "resolves": simulation.runner.resolves,
               "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fcomm", type=float, nargs="+", default=[1e8, 2e8])
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--platform", default="griffon8x16", help="shipped name or platform file")
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    args = parser.parse_args()
    if not args.trace.is_file():
        print(f"error: trace {args.trace} not found (../shared/data beside the checkout)", file=sys.stderr)
        return 2

    from joulesim.workload_tools.ptask_from_swf import PtaskParams, eligible_jobs, pick_jobs, ptask_workload
    from joulesim.workload_tools.swf import write_workload

    start = time.perf_counter()
    jobs = pick_jobs(eligible_jobs(str(args.trace)), args.jobs, args.seed)
    print(f"workload: {args.jobs} jobs, seed {args.seed}, trace read and jobs picked in "
          f"{time.perf_counter() - start:.2f} s; platform {args.platform}; one spawned process per run")
    directory = tempfile.mkdtemp(prefix="bench_fig51_w_")
    context = multiprocessing.get_context("spawn")
    print(f"{'F_comm':>8} {'variant':24} {'wall s':>7} {'jobs/s':>7} {'calls':>6} {'re-solves':>9} "
          f"{'re-solves/s':>11} {'killed':>6} {'makespan s':>12} {'max RSS MiB':>11}")
    for f_comm in args.fcomm:
        path = os.path.join(directory, f"w_{f_comm:g}.json")
        write_workload(ptask_workload(jobs, PtaskParams(f_comm=f_comm, nb_res=128)), path)
        for variant in [v.strip() for v in args.variants.split(",") if v.strip()]:
            queue = context.Queue()
            child = context.Process(target=one_run, args=(path, args.platform, variant, queue))
            child.start()
            r = None
            while r is None:  # a child that dies must not leave us waiting forever
                try:
                    r = queue.get(timeout=1.0)
                except queue_module.Empty:
                    if not child.is_alive():
                        print(f"error: the run of {variant} at F_comm {f_comm:g} died "
                              f"(exit {child.exitcode})", file=sys.stderr)
                        return 1
            child.join()
            print(f"{f_comm:8.2g} {variant:24} {r['wall']:7.2f} {r['jobs'] / r['wall']:7.0f} {r['calls']:6d} "
                  f"{r['resolves']:9d} {r['resolves'] / r['wall']:11.0f} {r['killed']:6d} {r['makespan']:12.4g} "
                  f"{r['maxrss_mib']:11.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
