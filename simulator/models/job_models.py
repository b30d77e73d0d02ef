"""Which job model runs a job on the network runner, from its profile's type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from joulesim.simulator.models.leaf_sequence import LeafSequence
from joulesim.simulator.models.smpi_replay import SmpiReplay, compiled_replay_possible
from joulesim.simulator.models.usage_trace_replay import UsageTraceReplay

if TYPE_CHECKING:
    from joulesim.simulator.models.job_activity import JobModel
    from joulesim.simulator.workload.job_record import JobRecord


def job_model_for(record: "JobRecord", storages: dict[str, int], traces_of: Callable[["JobRecord"], Any],
                  host_cores: list[int]) -> "JobModel":
    """The model of a starting job: its storage labels resolved, `traces_of` giving the parsed
    traces of a trace profile's job."""
    name = record.job.profile
    kind = record.profiles[name]["type"]
    if kind == "usage_trace":
        return UsageTraceReplay(name, traces_of(record), host_cores)
    if kind == "smpi":  # rank r on executor r mod res; Batsim's job actor on the alloc's first host
        traces = traces_of(record)
        if compiled_replay_possible(traces):
            from joulesim.simulator.models.smpi_replay_compiled import CompiledSmpiReplay  # (loads its kernel)

            return CompiledSmpiReplay(traces, name, launcher_host=record.alloc[0][0])
        return SmpiReplay(traces, name, launcher_host=record.alloc[0][0])
    return LeafSequence(name, record.profiles, storages)
