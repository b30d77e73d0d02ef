"""What the command line loads before it has work to do (issue 45: `joulesim --help` under 0.3 s,
a 400-job run under 1 s whole).

Timing is left to the benchmarks; these tests count the work instead: the heavy modules that a
command imports. `joulesim --help` needs click only (numpy, numba's kernels and the simulator
cost 0.65 s of its 0.85 s before they were imported lazily); listing the deciders needs no torch
(2.2 s of its 3.4 s); a run of delay jobs needs no runner of parallel tasks, whose numba kernels
took 0.3 s of the default 400-job run's 1.0 s, nor numpy (15 MB of a 20,000-job run's 75 MB of
peak memory, imported by the energy meters and the network's link arrays), and a run in one
process no zmq.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "numba", "pandas", "simpy", "torch", "zmq", "joulesim.simulator.engine.simulation",
         "joulesim.decider_process")


def modules_loaded_by(*argv: str) -> list[str]:
    script = ("import atexit, sys\n"
              f"atexit.register(lambda: print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
              "from joulesim.cli.main import main\n"
              f"sys.argv = ['joulesim', *{list(argv)!r}]\n"
              "main()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    line = next(line for line in done.stdout.splitlines() if line.startswith("LOADED"))
    return eval(line[len("LOADED "):])  # noqa: S307 (our own print of a list of names)


def test_help_loads_none_of_the_simulator():
    assert modules_loaded_by("--help") == []
    assert modules_loaded_by("run", "--help") == []


def test_listing_the_deciders_loads_no_torch():
    assert "torch" not in modules_loaded_by("decide", "--list")


def test_a_run_of_delay_jobs_loads_no_kernel_of_parallel_tasks(tmp_path):
    # cluster32 has links: the runner used to be made (numba's kernels loaded) before any job.
    loaded = modules_loaded_by("run", "--in-process", "--no-progress", "-e", str(tmp_path / "out"))
    assert "numba" not in loaded and "joulesim.simulator.engine.simulation" in loaded
    assert "numpy" not in loaded
    assert "zmq" not in loaded  # (in-process: no socket, 10-20 ms of libzmq's import spared)
    assert "joulesim.decider_process" not in loaded  # (no process to start: its subprocess, tempfile spared)


def test_a_run_in_two_processes_loads_zmq(tmp_path):
    # (the check above can fail: zmq is there when a socket is made)
    loaded = modules_loaded_by("run", "--no-progress", "-w", "tiny", "-e", str(tmp_path / "out"))
    assert "zmq" in loaded and "joulesim.decider_process" in loaded


def test_a_run_with_energy_loads_numpy(tmp_path):
    # (the check above can fail: numpy is there when a model needs it)
    assert "numpy" in modules_loaded_by("run", "--in-process", "--no-progress", "-p", "homogeneous240", "-E",
                                        "-e", str(tmp_path / "out"))


def test_a_run_compiles_the_validators_of_the_message_types_it_meets_only(tmp_path):
    # (each of the 20 took about 2 ms to compile, all at import before)
    script = ("import atexit, sys\n"
              "from joulesim.protocol import validation as v\n"
              "assert not v._DECISION_VALIDATORS._compiled and not v._EVENT_VALIDATORS._compiled\n"
              "atexit.register(lambda: print('COMPILED', sorted(v._DECISION_VALIDATORS._compiled), "
              "sorted(v._EVENT_VALIDATORS._compiled)))\n"
              "from joulesim.cli.main import main\n"
              f"sys.argv = ['joulesim', 'run', '--in-process', '-q', '-w', 'tiny', '-e', {str(tmp_path / 'out')!r}]\n"
              "main()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    line = next(line for line in done.stdout.splitlines() if line.startswith("COMPILED"))
    # (in one process the simulator checks the decider's replies, its own messages need no check,
    # and the plain EXECUTE_JOBs of `easy` are checked without their schema)
    assert line == "COMPILED [] []", line


def test_simulate_loads_pandas_when_an_output_is_first_read():
    script = ("import sys, joulesim\n"
              "result = joulesim.simulate('small4', 'tiny', 'easy')\n"
              "print('AFTER_RUN', 'pandas' in sys.modules, 'numpy' in sys.modules)\n"
              "result.jobs\n"
              "print('AFTER_JOBS', 'pandas' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "AFTER_RUN False False" in done.stdout and "AFTER_JOBS True" in done.stdout, done.stdout + done.stderr
