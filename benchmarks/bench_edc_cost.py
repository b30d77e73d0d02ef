"""What a decision costs on the EDC library path against joulesim's Python `easy` in-process.

bench_edc.py times whole runs, whose wall time varies by 10-30 % on a shared machine. This one
says where the time goes, two ways, on bench_easy_delay.py's workload (cluster128, 70 % load):

  - per call (the default): one run of examples/deciders/c/libeasy_edc.so records the Batsim 4
    messages the simulator hands to the EDC's requester; they are then replayed, best of
    --repeat, through (a) the Python `easy` decider, after the rounding of their numbers that
    the simulator does for a Batsim 4 decider (as_batsim_writes: what Batsim 4 prints; not done
    for an EDC, to which batprotocol sends doubles as they are), and (b) a fresh requester on
    the library (translation to batprotocol, JSON, the C call, reading and checking the reply,
    back to Batsim 4 decisions), whole and step by step. Garbage collection is off while timing, so
    that a collection set off by the replay's own lists does not land in one step.
  - --instructions: valgrind's callgrind counts the instructions of whole runs (python-inproc
    and edc-library, as bench_edc.py runs them) of N/2 and N jobs; the difference, per job,
    leaves start-up, input reading and imports out. A count, not a time: the same on a busy
    machine, and for the same binaries and inputs from one run to the next.

    python benchmarks/bench_edc_cost.py [--jobs 20000] [--repeat 5]
    python benchmarks/bench_edc_cost.py --instructions [N]     # N = 10000 by default; needs valgrind
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_easy_delay import make_workload  # noqa: E402
from bench_edc import build_examples  # noqa: E402

BENCH_EDC = Path(__file__).resolve().parent / "bench_edc.py"


# ------------------------------------------------------------------ per call
def record(library: str, workload: str, folder: str) -> list:
    """Run the library once, keeping a copy of each Batsim 4 message its requester is given."""
    import joulesim
    from joulesim.protocol.batprotocol.edc_connection import EdcRequester

    messages = []
    exchange = EdcRequester.exchange_message

    def recording(self, message):
        messages.append(copy.deepcopy(message))
        return exchange(self, message)

    EdcRequester.exchange_message = recording
    try:
        joulesim.simulate("cluster128", workload, edc_library=library, export=os.path.join(folder, "out"))
    finally:
        EdcRequester.exchange_message = exchange
    return messages


def _best(repeat: int, run) -> dict[str, float]:
    """The best seconds of each step over `repeat` replays; run(timings) adds to timings."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        timings: dict[str, float] = {}
        gc.collect()
        gc.disable()
        try:
            run(timings)
        finally:
            gc.enable()
        for step, seconds in timings.items():
            best[step] = min(best.get(step, float("inf")), seconds)
    return best


def per_call(library: str, recorded: list, repeat: int) -> None:
    from joulesim.deciders import load_decider
    from joulesim.protocol.batsim_number_format import as_batsim_writes
    from joulesim.protocol.batprotocol import batsim4_bridge
    from joulesim.protocol.batprotocol.edc_connection import open_edc
    from joulesim.protocol.batprotocol.json_format import encode_json, read_json
    from joulesim.simulator.platform.platform_loader import load_platform

    platform = load_platform("cluster128")
    clock = time.perf_counter

    def python_easy(timings):
        messages, decider = copy.deepcopy(recorded), load_decider("easy")
        started = clock()
        messages = [as_batsim_writes(message) for message in messages]
        written = clock()
        for message in messages:
            decider.handle(message)
        timings["Batsim 4 path: its numbers"] = written - started
        timings["Python easy: handle()"] = clock() - written

    def library_whole(timings):
        messages, edc = copy.deepcopy(recorded), open_edc(library=library)
        edc.set_platform(platform)
        started = clock()
        for message in messages:
            edc.exchange_message(message)
        timings["EDC library: exchange_message()"] = clock() - started
        edc.close()

    def library_steps(timings):
        messages, edc = copy.deepcopy(recorded), open_edc(library=library)
        edc.set_platform(platform)
        state, channel = edc.state, edc.channel
        steps = [clock()]
        outgoing = [batsim4_bridge.to_batprotocol(message, state)[0] for message in messages]
        steps.append(clock())
        data = [encode_json(message, checked=False) + b"\0" for message in outgoing]
        steps.append(clock())
        replies = [channel.exchange(message) for message in data]
        steps.append(clock())
        read = [read_json(reply) for reply in replies]
        steps.append(clock())
        for reply in read:
            batsim4_bridge.to_batsim4(reply, state, library)
        steps.append(clock())
        edc.close()
        for name, begin, end in zip(("  Batsim 4 message to batprotocol", "  JSON encoding",
                                     "  the library call (ctypes and C)", "  reading and checking the reply",
                                     "  back to Batsim 4 decisions"), steps, steps[1:]):
            timings[name] = end - begin

    calls = len(recorded)
    print(f"{calls:,} calls replayed, best of {repeat}; microseconds per call")
    for run in (python_easy, library_whole, library_steps):
        for step, seconds in _best(repeat, run).items():
            print(f"{step:36} {seconds / calls * 1e6:6.2f}")


# ------------------------------------------------------------------ instructions
def _instructions(mode: str, workload: str, folder: str) -> int:
    prefix = os.path.join(folder, f"{mode}-{os.path.basename(workload)}", "out")
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          str(BENCH_EDC), "--child", mode, workload, prefix, folder], capture_output=True, text=True)
    counted = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode or not counted:
        sys.exit(f"{mode} under valgrind failed:\n{run.stderr[-2000:]}")
    return int(counted.group(1))


def instructions(jobs: int, folder: str) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    sizes = (jobs // 2, jobs)
    runs = []
    for size in sizes:
        workload = os.path.join(folder, f"workload{size}.json")
        make_workload(workload, size, 0.7)
        runs += [(mode, workload) for mode in ("python-inproc", "edc-library")]
    with ThreadPoolExecutor(max_workers=2) as pool:  # (counts do not depend on what else runs)
        counts = dict(zip(runs, pool.map(lambda run: _instructions(*run, folder), runs)))
    print(f"instructions per job, runs of {sizes[0]:,} and {sizes[1]:,} jobs (callgrind; their difference "
          f"over {sizes[1] - sizes[0]:,} jobs)")
    per_job = {}
    for mode in ("python-inproc", "edc-library"):
        small, large = (counts[mode, os.path.join(folder, f"workload{size}.json")] for size in sizes)
        per_job[mode] = (large - small) / (sizes[1] - sizes[0])
        print(f"{mode:14} {small:,} and {large:,} in all; {per_job[mode]:,.0f} per job")
    print(f"edc-library / python-inproc: {per_job['edc-library'] / per_job['python-inproc']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="the per-call replay's run (default 20000)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--instructions", type=int, nargs="?", const=10_000, metavar="N",
                        help="count instructions of runs of N/2 and N jobs instead (default N: 10000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        build_examples(folder)
        library = os.path.join(folder, "libeasy_edc.so")
        if args.instructions:
            instructions(args.instructions, folder)
            return
        workload = os.path.join(folder, "workload.json")
        make_workload(workload, args.jobs, 0.7)
        per_call(library, record(library, workload, folder), args.repeat)


if __name__ == "__main__":
    main()
