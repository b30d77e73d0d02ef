"""Batsim's event grouping against per-time on a wide platform (issue 45: <= 1.2x per-time).

Input: 20,000 delay jobs of 1-4 hosts (uniform), exponential inter-arrival times of mean 0.9 s,
delays uniform in 100-3,000 s (integers), walltime 4,000 s, seed 3, on a JSON cluster of 2,048
hosts (about 800 jobs running at once, so about 800 sleeps in every clock step of Batsim's
grouping); `easy` in-process. The offered load is about 2x the platform: the queue grows all
run long and EASY's passes over it are most of either run (the same decider work in both: the
same calls). Each grouping runs in a fresh process that times `Simulation.run` alone.

    python benchmarks/bench_wide_platform.py [--jobs 20000] [--hosts 2048] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def make_inputs(folder: str, nb_jobs: int, hosts: int) -> tuple[str, str]:
    rng = random.Random(3)
    t, jobs, profiles = 0.0, [], {}
    for i in range(nb_jobs):
        t += rng.expovariate(1 / 0.9)
        delay = rng.randint(100, 3000)
        profiles[f"d{delay}"] = {"type": "delay", "delay": delay}
        jobs.append({"id": i, "subtime": round(t, 3), "res": rng.randint(1, 4), "walltime": 4000, "profile": f"d{delay}"})
    workload = os.path.join(folder, "jobs.json")
    with open(workload, "w") as out:
        json.dump({"nb_res": hosts, "jobs": jobs, "profiles": profiles}, out)
    platform = os.path.join(folder, "platform.json")
    with open(platform, "w") as out:
        json.dump({"master": {"name": "master_host"},
                   "clusters": [{"id": "c", "prefix": "h", "count": hosts, "speed": "1Gf"}]}, out)
    return platform, workload


def child(platform: str, workload: str, grouping: str, prefix: str) -> dict:
    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    config = SimulationConfig(platform=load_platform(platform), workloads=[load_workload(workload, "w0")],
                              export_prefix=prefix, event_grouping=grouping)
    sim = Simulation(config, DeciderLink(InProcessRequester(load_decider("easy", {}))))
    started = time.perf_counter()
    result = sim.run()
    seconds = time.perf_counter() - started
    steps = sim.actors.kernel.steps if sim.actors is not None else 0
    return {"seconds": seconds, "jobs": result.stats.nb_jobs, "calls": result.decider_calls, "steps": steps,
            "makespan": result.stats.makespan}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(*sys.argv[2:6])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--hosts", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each grouping, alternated; the fastest is kept")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        platform, workload = make_inputs(folder, args.jobs, args.hosts)
        best: dict[str, dict] = {}
        for _ in range(args.repeat):
            for grouping in ("per-time", "batsim"):
                out = subprocess.run([sys.executable, __file__, "--child", platform, workload, grouping,
                                      os.path.join(folder, grouping)], capture_output=True, text=True, check=True)
                run = json.loads(out.stdout.strip().splitlines()[-1])
                if grouping not in best or run["seconds"] < best[grouping]["seconds"]:
                    best[grouping] = run
        print(f"input: {args.jobs} delay jobs of 1-4 hosts on {args.hosts} hosts, easy in-process; "
              f"best of {args.repeat} run(s) each")
        for grouping, run in best.items():
            print(f"{grouping:9} {run['seconds']:7.2f} s  {run['calls']} decider calls  {run['steps']} clock steps  "
                  f"makespan {run['makespan']:.6f}")
        print(f"batsim / per-time = {best['batsim']['seconds'] / best['per-time']['seconds']:.2f}")


if __name__ == "__main__":
    main()
