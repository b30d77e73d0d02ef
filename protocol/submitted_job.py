"""A job as a decider learns it from JOB_SUBMITTED (or joulesim's JOB_RUNNING).

Its own module, which the build does not compile (setup.py compiles decider.py): a SubmittedJob
stays a plain Python object, to which a decider may add attributes of its own (IRMaSim's
heuristic draws a number per job and keeps it on the job).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class SubmittedJob:
    """A job as the decider learns it from JOB_SUBMITTED."""

    id: str
    subtime: float
    res: int
    walltime: float  # -1 when the job has none
    profile: str
    json: dict[str, Any] = field(default_factory=dict)
    profile_data: dict[str, Any] | None = None  # only when profiles are forwarded

    @property
    def workload(self) -> str:
        return self.id.split("!", 1)[0]

    def profile_in(self, profiles: dict[str, Any]) -> Any:
        """The job's profile: forwarded with JOB_SUBMITTED, else looked up in SIMULATION_BEGINS'
        `profiles` (workload -> name -> profile); None when neither has it."""
        if self.profile_data is not None:
            return self.profile_data
        return (profiles.get(self.workload) or {}).get(self.profile)
