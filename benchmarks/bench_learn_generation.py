"""Seed 003's training-data generation at scale: pairs x 250,000 permutations on Dask (issue 14).

    python benchmarks/bench_learn_generation.py [--pairs 40] [--permutations 250000]

Runs `joulesim learn generate`'s code on a dask.distributed LocalCluster of 1, then 2 worker
processes (one thread each, one numba thread each), then on the local process pool with 2
workers, from scratch each time, and prints wall time, permutations per second and the
speed-up of 2 workers over 1. The pairs are the first PAIRS windows of the Lublin trace of
seed 0 (256 processors, 16 + 32 jobs); every run produces the same scores (checked).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--permutations", type=int, default=250_000)
    args = parser.parse_args()

    import pandas as pd
    from distributed import Client, LocalCluster

    from joulesim.learn.score_generation import generate_scores

    folder = Path(tempfile.mkdtemp(prefix="bench_learn_"))
    total = args.pairs * args.permutations
    print(f"{args.pairs} pairs x {args.permutations:,} permutations = {total:,} simulations of 48 jobs")
    tables, walls = [], {}
    try:
        for label, workers in (("dask, 1 worker", 1), ("dask, 2 workers", 2), ("local pool, 2 workers", 2)):
            out = str(folder / f"{label.replace(' ', '_').replace(',', '')}.parquet")
            if label.startswith("dask"):
                with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, Client(cluster):
                    started = time.perf_counter()
                    generate_scores(out, args.pairs, args.permutations, seed=0, dask_address=cluster.scheduler_address)
                    wall = time.perf_counter() - started
            else:
                started = time.perf_counter()
                generate_scores(out, args.pairs, args.permutations, seed=0, workers=workers)
                wall = time.perf_counter() - started
            walls[label] = wall
            tables.append(pd.read_parquet(out))
            print(f"{label:<24} {wall:8.1f} s   {total / wall:>12,.0f} permutations/s")
        for table in tables[1:]:
            pd.testing.assert_frame_equal(table, tables[0])
        print(f"speed-up of 2 Dask workers over 1: {walls['dask, 1 worker'] / walls['dask, 2 workers']:.2f}x "
              "(identical scores in every run)")
        print(f"peak memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
