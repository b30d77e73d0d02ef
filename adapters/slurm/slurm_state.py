"""A live Slurm's state, read for a forecast: its nodes, running jobs and pending jobs.

Read with `sinfo -N` (the node order, the adapter's: decider resource i is node i), `sinfo
--json` (node states) and `squeue --json` (jobs), as Slurm 22.05 writes them (openapi
v0.0.38); the newer shapes of the same fields (numbers as {"set", "infinite", "number"},
states as lists of flags) are read too. Anything else, a field missing or of another type, an
unknown job or node state, is one SlurmError naming the command: a forecast from a state read
wrong would mislead without a word.

Times are Slurm's, epoch seconds; `now` is this machine's clock when squeue answered.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Callable

from joulesim.adapters.slurm.slurm_commands import SlurmCommands, SlurmError

__all__ = ["ClusterState", "PendingJob", "RunningJob", "parse_node_states", "parse_jobs", "read_state"]

SQUEUE = "squeue --json"
SINFO = "sinfo --json"

#: Job states of jobs that hold their nodes: they are pinned where they run.
HOLDING_STATES = frozenset({"RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "STAGE_OUT", "SIGNALING",
                            "RESIZING"})
#: Job states of jobs over (squeue lists them for MinJobAge seconds): left out.
OVER_STATES = frozenset({"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                         "DEADLINE", "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT"})
#: A pending job held by a user or an administrator never starts on its own: not forecast.
HELD_REASONS = frozenset({"JobHeldUser", "JobHeldAdmin"})
#: Node base states whose nodes take jobs (or will once their jobs end).
USABLE_NODE_STATES = frozenset({"idle", "allocated", "mixed", "completing", "planned", "reserved"})
#: Node base states, and flags, that take a node out of the pool (its running jobs still end).
UNUSABLE_NODE_STATES = frozenset({"down", "drained", "draining", "drain", "fail", "failing", "future", "unknown",
                                  "error", "power_down", "powered_down", "powering_down", "inval"})
UNUSABLE_NODE_FLAGS = frozenset({"DRAIN", "DRAINED", "DRAINING", "FAIL", "NOT_RESPONDING", "MAINTENANCE",
                                 "POWERED_DOWN", "POWER_DOWN", "POWERING_DOWN", "REBOOT_REQUESTED"})


@dataclass(frozen=True)
class RunningJob:
    slurm_id: str
    nodes: list[str]
    start: float  # epoch seconds
    limit_s: float  # its time limit, seconds


@dataclass(frozen=True)
class PendingJob:
    slurm_id: str
    nodes: int  # nodes requested
    limit_s: float
    submit: float  # epoch seconds
    priority: int


@dataclass
class ClusterState:
    now: float  # epoch seconds, when squeue answered
    nodes: list[str]  # in `sinfo -N` order: resource i is node i, as in the adapter
    unavailable: list[str]  # down, drained, draining...: no new job goes there
    running: list[RunningJob]
    pending: list[PendingJob]  # Slurm's priority order, then submission time, then id
    held: list[str]  # pending jobs held (never start on their own): not forecast


class _Malformed(Exception):
    pass


def _number(value: Any, what: str, allow_none: bool = False) -> float | None:
    """A number as 22.05 writes it, or as newer Slurm does ({"set", "infinite", "number"}); None
    for 'no value' (unset or infinite) when `allow_none`."""
    if isinstance(value, dict) and "number" in value:
        if value.get("infinite") or value.get("set") is False:
            value = None
        else:
            value = value["number"]
    if value is None and allow_none:
        return None
    if type(value) not in (int, float):
        raise _Malformed(f"{what} is {json.dumps(value)[:60]}, not a number")
    return value


def _text(value: Any, what: str) -> str:
    if isinstance(value, list):  # newer Slurm: a list of flags, the base state first
        value = value[0] if value and isinstance(value[0], str) else None
    if not isinstance(value, str):
        raise _Malformed(f"{what} is {json.dumps(value)[:60]}, not a string")
    return value


def _records(text: str, key: str) -> list[dict]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _Malformed(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get(key), list) \
            or not all(isinstance(r, dict) for r in data[key]):
        raise _Malformed(f"no list of objects under {key!r} (is it Slurm 22.05 or newer?)")
    return data[key]


def parse_node_states(text: str) -> dict[str, bool]:
    """Node name -> usable (takes new jobs), from `sinfo --json`."""
    try:
        usable = {}
        for node in _records(text, "nodes"):
            name = _text(node.get("name"), "a node's name")
            state = _text(node.get("state"), f"node {name}: state").lower()
            flags = node.get("state_flags", [])
            if isinstance(node.get("state"), list):  # newer Slurm: flags follow the base state
                flags = node["state"][1:]
            if not isinstance(flags, list):
                raise _Malformed(f"node {name}: state_flags is not a list")
            if state not in USABLE_NODE_STATES | UNUSABLE_NODE_STATES:
                raise _Malformed(f"node {name}: unknown state {state!r}")
            usable[name] = state in USABLE_NODE_STATES and not (set(map(str, flags)) & UNUSABLE_NODE_FLAGS)
        return usable
    except _Malformed as exc:
        raise SlurmError(f"{SINFO}: {exc}") from None


def _allocated_nodes(job: dict, job_id: str, expand: Callable[[str], list[str]]) -> list[str]:
    """A running job's nodes, one name each: 22.05 lists them under job_resources.allocated_nodes,
    newer Slurm under job_resources.nodes.allocation; else Slurm's compressed list, expanded."""
    resources = job.get("job_resources")
    if isinstance(resources, dict):
        listed = resources.get("allocated_nodes")
        key = "nodename"
        if isinstance(resources.get("nodes"), dict):
            listed, key = resources["nodes"].get("allocation"), "name"
        if isinstance(listed, list) and listed:
            return [_text(entry.get(key) if isinstance(entry, dict) else None, f"job {job_id}: an allocated node")
                    for entry in listed]
    nodes = _text(job.get("nodes"), f"job {job_id}: nodes")
    if not nodes:
        raise _Malformed(f"job {job_id} holds nodes (state {_text(job.get('job_state'), 'state')}) but none are named")
    return expand(nodes)


def parse_jobs(text: str, expand: Callable[[str], list[str]]
               ) -> tuple[list[RunningJob], list[PendingJob], list[str]]:
    """Running jobs, pending jobs in Slurm's priority order (then submission time, then id) and
    held job ids, from `squeue --json`. `expand` turns a compressed node list into names."""
    running, pending, held = [], [], []
    try:
        for job in _records(text, "jobs"):
            job_id = str(int(_number(job.get("job_id"), "a job's job_id")))
            state = _text(job.get("job_state"), f"job {job_id}: job_state")
            if state in OVER_STATES:
                continue
            if state not in HOLDING_STATES and state != "PENDING":
                raise _Malformed(f"job {job_id}: unknown job_state {state!r}")
            minutes = _number(job.get("time_limit"), f"job {job_id}: time_limit", allow_none=True)
            if state == "PENDING" and job.get("state_reason") in HELD_REASONS:
                held.append(job_id)
                continue
            if minutes is None:
                raise SlurmError(f"{SQUEUE}: job {job_id} has no time limit: a forecast needs every job's limit "
                                 f"(scontrol update jobid={job_id} timelimit=MINUTES, or a DefaultTime on its "
                                 "partition)")
            limit_s = 60.0 * minutes  # Slurm's time limits are whole minutes
            if state == "PENDING":
                pending.append(PendingJob(job_id, int(_number(job.get("node_count"), f"job {job_id}: node_count")),
                                          limit_s, _number(job.get("submit_time"), f"job {job_id}: submit_time"),
                                          int(_number(job.get("priority"), f"job {job_id}: priority"))))
            else:
                running.append(RunningJob(job_id, _allocated_nodes(job, job_id, expand),
                                          _number(job.get("start_time"), f"job {job_id}: start_time"), limit_s))
    except _Malformed as exc:
        raise SlurmError(f"{SQUEUE}: {exc}") from None
    # Slurm starts pending jobs by priority, highest first; ties by submission, then by id.
    pending.sort(key=lambda j: (-j.priority, j.submit, int(j.slurm_id)))
    return running, pending, held


def read_state(commands: SlurmCommands) -> ClusterState:
    """The cluster's state now: three Slurm commands, about 0.1 s on a small cluster."""
    nodes = commands.node_names()
    usable = parse_node_states(commands.output("sinfo", "--json"))
    missing = [n for n in nodes if n not in usable]
    if missing:
        raise SlurmError(f"{SINFO}: node {missing[0]} of `sinfo -N` is not listed")
    before = time.time()
    text = commands.output("squeue", "--json")
    now = (before + time.time()) / 2  # (squeue answers within ~0.05 s: the middle is its instant)
    running, pending, held = parse_jobs(text, commands.expand)
    known = set(nodes)
    for job in running:
        strange = [n for n in job.nodes if n not in known]
        if strange:
            raise SlurmError(f"{SQUEUE}: job {job.slurm_id} runs on node {strange[0]}, which `sinfo -N` does not list")
    return ClusterState(now, nodes, [n for n in nodes if not usable[n]], running, pending, held)
