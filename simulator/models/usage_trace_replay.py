"""The job model of Batsim's `usage_trace` profile: each rank replays its (usage, flops) lines.

Batsim 4.2.1 (jobs_execution.cpp): rank r runs on the job's host r mod (its executors), as for
smpi; each line of a rank's trace is one parallel task on that host with k = max(round(usage x
cores), 1) executors of FLOPS each, so a line lasts FLOPS / one core's speed when the host is
not shared, whatever the usage, and loads usage of the host's cores (energy follows). Lines of
a rank run one after another, ranks in parallel; the job ends with its last rank.

Killed, the job reports the share of its lines done (the running ones by their progress).
Batsim 4.2.1 does not compute the progress of these profiles (jobs.cpp warns "not
implemented" and sends the initial 0).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from joulesim.simulator.models.job_activity import ActivityContext, ActivityHandle
    from joulesim.simulator.workload.usage_traces import UsageTraces


class UsageTraceReplay:
    """JobModel of a usage_trace profile."""

    def __init__(self, name: str, traces: "UsageTraces", host_cores: list[int]):
        self.name = name
        self.traces = traces
        self.host_cores = host_cores
        self.context: "ActivityContext | None" = None
        self.position = [0] * traces.nb_ranks  # next line's index in the rank's pairs
        self.current: list["ActivityHandle | None"] = [None] * traces.nb_ranks
        self.running = traces.nb_ranks
        self.total_lines = sum(len(pairs) // 2 for pairs in traces.ranks)

    def start(self, context: "ActivityContext") -> None:
        self.context = context
        if self.running == 0:
            context.finish()
            return
        for rank in range(self.traces.nb_ranks):
            self._next_line(rank)

    def _next_line(self, rank: int) -> None:
        pairs = self.traces.ranks[rank]
        i = self.position[rank]
        if i >= len(pairs):
            self.current[rank] = None
            self.running -= 1
            if self.running == 0:
                self.context.finish()
            return
        usage, flops = pairs[i], pairs[i + 1]
        self.position[rank] = i + 2
        hosts = self.context.hosts
        host = hosts[rank % len(hosts)]
        executors = max(math.floor(usage * self.host_cores[host] + 0.5), 1)  # C's round: half away from 0
        self.current[rank] = self.context.execute([(host, flops)] * executors, [], lambda: self._next_line(rank))

    def progress(self) -> dict[str, Any]:
        done = 0.0
        for rank, handle in enumerate(self.current):
            finished_lines = self.position[rank] // 2
            if handle is not None:
                done += finished_lines - 1 + handle.progress()
            else:
                done += finished_lines
        return {"profile_name": self.name, "progress": done / self.total_lines if self.total_lines else 1.0}
