"""Speed of one rate re-solve of the parallel-task network model.

Input: a 512-host platform of 8 clusters x 64 hosts (1 Gflop/s hosts; each host has a
private SHARED link; each cluster a backbone and an uplink to one main switch), and 10, 100
or 1,000 concurrent parallel tasks, each on 2-16 random hosts (30% of them spread over two
clusters), with random computation and all-to-all communication amounts. With 1,000 tasks
on 512 hosts, hosts run several tasks at once (compute sharing), so CPUs are shared
constraints too: the hard case for the solver. Seed 1. Prints the time per re-solve (best
of --repeat) and the number of usage entries.

    python benchmarks/bench_ptask_solver.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

HOSTS, CLUSTERS = 512, 8
PER_CLUSTER = HOSTS // CLUSTERS


def resources_of_route(src: int, dst: int) -> list[int]:
    """Resource ids: CPUs 0..511, host links 512..1023, backbones 1024..1031, uplinks 1032..1039,
    main switch 1040."""
    links = [HOSTS + src, HOSTS + dst]
    a, b = src // PER_CLUSTER, dst // PER_CLUSTER
    links += [2 * HOSTS + a] if a == b else [2 * HOSTS + a, 2 * HOSTS + b, 2 * HOSTS + CLUSTERS + a,
                                              2 * HOSTS + CLUSTERS + b, 2 * HOSTS + 2 * CLUSTERS]
    return links


def make_problem(nb_tasks: int, rng: np.random.Generator):
    capacity = np.concatenate([np.full(HOSTS, 1e9), np.full(HOSTS, 1.25e8), np.full(CLUSTERS, 1.25e9),
                               np.full(CLUSTERS, 1.25e9), [1.25e9]])
    task_index, resource_index, amount = [], [], []
    for t in range(nb_tasks):
        size = int(rng.integers(2, 17))
        cluster = int(rng.integers(CLUSTERS))
        pool = np.arange(cluster * PER_CLUSTER, (cluster + 1) * PER_CLUSTER)
        if rng.random() < 0.3:
            other = (cluster + 1) % CLUSTERS
            pool = np.concatenate([pool, np.arange(other * PER_CLUSTER, (other + 1) * PER_CLUSTER)])
        hosts = rng.choice(pool, size=size, replace=False)
        flops, volume = rng.uniform(1e9, 1e11), rng.uniform(1e6, 1e9)
        usage: dict[int, float] = {}
        for h in hosts:
            usage[int(h)] = usage.get(int(h), 0.0) + flops
        for s in hosts:
            for d in hosts:
                if s != d:
                    for r in resources_of_route(int(s), int(d)):
                        usage[r] = usage.get(r, 0.0) + volume
        task_index += [t] * len(usage)
        resource_index += list(usage)
        amount += list(usage.values())
    return (np.array(task_index), np.array(resource_index), np.array(amount), capacity, np.zeros(nb_tasks))


def main() -> None:
    from joulesim.simulator.models.ptask_sharing import fair_bottleneck_periods

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print(f"platform: {HOSTS} hosts in {CLUSTERS} clusters; best of {args.repeat} re-solves")
    for nb_tasks in (10, 100, 1000):
        problem = make_problem(nb_tasks, rng)
        best = float("inf")
        for _ in range(args.repeat):
            started = time.perf_counter()
            fair_bottleneck_periods(*problem)
            best = min(best, time.perf_counter() - started)
        print(f"{nb_tasks:5d} tasks  {problem[0].size:7d} usage entries  {best * 1e3:8.2f} ms per re-solve")


if __name__ == "__main__":
    main()
