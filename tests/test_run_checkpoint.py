"""Checkpoints and resumed runs (`joulesim run --checkpoint-at`, `joulesim resume`, issue 50).

A run is killed with SIGKILL by its own decider (the `Killer` below, written into the test's
folder: in the simulator's process, or in its own process killing its parent) at a chosen
simulated time after a checkpoint; `joulesim resume` must then end with the uninterrupted run's
outputs, byte for byte (the schedule's two wall-clock columns aside).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from joulesim.simulator.checkpoint.checkpoint_file import MAGIC, read_checkpoint

JOULESIM = [sys.executable, "-m", "joulesim.cli.main"]
WALL_CLOCK = ("scheduling_time", "simulation_time")

KILLER = '''
import os, signal
from joulesim.deciders import load_decider
from joulesim.protocol.decider import Decider


class Killer(Decider):
    """`inner` (default easy, with the other options), killing the simulator with SIGKILL when
    first called at or after kill_at, unless `marker` exists (it makes it first: a resumed run
    goes on). where=self: the decider is in the simulator's process; parent: in its own."""

    def __init__(self, options=None):
        options = dict(options or {})
        self.kill_at = float(options.pop("kill_at"))
        self.marker = options.pop("marker")
        self.where = options.pop("where", "self")
        self.inner = load_decider(options.pop("inner", "easy"), options)
        super().__init__({})

    def handle(self, message):
        if message["now"] >= self.kill_at and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid() if self.where == "self" else os.getppid(), signal.SIGKILL)
        return self.inner.handle(message)
'''


def joulesim(folder: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([*JOULESIM, *arguments], cwd=folder, capture_output=True, text=True, timeout=300)


def outputs(prefix: Path) -> dict[str, object]:
    """The run's output files' content, the schedule's without its wall-clock columns."""
    found: dict[str, object] = {}
    for path in sorted(prefix.parent.glob(prefix.name + "_*")):
        if path.name.endswith("checkpoint.jsck"):
            continue
        if path.name.endswith("schedule.csv"):
            with open(path, newline="") as handle:
                found[path.name] = [{k: v for k, v in row.items() if k not in WALL_CLOCK} for row in csv.DictReader(handle)]
        else:
            found[path.name] = path.read_bytes()
    return found


BASE = ["--no-progress", "-q"]
#: The two event groupings: Batsim's (the default: its actors are written down and made again)
#: and per-time.
GROUPINGS = {"batsim": [], "per-time": ["--event-grouping", "per-time"]}
ENERGY = ["-p", "energy2", "-E", "-o", "t_idle=600"]  # machines switched off and on (shutdown after 600 s idle)
_REPOSITORY = Path(__file__).resolve().parent.parent
_LINKS = _REPOSITORY / "tests" / "data" / "batsim_measured" / "links32_ptasks"
_NODES = _REPOSITORY / "experiments" / "irmasim_grid" / "exp2"
#: Scenario -> (its options, checkpoint time, kill time): parallel tasks on a network's links with
#: energy and shutdown; IRMaSim's node model (its cores' tasks running at the checkpoint).
SCENARIOS = {
    "network": (["-p", str(_LINKS / "energy_links32.xml"), "-w", str(_LINKS / "links32_ptasks.json"), "-E",
                 "-o", "t_idle=300"], 3_000.0, 6_000.0),
    "nodes": (["-p", str(_NODES / "platform.json"), "-w", str(_NODES / "workload.json"), "-E", "-o", "inner=heuristic"],
              0.05, 2.0),
}


def killed_then_resumed(folder: Path, run_options: list[str], checkpoints: list[float], kill_at: float,
                        where: str) -> Path:
    """Run with checkpoints, killed at kill_at by its decider, then resumed; returns the prefix."""
    (folder / "killer.py").write_text(KILLER)
    prefix = folder / "run" / "out"
    marker = folder / "killed"
    arguments = [*BASE, *run_options, "-d", "killer:Killer", "-o", f"kill_at={kill_at}", "-o", f"marker={marker}",
                 "-o", f"where={where}", "-e", "run/out"]
    arguments += [item for t in checkpoints for item in ("--checkpoint-at", str(t))]
    if where == "self":
        arguments.append("--in-process")
    done = joulesim(folder, "run", *arguments)
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr)
    assert marker.exists()
    resumed = joulesim(folder, "resume", "run/out_checkpoint.jsck")
    assert resumed.returncode == 0, resumed.stderr
    return prefix


def uninterrupted(folder: Path, run_options: list[str]) -> Path:
    (folder / "killer.py").write_text(KILLER)
    # (the Killer that never kills: the same decider, the same options)
    marker = folder / "never"
    marker.touch()
    done = joulesim(folder, "run", *BASE, *run_options, "--in-process", "-d", "killer:Killer", "-o", "kill_at=0",
                    "-o", f"marker={marker}", "-e", "reference/out")
    assert done.returncode == 0, done.stderr
    return folder / "reference" / "out"


@pytest.mark.parametrize("grouping", sorted(GROUPINGS))
@pytest.mark.parametrize("where", ["self", "parent"])
def test_a_run_killed_after_its_checkpoint_resumes_to_the_uninterrupted_outputs(tmp_path, where, grouping):
    """With energy and machines switched off and on; the decider in the simulator's process, or
    in its own process (killing the simulator, its parent); in both event groupings."""
    options = [*GROUPINGS[grouping], *ENERGY]
    reference = uninterrupted(tmp_path, options)
    prefix = killed_then_resumed(tmp_path, options, [40_000.0], 90_000.0, where)
    assert outputs(prefix) == outputs(reference)
    assert (tmp_path / "run" / "out_checkpoint.jsck").read_bytes().startswith(MAGIC)


@pytest.mark.parametrize("grouping", sorted(GROUPINGS))
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_runs_with_network_jobs_or_node_models_resume_to_the_uninterrupted_outputs(tmp_path, scenario, grouping):
    """(IRMaSim's node platforms run per-time whatever the grouping asked.)"""
    options, checkpoint, kill = SCENARIOS[scenario]
    options = [*GROUPINGS[grouping], *options]
    reference = uninterrupted(tmp_path, options)
    prefix = killed_then_resumed(tmp_path, options, [checkpoint], kill, "self")
    assert outputs(prefix) == outputs(reference)


def test_a_run_whose_sleeps_sit_in_the_kernels_array_resumes_to_the_uninterrupted_outputs(tmp_path):
    """More than 64 jobs asleep at the checkpoint: the kernel keeps their sleeps in its array
    (sleep_array.py, compiled in a built install), which the checkpoint writes down and a resumed
    run makes again."""
    jobs = [{"id": i, "subtime": i, "res": 1, "walltime": 10_000, "profile": f"d{i % 7}"} for i in range(300)]
    profiles = {f"d{k}": {"type": "delay", "delay": 500 + 37 * k} for k in range(7)}
    (tmp_path / "wide.json").write_text(json.dumps({"nb_res": 240, "jobs": jobs, "profiles": profiles}))
    options = ["-p", "homogeneous240", "-w", "wide.json"]
    reference = uninterrupted(tmp_path, options)
    prefix = killed_then_resumed(tmp_path, options, [250.0], 900.0, "self")
    assert outputs(prefix) == outputs(reference)
    _, sections = read_checkpoint(str(tmp_path / "run" / "out_checkpoint.jsck"))
    assert b"SleepArray" in sections["state"]  # (the scenario does put the sleeps in the array)


#: Scenario -> (its options, its makespan in seconds) for the property test below, whose kills
#: fall before 95 % of it (its last decider calls come later: the run is killed).
SPANS = {"delays": ([], 181_237.0), "energy": (ENERGY, 185_180.08), "network": (SCENARIOS["network"][0], 15_391.52)}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(SPANS)), st.floats(0.0, 0.6), st.floats(0.01, 0.35), st.sampled_from(["self", "parent"]),
       st.sampled_from(sorted(GROUPINGS)))
def test_resumed_runs_end_as_uninterrupted_ones_whatever_the_checkpoint_and_kill_times(tmp_path_factory, scenario,
                                                                                       at, gap, where, grouping):
    """Delay jobs, energy with machines switched off and on, or parallel tasks on links; the
    checkpoint and the kill anywhere in the run; the decider in either process; either grouping."""
    folder = tmp_path_factory.mktemp("run")
    options, span = SPANS[scenario]
    options = [*GROUPINGS[grouping], *options]
    reference = uninterrupted(folder, options)
    prefix = killed_then_resumed(folder, options, [at * span], (at + gap) * span, where)
    assert outputs(prefix) == outputs(reference)


def test_a_resumed_run_writes_its_later_checkpoints_and_survives_a_second_kill(tmp_path):
    """Two checkpoints; killed after the first, resumed, killed again after the second (the
    resumed run wrote it), resumed again."""
    (tmp_path / "killer.py").write_text(KILLER)
    reference = uninterrupted(tmp_path, ENERGY)
    common = [*BASE, *ENERGY, "--in-process", "-e", "run/out", "--checkpoint-at", "30000", "--checkpoint-at", "80000",
              "-d", "killer:Killer", "-o", "kill_at=50000", "-o", f"marker={tmp_path / 'first'}"]
    assert joulesim(tmp_path, "run", *common).returncode == -signal.SIGKILL
    # (the resume's decider is the run's: it kills once, when its marker is missing)
    (tmp_path / "first").unlink()
    done = joulesim(tmp_path, "resume", "run/out_checkpoint.jsck")
    assert done.returncode == -signal.SIGKILL, done.stderr  # killed again at 50,000, after the first checkpoint only
    done = joulesim(tmp_path, "resume", "run/out_checkpoint.jsck")
    assert done.returncode == 0, done.stderr
    assert outputs(tmp_path / "run" / "out") == outputs(reference)


def test_a_decider_that_answers_otherwise_when_replayed_cannot_be_resumed(tmp_path):
    (tmp_path / "wallclock.py").write_text('''
import time
from joulesim.deciders import load_decider
from joulesim.protocol.decider import Decider


class WallClock(Decider):
    """EASY whose replies also carry a CALL_ME_LATER stamped from the wall clock."""

    def __init__(self, options=None):
        self.inner = load_decider("easy", {})
        super().__init__({})

    def handle(self, message):
        reply = self.inner.handle(message)
        if message["events"] and message["events"][0]["type"] == "SIMULATION_BEGINS":
            reply["events"].append({"timestamp": message["now"], "type": "CALL_ME_LATER",
                                    "data": {"timestamp": message["now"] + (time.time_ns() % 1000) / 1000 + 1}})
        return reply
''')
    done = joulesim(tmp_path, "run", *BASE, "--in-process", "-d", "wallclock:WallClock", "-e", "run/out",
                    "--checkpoint-at", "1000")
    assert done.returncode == 0, done.stderr
    done = joulesim(tmp_path, "resume", "run/out_checkpoint.jsck")
    assert done.returncode != 0
    assert "cannot be resumed" in done.stderr and "message 1 " in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture
def checkpointed(tmp_path):
    """A finished run with a checkpoint at t=20,000, in a folder of its own (a checkpoint names
    its run's folder: resume reads the inputs and continues the outputs there)."""
    (tmp_path / "w.json").write_text((Path(joulesim_package_folder()) / "workloads" / "default.json").read_text())
    done = joulesim(tmp_path, "run", *BASE, "--in-process", "-w", "w.json", "-e", "run/out", "--checkpoint-at", "20000")
    assert done.returncode == 0, done.stderr
    return tmp_path


def joulesim_package_folder() -> str:
    import joulesim.workloads

    return str(Path(joulesim.workloads.__file__).parent.parent)


def _resume_fails(folder: Path, checkpoint: str = "run/out_checkpoint.jsck") -> str:
    done = joulesim(folder, "resume", checkpoint)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_a_damaged_checkpoint_is_refused_with_one_line(checkpointed):
    folder = checkpointed
    path = folder / "run" / "out_checkpoint.jsck"
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    assert "damaged or cut short" in _resume_fails(folder)


def test_a_truncated_checkpoint_is_refused_with_one_line(checkpointed):
    folder = checkpointed
    path = folder / "run" / "out_checkpoint.jsck"
    path.write_bytes(path.read_bytes()[:-100])
    assert "damaged or cut short" in _resume_fails(folder)


def test_a_file_that_is_not_a_checkpoint_is_refused_with_one_line(checkpointed):
    folder = checkpointed
    assert "is not a joulesim checkpoint" in _resume_fails(folder, "run/out_jobs.csv")
    assert "no such file" in _resume_fails(folder, "run/nothing.jsck")
    assert "is a folder" in _resume_fails(folder, "run")


def test_a_checkpoint_of_a_newer_format_is_refused_with_one_line(checkpointed):
    folder = checkpointed
    path = folder / "run" / "out_checkpoint.jsck"
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"format":1', b'"format":2', 1))
    assert "newer joulesim" in _resume_fails(folder)


def test_a_checkpoint_whose_inputs_changed_is_refused_with_one_line(checkpointed):
    folder = checkpointed
    workload = folder / "w.json"
    workload.write_text(workload.read_text().replace('"jobs"', ' "jobs"', 1))
    line = _resume_fails(folder)
    assert "w.json changed since the checkpoint" in line


def test_a_checkpoint_whose_outputs_are_gone_is_refused_with_one_line(checkpointed):
    folder = checkpointed
    (folder / "run" / "out_jobs.csv").unlink()
    assert "out_jobs.csv is gone" in _resume_fails(folder)


def test_a_checkpoint_naming_other_files_as_its_outputs_is_refused_and_cuts_nothing(checkpointed):
    """Its SHA-256 made again (anybody can): the outputs it would cut back must be its run's."""
    import hashlib
    import json
    import zlib

    folder = checkpointed
    victim = folder / "precious.txt"
    victim.write_text("keep me\n")
    path = folder / "run" / "out_checkpoint.jsck"
    magic, header_line, body = _split(path.read_bytes())
    header = json.loads(header_line)
    header["outputs"][str(victim)] = 0
    path.write_bytes(magic + json.dumps(header).encode() + b"\n" + body)
    assert "not an output of its run" in _resume_fails(folder)
    assert victim.read_text() == "keep me\n"
    assert hashlib.sha256(body).hexdigest() == header["sha256"] and zlib  # (the checksum still holds)


def _split(data: bytes) -> tuple[bytes, bytes, bytes]:
    magic_end = len(MAGIC)
    header_end = data.index(b"\n", magic_end)
    return data[:magic_end], data[magic_end:header_end], data[header_end + 1:]


def test_runs_that_cannot_be_checkpointed_yet_are_refused_before_any_output(tmp_path):
    done = joulesim(tmp_path, "run", *BASE, "--in-process", "-e", "run/out", "--checkpoint-at", "10",
                    "--enable-dynamic-jobs")
    assert done.returncode == 2
    assert "dynamic jobs" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())
    done = joulesim(tmp_path, "run", *BASE, "--no-sched", "-e", "run/out", "--checkpoint-at", "10")
    assert done.returncode == 2 and "nothing to resume" not in done.stderr and "no decider to resume" in done.stderr
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())


def test_checkpoint_every_takes_durations_and_refuses_others(tmp_path):
    done = joulesim(tmp_path, "run", *BASE, "--in-process", "-e", "run/out", "--checkpoint-every", "0.000001s")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "out_checkpoint.jsck").exists()
    for wrong in ("soon", "0", "-5m", "1d"):
        done = joulesim(tmp_path, "run", *BASE, "--in-process", "-e", "other/out", "--checkpoint-every", wrong)
        assert done.returncode == 2 and "is not a duration" in done.stderr, (wrong, done.stderr)
