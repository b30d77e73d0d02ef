"""Speed of `joulesim workload from-swf` on the largest real trace (CEA-Curie, 312,826 jobs, .gz).

Converts ../shared/data/swf/CEA-Curie-2011-2.1-cln.swf.gz (beside the checkout) to a delay
workload in a temporary directory, with --procs-per-node 16 (Curie thin nodes), and prints
the seconds and jobs/s of the conversion alone, of conversion + writing the JSON, and the
process's peak memory (ru_maxrss). Then simulates the converted trace once (FCFS, in-process,
on a generated 5,544-host cluster) to have outputs, and times `joulesim analyze` on them.

    python benchmarks/bench_swf_convert.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TRACE = SHARED / "swf" / "CEA-Curie-2011-2.1-cln.swf.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    args = parser.parse_args()
    if not TRACE.is_file():
        sys.exit(f"bench_swf_convert: {TRACE} is absent: the real traces live in ../shared/data "
                 "beside the checkout (see its MANIFEST.md)")

    from joulesim.workload_tools.swf import convert_swf, write_workload

    best_convert = best_total = float("inf")
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "curie.json")
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            workload, report = convert_swf(str(TRACE), procs_per_node=16)
            t1 = time.perf_counter()
            write_workload(workload, out)
            t2 = time.perf_counter()
            best_convert = min(best_convert, t1 - t0)
            best_total = min(best_total, t2 - t0)
            size = os.path.getsize(out)
            del workload
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        simulated, analyzed = simulate_and_analyze(out, report["nb_res"], tmp, args.repeat)
        peak_all_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = report["job_lines"]
    print(f"trace: {TRACE.name} ({lines} job lines, {report['kept']} kept, nb_res {report['nb_res']})")
    print(f"convert:         {best_convert:6.2f} s  {lines / best_convert:10,.0f} jobs/s")
    print(f"convert + write: {best_total:6.2f} s  {lines / best_total:10,.0f} jobs/s  "
          f"(JSON {size / 1e6:.1f} MB)")
    print(f"peak memory: {peak_mb:.0f} MB for the conversion (best of {args.repeat}), "
          f"{peak_all_mb:.0f} MB with the simulation")
    print(f"simulate (fcfs, in-process, {report['nb_res']} hosts): {simulated:6.2f} s  "
          f"{report['kept'] / simulated:10,.0f} jobs/s  (once, to have outputs to analyze)")
    print(f"analyze:         {analyzed:6.2f} s  {report['kept'] / analyzed:10,.0f} jobs/s")


def simulate_and_analyze(workload_path: str, nb_res: int, tmp: str, repeat: int) -> tuple[float, float]:
    """Simulate the converted trace once (FCFS, in-process), then time `analyze` on its outputs."""
    import json

    from joulesim.analysis.metrics import metrics_of
    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    platform = os.path.join(tmp, "curie_nodes.json")
    with open(platform, "w") as f:
        json.dump({"master": {"name": "master_host"},
                   "clusters": [{"id": "curie", "prefix": "node-", "radical": f"0-{nb_res - 1}",
                                 "speed": "1Gf"}]}, f)
    prefix = os.path.join(tmp, "curie_fcfs")
    config = SimulationConfig(platform=load_platform(platform), workloads=[load_workload(workload_path, "w0")],
                              export_prefix=prefix)
    t0 = time.perf_counter()
    Simulation(config, DeciderLink(InProcessRequester(load_decider("fcfs", {})))).run()
    simulated = time.perf_counter() - t0
    analyzed = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        metrics_of([prefix])
        analyzed = min(analyzed, time.perf_counter() - t0)
    return simulated, analyzed


if __name__ == "__main__":
    main()
