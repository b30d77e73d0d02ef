"""Forecast a live Slurm: simulate forward from its state and predict each pending job's start.

The simulation's time 0 is the state's `now`. The platform has one host per node, named as the
node, all of one speed, numbered in `sinfo -N` order: resource i is node i, as for the adapter
(adapter.py), whichever way the names sort. The workload, all submitted at 0:

- each running job lasts what its time limit leaves it (start + limit - now) and is pinned:
  the decider's option `pinned` (deciders/common/pinned_jobs.py) starts it at 0 on exactly its
  nodes, before the decider's own pass;
- each pending job asks for its nodes for its time limit, and lasts it: Slurm plans with
  limits too, and a job's real runtime is unknown before it ends.

Nodes that are down or drained are made unavailable at 0 (a running job on a draining node
ends there first). A pending job that needs more nodes than can ever be usable never starts.
The decider runs in this process (no sockets): a forecast of a small cluster takes a fraction
of a second.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

from joulesim.adapters.slurm.slurm_state import ClusterState
from joulesim.deciders import DeciderChoiceError, accepted_options, load_decider_class

__all__ = ["ForecastInputs", "forecast_inputs", "forecast_platform", "forecast_starts", "check_forecast_decider"]

#: The speed of every host: delay profiles do not depend on it.
HOST_SPEED = "1Gf"
#: A running job past its limit (Slurm is about to end it) still holds its nodes at 0; the
#: simulation needs a walltime > 0: it ends this long after 0, well under Slurm's 1 s resolution.
LEAST_LEFT_S = 1e-3
#: When the draining nodes' running jobs hold them (placed at 0, none ends before LEAST_LEFT_S).
DRAINING_AT_S = LEAST_LEFT_S / 2


@dataclass
class ForecastInputs:
    platform: dict[str, Any]
    host_order: list[str]  # node names, resource i first
    workload: dict[str, Any]
    pinned: dict[str, str]  # decider job id (w0!...) -> machines
    events: list[dict[str, Any]]
    slurm_ids: dict[str, str]  # workload job id -> Slurm job id (pending jobs only)
    never: list[str]  # pending Slurm jobs that need more nodes than can be usable


def forecast_inputs(state: ClusterState) -> ForecastInputs:
    ids = {name: i for i, name in enumerate(state.nodes)}
    master = "master_host"
    while master in ids:  # (a node may be named so)
        master = "_" + master
    platform = {"master": {"name": master, "speed": HOST_SPEED},
                "hosts": [{"name": name, "speed": HOST_SPEED} for name in state.nodes]}
    jobs, profiles, pinned, slurm_ids = [], {}, {}, {}

    def add(slurm_id: str, res: int, seconds: float) -> str:
        # Every job is submitted at 0, and jobs submitted together enter the queue by id (the
        # workload loader sorts them by id as strings): a zero-padded rank first makes that order
        # running jobs first, then the pending ones in Slurm's priority order.
        job_id = f"{len(jobs):06d}-{slurm_id}"
        profile = f"d{seconds!r}"
        profiles[profile] = {"type": "delay", "delay": seconds}
        jobs.append({"id": job_id, "subtime": 0, "res": res, "walltime": seconds, "profile": profile})
        return job_id

    for job in state.running:
        left = max(LEAST_LEFT_S, job.start + job.limit_s - state.now)
        job_id = add(job.slurm_id, len(job.nodes), left)
        pinned[f"w0!{job_id}"] = " ".join(str(ids[name]) for name in job.nodes)
    usable = len(state.nodes) - len(state.unavailable)
    never = [job.slurm_id for job in state.pending if job.nodes > usable or job.nodes < 1]
    for job in state.pending:
        if job.slurm_id not in never:
            slurm_ids[add(job.slurm_id, job.nodes, job.limit_s)] = job.slurm_id
    # A node down or drained takes no new job: unavailable at 0, before any pass. One still running
    # a job (draining) becomes so once that job holds it, just after 0: the simulator refuses to
    # start a job on an unavailable host, and a host taken away while busy stays out of the pool
    # when its job ends.
    busy = {name for job in state.running for name in job.nodes}
    events = []
    for timestamp, names in ((0, [n for n in state.unavailable if n not in busy]),
                             (DRAINING_AT_S, [n for n in state.unavailable if n in busy])):
        if names:
            events.append({"type": "machine_unavailable", "timestamp": timestamp,
                           "resources": " ".join(str(ids[name]) for name in names)})
    return ForecastInputs(platform, list(state.nodes), {"nb_res": len(state.nodes), "jobs": jobs, "profiles": profiles},
                          pinned, events, slurm_ids, never)


def check_forecast_decider(name: str) -> None:
    """Refuse, before any Slurm command, a decider that cannot start running jobs where they run."""
    accepted = accepted_options(name, load_decider_class(name))
    if accepted is not None and "pinned" not in accepted:
        raise DeciderChoiceError(f"decider {name} cannot forecast: it does not take option pinned (which starts "
                                 "the running jobs on their nodes); the queue deciders do: fcfs, sjf, easy, "
                                 "conservative, wfp, unicef, utility")


def forecast_platform(inputs: ForecastInputs):
    """The loaded platform: host i is node i of `sinfo -N`, named as it."""
    from joulesim.simulation_inputs import platform_from

    platform = platform_from(inputs.platform)
    # Hosts loaded from a file are numbered by name as strings compare (n1, n10, n2...), as
    # Batsim numbers them; here resource i must be node i of `sinfo -N` (n1, n2, ..., n10), the
    # node the pins and the adapter mean by i.
    by_name = {host.name: host for host in platform.compute_hosts}
    platform.compute_hosts = [by_name[name] for name in inputs.host_order]
    for i, host in enumerate(platform.compute_hosts):
        host.id = i
    return platform


def forecast_starts(inputs: ForecastInputs, decider: str, options: dict[str, str] | None = None
                    ) -> dict[str, float | None]:
    """Slurm id of each pending job -> predicted start, seconds after the state's `now` (None:
    never), with `decider` (options `options`) in this process."""
    import joulesim

    platform = forecast_platform(inputs)
    starts: dict[str, float | None] = {slurm_id: None for slurm_id in inputs.never}
    if not inputs.workload["jobs"]:
        return starts
    with tempfile.TemporaryDirectory(prefix="joulesim-forecast-") as directory:
        path = os.path.join(directory, "pinned.json")
        with open(path, "w") as out:
            json.dump(inputs.pinned, out)
        result = joulesim.simulate(platform, inputs.workload, decider, options={**(options or {}), "pinned": path},
                                   events=inputs.events or None, verbosity="quiet")
    for job_id, start in zip(result.jobs["job_id"].astype(str), result.jobs["starting_time"].astype(float)):
        if job_id in inputs.slurm_ids:  # (a job the decider rejected has no start: NaN or -1)
            starts[inputs.slurm_ids[job_id]] = start if start >= 0 else None
    return starts
