"""A job as IRMaSim's schedulers see it, read from the protocol's JOB_SUBMITTED.

The job's JSON carries what IRMaSim's workload managers may read: `res` (ntasks, one core per
task), `nodes`, `ntasks_per_node`, `req_time`, `req_energy`, `mem`. Two policies also read
what the simulation itself runs on, in the job's `cpu_ops` profile: `mem_vol` (job selection
`low_mem_ops`) and `req_ops` / `ipc` (resource selection `high_mem_bw`, through the bandwidth
a task asks). The profile comes with JOB_SUBMITTED when profiles are forwarded, else from
SIMULATION_BEGINS' `profiles[workload][name]`.

Defaults follow the protocol contract and IRMaSim: `req_energy` and `mem` 0, `nodes` 1,
`ntasks_per_node` ceil(res / nodes), a profile's `ipc` 1 and `mem_vol` 1. A field a policy
needs but the job lacks (or gives as a non-number) is an error naming the job, the field and
the option that needs it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from joulesim.protocol.decider import SubmittedJob
from joulesim.protocol.errors import JoulesimError

__all__ = ["NodeJob", "JobReader"]


@dataclass(slots=True)
class NodeJob:
    id: str
    seq: int  # submission order (ties of every job order)
    subtime: float
    ntasks: int  # = res, one core per task
    nodes: int
    ntasks_per_node: int
    req_time: float | None
    req_energy: float
    mem: float
    mem_vol: float | None  # from the profile, when needed
    ops: int | None  # operations per task, ceil(req_ops / ipc), when needed
    rand: float = 0.0  # job selection `random`'s draw
    max_energy: float | None = None  # the job's energy limit (seed 002), None for none


class JobReader:
    """Turns SubmittedJobs into NodeJobs, reading only the fields the decider needs.

    `needs` maps a field ('req_time', 'mem_vol', 'ops') to the option that needs it (for
    the error message)."""

    def __init__(self, decider: str, profiles: dict[str, Any] | None, needs: dict[str, str]):
        self.decider = decider
        self.profiles = profiles if isinstance(profiles, dict) else {}
        self.needs = needs
        self._seq = 0

    def read(self, job: SubmittedJob) -> NodeJob:
        raw = job.json
        nodes = self._integer(job, raw, "nodes", 1)
        ntasks = job.res
        default_per_node = -(-ntasks // nodes) if nodes >= 1 else ntasks
        per_node = self._integer(job, raw, "ntasks_per_node", default_per_node)
        req_time = None
        if "req_time" in self.needs:
            if raw.get("req_time") is None:
                raise self._error(job, "has no req_time (IRMaSim's estimated run time)", self.needs["req_time"])
            req_time = self._real(job, raw, "req_time", None)
        mem_vol = ops = None
        if "mem_vol" in self.needs or "ops" in self.needs:
            profile = self._profile(job)
            mem_vol = self._real(job, profile, "mem_vol", 1.0, where="profile")
            if "ops" in self.needs:
                if profile.get("req_ops") is None:
                    raise self._error(job, f"has a profile {job.profile!r} without req_ops (IRMaSim's operations "
                                      "per task)", self.needs["ops"])
                req_ops = self._real(job, profile, "req_ops", None, where="profile")
                ipc = self._real(job, profile, "ipc", 1.0, where="profile")
                if ipc <= 0:
                    raise self._error(job, f"has a profile {job.profile!r} with ipc {ipc!r} (must be > 0)",
                                      self.needs["ops"])
                ops = math.ceil(req_ops / ipc)
        seq = self._seq
        self._seq += 1
        return NodeJob(job.id, seq, job.subtime, ntasks, nodes, per_node, req_time,
                       self._real(job, raw, "req_energy", 0), self._real(job, raw, "mem", 0), mem_vol, ops,
                       max_energy=self._real(job, raw, "max_energy", None))

    # ------------------------------------------------------------------ helpers
    def _profile(self, job: SubmittedJob) -> dict[str, Any]:
        profile = job.profile_in(self.profiles)
        if not isinstance(profile, dict):
            option = self.needs.get("ops") or self.needs.get("mem_vol")
            raise self._error(job, f"has profile {job.profile!r}, which neither SIMULATION_BEGINS' profiles nor "
                              "JOB_SUBMITTED gives", option)
        return profile

    def _error(self, job: SubmittedJob, problem: str, option: str | None) -> JoulesimError:
        need = f"; {option} needs it" if option else ""
        return JoulesimError(f"decider {self.decider}: job {job.id} {problem}{need} (run it on an IRMaSim workload)")

    def _real(self, job: SubmittedJob, source: dict, key: str, default: float | None, where: str = "") -> float:
        value = source.get(key)
        if value is None:
            return default  # type: ignore[return-value]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            field = f"{where} field" if where else "field"
            raise self._error(job, f"has {field} {key}={value!r}: expected a finite number",
                              self.needs.get(key))
        return value

    def _integer(self, job: SubmittedJob, source: dict, key: str, default: int) -> int:
        value = source.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or value != int(value):
            raise self._error(job, f"has field {key}={value!r}: expected an integer", None)
        return int(value)
