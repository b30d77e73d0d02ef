"""Run one fuzzing case: a real simulation whose decider has one reply mutated.

Shared by tests/test_fuzz_end_to_end.py (a few hundred cases in CI) and
benchmarks/fuzz_hostile_inputs.py (thousands). A case is fully determined by its seed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from typing import Any

import orjson
from hostile_mutations import ALWAYS_INVALID, REPLY_MUTATIONS, RunState

from joulesim.deciders import load_decider
from joulesim.protocol.codec import encode
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.engine.simulation import Simulation
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.workload.workload_loader import load_workload

_TESTS = os.path.dirname(os.path.abspath(__file__))

# Outcomes of a case.
SUCCESS = "success"
CLEAN_ERROR = "clean error"
TRACEBACK = "traceback"
HANG = "hang"
ACCEPTED_INVALID = "accepted-invalid"
NOT_APPLIED = "not applied"  # the mutation found no reply it applies to
OUTCOMES = (CLEAN_ERROR, SUCCESS, NOT_APPLIED, TRACEBACK, HANG, ACCEPTED_INVALID)

_SMALL_JOBS = [{"id": i, "subtime": 5 * i, "res": 1 + i % 2, "walltime": 100, "profile": f"d{i % 3}"}
               for i in range(8)]
_SMALL_WORKLOAD = {"nb_res": 2, "jobs": _SMALL_JOBS,
                   "profiles": {f"d{k}": {"type": "delay", "delay": 10 + 7 * k} for k in range(3)}}

# (platform, workload, decider, options, energy, dynamic jobs)
SCENARIOS = [
    ("cluster32", "tiny", "easy", {}, False),
    ("small4", "tiny", "fcfs", {}, False),
    ("cluster32", "tiny", "conservative", {}, False),
    ("energy2", "small", "easy", {"t_idle": "0"}, True),
    ("energy2", "small", "easy", {}, True),
]


@dataclass
class CaseResult:
    seed: int
    scenario: int
    operator: str
    label: str
    outcome: str
    detail: str = ""
    mutated: bytes = b""


class MutatingTransport:
    """A transport that hands messages to a decider object and mutates one of its replies."""

    endpoint = "fuzzing"

    def __init__(self, decider: Any, operator, state: RunState, rng: random.Random, target_call: int):
        self.decider, self.operator, self.state, self.rng = decider, operator, state, rng
        self.target_call = target_call
        self.calls = 0
        self.mutated: bytes | None = None

    def exchange(self, payload: bytes) -> bytes:
        message = orjson.loads(payload)
        self.state.observe(message)
        reply = self.decider.handle(message)
        self.calls += 1
        ends = any(e["type"] == "SIMULATION_ENDS" for e in message["events"])
        if self.mutated is None and self.calls >= self.target_call and not ends:
            out = self.operator(reply, self.state, self.rng)
            if out is not None:
                self.mutated = out
                return out
        return encode(reply)

    def close(self) -> None:
        pass


def _workload_path(name: str, directory: str) -> str:
    if name != "small":
        return name
    path = os.path.join(directory, "small.json")
    if not os.path.exists(path):
        with open(path, "w") as handle:
            json.dump(_SMALL_WORKLOAD, handle)
    return path


@dataclass
class PreparedCase:
    result: CaseResult
    platform: str
    workload: str  # name or path
    energy: bool
    transport: MutatingTransport


def prepare_case(seed: int, directory: str, only_operator: str | None = None) -> PreparedCase:
    """Everything a seeded case needs: its scenario, its operator and the mutating transport."""
    rng = random.Random(seed)
    scenario = rng.randrange(len(SCENARIOS))
    platform_name, workload_name, decider_name, options, energy = SCENARIOS[scenario]
    operator_name = only_operator or rng.choice(sorted(REPLY_MUTATIONS))
    label, operator = REPLY_MUTATIONS[operator_name]
    workload_path = _workload_path(workload_name, directory)
    platform = load_platform(platform_name)
    workload = load_workload(workload_path, "w0")
    state = RunState(nb_hosts=platform.nb_compute, energy=energy, future_jobs={job.id for job in workload.jobs})
    transport = MutatingTransport(load_decider(decider_name, options), operator, state, rng,
                                  target_call=rng.randint(1, 6))
    return PreparedCase(CaseResult(seed, scenario, operator_name, label, SUCCESS), platform_name, workload_path,
                        energy, transport)


def run_reply_case(seed: int, directory: str | None = None, only_operator: str | None = None) -> CaseResult:
    """Simulate one seeded case in this process and classify how it ended."""
    own_directory = directory is None
    directory = directory or tempfile.mkdtemp(prefix="fuzz-")
    try:
        case = prepare_case(seed, directory, only_operator)
        result, transport = case.result, case.transport
        config = SimulationConfig(platform=load_platform(case.platform), workloads=[load_workload(case.workload, "w0")],
                                  energy=case.energy, export_prefix=os.path.join(directory, f"case{seed}"))
        try:
            Simulation(config, DeciderLink(transport)).run()
        except JoulesimError as exc:
            result.outcome, result.detail = CLEAN_ERROR, str(exc)[:300]
        except Exception:  # noqa: BLE001 - what the fuzzer looks for
            result.outcome, result.detail = TRACEBACK, traceback.format_exc()[-1500:]
        else:
            result.outcome = classify_normal_end(result.label, transport.mutated is not None)
        result.mutated = (transport.mutated or b"")[:300]
    finally:
        if own_directory:
            shutil.rmtree(directory, ignore_errors=True)
    return result


def classify_normal_end(label: str, mutated: bool) -> str:
    if not mutated:
        return NOT_APPLIED
    return ACCEPTED_INVALID if label == ALWAYS_INVALID else SUCCESS


def run_process_case(seed: int, directory: str, timeout_s: float = 60.0) -> CaseResult:
    """The same case with `joulesim simulate` and the mutating decider in two processes."""
    case = prepare_case(seed, directory)
    result = case.result
    endpoint = f"ipc://{directory}/case{seed}.sock"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([_TESTS, os.environ.get("PYTHONPATH", "")])}
    decider = subprocess.Popen([sys.executable, os.path.join(_TESTS, "fuzzing_decider.py"), endpoint, str(seed),
                                directory], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    command = [sys.executable, "-m", "joulesim.cli.main", "simulate", "-p", case.platform, "-w", case.workload,
               "-s", endpoint, "--timeout", "10", "-e", os.path.join(directory, f"proc{seed}")]
    if case.energy:
        command.append("-E")
    try:
        sim = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=directory)
    except subprocess.TimeoutExpired:
        result.outcome, result.detail = HANG, "joulesim simulate did not end within the outer bound"
        decider.kill()
        decider.communicate()
        return result
    try:  # after SIMULATION_ENDS it exits by itself; after a refused reply it waits for nothing
        out, err = decider.communicate(timeout=0 if sim.returncode else timeout_s)
    except subprocess.TimeoutExpired:
        decider.kill()
        out, err = decider.communicate()
    mutated = "MUTATED" in out
    if "Traceback" in sim.stderr or "Traceback" in err:
        result.outcome, result.detail = TRACEBACK, (sim.stderr + err)[-1500:]
    elif sim.returncode == 0:
        result.outcome = classify_normal_end(result.label, mutated)
    elif sim.stderr.startswith("joulesim: error:") or "joulesim: error:" in sim.stderr:
        result.outcome, result.detail = CLEAN_ERROR, sim.stderr[:300]
    else:
        result.outcome, result.detail = TRACEBACK, f"exit {sim.returncode} without a joulesim error: {sim.stderr[-800:]}"
    return result
