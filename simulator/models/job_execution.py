"""How long a profile runs on given hosts, and how far it got when killed.

Compute model of this version: each executor runs on one host at that host's current
pstate speed (flop / speed seconds); a `delay` profile just waits. All executors of a
parallel task progress together, so the task lasts as long as its slowest executor.
Communication volumes are validated but cost nothing yet (the network model comes later).
"""

from __future__ import annotations

from typing import Any, Sequence

Profiles = dict[str, dict[str, Any]]


def profile_duration(name: str, profiles: Profiles, speeds: Sequence[float]) -> float:
    """Seconds that profile `name` takes with one executor per entry of `speeds`."""
    profile = profiles[name]
    kind = profile["type"]
    if kind == "delay":
        return float(profile["delay"])
    if kind == "parallel":
        return max((cpu / speed for cpu, speed in zip(profile["cpu"], speeds)), default=0.0)
    if kind == "parallel_homogeneous":
        return float(profile["cpu"]) / min(speeds) if speeds else 0.0
    if kind == "parallel_homogeneous_total":
        return float(profile["cpu"]) / len(speeds) / min(speeds) if speeds else 0.0
    if kind == "composed":
        once = sum(profile_duration(sub, profiles, speeds) for sub in profile["seq"])
        return once * int(profile.get("repeat", 1))
    raise ValueError(f"profile {name!r} has type {kind!r}, which this compute model does not run")


def profile_progress(name: str, profiles: Profiles, speeds: Sequence[float], elapsed: float) -> dict[str, Any]:
    """Batsim's `job_progress` entry for a job of profile `name` killed after `elapsed` s."""
    profile = profiles[name]
    if profile["type"] != "composed":
        duration = profile_duration(name, profiles, speeds)
        progress = min(1.0, elapsed / duration) if duration > 0 else 1.0
        return {"profile_name": name, "progress": progress}
    seq = profile["seq"]
    durations = [profile_duration(sub, profiles, speeds) for sub in seq]
    index = 0
    remaining = elapsed
    total_tasks = len(seq) * int(profile.get("repeat", 1))
    # Walk the unrolled sequence; the kill lands in the first task that had not finished.
    while index < total_tasks - 1 and remaining >= durations[index % len(seq)]:
        remaining -= durations[index % len(seq)]
        index += 1
    return {
        "profile_name": name,
        "current_task_index": index,
        "current_task": profile_progress(seq[index % len(seq)], profiles, speeds, remaining),
    }


def profile_return_code(name: str, profiles: Profiles) -> int:
    return int(profiles[name].get("ret", 0))


def profile_busy_seconds(name: str, profiles: Profiles, speeds: Sequence[float]) -> list[float]:
    """Seconds each executor's CPU is busy over the whole profile: its flops / its speed.

    The dynamic energy of a job is sum((max - idle) x busy) over its executors, whatever the
    order of its tasks; a `delay` profile keeps CPUs idle.
    """
    profile = profiles[name]
    kind = profile["type"]
    n = len(speeds)
    if kind == "delay" or n == 0:
        return [0.0] * n
    if kind == "parallel":
        return [cpu / speed for cpu, speed in zip(profile["cpu"], speeds)]
    if kind == "parallel_homogeneous":
        return [float(profile["cpu"]) / speed for speed in speeds]
    if kind == "parallel_homogeneous_total":
        return [float(profile["cpu"]) / n / speed for speed in speeds]
    if kind == "composed":
        repeat = int(profile.get("repeat", 1))
        total = [0.0] * n
        for sub in profile["seq"]:
            for i, busy in enumerate(profile_busy_seconds(sub, profiles, speeds)):
                total[i] += busy
        return [busy * repeat for busy in total]
    raise ValueError(f"profile {name!r} has type {kind!r}, which this compute model does not run")
