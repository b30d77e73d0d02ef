"""Shared pieces of the synthetic workload generators (`joulesim workload generate`).

Every generator samples job arrival times, sizes and runtimes with one
`numpy.random.default_rng(seed)` and hands them to `build_workload`, which writes the
Batsim 4 workload dictionary joulesim loads (see `joulesim.simulator.workload.workload_loader`):

    {"nb_res": N,
     "jobs": [{"id": 1, "subtime": s, "res": r, "walltime": w, "profile": "delay_60"}, ...],
     "profiles": {"delay_60": {"type": "delay", "delay": 60}, ...}}

Runtimes are whole seconds (>= 1); jobs with equal runtimes share one delay profile.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import orjson

from joulesim.protocol.errors import JoulesimError


class GeneratorError(JoulesimError):
    """An impossible parameter value for a workload generator."""

    exit_code = 2


def check(condition: bool, message: str) -> None:
    """Raise GeneratorError(message) unless `condition` holds."""
    if not condition:
        raise GeneratorError(message)


# The walltime of a generated job, as a multiple of its run time. Not 1: a job whose walltime
# equals its run time is killed at that instant, as Batsim kills it (COMPLETED_WALLTIME_REACHED),
# so "exact estimates" made every generated job a killed one. 2 lets every job complete; users'
# real requests are looser still (in the Parallel Workloads Archive's logs the run time is often
# under half the request), so schedulers that trust walltimes see a mild over-estimate.
DEFAULT_WALLTIME_FACTOR = 2.0


def walltime_of(runtime: int, walltime_factor: float | None) -> int | None:
    """The job's walltime: ceil(runtime * factor) seconds, or None (no walltime) when factor is None."""
    if walltime_factor is None:
        return None
    return max(1, math.ceil(runtime * walltime_factor - 1e-9))


def build_workload(nb_res: int, subtimes: Sequence[float], sizes: Sequence[int],
                   runtimes: Sequence[int], walltime_factor: float | None = DEFAULT_WALLTIME_FACTOR,
                   description: dict[str, Any] | None = None) -> dict[str, Any]:
    """The workload dict of jobs 1..n (in the given order, which must be by subtime)."""
    check(len(subtimes) == len(sizes) == len(runtimes), "internal error: column lengths differ")
    check(walltime_factor is None or walltime_factor > 0, "the walltime factor must be > 0")
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    for index, (subtime, size, runtime) in enumerate(zip(subtimes, sizes, runtimes), start=1):
        runtime = int(runtime)
        name = f"delay_{runtime}"
        if name not in profiles:
            profiles[name] = {"type": "delay", "delay": runtime}
        job: dict[str, Any] = {"id": index, "subtime": int(subtime), "res": int(size)}
        walltime = walltime_of(runtime, walltime_factor)
        if walltime is not None:
            job["walltime"] = walltime
        job["profile"] = name
        jobs.append(job)
    doc: dict[str, Any] = {"nb_res": int(nb_res)}
    if description:
        doc["description"] = description
    doc["jobs"] = jobs
    doc["profiles"] = dict(sorted(profiles.items(), key=lambda item: item[1]["delay"]))
    return doc


def delays_as_computations(workload: dict[str, Any], flops_per_second: float) -> dict[str, Any]:
    """The workload with each delay profile of D seconds replaced by a computation that takes D
    seconds on hosts of `flops_per_second` (`parallel_homogeneous`, D x speed flops per host, no
    communication). A delay job leaves its hosts at idle power; a computing one loads them
    fully, which is what an energy study of the stream needs. Profiles are renamed
    `compute_D`."""
    check(math.isfinite(flops_per_second) and flops_per_second > 0,
          f"the host speed (flop/s) must be a positive number, not {flops_per_second}")
    renamed: dict[str, str] = {}
    profiles: dict[str, dict[str, Any]] = {}
    for name, profile in workload["profiles"].items():
        check(profile.get("type") == "delay", f"profile {name!r} is not a delay profile")
        renamed[name] = f"compute_{profile['delay']}"
        profiles[renamed[name]] = {"type": "parallel_homogeneous", "cpu": float(profile["delay"]) * flops_per_second,
                                   "com": 0.0}
    out = dict(workload)
    out["jobs"] = [{**job, "profile": renamed[job["profile"]]} for job in workload["jobs"]]
    out["profiles"] = profiles
    return out


def dumps(workload: dict[str, Any]) -> bytes:
    """The workload as JSON bytes (one job per line, so the file stays diff- and grep-friendly)."""
    head = {k: v for k, v in workload.items() if k not in ("jobs", "profiles")}
    parts = [b"{"]
    for key, value in head.items():
        parts.append(b"\n  " + orjson.dumps(key) + b": " + orjson.dumps(value) + b",")
    jobs = workload["jobs"]
    parts.append(b'\n  "jobs": [')
    parts.append(b",".join(b"\n    " + orjson.dumps(job) for job in jobs))
    parts.append(b"\n  ],\n  \"profiles\": {")
    parts.append(b",".join(b"\n    " + orjson.dumps(name) + b": " + orjson.dumps(profile)
                           for name, profile in workload["profiles"].items()))
    parts.append(b"\n  }\n}\n")
    return b"".join(parts)
