"""Speed of seed 003's fast path: permutations of one (S, Q) pair simulated per second.

Input: pair 0 of the Lublin traces of seed 0 (`joulesim.learn.job_pairs.lublin_pair`): S = 16
jobs that start the cluster, Q = 32 jobs, on 256 processors. Measured in this process:

  - kernel: `permutations_avebsld` on 100,000 drawn permutations (eq. 1 for each), with 1 and
    2 numba threads, best of 3 (permutations per second);
  - pair: `score_pair` with 250,000 permutations (the paper's count: drawing, simulating, eqs.
    2-3), with 1 and 2 threads; the issue's target is under 60 s on a 2-core machine;
  - full: joulesim's full simulator (decider fcfs, in-process) on the same pair in a few random
    orders, seconds per permutation, and its ratio to the fast path's.

Prints the figures, the compile (or cache load) time of the kernels, the peak memory
(getrusage) and the load average (another job on the machine slows the 2-thread figures).

    python benchmarks/bench_permutations.py [--seed 0] [--pair 0] [--permutations 250000] [--full-runs 30]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pair", type=int, default=0)
    parser.add_argument("--permutations", type=int, default=250_000)
    parser.add_argument("--kernel-permutations", type=int, default=100_000)
    parser.add_argument("--full-runs", type=int, default=30)
    args = parser.parse_args()

    import numba

    import joulesim
    from joulesim.learn.job_pairs import lublin_pair, pair_platform, pair_workload
    from joulesim.learn.list_schedule import permutations_avebsld, using_threads
    from joulesim.learn.permutation_scores import draw_permutations, score_pair

    pair = lublin_pair(args.pair, args.seed)
    jobs = (pair.state_sizes, pair.state_runtimes, pair.queue_sizes, pair.queue_runtimes)
    print(f"pair {args.pair} of seed {args.seed}: |S| = {len(pair.state_sizes)}, |Q| = {len(pair.queue_sizes)}, "
          f"256 processors; numba {numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads available, "
          f"load average {os.getloadavg()[0]:.2f}")

    started = time.perf_counter()
    score_pair(pair, 100, seed=1)  # compiles the kernels, or loads them from numba's cache
    print(f"compile or cache load: {time.perf_counter() - started:.2f} s (layer {numba.threading_layer()})")

    orders = draw_permutations(np.random.default_rng(args.seed), args.kernel_permutations, len(pair.queue_sizes))
    fast_per_perm = {}
    for threads in (1, 2):
        with using_threads(threads):
            best = min(_timed(lambda: permutations_avebsld(*jobs, orders, 256)) for _ in range(3))
        fast_per_perm[threads] = best / len(orders)
        print(f"kernel, {threads} thread(s): {len(orders) / best:,.0f} permutations/s "
              f"({best:.3f} s for {len(orders):,})")

    for threads in (1, 2):
        seconds = _timed(lambda: score_pair(pair, args.permutations, seed=2, threads=threads))
        print(f"score_pair, {args.permutations:,} permutations, {threads} thread(s): {seconds:.2f} s "
              f"({args.permutations / seconds:,.0f} permutations/s with drawing and eqs. 2-3)")
    print(f"peak memory after the fast path: {peak_mb():.0f} MB")

    rng = np.random.default_rng(3)
    platform = pair_platform(256)
    joulesim.simulate(platform, pair_workload(pair, rng.permutation(32)), "fcfs").jobs  # warm-up
    started = time.perf_counter()
    for _ in range(args.full_runs):
        joulesim.simulate(platform, pair_workload(pair, rng.permutation(32)), "fcfs").jobs
    full = (time.perf_counter() - started) / args.full_runs
    print(f"full simulator (fcfs, in-process, jobs table read): {full * 1e3:.2f} ms per permutation; "
          f"{args.permutations:,} permutations would take {full * args.permutations / 60:.0f} min; "
          f"ratio to the fast path's kernel: {full / fast_per_perm[1]:,.0f} (1 thread)")
    print(f"peak memory: {peak_mb():.0f} MB; load average {os.getloadavg()[0]:.2f}")


def _timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
