"""Parallel-task workloads drawn from an SWF trace, as in the Batsim thesis §5.5.1 (figure 5.1).

From a real trace, keep the jobs whose run time p is in [p_lower, p_upper] and whose size
fits in one cluster, pick N of them with a seed, and turn each into a parallel task:

- release time 0 (every job is in the queue from the start, as in [Luc+15]);
- profile ``parallel_homogeneous`` with ``cpu = p x F_comp`` flops on each host and
  ``com = p x F_comm`` bytes from each host to each *other* host of the job. This is the
  thesis's ``comp = R^1_q x p x F_comp`` and ``comm = S^1_q x p x F_comm``, except S's
  diagonal: a host sending to itself costs nothing (Batsim's ``parallel_homogeneous`` has no
  diagonal either; batsim4-compatibility.md §7);
- walltime = max(requested time, p x F_w): large enough that placement, not the walltime,
  decides when a job ends (unless communication makes it longer than that);
- job ids are the trace's job numbers; jobs keep the trace's order (the queue order of a
  scheduler that sorts by release time, all releases being 0).

The job's duration on a platform is p x F_comp / host speed for its computation alone; its
communication, at most the bandwidth of each host's link, usually dominates once F_comm > 0.

    eligible = eligible_jobs("CEA-Curie-2011-2.1-cln.swf.gz", p_lower=3600, p_upper=14400, max_size=16)
    workload = ptask_workload(pick_jobs(eligible, 300, seed=0), PtaskParams(f_comm=1e7, nb_res=128))
    write_workload(workload, "w.json")  # workload_tools.swf.write_workload (needs nb_res)

`make_ptask_workload` does the three steps at once, from a trace path.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from joulesim.protocol.time_range import MAX_SIMULATED_TIME, check_time
from joulesim.workload_tools.swf import SwfRecord, _num, _num_name, read_swf

__all__ = ["PtaskParams", "EligibleJob", "eligible_jobs", "pick_jobs", "ptask_workload",
           "make_ptask_workload"]

HOUR = 3600.0


@dataclass(frozen=True)
class PtaskParams:
    """Amount factors of §5.5.1 (figure 5.1 values by default, F_comm swept by the caller)."""

    f_comp: float = 1e6  # flops per host per second of trace run time
    f_comm: float = 0.0  # bytes per ordered pair of distinct hosts per second of run time
    f_wall: float = 1e3  # walltime >= run time x f_wall
    nb_res: int | None = None  # written as the workload's nb_res (informative) when given

    def __post_init__(self) -> None:
        for name in ("f_comp", "f_comm", "f_wall"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
        if self.nb_res is not None and self.nb_res < 1:
            raise ValueError(f"nb_res must be >= 1, not {self.nb_res}")


@dataclass(frozen=True, slots=True)
class EligibleJob:
    """A trace job kept by the selection: what the workload needs of it."""

    job: int  # SWF job number (the workload's job id)
    runtime: float  # s
    size: int  # hosts: allocated processors (requested when allocated is unknown)
    requested_time: float  # s; <= 0 when unknown


def _size_of(rec: SwfRecord) -> int:
    # As convert_swf: allocated processors, else requested ones (one host per processor).
    procs = rec.alloc_procs if rec.alloc_procs > 0 else rec.req_procs
    return math.ceil(procs) if procs > 0 else 0


def eligible_jobs(trace: str, *, p_lower: float = 1 * HOUR, p_upper: float = 4 * HOUR,
                  max_size: int = 16, lenient: bool = False) -> list[EligibleJob]:
    """The jobs of `trace` (SWF, plain or .gz) with p_lower <= run time <= p_upper and
    1 <= size <= max_size, in trace order; a repeated job number keeps its first line only."""
    if not 0 <= p_lower <= p_upper:
        raise ValueError(f"need 0 <= p_lower <= p_upper, got [{p_lower}, {p_upper}]")
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, not {max_size}")
    seen: set[int] = set()
    kept: list[EligibleJob] = []
    for rec in read_swf(trace, lenient=lenient):
        size = _size_of(rec)
        if not (p_lower <= rec.runtime <= p_upper and 1 <= size <= max_size) or rec.job in seen:
            continue
        seen.add(rec.job)
        kept.append(EligibleJob(rec.job, float(rec.runtime), size, float(rec.req_time)))
    return kept


def pick_jobs(eligible: list[EligibleJob], nb_jobs: int, seed: int) -> list[EligibleJob]:
    """`nb_jobs` distinct jobs drawn uniformly with `seed` (same inputs, same jobs), in trace order."""
    if nb_jobs > len(eligible):
        raise ValueError(f"cannot pick {nb_jobs} jobs: only {len(eligible)} are eligible")
    if nb_jobs < 0:
        raise ValueError(f"nb_jobs must be >= 0, not {nb_jobs}")
    # Sampling indices (not records) keeps the draw independent of the records' contents.
    chosen = sorted(random.Random(seed).sample(range(len(eligible)), nb_jobs))
    return [eligible[i] for i in chosen]


def ptask_workload(jobs: list[EligibleJob], params: PtaskParams = PtaskParams()) -> dict[str, Any]:
    """The Batsim workload dict of `jobs` (see the module docstring for the amounts)."""
    profiles: dict[str, dict[str, Any]] = {}
    out_jobs: list[dict[str, Any]] = []
    for job in jobs:
        # One profile per distinct run time: the amounts depend on nothing else.
        name = f"ptask_{_num_name(job.runtime)}"
        if name not in profiles:
            cpu, com = job.runtime * params.f_comp, job.runtime * params.f_comm
            if not (math.isfinite(cpu) and math.isfinite(com)):  # orjson would write null
                raise ValueError(f"job {job.job}: run time {job.runtime:g} s x F_comp or F_comm overflows a "
                                 "double: use smaller factors")
            profiles[name] = {"type": "parallel_homogeneous", "cpu": _num(cpu), "com": _num(com)}
        walltime = max(job.requested_time, job.runtime * params.f_wall)
        if walltime <= 0:  # run time 0 with F_w = 0 and no request: Batsim needs walltime > 0
            walltime = 1
        if walltime >= MAX_SIMULATED_TIME:
            raise ValueError(f"job {job.job}: " + check_time(walltime, f"its walltime (max(requested time, "
                             f"run time x F_w = {params.f_wall:g}))") + "; or use a smaller F_w")
        out_jobs.append({"id": job.job, "subtime": 0, "res": job.size, "walltime": _num(walltime),
                         "profile": name})
    workload: dict[str, Any] = {"jobs": out_jobs, "profiles": dict(sorted(profiles.items()))}
    if params.nb_res is not None:
        workload = {"nb_res": params.nb_res, **workload}
    return workload


def make_ptask_workload(trace: str, nb_jobs: int, seed: int, params: PtaskParams = PtaskParams(), *,
                        p_lower: float = 1 * HOUR, p_upper: float = 4 * HOUR,
                        max_size: int = 16) -> dict[str, Any]:
    """eligible_jobs + pick_jobs + ptask_workload in one call."""
    eligible = eligible_jobs(trace, p_lower=p_lower, p_upper=p_upper, max_size=max_size)
    return ptask_workload(pick_jobs(eligible, nb_jobs, seed), params)
