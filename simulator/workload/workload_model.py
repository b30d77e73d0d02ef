"""Jobs and profiles as the engine sees them, after validation."""

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Job:
    """A job of a workload. `id` is the protocol id `"<workload>!<local id>"`."""

    id: str
    workload: str
    local_id: str
    subtime: float
    res: int
    walltime: float  # seconds after start, -1 when the job has none
    profile: str
    # The job's JSON as given, with `id` rewritten to the protocol id; extra fields kept,
    # since JOB_SUBMITTED forwards them to the decider.
    json: dict[str, Any] = field(default_factory=dict)


@dataclass
class Workload:
    """One `-w` file, named w0, w1, ... in command-line order."""

    name: str
    path: str
    jobs: list[Job]  # in submission order: by (subtime, job id as a string)
    profiles: dict[str, dict[str, Any]]  # validated profile JSON, by name
    nb_res: int | None = None
