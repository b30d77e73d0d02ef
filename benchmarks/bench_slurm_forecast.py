"""Forecasting a real Slurm (issue 50): predicted starts against what Slurm then does.

    python benchmarks/bench_slurm_forecast.py                  # root, slurm-wlm and munge
    python benchmarks/bench_slurm_forecast.py --jobs 16 --seed 50 --at 40

1. A local Slurm of 4 one-CPU nodes (adapters/slurm/local_cluster.py: sched/backfill, Slurm's
   default backfill interval of 30 s and resolution of 60 s).
2. The workload (seeded): `--jobs` `sleep` jobs submitted back to back, each of 1-4 nodes
   (drawn from 1, 1, 2, 2, 3, 4) and a time limit of 1 or 2 minutes that its sleep equals: Slurm's
   limits are whole minutes, and with runtime = limit the comparison measures the schedulers,
   not runtime estimates.
3. `--at` seconds after the last submission, at one instant: `squeue --start` (Slurm's own
   estimate of each pending job's start, from its last backfill cycle) and the forecast
   (`joulesim slurm forecast`'s code: the state read, simulated with easy, conservative and
   fcfs in this process).
4. Slurm runs everything; each job's real start is recorded as squeue shows it (polled every
   second: finished jobs leave squeue after MinJobAge).
5. For the jobs pending at that instant: predicted and estimated start against the real one,
   seconds, and the mean and max absolute error of each.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import tempfile
import time

from joulesim.adapters.slurm.forecast import forecast_inputs, forecast_starts
from joulesim.adapters.slurm.local_cluster import LocalSlurm, slurm_available
from joulesim.adapters.slurm.slurm_commands import SlurmCommands
from joulesim.adapters.slurm.slurm_state import read_state

DECIDERS = ("easy", "conservative", "fcfs")


def workload(jobs: int, seed: int) -> list[tuple[int, int]]:
    """(nodes, minutes) of each job, in submission order."""
    rng = random.Random(seed)
    return [(rng.choice([1, 1, 2, 2, 3, 4]), rng.choice([1, 2])) for _ in range(jobs)]


def run(command: list[str], env: dict[str, str]) -> str:
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout


def slurm_estimates(env: dict[str, str]) -> dict[str, float | None]:
    """`squeue --start`: job id -> Slurm's expected start (epoch), None for N/A."""
    estimates = {}
    for line in run(["squeue", "--start", "-h", "-o", "%i %S"], env).splitlines():
        job_id, start = line.split()
        estimates[job_id] = None if start in ("N/A", "Unknown") else time.mktime(time.strptime(start, "%Y-%m-%dT%H:%M:%S"))
    return estimates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--seed", type=int, default=50)
    parser.add_argument("--at", type=float, default=40.0, help="seconds after the last submission")
    args = parser.parse_args()
    reason = slurm_available()
    if reason:
        raise SystemExit(f"no local Slurm: {reason}")
    jobs = workload(args.jobs, args.seed)
    print(f"workload: {len(jobs)} sleep jobs (seed {args.seed}), (nodes, minutes): {jobs}; forecast {args.at:g} s "
          "after the last submission")
    with tempfile.TemporaryDirectory(prefix="bench-forecast-") as directory, LocalSlurm(directory, nodes=4) as cluster:
        env = cluster.env
        print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {platform.node()} ({os.cpu_count()} cores, {platform.platform()}), "
              f"Slurm {run(['sinfo', '--version'], env).split()[-1]}", flush=True)
        ids = []
        for nodes, minutes in jobs:
            out = run(["sbatch", "--parsable", "-N", str(nodes), "-t", str(minutes), "-o", "/dev/null",
                       "--wrap", f"sleep {60 * minutes}"], env)
            ids.append(out.strip().split(";")[0])
        time.sleep(args.at)  # (the benchmark's stated instant, not a wait for a condition)
        estimates = slurm_estimates(env)
        estimated_at = time.time()
        state = read_state(SlurmCommands(cluster.conf))
        inputs = forecast_inputs(state)
        began = time.perf_counter()
        predicted = {name: forecast_starts(inputs, name) for name in DECIDERS}
        took = time.perf_counter() - began
        pending = [job.slurm_id for job in state.pending]
        print(f"at the forecast: {len(state.running)} running, {len(pending)} pending; squeue --start read "
              f"{state.now - estimated_at:.2f} s before the state; {len(DECIDERS)} simulations in {took:.2f} s")
        starts: dict[str, float] = {}
        deadline = time.monotonic() + 3600
        while len(starts) < len(ids) and time.monotonic() < deadline:
            for job in json.loads(run(["squeue", "--json", "-t", "all"], env))["jobs"]:
                if job["job_state"] != "PENDING" and job["start_time"] and str(job["job_id"]) not in starts:
                    starts[str(job["job_id"])] = float(job["start_time"])
            time.sleep(1.0)  # polling Slurm's starts, bounded by the deadline
    header = f"{'job':>4} {'nodes':>5} {'limit':>5} {'actual':>7} {'slurm est.':>10}" + "".join(
        f" {name:>12}" for name in DECIDERS)
    print("\nstarts, seconds after the forecast's instant (error: predicted - actual)")
    print(header)
    errors: dict[str, list[float]] = {name: [] for name in ("slurm", *DECIDERS)}
    for job_id in pending:
        nodes, minutes = jobs[ids.index(job_id)]
        actual = starts[job_id] - state.now
        row = f"{job_id:>4} {nodes:>5} {minutes:>4}m {actual:>7.0f}"
        estimate = estimates.get(job_id)
        if estimate is None:
            row += f" {'N/A':>10}"
        else:
            errors["slurm"].append(estimate - starts[job_id])
            row += f" {estimate - state.now:>5.0f} ({estimate - starts[job_id]:+4.0f})"
        for name in DECIDERS:
            start = predicted[name][job_id]
            errors[name].append(start + state.now - starts[job_id])
            row += f" {start:>5.0f} ({start + state.now - starts[job_id]:+4.0f})"
        print(row)
    print("\nabsolute error, seconds     mean    max   jobs")
    for name, values in errors.items():
        label = "squeue --start" if name == "slurm" else f"forecast, {name}"
        if values:
            absolute = [abs(v) for v in values]
            print(f"{label:<25} {sum(absolute) / len(absolute):>6.1f} {max(absolute):>6.0f} {len(values):>6}")
        else:
            print(f"{label:<25} {'-':>6} {'-':>6} {0:>6}")


if __name__ == "__main__":
    main()
