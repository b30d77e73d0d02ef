"""Cost of a checkpoint of a run mid-way, and of resuming from it (issue 50's aims: a checkpoint
of a 20,000-job run mid-way in < 1 s and < 20 MB).

Input: bench_easy_delay's workload (20,000 delay jobs by default, cluster128), `easy` in the
simulator's process, Batsim's event grouping (the default; --event-grouping per-time for the
other). Three `joulesim run` / `joulesim resume` commands, each in this process through the
command line's code, timed from inside:
  - the run alone, no checkpoint;
  - the run with `--checkpoint-at` half the last submission time: the checkpoint's writing timed
    (state encoded, message log, compression, the file written and synced), its size;
  - `joulesim resume` of that checkpoint after the run ended (the outputs cut back): reading and
    checking it, the decider's replay, the state decoded, then the rest of the run.
Checks that the resumed outputs equal the first run's.

    python benchmarks/bench_checkpoint.py [--jobs 20000] [--event-grouping per-time]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_easy_delay import make_workload  # noqa: E402


def run_command(arguments: list[str]) -> float:
    from joulesim.cli.main import main

    started = time.perf_counter()
    try:
        main(arguments, standalone_mode=False)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    return time.perf_counter() - started


def outputs(prefix: str) -> dict[str, object]:
    found: dict[str, object] = {}
    for name in ("jobs.csv", "machine_states.csv", "schedule.trace"):
        with open(f"{prefix}_{name}", "rb") as handle:
            found[name] = handle.read()
    with open(f"{prefix}_schedule.csv", newline="") as handle:
        found["schedule"] = [{k: v for k, v in row.items() if k not in ("scheduling_time", "simulation_time")}
                             for row in csv.DictReader(handle)]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--event-grouping", default="batsim", choices=("batsim", "per-time"))
    args = parser.parse_args()
    from joulesim import run_checkpoint

    timings: dict[str, float] = {}
    original_write, original_replay = run_checkpoint.RunCheckpoints.write, run_checkpoint.replay_messages

    def timed_write(self, simulation, now, next_time):
        started = time.perf_counter()
        size = original_write(self, simulation, now, next_time)
        timings["write"] = time.perf_counter() - started
        timings["size"] = size
        timings["at"] = now
        timings["messages"] = self.log.count
        return size

    def timed_replay(transport, pairs):
        started = time.perf_counter()
        original_replay(transport, pairs)
        timings["replay"] = time.perf_counter() - started

    run_checkpoint.RunCheckpoints.write = timed_write
    run_checkpoint.replay_messages = timed_replay
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        make_workload("workload.json", args.jobs, 0.7)
        with open("workload.json") as f:
            half = max(job["subtime"] for job in json.load(f)["jobs"]) / 2
        common = ["run", "-p", "cluster128", "-w", "workload.json", "--in-process", "--event-grouping",
                  args.event_grouping, "--no-progress", "-q"]
        plain = run_command([*common, "-e", "plain/out"])
        with_checkpoint = run_command([*common, "-e", "ck/out", "--checkpoint-at", str(half)])
        resumed = run_command(["resume", "ck/out_checkpoint.jsck"])
        same = outputs("plain/out") == outputs("ck/out")
    print(f"{args.jobs:,} delay jobs, cluster128, easy in-process, {args.event_grouping} grouping")
    print(f"run without checkpoint: {plain:.2f} s; with a checkpoint at t={timings['at']:,.0f} s "
          f"(half the last submission): {with_checkpoint:.2f} s")
    print(f"checkpoint: written in {timings['write']:.3f} s, {timings['size'] / 1e6:.2f} MB, "
          f"{timings['messages']:,} messages logged")
    print(f"resume: {resumed:.2f} s in all, of which the decider's replay {timings['replay']:.2f} s")
    print(f"resumed outputs equal the uninterrupted run's: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
