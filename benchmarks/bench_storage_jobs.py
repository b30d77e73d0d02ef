"""Time a run that mixes I/O and compute jobs (issue 27's storage benchmark).

Input (built here, seed 0): a 128-host platform (1 Gflop/s hosts, 1.25 GB/s links to one
switch) with 2 storage hosts (io0 "pfs", io1 "bb", 10 GB/s links); 1,000 jobs arriving every
0-20 s (uniform), 1-16 hosts each: 40 % compute (parallel_homogeneous, 1e9-1e11 flop per host,
1e7-1e9 B per pair), 40 % parallel_homogeneous_pfs on pfs (1e8-1e10 B read and written per
host), 20 % data_staging of 1e9-1e11 B from pfs to bb. EASY backfilling in-process, with
`-o storage_mapping=pfs:128,bb:129`. Prints the run's wall time, jobs/s and rate re-solves.

    python benchmarks/bench_storage_jobs.py [--jobs 1000] [--seed 0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

HOSTS = 128


def write_platform(path: str) -> None:
    names = [f"h{i}" for i in range(HOSTS)] + ["io0", "io1"]
    hosts = "".join(f'<host id="h{i}" speed="1Gf"/>' for i in range(HOSTS))
    hosts += "".join(f'<host id="io{i}" speed="1Gf"><prop id="role" value="storage"/></host>' for i in range(2))
    links = "".join(f'<link id="l_{n}" bandwidth="{"10GBps" if n.startswith("io") else "1.25GBps"}" latency="1us"/>' for n in names)
    routes = "".join(f'<route src="{n}" dst="sw"><link_ctn id="l_{n}"/></route>' for n in names)
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Floyd">'
                f'{hosts}<host id="master" speed="1Gf"><prop id="role" value="master"/></host><router id="sw"/>'
                f'{links}<link id="l_master" bandwidth="1GBps" latency="1us"/>{routes}'
                '<route src="master" dst="sw"><link_ctn id="l_master"/></route></zone></platform>')


def write_workload(path: str, nb_jobs: int, seed: int) -> dict[str, int]:
    rng = np.random.default_rng(seed)
    jobs, profiles, kinds = [], {}, {"compute": 0, "pfs": 0, "staging": 0}
    t = 0.0
    for i in range(nb_jobs):
        t += float(rng.uniform(0, 20))
        res = int(rng.integers(1, 17))
        draw = rng.random()
        if draw < 0.4:
            kind, profile = "compute", {"type": "parallel_homogeneous", "cpu": float(10 ** rng.uniform(9, 11)),
                                        "com": float(10 ** rng.uniform(7, 9))}
        elif draw < 0.8:
            size = float(10 ** rng.uniform(8, 10))
            kind, profile = "pfs", {"type": "parallel_homogeneous_pfs", "bytes_to_read": size, "bytes_to_write": size}
        else:
            kind, profile = "staging", {"type": "data_staging", "nb_bytes": float(10 ** rng.uniform(9, 11)), "from": "pfs", "to": "bb"}
        kinds[kind] += 1
        profiles[f"p{i}"] = profile
        jobs.append({"id": i, "subtime": round(t, 3), "res": res, "walltime": -1, "profile": f"p{i}"})
    with open(path, "w") as f:
        json.dump({"nb_res": HOSTS, "jobs": jobs, "profiles": profiles}, f)
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    with tempfile.TemporaryDirectory(prefix="bench_storage_") as directory:
        platform_path, workload_path = os.path.join(directory, "p.xml"), os.path.join(directory, "w.json")
        write_platform(platform_path)
        kinds = write_workload(workload_path, args.jobs, args.seed)
        print(f"{args.jobs} jobs ({kinds['compute']} compute, {kinds['pfs']} pfs, {kinds['staging']} staging), "
              f"{HOSTS} hosts + 2 storages, EASY, in-process")
        for _ in range(args.repeat):
            config = SimulationConfig(platform=load_platform(platform_path), workloads=[load_workload(workload_path, "w0")],
                                      export_prefix=os.path.join(directory, "out"))
            decider = load_decider("easy", {"storage_mapping": "pfs:128,bb:129"})
            start = time.perf_counter()
            simulation = Simulation(config, DeciderLink(InProcessRequester(decider)))
            result = simulation.run()
            wall = time.perf_counter() - start
            print(f"  {wall:.2f} s, {args.jobs / wall:,.0f} jobs/s, {simulation.runner.resolves:,} re-solves, "
                  f"makespan {float(result.schedule['makespan']):,.0f} s")


if __name__ == "__main__":
    main()
