"""Energy runs with shutdown as Batsim runs them: per-machine switch actors, energy reads, joules.

With -E and Batsim's event grouping (the default), every switched machine has its actor and
its report, and each job start and end reads every machine's joules (issue 44). This measures
what that costs, from a small platform to Curie's size. Three inputs, `easy --option t_idle=300`
in-process, each run in a fresh child process that calls `joulesim.simulate` twice and times the
second call (imports excluded), best of --repeat:
  - h240: issue 44's reference case 3 (platforms/homogeneous240.xml --mmax 32,
    workloads/default.json: 400 delay jobs);
  - hosts4000: a Full zone of 4,000 Taurus hosts (homogeneous240's power states), 1,500
    delay jobs of 1-256 hosts (seed 1);
  - curie: experiments/energy_budget/platforms/curie_taurus.json (80,640 hosts), 300
    parallel_homogeneous jobs of 1-4,096 hosts (seed 2);
  - broker: one instance of experiments/grid_broker's campaign: table 2's ten clusters (1,393
    hosts), a day of the grid stream at 6,020 jobs/day (seed 0: 5,996 compute jobs), the
    `broker` decider, algorithm P, H_diff 5,400 s (it schedules with EASY and shutdown, t_idle
    = T_be, on each cluster; the `easy` options above do not apply to it).

    python benchmarks/bench_energy_shutdown.py [--repeat 1] [--only h240,hosts4000,curie,broker]

To compare two codes, run it with each one's interpreter (e.g. another checkout's venv).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAURUS = ('speed="1Gf, 1e-9Mf, 0.16393442622950818f, 0.006599788806758184f"><prop id="wattage_per_state" '
          'value="95.0:190.74, 9.75:9.75, 101.0:101.0, 125.17:125.17"/><prop id="wattage_off" value="9.75"/>'
          '<prop id="sleep_pstates" value="1:2:3"/></host>')


def hosts4000(folder: str) -> tuple[str, str, int]:
    hosts = "\n".join(f'    <host id="h{i}" {TAURUS}' for i in range(4000))
    platform = os.path.join(folder, "hosts4000.xml")
    with open(platform, "w") as out:
        out.write("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                  f'<platform version="4.1">\n  <zone id="AS0" routing="Full">\n{hosts}\n'
                  '    <host id="master_host" speed="1Gf"/>\n  </zone>\n</platform>\n')
    rng, jobs, profiles, t = random.Random(1), [], {}, 0
    for i in range(1500):
        t += rng.randint(0, 30)
        delay, size = rng.choice([60, 120, 600, 1800, 3600]), rng.choice([1, 2, 4, 16, 64, 256])
        jobs.append({"id": i, "subtime": t, "res": size, "walltime": 2 * delay, "profile": f"d{delay}"})
        profiles[f"d{delay}"] = {"type": "delay", "delay": delay}
    workload = os.path.join(folder, "hosts4000.json")
    with open(workload, "w") as out:
        json.dump({"nb_res": 4000, "jobs": jobs, "profiles": profiles}, out)
    return platform, workload, 0


def curie(folder: str) -> tuple[str, str, int]:
    rng, jobs, profiles, t = random.Random(2), [], {}, 0
    for i in range(300):
        t += rng.randint(0, 60)
        run, size = rng.choice([60, 120, 600, 1800, 3600]), rng.choice([1, 32, 256, 1024, 4096])
        jobs.append({"id": i, "subtime": t, "res": size, "walltime": 2 * run, "profile": f"c{run}"})
        profiles[f"c{run}"] = {"type": "parallel_homogeneous", "cpu": run * 1e9, "com": 0}
    workload = os.path.join(folder, "curie300.json")
    with open(workload, "w") as out:
        json.dump({"nb_res": 80640, "jobs": jobs, "profiles": profiles}, out)
    return os.path.join(ROOT, "experiments", "energy_budget", "platforms", "curie_taurus.json"), workload, 0


def h240(folder: str) -> tuple[str, str, int]:
    return os.path.join(ROOT, "platforms", "homogeneous240.xml"), os.path.join(ROOT, "workloads", "default.json"), 32


def broker(folder: str) -> tuple[str, str, int]:
    sys.path.insert(0, ROOT)  # (the experiment's platform and constants)
    from experiments.grid_broker import make_platform, run

    from joulesim.workload_tools.grid_stream import generate

    platform = os.path.join(folder, "table2.json")
    with open(platform, "w") as out:
        json.dump(make_platform.platform(), out)
    doc = make_platform.platform()
    nb_hosts = sum(cluster["count"] for cluster in doc["clusters"])
    workload = os.path.join(folder, "broker6020.json")
    with open(workload, "w") as out:
        json.dump(generate(seed=run.SEED, jobs_per_day=6020, days=1.0, nb_res=nb_hosts, night_weight=1.0,
                           compute_speed=run.HOST_SPEED), out)
    return platform, workload, 0


INPUTS = {"h240": h240, "hosts4000": hosts4000, "curie": curie, "broker": broker}


def decider_of(name: str) -> tuple[str, dict[str, str]]:
    """The decider of an input and its options: EASY with shutdown after 300 s idle, but the
    broker's instance as its campaign runs it (t_idle = T_be, rounded as there)."""
    if name != "broker":
        return "easy", {"t_idle": "300"}
    sys.path.insert(0, ROOT)
    from experiments.grid_broker import run
    return "broker", {"algorithm": "P", "h_diff": "5400", "t_idle": repr(round(run.grid_energy.T_BE, 1))}


def child(name: str, platform: str, workload: str, mmax: int, prefix: str) -> None:
    """Two calls: the second is timed (the first pays the imports of the run's modules)."""
    import joulesim
    decider, options = decider_of(name)
    for _ in range(2):
        started = time.perf_counter()
        result = joulesim.simulate(platform, workload, decider, options=options, energy=True, mmax=mmax,
                                   in_process=True, export=prefix)
    print(json.dumps({"seconds": time.perf_counter() - started,
                      "switches": int(result.schedule["nb_machine_switches"]),
                      "joules": result.schedule["consumed_joules"]}))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default=",".join(INPUTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for name in args.only.split(","):
            platform, workload, mmax = INPUTS[name](folder)
            runs = []
            for _ in range(args.repeat):
                out = subprocess.run([sys.executable, __file__, "--child", name, platform, workload, str(mmax),
                                      os.path.join(folder, "out")], capture_output=True, text=True, check=True)
                runs.append(json.loads(out.stdout.splitlines()[-1]))
            best = min(r["seconds"] for r in runs)
            each = ", ".join("%.2f" % r["seconds"] for r in runs)
            print(f"{name}: best {best:.2f} s of {each}; "
                  f"{runs[0]['switches']:,} machine switches, consumed_joules {runs[0]['joules']}")


if __name__ == "__main__":
    main()
