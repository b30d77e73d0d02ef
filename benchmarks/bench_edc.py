"""Speed of Batsim 5's EDC paths against the Batsim 4 ones, on bench_easy_delay.py's input.

Input: bench_easy_delay.py's workload (20,000 delay jobs by default, cluster128, about 70 %
offered load). The same EASY backfilling four ways, each run in a fresh child process:
  - python-inproc: joulesim's Python `easy` in the simulator's process (Batsim 4 messages);
  - edc-library:   examples/deciders/c/libeasy_edc.so loaded in-process (batprotocol JSON);
  - edc-isolated:  the same library in a child process (--edc-isolated), over ipc://;
  - c-zmq:         examples/deciders/c/easy_decider over ZeroMQ ipc:// (Batsim 4 messages).
The time is the simulation's (RunResult.wall_time); the whole call's is printed beside it.
Checks that the two Batsim 4 runs (python-inproc, c-zmq) give byte-identical jobs files, and
the two batprotocol runs too, and says how the two pairs differ (Batsim 4 rounds the times it
sends to the microsecond, batprotocol does not); then prints wall time and jobs/s per run and
each path's time relative to python-inproc.

    python benchmarks/bench_edc.py [--jobs 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_easy_delay import make_workload  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODES = ("python-inproc", "edc-library", "edc-isolated", "c-zmq")


def child(mode: str, workload: str, prefix: str, build: str) -> None:
    """Run one simulation; print the simulation's wall time (RunResult.wall_time: reading the
    inputs, imports and building the result left out) and the whole call's."""
    import joulesim

    started = time.perf_counter()
    if mode == "python-inproc":
        result = joulesim.simulate("cluster128", workload, "easy", export=prefix)
    elif mode in ("edc-library", "edc-isolated"):
        result = joulesim.simulate("cluster128", workload, edc_library=f"{build}/libeasy_edc.so",
                                   edc_isolated=mode == "edc-isolated", export=prefix)
    else:
        result = joulesim.simulate("cluster128", workload, [f"{build}/easy_decider", "{endpoint}"], export=prefix)
    print(result.wall_time, time.perf_counter() - started)


def _differences(folder: str) -> str:
    """How the batprotocol run's jobs differ from the Batsim 4 one's: Batsim 4 rounds the times
    it sends to the microsecond, batprotocol does not."""
    import pandas as pd

    batsim4 = pd.read_csv(os.path.join(folder, "python-inproc", "out_jobs.csv"))
    batsim5 = pd.read_csv(os.path.join(folder, "edc-library", "out_jobs.csv"))
    starts = (batsim5["starting_time"] - batsim4["starting_time"]).abs()
    same_hosts = (batsim5["allocated_resources"] == batsim4["allocated_resources"]).mean()
    return (f"{int((starts > 0).sum()):,} of {len(starts):,} starts differ, by at most {starts.max():.3g} s; "
            f"{same_hosts:.1%} of jobs on the same hosts")


def build_examples(folder: str) -> None:
    """examples/deciders/c built into `folder` (easy_decider, libeasy_edc.so), or exit saying why."""
    made = subprocess.run(["make", "-s", "-C", str(ROOT / "examples" / "deciders" / "c"), f"BUILD={folder}"],
                          capture_output=True, text=True)
    if made.returncode:
        sys.exit("building examples/deciders/c failed (needs make, pkg-config, libzmq, jansson, jsmn):\n" + made.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as folder:
        build_examples(folder)
        workload = os.path.join(folder, "workload.json")
        make_workload(workload, args.jobs, 0.7)
        print(f"{args.jobs:,} delay jobs on cluster128, EASY; wall seconds per run (fresh process each)")
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        whole: dict[str, list[float]] = {mode: [] for mode in MODES}
        for round_ in range(args.repeat):
            for mode in MODES:  # (alternated: the machine's speed drifts)
                prefix = os.path.join(folder, mode, "out")
                run = subprocess.run([sys.executable, __file__, "--child", mode, workload, prefix, folder],
                                     capture_output=True, text=True)
                if run.returncode:
                    sys.exit(f"{mode} failed:\n{run.stderr}")
                simulation, call = map(float, run.stdout.split()[-2:])
                times[mode].append(simulation)
                whole[mode].append(call)
            jobs = {mode: Path(folder, mode, "out_jobs.csv").read_bytes() for mode in MODES}
            for one, other in (("python-inproc", "c-zmq"), ("edc-library", "edc-isolated")):
                if jobs[one] != jobs[other]:
                    sys.exit(f"{other}: its jobs file differs from {one}'s")
        print("jobs files: c-zmq's = python-inproc's (Batsim 4 messages), edc-isolated's = edc-library's "
              f"(batprotocol); between the two: {_differences(folder)}")
        base, base_median = min(times["python-inproc"]), statistics.median(times["python-inproc"])
        print("simulation wall time (best-worst), jobs/s at best, ratio to python-inproc's best time (and of "
              "the medians); then the whole simulate() call's best")
        for mode in MODES:
            best, worst, median = min(times[mode]), max(times[mode]), statistics.median(times[mode])
            print(f"{mode:14} {best:7.2f}-{worst:5.2f} s  {args.jobs / best:9,.0f} jobs/s  "
                  f"{best / base:5.2f} x python-inproc's time ({median / base_median:.2f} x of medians)   "
                  f"(whole call {min(whole[mode]):.2f} s)")


if __name__ == "__main__":
    main()
