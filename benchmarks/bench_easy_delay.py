"""Speed of the simulator core: 20,000 delay jobs on 128 hosts with EASY backfilling.

Input: 20,000 delay jobs, Poisson arrivals, about 70% offered load, sizes 1-128 (mostly
small, powers of two common), runtimes log-uniform from 10 s to 10 h, walltime = 2 x runtime;
generated with a fixed seed. Platform: the shipped cluster128 (128 hosts at 1 Gflop/s).

Three measurements, each in a fresh child process so that peak memory is its own:
  - inproc: `easy` in the simulator's process (in-process transport);
  - zmq:    `easy` in its own process (`joulesim decide easy`), over ZeroMQ ipc://;
  - floor:  the bare ZeroMQ ipc round trip of an empty message between two processes.
Prints jobs/s and decider calls/s per run, peak memory, and the ratio of the ZeroMQ run's
time to (calls x floor). A run's time is its simulation's (`Simulation.run`); each line also
gives the time of the whole `joulesim run` command that does the same (`--in-process` or not),
from its start to its exit (the interpreter, the imports, reading the inputs, the outputs), the
measure of Batsim + batsched's time below.

    python benchmarks/bench_easy_delay.py [--jobs 20000] [--energy] [--repeat 3] [--event-grouping per-time]

Two versions of the code compared in the same minutes (this machine's speed drifts): --compare
runs the in-process measurement only, with each interpreter given (each with its own joulesim
installed, e.g. the venv of another checkout), one after the other for --repeat rounds, prints
each run and each code's best and median against the first, then checks that each code wrote the
same output files as the one before it (all but out_schedule.csv's two wall-clock columns):

    python benchmarks/bench_easy_delay.py --jobs 5000 --repeat 6 --compare /tmp/base-venv/bin/python .venv/bin/python

Against Batsim itself (built outside this repository, see ../shared/reference/batsim-build-notes.md):
--batsim and --batsched give the two binaries; each round then also runs Batsim 4 with batsched's
easy_bf on the same workload and platform (platforms/cluster128.xml, over ipc://, both with their
default outputs), rounds interleaved, and prints the wall and CPU time of that pair (batsched
started first; the time runs until both have exited) and each joulesim run's ratio to it:

    python benchmarks/bench_easy_delay.py --batsim /opt/batsim-build/prefix/bin/batsim \
        --batsched /opt/batsim-build/prefix/bin/batsched
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HOSTS = 128
PLATFORM = "cluster128"  # shipped (platforms/cluster128.xml)


def make_workload(path: str, nb_jobs: int, load: float, seed: int = 1) -> None:
    rng = random.Random(seed)
    jobs, profiles = [], {}
    sizes, runtimes = [], []
    for _ in range(nb_jobs):
        size = 2 ** rng.randint(0, 7) if rng.random() < 0.6 else rng.randint(1, HOSTS)
        sizes.append(size)
        runtimes.append(round(math.exp(rng.uniform(math.log(10), math.log(36000)))))
    work = sum(s * r for s, r in zip(sizes, runtimes))
    mean_interarrival = work / (load * HOSTS) / nb_jobs
    t = 0.0
    for i, (size, runtime) in enumerate(zip(sizes, runtimes)):
        t += rng.expovariate(1 / mean_interarrival)
        name = f"d{runtime}"
        profiles[name] = {"type": "delay", "delay": runtime}
        jobs.append({"id": i, "subtime": round(t, 3), "res": size, "walltime": 2 * runtime, "profile": name})
    with open(path, "w") as f:
        json.dump({"nb_res": HOSTS, "jobs": jobs, "profiles": profiles}, f)


def peak_memory_mb() -> float:
    """This process's peak resident memory. Linux's VmHWM belongs to the program's own memory
    map, made at exec; ru_maxrss survives exec, so a child started by a large parent would report
    the parent's size (this script's parent holds the workload it wrote)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_simulation(mode: str, workload: str, prefix: str, energy: bool, grouping: str) -> dict:
    from joulesim.deciders import load_decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.protocol.transport_zmq import ZmqRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    config = SimulationConfig(platform=load_platform(PLATFORM), workloads=[load_workload(workload, "w0")],
                              export_prefix=prefix, energy=energy, event_grouping=grouping)
    decider_process = None
    if mode == "inproc":
        transport = InProcessRequester(load_decider("easy", {}))
    else:
        endpoint = f"ipc://{prefix}.sock"
        decider_process = subprocess.Popen([sys.executable, "-m", "joulesim.cli.main", "decide", "easy",
                                            "-s", endpoint], stdin=subprocess.DEVNULL)
        transport = ZmqRequester(endpoint, 60, lambda: None if decider_process.poll() is None else "decider died")
    link = DeciderLink(transport)
    started = time.perf_counter()
    result = Simulation(config, link).run()
    elapsed = time.perf_counter() - started
    link.close()
    if decider_process is not None:
        decider_process.wait(30)
    return {"seconds": elapsed, "jobs": result.stats.nb_jobs, "calls": result.decider_calls,
            "peak_mb": peak_memory_mb(), "makespan": result.stats.makespan}


def child_floor(round_trips: int) -> dict:
    import zmq

    directory = tempfile.mkdtemp(prefix="joulesim-floor-")
    endpoint = f"ipc://{directory}/floor.sock"
    echo = subprocess.Popen([sys.executable, "-c", (
        "import sys, zmq\n"
        "s = zmq.Context().socket(zmq.REP); s.bind(sys.argv[1])\n"
        f"for _ in range({round_trips} + 100): s.send(s.recv())\n"), endpoint])
    socket = zmq.Context().socket(zmq.REQ)
    socket.connect(endpoint)
    for _ in range(100):  # warm-up, and wait for the echo process to be bound
        socket.send(b"")
        socket.recv()
    started = time.perf_counter()
    for _ in range(round_trips):
        socket.send(b"")
        socket.recv()
    elapsed = time.perf_counter() - started
    echo.wait(30)
    return {"floor_us": elapsed / round_trips * 1e6}


def batsim_run(batsim: str, batsched: str, workload: str, directory: str) -> dict:
    """Batsim + batsched easy_bf on the workload: wall and CPU seconds of the pair, the makespan."""
    platform = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "platforms", f"{PLATFORM}.xml")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(batsim))), "lib"))
    socket = f"ipc://{directory}/batsim.sock"
    prefix = os.path.join(directory, "batsim")
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    scheduler = subprocess.Popen([batsched, "-v", "easy_bf", "-s", socket], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    simulator = subprocess.run([batsim, "-p", platform, "-w", workload, "-s", socket, "-e", prefix], env=env,
                               capture_output=True, text=True)
    scheduler.wait(120)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if simulator.returncode != 0 or scheduler.returncode != 0:
        raise SystemExit(f"batsim exited {simulator.returncode}, batsched {scheduler.returncode}: "
                         f"{simulator.stderr.strip()[-500:]}")
    with open(f"{prefix}_schedule.csv") as f:
        header, row = f.read().splitlines()[:2]
    makespan = float(dict(zip(header.split(","), row.split(",")))["makespan"])
    return {"seconds": elapsed, "cpu": (after.ru_utime + after.ru_stime) - (cpu.ru_utime + cpu.ru_stime),
            "makespan": makespan}


def run_child(*args: str, python: str = sys.executable) -> dict:
    out = subprocess.run([python, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def whole_command(mode: str, workload: str, prefix: str, energy: str, grouping: str) -> float:
    """Wall seconds of the `joulesim run` command that does what the child does, from its start to
    its exit (the interpreter, the imports, reading the inputs, the run, the outputs, and over
    ZeroMQ the decider's process too): Batsim + batsched's time is measured so."""
    command = [sys.executable, "-m", "joulesim.cli.main", "run", "-p", PLATFORM, "-w", workload, "-d", "easy",
               "-e", prefix, "-q", "--event-grouping", grouping]
    command += ["--in-process"] if mode == "inproc" else []
    command += ["-E"] if energy == "1" else []
    started = time.perf_counter()
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


WALL_CLOCK_COLUMNS = ("scheduling_time", "simulation_time")  # out_schedule.csv's: differ between any two runs


def output_differences(prefix: str, other: str) -> list[str]:
    """The output files of two runs that differ (out_schedule.csv without its wall-clock columns)."""
    directory = os.path.dirname(prefix)
    names = sorted({name[len(os.path.basename(p)) + 1:] for p in (prefix, other) for name in os.listdir(directory)
                    if name.startswith(os.path.basename(p) + "_")})
    differ = []
    for name in names:
        texts = []
        for p in (prefix, other):
            try:
                with open(f"{p}_{name}", "rb") as f:
                    texts.append(f.read())
            except FileNotFoundError:
                texts.append(None)
        if name == "schedule.csv" and None not in texts:
            texts = [_without_wall_clock(text) for text in texts]
        if texts[0] != texts[1]:
            differ.append(name)
    return differ


def _without_wall_clock(text: bytes) -> list[list[bytes]]:
    rows = [line.split(b",") for line in text.splitlines()]
    keep = [i for i, column in enumerate(rows[0]) if column.decode() not in WALL_CLOCK_COLUMNS]
    return [[row[i] for i in keep] for row in rows]


def compare(pythons: list[str], workload: str, directory: str, energy: str, grouping: str, rounds: int) -> None:
    """In-process runs of each interpreter's code, interleaved; then the outputs compared."""
    seconds: list[list[float]] = [[] for _ in pythons]
    for round_ in range(1, rounds + 1):
        for i, python in enumerate(pythons):
            run = run_child("inproc", workload, os.path.join(directory, f"code{i}"), energy, grouping, python=python)
            seconds[i].append(run["seconds"])
            print(f"round {round_}  code {i}  {run['seconds']:7.3f} s  ({python})", flush=True)
    best0, median0 = min(seconds[0]), statistics.median(seconds[0])
    for i, python in enumerate(pythons):
        best, median = min(seconds[i]), statistics.median(seconds[i])
        print(f"code {i}: best {best:.3f} s ({best / best0 - 1:+.1%} against code 0), median {median:.3f} s "
              f"({median / median0 - 1:+.1%}), spread {min(seconds[i]):.3f}-{max(seconds[i]):.3f} s  ({python})")
    for i in range(1, len(pythons)):  # (each against the one before it: e.g. base, before, after)
        differ = output_differences(os.path.join(directory, f"code{i - 1}"), os.path.join(directory, f"code{i}"))
        print(f"outputs of code {i} against code {i - 1}: "
              + (f"DIFFERENT: {', '.join(differ)}" if differ else "the same"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--load", type=float, default=0.7)
    parser.add_argument("--energy", action="store_true", help="simulate with -E")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each measurement; the fastest is kept (the machine is shared)")
    parser.add_argument("--event-grouping", default="batsim", choices=("batsim", "per-time"),
                        help="Batsim's messages (default) or every event of one time in one message")
    parser.add_argument("--compare", nargs="+", metavar="PYTHON",
                        help="in-process runs only, with each interpreter's joulesim, interleaved for --repeat "
                             "rounds; then checks that their output files are the same")
    parser.add_argument("--batsim", help="Batsim 4's binary: also run Batsim + batsched easy_bf each round")
    parser.add_argument("--batsched", help="batsched's binary (with --batsim)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, *rest = args.child
        if mode == "floor":
            print(json.dumps(child_floor(int(rest[0]))))
        else:
            print(json.dumps(child_simulation(mode, rest[0], rest[1], rest[2] == "1", rest[3])))
        return

    directory = tempfile.mkdtemp(prefix="joulesim-bench-")
    workload = os.path.join(directory, "workload.json")
    make_workload(workload, args.jobs, args.load)
    energy = "1" if args.energy else "0"
    if args.compare:
        print(f"input: {args.jobs} delay jobs, {args.load:.0%} offered load, {HOSTS} hosts, decider easy"
              f"{', energy on' if args.energy else ''}, event grouping {args.event_grouping}; in-process, "
              f"{args.repeat} rounds; outputs in {directory}")
        compare(args.compare, workload, directory, energy, args.event_grouping, args.repeat)
        return
    print(f"input: {args.jobs} delay jobs, Poisson arrivals, {args.load:.0%} offered load, {HOSTS} hosts, "
          f"decider easy{', energy on' if args.energy else ''}, event grouping {args.event_grouping}; "
          f"best of {args.repeat} runs each")
    if bool(args.batsim) != bool(args.batsched):
        parser.error("--batsim and --batsched go together")
    runs: dict[str, list[dict]] = {"inproc": [], "zmq": [], "floor": [], "batsim": []}
    for _ in range(args.repeat):  # (interleaved: this machine's speed drifts from minute to minute)
        if args.batsim:
            runs["batsim"].append(batsim_run(args.batsim, args.batsched, workload, directory))
        for mode in ("inproc", "zmq"):
            runs[mode].append(run_child(mode, workload, os.path.join(directory, mode), energy, args.event_grouping))
            runs[mode][-1]["command_seconds"] = whole_command(mode, workload, os.path.join(directory, f"{mode}_command"),
                                                              energy, args.event_grouping)
        runs["floor"].append(run_child("floor", "20000"))
    inproc, zmq_run, floor = (min(runs[mode], key=lambda r: r["floor_us" if mode == "floor" else "seconds"])
                              for mode in ("inproc", "zmq", "floor"))
    batsim = min(runs["batsim"], key=lambda r: r["seconds"]) if args.batsim else None
    if batsim is not None:
        print(f"{'batsim':11} {batsim['seconds']:7.2f} s  wall, {batsim['cpu']:.2f} s CPU: Batsim 4 + batsched easy_bf "
              f"(makespan {batsim['makespan']:.6f})")
    for name, r in (("in-process", inproc), ("zeromq ipc", zmq_run)):
        whole = min(run["command_seconds"] for run in runs["inproc" if r is inproc else "zmq"])
        versus = (f"  {batsim['seconds'] / r['seconds']:5.2f} x Batsim; whole command {whole:.2f} s, "
                  f"{batsim['seconds'] / whole:.2f} x" if batsim is not None else f"  whole command {whole:.2f} s")
        print(f"{name:11} {r['seconds']:7.2f} s  {r['jobs'] / r['seconds']:9.0f} jobs/s  "
              f"{r['calls'] / r['seconds']:9.0f} decider calls/s  ({r['calls']} calls)  "
              f"peak memory {r['peak_mb']:.0f} MB{versus}")
    floor_total = zmq_run["calls"] * floor["floor_us"] / 1e6
    print(f"floor       {floor['floor_us']:.1f} us per empty ZeroMQ ipc round trip; "
          f"calls x floor = {floor_total:.2f} s")
    print(f"ratio       zeromq run time / (calls x floor) = {zmq_run['seconds'] / floor_total:.2f}")
    assert inproc["makespan"] == zmq_run["makespan"], "the two transports must give the same schedule"


if __name__ == "__main__":
    main()
