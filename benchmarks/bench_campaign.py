"""Campaign runner throughput: speed-up of 2 workers over 1, and the runner's per-instance overhead.

    python benchmarks/bench_campaign.py                 # local pool, and Dask when installed
    python benchmarks/bench_campaign.py --instances 16 --jobs 3000

1. Speed-up: `--instances` instances (a Lublin workload of `--jobs` jobs, one seed each, on the
   shipped cluster128 with EASY, ~0.5 s each) on 1 worker, then on 2.
2. Overhead: 200 instances of 10 jobs each (a 10-job Lublin workload per seed) on 1 worker;
   overhead per instance = (campaign wall time - the simulations' own wall time) / instances,
   where the simulations' time is the sum of the `wall_time` each record holds (measured
   inside the worker around `joulesim.simulate`). The same on a Dask LocalCluster of 1 worker
   process when dask.distributed is installed.
Results folders are temporary and removed; workloads are generated (no input needed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import pandas as pd

from joulesim.campaign.runner import run_campaign

STUDY = """
[campaign]
name = "bench"

[[platforms]]
path = "cluster128"

[[workloads]]
generator = "lublin"
seeds = {seeds}
parameters = {{jobs = {jobs}, nb_res = 128}}

[[deciders]]
decider = "easy"
"""


def run(directory: str, instances: int, jobs: int, workers: int | None = None, dask: str | None = None,
        prepare_first: bool = True) -> tuple[float, float, int]:
    """(campaign wall time, sum of the instances' own wall times, instances run)."""
    study = os.path.join(directory, "study.toml")
    with open(study, "w") as handle:
        handle.write(STUDY.format(seeds=list(range(instances)), jobs=jobs))
    results = os.path.join(directory, "results")
    if prepare_first:  # generate the workloads outside the timed run, then drop the records
        run_campaign(study, results, workers=1, progress=False)
        shutil.rmtree(os.path.join(results, "instances"))
    started = time.perf_counter()
    summary = run_campaign(study, results, workers=workers, dask_address=dask, progress=False)
    wall = time.perf_counter() - started
    assert not summary.failed, summary.failed
    table = pd.read_csv(os.path.join(results, "results.csv"))
    shutil.rmtree(os.path.join(results, "instances"))
    return wall, float(table["wall_time"].sum()), summary.nb_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--small", type=int, default=200, help="instances of 10 jobs for the overhead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        one, sims_one, n = run(directory, args.instances, args.jobs, workers=1)
        two, sims_two, _ = run(directory, args.instances, args.jobs, workers=2, prepare_first=False)
        print(f"speed-up: {n} instances of {args.jobs} Lublin jobs on cluster128 with EASY")
        print(f"  1 worker:  {one:6.2f} s ({one / n:.3f} s per instance; simulations {sims_one:.2f} s)")
        print(f"  2 workers: {two:6.2f} s ({two / n:.3f} s per instance; simulations {sims_two:.2f} s)")
        print(f"  speed-up:  {one / two:.2f}x")
    with tempfile.TemporaryDirectory() as directory:
        wall, sims, n = run(directory, args.small, 10, workers=1)
        print(f"overhead: {n} instances of 10 jobs, local pool of 1 worker")
        print(f"  campaign {wall:.2f} s ({1000 * wall / n:.1f} ms per instance, all included), simulations "
              f"{sims:.2f} s: {1000 * (wall - sims) / n:.1f} ms per instance of runner overhead")
    try:
        from distributed import LocalCluster
    except ImportError:
        print("dask.distributed is not installed: no Dask figure (pip install '.[dask]' in the joulesim checkout)")
        return
    with tempfile.TemporaryDirectory() as directory, \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        run(directory, args.small, 10, workers=1)  # generates the workloads (and warms the worker up)
        wall, sims, n = run(directory, args.small, 10, dask=cluster.scheduler_address, prepare_first=False)
        wall, sims, n = run(directory, args.small, 10, dask=cluster.scheduler_address, prepare_first=False)
        print(f"overhead: {n} instances of 10 jobs, Dask LocalCluster of 1 worker process")
        print(f"  campaign {wall:.2f} s ({1000 * wall / n:.1f} ms per instance, all included), simulations "
              f"{sims:.2f} s: {1000 * (wall - sims) / n:.1f} ms per instance of runner overhead")


if __name__ == "__main__":
    main()
