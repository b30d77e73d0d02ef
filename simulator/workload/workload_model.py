"""Jobs and profiles as the engine sees them, after validation."""

from dataclasses import dataclass, field
from typing import Any

from joulesim.inputs.input_error import InputError


@dataclass(slots=True)  # (no __dict__: a trace holds hundreds of thousands of jobs)
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
    # The traces of its usage_trace (and smpi) profiles, read with the file, by profile name.
    traces: dict[str, Any] = field(default_factory=dict)


def workload_machine_limit(workloads: list[Workload], mmax: int, nb_compute: int, source: str) -> int:
    """The compute hosts a run may use under Batsim's `--mmax-workload`: the largest `nb_res` of
    the workloads, and at most `mmax` when that is given (batsim.cpp, load_workloads_and_workflows).
    InputError when a workload has no nb_res or asks for more hosts than the platform `source` has."""
    for workload in workloads:
        if workload.nb_res is None:
            raise InputError(workload.path, "top level: field 'nb_res'", "is missing, and --mmax-workload limits the "
                             "machines to the workloads' nb_res", "add \"nb_res\": N to the workload, or drop --mmax-workload")
    widest = max(workloads, key=lambda w: w.nb_res)  # type: ignore[arg-type, return-value]
    limit: int = min(mmax, widest.nb_res) if mmax > 0 else widest.nb_res  # type: ignore[assignment, type-var]
    if limit > nb_compute and limit == widest.nb_res:
        raise InputError(widest.path, "top level: field 'nb_res'",
                         f"is {limit}, more than the {nb_compute} compute hosts of {source} (--mmax-workload)",
                         f"use a platform of at least {limit} compute hosts, or drop --mmax-workload")
    return limit
