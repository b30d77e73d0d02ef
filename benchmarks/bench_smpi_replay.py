"""SMPI trace replay: joulesim against SimGrid's own `smpirun -replay` on the same trace.

Input (built here): 64 ranks on a 64-host cluster (1 Gflop/s, 1 GB/s links, 10 us; a 2 GB/s
backbone) and a stencil-like trace of about 100,000 actions: per iteration each rank computes,
exchanges halos with its 4 grid neighbours (irecv/isend/waitall, 40-120 kB), joins an allreduce
of 8 B and passes a token along a pipeline (send/recv); every 5th iteration an alltoall.
joulesim runs it as one smpi job (decider fcfs in-process, the wall time of the whole
simulation, reading the traces included); smpirun runs it with --cfg=host/model:ptask_L07 (the
wall time of the whole command). Both simulated times are printed: they must agree.

    python benchmarks/bench_smpi_replay.py [--ranks 64] [--iterations 150] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="root" routing="Full">
  <cluster id="compute" prefix="node" suffix="" radical="0-{last}" speed="1Gf" bw="1GBps" lat="10us" bb_bw="2GBps" bb_lat="5us"/>
  <cluster id="mgmt" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="1GBps" lat="10us" bb_bw="1GBps" bb_lat="0us">
    <prop id="role" value="master"/></cluster>
  <link id="uplink" bandwidth="10GBps" latency="0us"/>
  <zoneRoute src="compute" dst="mgmt" gw_src="nodecompute_router" gw_dst="master_hostmgmt_router"><link_ctn id="uplink"/></zoneRoute>
</zone>
</platform>
"""


def write_traces(directory: Path, ranks: int, iterations: int) -> int:
    side = int(ranks ** 0.5)
    actions = 0
    for r in range(ranks):
        row, col = divmod(r, side)
        neighbours = [(row + dr) % side * side + (col + dc) % side for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))]
        lines = [f"{r} init"]
        for it in range(iterations):
            size = 40000 * (1 + it % 3)
            lines.append(f"{r} compute {2e6 + 1e5 * ((r + it) % 7):.0f}")
            lines += [f"{r} irecv {nb} {it % 100} {size}" for nb in neighbours]
            lines += [f"{r} isend {nb} {it % 100} {size}" for nb in neighbours]
            lines += [f"{r} waitall", f"{r} allreduce 8 1e5"]
            if r > 0:
                lines.append(f"{r} recv {r - 1} 7 1000")
            if r + 1 < ranks:
                lines.append(f"{r} send {r + 1} 7 1000")
            if it % 5 == 4:
                lines.append(f"{r} alltoall 512 512")
        lines.append(f"{r} finalize")
        actions += len(lines)
        (directory / f"rank{r}.txt").write_text("\n".join(lines) + "\n")
    (directory / "traces.txt").write_text("".join(f"rank{r}.txt\n" for r in range(ranks)))
    return actions


def run_smpirun(directory: Path, ranks: int) -> tuple[float, float]:
    (directory / "hosts").write_text("".join(f"node{r}\n" for r in range(ranks)))
    command = ["smpirun", "-platform", "platform.xml", "-hostfile", "hosts", "-np", str(ranks),
               "--cfg=host/model:ptask_L07", "--log=root.thres:critical", "--log=smpi_replay.thres:info",
               "-replay", "traces.txt"]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - start
    found = re.findall(r"Simulation time ([0-9.e+-]+)", done.stdout + done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"smpirun failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, float(found[-1])


def run_joulesim(directory: Path, ranks: int) -> tuple[float, float]:
    import joulesim

    workload = directory / "workload.json"
    workload.write_text(json.dumps({"nb_res": ranks, "jobs": [{"id": 1, "subtime": 0, "res": ranks, "profile": "mpi"}],
                                    "profiles": {"mpi": {"type": "smpi", "trace": "traces.txt"}}}))
    start = time.perf_counter()
    result = joulesim.simulate(str(directory / "platform.xml"), str(workload), "fcfs")
    wall = time.perf_counter() - start
    return wall, float(result.jobs.iloc[0]["execution_time"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64, help="a square number")
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_smpi_") as name:
        directory = Path(name)
        (directory / "platform.xml").write_text(PLATFORM.format(last=args.ranks - 1))
        actions = write_traces(directory, args.ranks, args.iterations)
        print(f"{args.ranks} ranks, {args.iterations} iterations: {actions:,} actions")
        for _ in range(args.repeat):
            wall, simulated = run_joulesim(directory, args.ranks)
            line = f"  joulesim {wall:6.2f} s wall ({actions / wall:,.0f} actions/s), simulated {simulated:.6f} s"
            if shutil.which("smpirun"):
                s_wall, s_simulated = run_smpirun(directory, args.ranks)
                line += f" | smpirun {s_wall:6.2f} s wall, simulated {s_simulated:.6f} s"
            print(line, flush=True)


if __name__ == "__main__":
    main()
