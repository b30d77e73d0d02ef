"""What energy accounting costs: the simulator-core benchmark, with and without -E.

Input: the 20,000 delay jobs of bench_easy_delay.py (same generator and seed: Poisson
arrivals at 70% offered load, sizes 1-128, runtimes log-uniform in [10 s, 10 h]), on the
shipped `homogeneous240` platform (Taurus power states) restricted to 128 machines
(--mmax 128), decider in-process:
  - `easy`;
  - `easy --option t_idle=T` (EASY with opportunistic shutdown), for each T of --t-idle.
Each is run with energy off and on, each run in a fresh child process, best of --repeat.
Prints jobs/s, machine switches, and the overhead of energy accounting (time with -E /
time without - 1).

    python benchmarks/bench_energy_overhead.py [--jobs 20000] [--t-idle 0,600] [--repeat 3]
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
from bench_easy_delay import make_workload  # noqa: E402  (the same input as the core benchmark)


def child(workload: str, prefix: str, energy: bool, options: dict[str, str]) -> dict:
    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    config = SimulationConfig(platform=load_platform("homogeneous240"), mmax=128, energy=energy,
                              workloads=[load_workload(workload, "w0")], export_prefix=prefix)
    simulation = Simulation(config, DeciderLink(InProcessRequester(load_decider("easy", options))))
    started = time.perf_counter()
    result = simulation.run()
    return {"seconds": time.perf_counter() - started, "jobs": result.stats.nb_jobs,
            "switches": int(result.schedule["nb_machine_switches"]),
            "joules": float(result.schedule["consumed_joules"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--t-idle", default="0,600", help="comma-separated t_idle values for easy with shutdown")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload, prefix, energy, options = args.child
        print(json.dumps(child(workload, prefix, energy == "1", json.loads(options))))
        return

    directory = tempfile.mkdtemp(prefix="joulesim-energy-bench-")
    workload = os.path.join(directory, "workload.json")
    make_workload(workload, args.jobs, 0.7)
    print(f"input: {args.jobs} delay jobs, 70% offered load, homogeneous240 --mmax 128, in-process; "
          f"best of {args.repeat} runs each")

    def best(energy: bool, options: dict[str, str]) -> dict:
        runs = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, __file__, "--child", workload, os.path.join(directory, "out"),
                                  "1" if energy else "0", json.dumps(options)],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        return min(runs, key=lambda r: r["seconds"])

    cases = [("easy", {})] + [(f"easy t_idle={t}", {"t_idle": t}) for t in args.t_idle.split(",") if t]
    for name, options in cases:
        off, on = best(False, options), best(True, options)
        print(f"{name:16} without -E {off['seconds']:6.2f} s ({off['jobs'] / off['seconds']:7.0f} jobs/s)   "
              f"with -E {on['seconds']:6.2f} s ({on['jobs'] / on['seconds']:7.0f} jobs/s)   "
              f"overhead {on['seconds'] / off['seconds'] - 1:+.0%}   "
              f"{on['switches']} machine switches, {on['joules'] / 3.6e9:.1f} MWh")


if __name__ == "__main__":
    main()
