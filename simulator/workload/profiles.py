"""Validation of Batsim 4 job profiles (workload files and REGISTER_PROFILE).

A profile is kept as the JSON object it was given (extra keys included); these functions only
check it. `validate_profile` looks at one profile on its own, so the simulator can reuse it when a
decider registers a profile; `check_profile_references` checks what needs the whole set
(composed profiles naming existing profiles, no cycles, bounded unrolled size, one executor count).
"""

import math
from dataclasses import dataclass
from typing import Any, Iterator

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import (
    MAX_EXTRA_FIELD_DEPTH,
    MAX_INT32,
    clip,
    is_int,
    is_number,
    is_time,
    nests_deeper,
    shown,
    time_error,
)
from joulesim.protocol.batprotocol.profile_forms import MAX_COM_VALUES
from joulesim.protocol.time_range import check_time

SUPPORTED_TYPES = (
    "delay",
    "parallel",
    "parallel_homogeneous",
    "parallel_homogeneous_total",
    "composed",
    "parallel_homogeneous_pfs",  # I/O to a storage host (platforms with a network)
    "data_staging",  # bytes between two storage hosts (platforms with a network)
    "usage_trace",  # per-rank (usage, flops) traces (usage_traces.py)
    "smpi",  # SimGrid time-independent MPI traces (smpi_traces.py)
    "cpu_ops",  # IRMaSim's node model (platforms with a node hierarchy only)
)
# Profile types Batsim 4 knows that joulesim does not simulate (yet).
UNSUPPORTED_BATSIM_TYPES = (
    "send",
    "recv",
)

# A job runs its composed profile unrolled (seq x repeat, nested), one task after another: the
# runners walk, and the network runner lists, every task. These bounds keep one job's tasks
# (memory and steps) and the engine's recursion over nested profiles small, whatever the file says.
MAX_TASKS_PER_JOB = 100_000
MAX_COMPOSED_DEPTH = 100
# A cpu_ops task runs ceil(req_ops / ipc) operations and asks mem_vol / (ops / core speed) of
# memory bandwidth. 2^33 s (the simulated time range) at 1e15 operations/s, a core a hundred
# thousand times today's, is 8.6e24 operations: more could never end. Bounding the operations
# and mem_vol at 1e24 keeps every count, run time and bandwidth finite (ipc 1e-300 made
# req_ops / ipc infinite, an OverflowError mid-run).
MAX_CPU_OPS = 1e24

_SUPPORTED_TEXT = ", ".join(SUPPORTED_TYPES)
_PROFILE_FIELDS = frozenset({"type", "delay", "cpu", "com", "seq", "repeat", "ret", "req_ops", "ipc", "mem_vol",
                             "bytes_to_read", "bytes_to_write", "storage", "host", "nb_bytes", "from", "to", "trace"})
# Profile types whose `trace` field names files read with the workload (trace_listing.py).
TRACE_TYPES = ("usage_trace", "smpi")


def _check_non_negative_number(profile: dict, key: str, where: str, path: str) -> None:
    if key not in profile:
        raise InputError(path, f"{where}: field '{key}'", "is missing",
                         f"{key} must be a number >= 0")
    value = profile[key]
    if not is_number(value) or value < 0:
        raise InputError(path, f"{where}: field '{key}'", f"invalid value {shown(value)}",
                         f"{key} must be a number >= 0")


def _check_label(profile: dict, key: str, where: str, path: str) -> None:
    fix = f"{key} must be a storage label (a non-empty string) that EXECUTE_JOB's storage_mapping maps to a storage host"
    if key not in profile:
        raise InputError(path, f"{where}: field '{key}'", "is missing", fix)
    if not isinstance(profile[key], str) or not profile[key]:
        raise InputError(path, f"{where}: field '{key}'", f"invalid value {shown(profile[key])}", fix)


def check_cpu_ops_size(path: str, where: str, req_ops: float, ipc: float, mem_vol: float) -> None:
    """InputError naming `where` when a cpu_ops task's operations ceil(req_ops / ipc) or its
    mem_vol exceed MAX_CPU_OPS (the fields are numbers already checked: >= 0, ipc > 0)."""
    if mem_vol > MAX_CPU_OPS:
        raise InputError(path, f"{where}: field 'mem_vol'", f"is {mem_vol:g}, more than joulesim's limit of {MAX_CPU_OPS:g}",
                         "give the task's memory volume in MB (IRMaSim's unit)")
    ops = req_ops / ipc  # may be inf: a float division overflows to inf, it does not raise
    if ops > MAX_CPU_OPS:
        field = "field 'ipc'" if ipc < 1 else "field 'req_ops'"
        raise InputError(path, f"{where}: {field}",
                         f"req_ops / ipc = {req_ops:g} / {ipc:g} = {ops:g} operations per task, more than joulesim's limit "
                         f"of {MAX_CPU_OPS:g} (they would not end within the simulated time range)",
                         "check req_ops and ipc: ipc is typically between 0.1 and 10")


def check_matrix_size(executors: int, where: str, path: str) -> None:
    """InputError when a `parallel` task of this many executors (len(cpu)) has a communication
    matrix of more than MAX_COM_VALUES values."""
    if executors * executors > MAX_COM_VALUES:
        raise InputError(path, f"{where}: field 'cpu'",
                         f"lists {executors:,} executors, so its communication matrix (com) has {executors:,}^2 = "
                         f"{executors * executors:.3g} values, more than joulesim's limit of {MAX_COM_VALUES:,} "
                         f"({math.isqrt(MAX_COM_VALUES):,} executors)",
                         "split the task, or describe an even load with parallel_homogeneous, Batsim 5's "
                         "ParallelTaskHomogeneousProfile")


def validate_profile(name: str, profile: Any, where: str, path: str) -> dict:
    """Check one profile's own shape; return it unchanged.

    `where` names the profile in messages (e.g. "profile 'p1'"); `path` is the file (or the
    message source) the profile comes from. Raises InputError on any problem.
    """
    if not isinstance(name, str) or not name:
        raise InputError(path, where, f"invalid profile name {name!r}",
                         "profile names must be non-empty strings")
    if not isinstance(profile, dict):
        raise InputError(path, where, f"profile is {shown(profile)}, not an object",
                         'a profile is a JSON object like {"type": "delay", "delay": 10}')
    if "type" not in profile:
        raise InputError(path, f"{where}: field 'type'", "is missing",
                         f"type must be one of: {_SUPPORTED_TEXT}")
    ptype = profile["type"]
    if not isinstance(ptype, str):
        raise InputError(path, f"{where}: field 'type'", f"invalid value {shown(ptype)}",
                         f"type must be one of: {_SUPPORTED_TEXT}")
    if ptype in UNSUPPORTED_BATSIM_TYPES:
        raise InputError(path, f"{where}: field 'type'",
                         f"profile type {ptype} is not supported by joulesim yet",
                         f"supported: {_SUPPORTED_TEXT}")
    if ptype not in SUPPORTED_TYPES:
        raise InputError(path, f"{where}: field 'type'", f"unknown profile type '{clip(ptype)}'",
                         f"type must be one of: {_SUPPORTED_TEXT}")

    if "ret" in profile:
        ret = profile["ret"]
        if not is_int(ret) or not -MAX_INT32 - 1 <= ret <= MAX_INT32:
            raise InputError(path, f"{where}: field 'ret'", f"invalid value {shown(ret)}",
                             "ret must be an integer (0 means success) that fits 32 bits, or left out")

    if ptype == "delay":
        if "delay" not in profile:
            raise InputError(path, f"{where}: field 'delay'", "is missing", "delay must be a number >= 0 (seconds)")
        if not is_time(profile["delay"]):
            raise time_error(path, f"{where}: field 'delay'", profile["delay"], "delay",
                             "delay must be a number >= 0 (seconds)")
    elif ptype == "parallel":
        cpu = profile.get("cpu")
        if "cpu" not in profile:
            raise InputError(path, f"{where}: field 'cpu'", "is missing",
                             "cpu must be a non-empty list of numbers >= 0, one per executor")
        if not isinstance(cpu, list) or not cpu:
            raise InputError(path, f"{where}: field 'cpu'", f"invalid value {shown(cpu)}",
                             "cpu must be a non-empty list of numbers >= 0, one per executor")
        for i, value in enumerate(cpu):
            if not is_number(value) or value < 0:
                raise InputError(path, f"{where}: field 'cpu'",
                                 f"element {i} is {shown(value)}", "every cpu value must be a number >= 0")
        n = len(cpu)
        check_matrix_size(n, where, path)
        if "com" not in profile:
            raise InputError(path, f"{where}: field 'com'", "is missing",
                             f"com must be a list of {n}*{n} = {n * n} numbers >= 0")
        com = profile["com"]
        if not isinstance(com, list) or len(com) != n * n:
            shown_com = f"a list of {len(com)} values" if isinstance(com, list) else shown(com)
            raise InputError(path, f"{where}: field 'com'", f"invalid value: {shown_com}",
                             f"com must be a list of {n}*{n} = {n * n} numbers >= 0 "
                             f"(row i sends to column j), since cpu has {n} values")
        for i, value in enumerate(com):
            if not is_number(value) or value < 0:
                raise InputError(path, f"{where}: field 'com'",
                                 f"element {i} is {shown(value)}", "every com value must be a number >= 0")
    elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        _check_non_negative_number(profile, "cpu", where, path)
        _check_non_negative_number(profile, "com", where, path)
    elif ptype == "parallel_homogeneous_pfs":
        # Batsim: at least one of the two amounts (the other is 0); the storage label is
        # `storage` (or `host`), "pfs" when absent, resolved by EXECUTE_JOB's storage_mapping.
        if "bytes_to_read" not in profile and "bytes_to_write" not in profile:
            raise InputError(path, where, "has neither 'bytes_to_read' nor 'bytes_to_write'",
                             "give the bytes each host reads from and writes to the storage (a missing one is 0)")
        for key in ("bytes_to_read", "bytes_to_write"):
            if key in profile:
                _check_non_negative_number(profile, key, where, path)
        for key in ("storage", "host"):
            if key in profile:
                _check_label(profile, key, where, path)
    elif ptype in TRACE_TYPES:
        trace = profile.get("trace")
        if not isinstance(trace, str) or not trace:
            raise InputError(path, f"{where}: field 'trace'", "is missing" if "trace" not in profile else f"invalid value {shown(trace)}",
                             "trace must name the file that lists one trace file per rank, relative to the workload file")
    elif ptype == "data_staging":
        _check_non_negative_number(profile, "nb_bytes", where, path)
        for key in ("from", "to"):
            _check_label(profile, key, where, path)
    elif ptype == "cpu_ops":
        # One task per core, each running ceil(req_ops / ipc) operations (IRMaSim's modelV1),
        # asking mem_vol of memory traffic (MB/s at full speed) over its run.
        _check_non_negative_number(profile, "req_ops", where, path)
        if "mem_vol" in profile:
            _check_non_negative_number(profile, "mem_vol", where, path)
        ipc = profile.get("ipc", 1)
        if not is_number(ipc) or ipc <= 0:
            raise InputError(path, f"{where}: field 'ipc'", f"invalid value {shown(ipc)}",
                             "ipc (operations per instruction count divisor) must be a number > 0, or left out for 1")
        check_cpu_ops_size(path, where, profile["req_ops"], ipc, profile.get("mem_vol", 0))
    else:  # composed
        fix = "seq must be a non-empty list of profile names"
        if "seq" not in profile:
            raise InputError(path, f"{where}: field 'seq'", "is missing", fix)
        seq = profile["seq"]
        if not isinstance(seq, list) or not seq:
            raise InputError(path, f"{where}: field 'seq'", f"invalid value {shown(seq)}", fix)
        if len(seq) > MAX_TASKS_PER_JOB:
            raise InputError(path, f"{where}: field 'seq'",
                             f"lists {len(seq):,} profiles, more than the {MAX_TASKS_PER_JOB:,} tasks a job may run",
                             "model long repetitive jobs with fewer, longer tasks")
        for i, item in enumerate(seq):
            if not isinstance(item, str) or not item:
                raise InputError(path, f"{where}: field 'seq'", f"element {i} is {shown(item)}", fix)
        if "repeat" in profile:
            repeat = profile["repeat"]
            if not is_int(repeat) or not 1 <= repeat <= MAX_TASKS_PER_JOB:
                raise InputError(path, f"{where}: field 'repeat'", f"invalid value {shown(repeat)}",
                                 f"repeat must be an integer >= 1 (default 1) and at most {MAX_TASKS_PER_JOB:,}, "
                                 "the most tasks a job may run")
    for key in profile.keys() - _PROFILE_FIELDS:
        if nests_deeper(profile[key], MAX_EXTRA_FIELD_DEPTH):
            raise InputError(path, f"{where}: field '{clip(key)}'",
                             f"nests lists or objects more than {MAX_EXTRA_FIELD_DEPTH} levels deep",
                             "extra profile fields go to the decider in JSON messages: flatten it")
    return profile


@dataclass(frozen=True, slots=True)
class ProfileSummary:
    """What a job of a profile needs and costs, whatever hosts run it."""

    executors: int | None  # the executors it fixes (len(cpu) of its parallel leaves); None: any
    executors_leaf: str  # the parallel leaf that fixes them, for messages ("" when None)
    least_duration: float  # seconds it lasts at least: its delays (x repeat); computations count 0
    depth: int  # levels of composed profiles (0 for a leaf)
    tasks: int  # tasks a job runs, composed profiles unrolled


def check_profile_references(profiles: dict[str, dict], path: str) -> None:
    """Check, over a set of validated profiles, that composed profiles name existing profiles,
    that no composed profile contains itself (the cycle is named), that a job of each unrolls
    to at most MAX_TASKS_PER_JOB tasks nested at most MAX_COMPOSED_DEPTH deep, with a total
    delay in the simulated time range, and that the parallel leaves of a composed profile agree
    on their number of executors."""
    summarize_profiles(profiles, path)


def summarize_profiles(profiles: dict[str, dict], path: str) -> dict[str, ProfileSummary]:
    """Check a set of validated profiles together (see check_profile_references) and summarize
    each, by name. Linear in the size of the set, whatever profiles share.

    Depth-first with an explicit stack, not recursion: a chain of thousands of composed
    profiles must end in a clear error, not a RecursionError.
    """
    for name, profile in profiles.items():
        if profile["type"] != "composed":
            continue
        for i, item in enumerate(profile["seq"]):
            if item not in profiles:
                raise InputError(path, f"profile '{clip(name)}': field 'seq'",
                                 f"element {i} names profile '{clip(item)}', which does not exist",
                                 "define that profile in 'profiles' or fix the name")
            if profiles[item]["type"] == "cpu_ops":
                raise InputError(path, f"profile '{clip(name)}': field 'seq'",
                                 f"element {i} names the cpu_ops profile '{clip(item)}'",
                                 "cpu_ops profiles run as a job's own profile only (IRMaSim jobs have one phase)")
            if profiles[item]["type"] in TRACE_TYPES:
                raise InputError(path, f"profile '{clip(name)}': field 'seq'",
                                 f"element {i} names the {profiles[item]['type']} profile '{clip(item)}'",
                                 "joulesim runs trace profiles as a job's own profile only (Batsim also runs them "
                                 "inside a composed profile: not yet here); give the job that profile directly")

    summaries: dict[str, ProfileSummary] = {}
    for start, profile in profiles.items():
        if start in summaries:
            continue
        if profile["type"] != "composed":
            summaries[start] = _leaf_summary(start, profile)
            continue
        stack, on_stack, pending = [start], {start}, [iter(profile["seq"])]
        while stack:
            item = next(pending[-1], None)
            if item is not None:
                if item in summaries:
                    continue
                if item in on_stack:
                    raise InputError(path, f"profile '{clip(item)}': field 'seq'",
                                     "composed profiles form a cycle: " + _cycle_text(stack[stack.index(item):]),
                                     "a composed profile must not contain itself, even indirectly")
                sub = profiles[item]
                if sub["type"] == "composed":
                    stack.append(item)
                    on_stack.add(item)
                    pending.append(iter(sub["seq"]))
                else:
                    summaries[item] = _leaf_summary(item, sub)
                continue
            name = stack.pop()
            on_stack.discard(name)
            pending.pop()
            summaries[name] = _composed_summary(name, profiles[name], summaries, path)
    return summaries


def _cycle_text(cycle: list[str]) -> str:
    shown_names = [clip(name) for name in cycle]
    if len(cycle) > 8:  # thousands of names would drown the message
        shown_names = shown_names[:4] + [f"... ({len(cycle) - 6:,} more)"] + shown_names[-2:]
    return " -> ".join(shown_names + [clip(cycle[0])])


def _leaf_summary(name: str, profile: dict) -> ProfileSummary:
    ptype = profile["type"]
    if ptype == "parallel":
        return ProfileSummary(len(profile["cpu"]), name, 0.0, 0, 1)

    return ProfileSummary(None, "", float(profile["delay"]) if ptype == "delay" else 0.0, 0, 1)


def _composed_summary(name: str, profile: dict, summaries: dict[str, ProfileSummary],
                      path: str) -> ProfileSummary:
    where = f"profile '{clip(name)}'"
    repeat = profile.get("repeat", 1)
    parts = [summaries[item] for item in profile["seq"]]
    depth = 1 + max(part.depth for part in parts)
    if depth > MAX_COMPOSED_DEPTH:
        raise InputError(path, f"{where}: field 'seq'",
                         f"nests composed profiles {depth} levels deep, more than {MAX_COMPOSED_DEPTH}",
                         "flatten the composition: list the leaf profiles in fewer levels")
    tasks = repeat * sum(part.tasks for part in parts)
    if tasks > MAX_TASKS_PER_JOB:
        raise InputError(path, f"{where}: field 'repeat'" if repeat > 1 else f"{where}: field 'seq'",
                         f"unrolls to {tasks:,} tasks (seq x repeat, nested profiles unrolled), more than "
                         f"the {MAX_TASKS_PER_JOB:,} a job may run",
                         "lower repeat, or model the job with fewer, longer tasks")
    least = repeat * sum(part.least_duration for part in parts)
    beyond = check_time(least, "its total delay (the delays of seq, unrolled, times repeat)")
    if beyond:
        raise InputError(path, f"{where}: field 'seq'", beyond)
    fixed = [part for part in parts if part.executors is not None]
    for part in fixed:
        first = fixed[0]
        if part.executors != first.executors:
            raise InputError(path, f"{where}: field 'seq'",
                             "its parallel profiles need different numbers of executors "
                             f"('{clip(first.executors_leaf)}' has {first.executors}, "
                             f"'{clip(part.executors_leaf)}' has {part.executors})",
                             "every parallel profile in one composed profile must have as many cpu values")
    if fixed:
        return ProfileSummary(fixed[0].executors, fixed[0].executors_leaf, least, depth, tasks)
    return ProfileSummary(None, "", least, depth, tasks)


def reachable_leaves(profiles: dict[str, dict], *names: str) -> Iterator[tuple[str, dict]]:
    """(name, profile) of each leaf profile reachable from `names` (composed profiles opened),
    once each, in the order a job would first run them; names that exist nowhere are skipped."""
    seen: set[str] = set()
    todo = list(reversed(names))
    while todo:
        current = todo.pop()
        if current in seen or current not in profiles:
            continue
        seen.add(current)
        profile = profiles[current]
        if profile.get("type") == "composed":
            todo.extend(reversed(profile["seq"]))
        else:
            yield current, profile


def _leaf_counts(profiles: dict[str, dict], name: str) -> dict[str, int]:
    """Executor count of every `parallel` leaf reachable from `name`, by leaf name."""
    return {leaf: len(profile["cpu"]) for leaf, profile in reachable_leaves(profiles, name)
            if profile.get("type") == "parallel"}


def leaf_executor_count(profiles: dict[str, dict], name: str) -> int | None:
    """The number of executors the profile fixes: len(cpu) for `parallel`, for `composed` the
    common count of its parallel leaves; None when any number of executors works.

    Assumes `check_profile_references` passed (for a composed profile whose leaves disagree, the
    smallest count is returned).
    """
    counts = _leaf_counts(profiles, name)
    if not counts:
        return None
    return min(counts.values())
