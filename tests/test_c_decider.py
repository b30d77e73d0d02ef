"""A decider in another language: examples/deciders/c (C, libzmq, jansson) drives
`joulesim simulate` over ZeroMQ and must give exactly the Python `easy`'s schedule."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import joulesim

SOURCE = Path(__file__).resolve().parents[1] / "examples" / "deciders" / "c"
COMPILER = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(COMPILER is None, reason="no C compiler (cc or gcc) on this machine: "
                                "the C decider example cannot be built")


@pytest.fixture(scope="module")
def c_decider(tmp_path_factory) -> Path:
    build = tmp_path_factory.mktemp("c_decider")
    result = subprocess.run(["make", "-C", str(SOURCE), f"BUILD={build}"], capture_output=True, text=True)
    assert result.returncode == 0, (
        "building examples/deciders/c failed; it needs make, pkg-config, libzmq, jansson and jsmn "
        "(Debian: apt-get install make pkg-config libzmq3-dev libjansson-dev libjsmn-dev):\n" + result.stdout + result.stderr)
    return build / "easy_decider"


def random_workload(seed: int, hosts: int, count: int) -> dict:
    rng = random.Random(seed)
    t, jobs, profiles = 0.0, [], {}
    for i in range(count):
        t += rng.expovariate(1 / 40)
        runtime = rng.choice([5, 30, 120, 600, 1800]) * rng.uniform(0.3, 1.0)
        jobs.append({"id": i, "subtime": round(t, 3), "res": rng.choice([1, 1, 2, 4, hosts // 2, hosts, hosts + 1]),
                     "walltime": round(runtime * rng.uniform(1, 3), 2), "profile": f"p{i}"})
        if rng.random() < 0.1:
            del jobs[-1]["walltime"]  # no walltime: only extra machines can take it
        profiles[f"p{i}"] = {"type": "delay", "delay": round(runtime, 3)}
    return {"nb_res": hosts, "jobs": jobs, "profiles": profiles}


@pytest.mark.parametrize("case", ["default", "seed1", "seed2", "seed3"])
def test_the_c_decider_gives_the_python_easy_schedule(c_decider, tmp_path, case):
    if case == "default":
        platform, workload = "cluster32", "default"  # the shipped 400-job workload
    else:
        platform = "cluster32"
        workload = tmp_path / "workload.json"
        workload.write_text(__import__("json").dumps(random_workload(int(case[-1]), 16, 300)))
    endpoint = f"ipc://{tmp_path}/c.sock"
    decider = subprocess.Popen([str(c_decider), endpoint], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        args = ["-p", platform, "-w", str(workload)] + (["--mmax", "16"] if case != "default" else [])
        result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "simulate", *args, "-s", endpoint,
                                 "-e", str(tmp_path / "c" / "out"), "--timeout", "60"],
                                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert result.returncode == 0, result.stderr
        assert decider.wait(30) == 0, decider.stderr.read()
    finally:
        decider.kill()
    python = joulesim.simulate(platform, str(workload), "easy", mmax=16 if case != "default" else 0,
                               export=tmp_path / "py" / "out")
    assert len(python.jobs) > 0
    assert (tmp_path / "c" / "out_jobs.csv").read_bytes() == (tmp_path / "py" / "out_jobs.csv").read_bytes()
