"""Run one fuzzing case against `joulesim decide`: a session whose second message is mutated.

A case is fully determined by its seed. Shared by tests/test_fuzz_end_to_end.py and
benchmarks/fuzz_hostile_inputs.py.
"""

from __future__ import annotations

import random
import subprocess
import sys

import orjson
import zmq
from hostile_mutations import ALWAYS_INVALID, SIMULATOR_MUTATIONS
from reply_fuzzer import ACCEPTED_INVALID, CLEAN_ERROR, HANG, NOT_APPLIED, SUCCESS, TRACEBACK, CaseResult

_BEGINS = {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
    "nb_resources": 4, "nb_compute_resources": 4, "nb_storage_resources": 0, "allow_compute_sharing": False,
    "allow_storage_sharing": True, "config": {
        "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379, "redis-prefix": "default",
        "profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
        "dynamic-jobs-acknowledged": False, "profile-reuse-enabled": False, "sched-config": "",
        "forward-unknown-events": False},
    "compute_resources": [{"id": i, "name": f"h{i}", "state": "idle", "properties": {}, "zone_properties": {}}
                          for i in range(4)],
    "storage_resources": [], "workloads": {"w0": "w.json"}, "profiles": {"w0": {}}}}]}


def _submitted(job: int, res: int) -> dict:
    return {"timestamp": 1.0, "type": "JOB_SUBMITTED", "data": {"job_id": f"w0!{job}", "job": {
        "id": f"w0!{job}", "subtime": 1.0, "res": res, "walltime": 50.0, "profile": "p"}}}


def run_decider_case(seed: int, directory: str, decider: str = "easy", bound_s: float = 20.0) -> CaseResult:
    rng = random.Random(seed)
    name = rng.choice(sorted(SIMULATOR_MUTATIONS))
    label, operator = SIMULATOR_MUTATIONS[name]
    result = CaseResult(seed, -1, name, label, "")  # outcome set below
    second = {"now": 1.0, "events": [_submitted(1, rng.randint(1, 4)), _submitted(2, rng.randint(1, 4))]}
    mutated = operator(second, rng)
    if mutated is None:
        result.outcome = NOT_APPLIED
        return result
    result.mutated = mutated[:300]
    endpoint = f"ipc://{directory}/dec{seed}.sock"
    process = subprocess.Popen([sys.executable, "-m", "joulesim.cli.main", "decide", decider, "-s", endpoint,
                                "--timeout", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    socket = zmq.Context.instance().socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(endpoint)
    try:
        socket.send(orjson.dumps(_BEGINS))
        if not socket.poll(int(bound_s * 1000)):  # a valid first message: it must be answered
            _ended(result, process, bound_s, "without answering SIMULATION_BEGINS")
            result.outcome, result.detail = TRACEBACK, "the decider refused a valid SIMULATION_BEGINS: " + result.detail
            return result
        socket.recv()
        socket.send(mutated)
        if _answered(socket, process, 10.0):
            socket.recv()  # the decider answered the mutated message
            result.outcome = ACCEPTED_INVALID if label == ALWAYS_INVALID else SUCCESS
            socket.send(orjson.dumps({"now": 1e6, "events": [{"timestamp": 1e6, "type": "SIMULATION_ENDS",
                                                               "data": {}}]}))
            socket.poll(10_000)
        return _ended(result, process, bound_s, "")
    finally:
        socket.close(linger=0)
        if process.poll() is None:
            process.kill()
            process.communicate()


def _answered(socket: zmq.Socket, process: subprocess.Popen, seconds: float) -> bool:
    """Whether a reply comes within `seconds`; gives up at once when the decider exits."""
    for _ in range(int(seconds * 20)):
        if socket.poll(50):
            return True
        if process.poll() is not None:
            return bool(socket.poll(0))
    return False


def _ended(result: CaseResult, process: subprocess.Popen, bound_s: float, why: str) -> CaseResult:
    """Classify by how the decider process ended (within `bound_s`, else a hang)."""
    try:
        _, err = process.communicate(timeout=bound_s)
    except subprocess.TimeoutExpired:
        if result.outcome in (SUCCESS, ACCEPTED_INVALID):
            return result  # it answered; it may still wait for more
        result.outcome, result.detail = HANG, f"joulesim decide still running after {bound_s:g} s {why}"
        return result
    if "Traceback" in err:
        result.outcome, result.detail = TRACEBACK, err[-1500:]
    elif result.outcome in (SUCCESS, ACCEPTED_INVALID):
        pass
    elif process.returncode != 0 and "joulesim: error:" in err:
        result.outcome, result.detail = CLEAN_ERROR, err[:300]
    else:
        result.outcome, result.detail = TRACEBACK, f"exit {process.returncode} without a joulesim error: {err[-800:]}"
    return result
