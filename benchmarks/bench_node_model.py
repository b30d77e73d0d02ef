"""Speed of IRMaSim's node model on joulesim (issue 11): the PCBE scaling case and exp2 x 100.

Inputs:
  - scaling: the PCBE thesis's scaling case (../shared/data/pcbe/scaling: 891 jobs of up to 64
    tasks, 12 nodes, 264 cores), IRMaSim's own files;
  - exp2x100: seed 002's experiment-2 platform with every node type x 100 (400 nodes, 10,400
    cores) and its 18-job workload repeated 1,000 times, copy k submitted 20 x k seconds later
    (18,000 jobs), generated from experiments/irmasim_grid/exp2.
Deciders: heuristic first/first, heuristic smallest/high_mem_bw, pcbe energy hi_first/lo_first.
Each measurement runs in a fresh child process (its own peak memory):
  - inproc: `joulesim.simulate(..., energy=True, export=tmp)` in one process: reading the files,
    the simulation and the Batsim outputs (the time IRMaSim's "Execution time" covers);
  - zmq: the same with the decider in its own process (`joulesim decide`) over ipc://;
  - cli: the whole `joulesim run --in-process` command, interpreter start included (what
    `time irmasim ...` measures).

    python benchmarks/bench_node_model.py [--repeat 3] [--case scaling|exp2x100]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCALING = REPO.parent / "shared" / "data" / "pcbe" / "scaling"
EXP2 = REPO / "experiments" / "irmasim_grid" / "exp2"
DECIDERS = {
    "heuristic first/first": ("heuristic", {"job_selection": "first", "resource_selection": "first"}),
    "heuristic smallest/high_mem_bw": ("heuristic", {"job_selection": "smallest", "resource_selection": "high_mem_bw"}),
    "pcbe energy hi/lo": ("pcbe", {"criterion": "energy", "job_prio": "hi_first", "node_prio": "lo_first"}),
}


def make_exp2x100(directory: Path) -> tuple[Path, Path]:
    platform = json.loads((EXP2 / "platform.json").read_text())
    for entry in platform["platform"]["the_platform"]["clusters"][0]["nodes"]:
        entry["number"] *= 100
    workload = json.loads((EXP2 / "workload.json").read_text())
    jobs = [dict(job, id=f"{job['id']}_{k}", subtime=round(job["subtime"] + 20 * k, 2))
            for k in range(1000) for job in workload["jobs"]]
    workload["jobs"] = jobs
    paths = directory / "platform.json", directory / "workload.json"
    paths[0].write_text(json.dumps(platform))
    paths[1].write_text(json.dumps(workload))
    return paths


def child(platform: str, workload: str, decider: str, mode: str) -> dict:
    name, options = DECIDERS[decider]
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "cli":
            command = [sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-E", "-p", platform,
                       "-w", workload, "-d", name, "-e", os.path.join(tmp, "out")]
            for key, value in options.items():
                command += ["--option", f"{key}={value}"]
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            return {"wall": time.perf_counter() - started, "calls": 0, "jobs": 0,
                    "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
        # Modules are imported before the clock starts, as IRMaSim's own timer (its "Execution
        # time") starts after its imports: the simulator, the decider, and pandas for the result.
        from joulesim import simulate
        from joulesim.deciders import load_decider_class
        from joulesim.run_result import RunResult  # noqa: F401

        load_decider_class(name)
        started = time.perf_counter()
        result = simulate(platform, workload, name, options=options, energy=True,
                                   export=os.path.join(tmp, "out"), in_process=mode == "inproc")
        wall = time.perf_counter() - started
        return {"wall": wall, "calls": result.decider_calls, "jobs": int(result.schedule["nb_jobs"]),
                "energy": float(result.schedule["consumed_joules"]),
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure(platform: Path, workload: Path, decider: str, mode: str, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, __file__, "--child", str(platform), str(workload), decider, mode],
                             check=True, capture_output=True, text=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return min(runs, key=lambda r: r["wall"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", choices=["scaling", "exp2x100"], action="append")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    cases = args.case or ["scaling", "exp2x100"]
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {}
        if "scaling" in cases:
            if SCALING.is_dir():
                inputs["scaling"] = (SCALING / "platform.json", SCALING / "workload.json")
            else:
                print(f"scaling: skipped ({SCALING} is absent)")
        if "exp2x100" in cases:
            inputs["exp2x100"] = make_exp2x100(Path(tmp))
        print(f"{'case':9} {'decider':31} {'mode':6} {'wall s':>8} {'jobs/s':>9} {'calls/s':>9} {'peak MB':>8}")
        for case, (platform, workload) in inputs.items():
            for decider in DECIDERS:
                for mode in ("inproc", "zmq", "cli"):
                    r = measure(platform, workload, decider, mode, args.repeat)
                    rate = f"{r['jobs'] / r['wall']:9.0f}" if r["jobs"] else f"{'':9}"
                    calls = f"{r['calls'] / r['wall']:9.0f}" if r["calls"] else f"{'':9}"
                    print(f"{case:9} {decider:31} {mode:6} {r['wall']:8.2f} {rate} {calls} {r['peak_mb']:8.0f}",
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
