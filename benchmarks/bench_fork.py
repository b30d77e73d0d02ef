"""Cost of forking a simulation mid-way (issue 50's aim: a fork in < 0.1 s).

Input: bench_easy_delay's workload (20,000 delay jobs by default, cluster128, `easy` in the
simulator's process, Batsim's event grouping). A `joulesim.Simulation` is run to half the last
submission time; then fork() is timed --repeat times (each fork closed before the next), and
state() once. Prints the instant, the jobs by state, the fork times (best, median, worst), the
simulation process's resident memory, and checks that one fork and the parent end with the same
outputs as each other.

    python benchmarks/bench_fork.py [--jobs 20000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_easy_delay import make_workload  # noqa: E402


def resident_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    import joulesim

    with tempfile.TemporaryDirectory() as folder:
        workload = os.path.join(folder, "workload.json")
        make_workload(workload, args.jobs, 0.7)
        with open(workload) as f:
            half = max(job["subtime"] for job in json.load(f)["jobs"]) / 2
        started = time.perf_counter()
        sim = joulesim.Simulation("cluster128", workload, "easy")
        sim.run_until(half)
        reached = time.perf_counter() - started
        state = sim.state()
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            other = sim.fork()
            times.append(time.perf_counter() - started)
            other.close()
        started = time.perf_counter()
        sim.state()
        state_s = time.perf_counter() - started
        print(f"{args.jobs:,} jobs, paused at t={state['now']:,.0f} s (half the last submission) after {reached:.2f} s: "
              f"{len(state['waiting'])} waiting, {len(state['running'])} running, {len(state['ended']):,} ended; "
              f"simulation process {resident_mb(sim._pid):.0f} MB resident")
        print(f"fork: best {min(times) * 1e3:.1f} ms, median {statistics.median(times) * 1e3:.1f} ms, "
              f"worst {max(times) * 1e3:.1f} ms ({args.repeat} forks); state(): {state_s * 1e3:.1f} ms")
        other = sim.fork()
        same = other.run().jobs.equals(sim.run().jobs)
        print(f"a fork and its parent run to the end: the same jobs output: {same}")
        other.close()
        sim.close()
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
