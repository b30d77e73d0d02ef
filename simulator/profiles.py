"""Validation of Batsim 4 job profiles (workload files and REGISTER_PROFILE).

A profile is kept as the JSON object it was given (extra keys included); these functions only
check it. `validate_profile` looks at one profile on its own, so the simulator can reuse it when a
decider registers a profile; `check_profile_references` checks what needs the whole set
(composed profiles naming existing profiles, no cycles, one executor count).
"""

import math
from typing import Any

from joulesim.simulator.input_error import InputError

SUPPORTED_TYPES = (
    "delay",
    "parallel",
    "parallel_homogeneous",
    "parallel_homogeneous_total",
    "composed",
)
# Profile types Batsim 4 knows that joulesim does not simulate (yet).
UNSUPPORTED_BATSIM_TYPES = (
    "smpi",
    "usage_trace",
    "parallel_homogeneous_pfs",
    "data_staging",
    "send",
    "recv",
)

_SUPPORTED_TEXT = ", ".join(SUPPORTED_TYPES)


def _is_number(value: Any) -> bool:
    """A finite JSON number; bools are not numbers."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_non_negative_number(profile: dict, key: str, where: str, path: str) -> None:
    if key not in profile:
        raise InputError(path, f"{where}: field '{key}'", "is missing",
                         f"{key} must be a number >= 0")
    value = profile[key]
    if not _is_number(value) or value < 0:
        raise InputError(path, f"{where}: field '{key}'", f"invalid value {value!r}",
                         f"{key} must be a number >= 0")


def validate_profile(name: str, profile: Any, where: str, path: str) -> dict:
    """Check one profile's own shape; return it unchanged.

    `where` names the profile in messages (e.g. "profile 'p1'"); `path` is the file (or the
    message source) the profile comes from. Raises InputError on any problem.
    """
    if not isinstance(name, str) or not name:
        raise InputError(path, where, f"invalid profile name {name!r}",
                         "profile names must be non-empty strings")
    if not isinstance(profile, dict):
        raise InputError(path, where, f"profile is a {type(profile).__name__}, not an object",
                         'a profile is a JSON object like {"type": "delay", "delay": 10}')
    if "type" not in profile:
        raise InputError(path, f"{where}: field 'type'", "is missing",
                         f"type must be one of: {_SUPPORTED_TEXT}")
    ptype = profile["type"]
    if not isinstance(ptype, str):
        raise InputError(path, f"{where}: field 'type'", f"invalid value {ptype!r}",
                         f"type must be one of: {_SUPPORTED_TEXT}")
    if ptype in UNSUPPORTED_BATSIM_TYPES:
        raise InputError(path, f"{where}: field 'type'",
                         f"profile type {ptype} is not supported by joulesim yet",
                         f"supported: {_SUPPORTED_TEXT}")
    if ptype not in SUPPORTED_TYPES:
        raise InputError(path, f"{where}: field 'type'", f"unknown profile type {ptype!r}",
                         f"type must be one of: {_SUPPORTED_TEXT}")

    if "ret" in profile and not _is_int(profile["ret"]):
        raise InputError(path, f"{where}: field 'ret'", f"invalid value {profile['ret']!r}",
                         "ret must be an integer (0 means success), or left out")

    if ptype == "delay":
        _check_non_negative_number(profile, "delay", where, path)
    elif ptype == "parallel":
        cpu = profile.get("cpu")
        if "cpu" not in profile:
            raise InputError(path, f"{where}: field 'cpu'", "is missing",
                             "cpu must be a non-empty list of numbers >= 0, one per executor")
        if not isinstance(cpu, list) or not cpu:
            raise InputError(path, f"{where}: field 'cpu'", f"invalid value {cpu!r}",
                             "cpu must be a non-empty list of numbers >= 0, one per executor")
        for i, value in enumerate(cpu):
            if not _is_number(value) or value < 0:
                raise InputError(path, f"{where}: field 'cpu'",
                                 f"element {i} is {value!r}", "every cpu value must be a number >= 0")
        n = len(cpu)
        if "com" not in profile:
            raise InputError(path, f"{where}: field 'com'", "is missing",
                             f"com must be a list of {n}*{n} = {n * n} numbers >= 0")
        com = profile["com"]
        if not isinstance(com, list) or len(com) != n * n:
            shown = f"a list of {len(com)} values" if isinstance(com, list) else repr(com)
            raise InputError(path, f"{where}: field 'com'", f"invalid value: {shown}",
                             f"com must be a list of {n}*{n} = {n * n} numbers >= 0 "
                             f"(row i sends to column j), since cpu has {n} values")
        for i, value in enumerate(com):
            if not _is_number(value) or value < 0:
                raise InputError(path, f"{where}: field 'com'",
                                 f"element {i} is {value!r}", "every com value must be a number >= 0")
    elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        _check_non_negative_number(profile, "cpu", where, path)
        _check_non_negative_number(profile, "com", where, path)
    else:  # composed
        fix = "seq must be a non-empty list of profile names"
        if "seq" not in profile:
            raise InputError(path, f"{where}: field 'seq'", "is missing", fix)
        seq = profile["seq"]
        if not isinstance(seq, list) or not seq:
            raise InputError(path, f"{where}: field 'seq'", f"invalid value {seq!r}", fix)
        for i, item in enumerate(seq):
            if not isinstance(item, str) or not item:
                raise InputError(path, f"{where}: field 'seq'", f"element {i} is {item!r}", fix)
        if "repeat" in profile:
            repeat = profile["repeat"]
            if not _is_int(repeat) or repeat < 1:
                raise InputError(path, f"{where}: field 'repeat'", f"invalid value {repeat!r}",
                                 "repeat must be an integer >= 1 (default 1)")
    return profile


def check_profile_references(profiles: dict[str, dict], path: str) -> None:
    """Check, over a set of validated profiles, that composed profiles name existing profiles,
    that no composed profile contains itself (the cycle is named), and that the parallel leaves
    of a composed profile agree on their number of executors."""
    for name, profile in profiles.items():
        if profile.get("type") != "composed":
            continue
        for i, item in enumerate(profile["seq"]):
            if item not in profiles:
                raise InputError(path, f"profile '{name}': field 'seq'",
                                 f"element {i} names profile '{item}', which does not exist",
                                 "define that profile in 'profiles' or fix the name")

    # Cycle detection: depth-first search keeping the current path.
    done: set[str] = set()
    for start in profiles:
        if start in done:
            continue
        stack: list[str] = []
        on_stack: set[str] = set()

        def visit(name: str) -> None:
            if name in done:
                return
            if name in on_stack:
                cycle = stack[stack.index(name):] + [name]
                raise InputError(path, f"profile '{name}': field 'seq'",
                                 "composed profiles form a cycle: " + " -> ".join(cycle),
                                 "a composed profile must not contain itself, even indirectly")
            profile = profiles[name]
            if profile.get("type") == "composed":
                stack.append(name)
                on_stack.add(name)
                for item in profile["seq"]:
                    visit(item)
                stack.pop()
                on_stack.discard(name)
            done.add(name)

        visit(start)

    for name, profile in profiles.items():
        if profile.get("type") == "composed":
            counts = _leaf_counts(profiles, name)
            if len(counts) > 1:
                detail = ", ".join(f"'{leaf}' has {n}" for leaf, n in sorted(counts.items()))
                raise InputError(path, f"profile '{name}': field 'seq'",
                                 f"its parallel profiles need different numbers of executors ({detail})",
                                 "every parallel profile in one composed profile must have as many cpu values")


def _leaf_counts(profiles: dict[str, dict], name: str) -> dict[str, int]:
    """Executor count of every `parallel` leaf reachable from `name`, by leaf name."""
    counts: dict[str, int] = {}
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen or current not in profiles:
            continue
        seen.add(current)
        profile = profiles[current]
        ptype = profile.get("type")
        if ptype == "parallel":
            counts[current] = len(profile["cpu"])
        elif ptype == "composed":
            todo.extend(profile["seq"])
    return counts


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
