"""The runtime r a job-ordering score reads: the requested walltime, or the profile's delay.

Seed 003 and the authors' public code evaluate their orders in two settings: "estimate",
where r is the user's requested time (here the job's walltime; the default,
`runtime=walltime`), and "runtime", where r is the job's actual runtime (clairvoyant; the
paper's figure 1). Here `runtime=profile` reads the actual runtime as the `delay` of the
job's `delay` profile, from JOB_SUBMITTED when profiles are forwarded, else from
SIMULATION_BEGINS' `profiles[workload][name]`. Other profile types have no runtime known
before the simulation runs them, so they are refused.

Every error names the decider, the job and the fix.
"""

from __future__ import annotations

import math
from typing import Any

from joulesim.protocol.decider import SubmittedJob
from joulesim.protocol.errors import JoulesimError

__all__ = ["RUNTIME_SOURCES", "RuntimeReader"]

#: Option values of `runtime`: the default first.
RUNTIME_SOURCES = ("walltime", "profile")


class RuntimeReader:
    """r of each job, from its walltime or from its delay profile."""

    def __init__(self, decider: str, source: str):
        if source not in RUNTIME_SOURCES:
            raise ValueError(source)
        self.decider = decider
        self.source = source
        self.profiles: dict[str, Any] = {}

    def begin(self, data: dict[str, Any]) -> None:
        """Read SIMULATION_BEGINS' profiles (workload -> profile name -> profile)."""
        profiles = data.get("profiles")
        self.profiles = profiles if isinstance(profiles, dict) else {}

    def runtime(self, job: SubmittedJob) -> float:
        if self.source == "walltime":
            if job.walltime < 0:
                raise JoulesimError(
                    f"decider {self.decider}: job {job.id} has no walltime, and runtime=walltime (the default) "
                    "orders jobs by their walltimes: give every job a walltime, or use --option runtime=profile "
                    "to order by the delay of their delay profiles")
            return job.walltime
        return self._profile_delay(job)

    def _profile_delay(self, job: SubmittedJob) -> float:
        profile = job.profile_in(self.profiles)
        if not isinstance(profile, dict):
            raise JoulesimError(
                f"decider {self.decider}: job {job.id} has profile {job.profile!r}, which neither "
                "SIMULATION_BEGINS' profiles nor JOB_SUBMITTED gives, and runtime=profile reads its delay: "
                "forward profiles on submission (for dynamically registered profiles), or use runtime=walltime")
        kind = profile.get("type")
        if kind != "delay":
            raise JoulesimError(
                f"decider {self.decider}: job {job.id} has profile {job.profile!r} of type {kind!r}, and "
                "runtime=profile reads only the delay of delay profiles: use runtime=walltime")
        delay = profile.get("delay")
        if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not math.isfinite(delay) or delay < 0:
            raise JoulesimError(
                f"decider {self.decider}: job {job.id} has profile {job.profile!r} with delay {delay!r}: "
                "runtime=profile needs a finite delay >= 0 (or use runtime=walltime)")
        return float(delay)
