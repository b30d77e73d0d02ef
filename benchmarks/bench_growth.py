"""How time and memory grow with the number of jobs (issue 45: linear time, <= 1.5 KB per job).

Input: bench_easy_delay.py's workload (delay jobs, Poisson arrivals, 70% offered load, sizes
1-128, runtimes 10 s to 10 h, fixed seed) at each size, on the shipped cluster128; `easy`
in-process with Batsim's event grouping (the default). Each size runs in a fresh child process
that imports everything, then times `Simulation.run` alone (CPU and wall), and reads its peak
resident memory and the kernel's work (clock steps, sub-rounds of ready actors, actors
started). Prints one line per size, then the growth between consecutive sizes: seconds and KB
of peak memory per added job (linear time keeps the first steady; memory per job should not
grow).

    python benchmarks/bench_growth.py [--sizes 10000,40000,160000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_easy_delay import make_workload, peak_memory_mb  # noqa: E402


def child(workload: str, prefix: str) -> dict:
    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    config = SimulationConfig(platform=load_platform("cluster128"), workloads=[load_workload(workload, "w0")],
                              export_prefix=prefix)
    sim = Simulation(config, DeciderLink(InProcessRequester(load_decider("easy", {}))))
    wall, cpu = time.perf_counter(), time.process_time()
    result = sim.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    kernel = sim.actors.kernel
    return {"jobs": result.stats.nb_jobs, "wall": wall, "cpu": cpu,
            "peak_mb": peak_memory_mb(),
            "steps": kernel.steps, "sub_rounds": kernel.sub_rounds, "actors": kernel.actors_started}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,40000,160000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            workload = os.path.join(folder, f"jobs{size}.json")
            make_workload(workload, size, 0.7)
            out = subprocess.run([sys.executable, __file__, "--child", workload, os.path.join(folder, f"out{size}")],
                                 capture_output=True, text=True, check=True)
            run = json.loads(out.stdout.strip().splitlines()[-1])
            runs.append(run)
            print(f"{size:>8,} jobs: {run['wall']:7.2f} s wall, {run['cpu']:7.2f} s CPU, peak {run['peak_mb']:6.1f} MB; "
                  f"per job {run['cpu'] / size * 1e6:6.1f} us CPU, {run['steps'] / size:.2f} steps, "
                  f"{run['sub_rounds'] / size:.2f} sub-rounds, {run['actors'] / size:.2f} actors", flush=True)
    for before, after in zip(runs, runs[1:]):
        added = after["jobs"] - before["jobs"]
        print(f"{before['jobs']:>8,} -> {after['jobs']:,}: {(after['cpu'] - before['cpu']) / added * 1e6:.1f} us CPU "
              f"and {(after['peak_mb'] - before['peak_mb']) * 1024 / added:.2f} KB of peak memory per added job")


if __name__ == "__main__":
    main()
