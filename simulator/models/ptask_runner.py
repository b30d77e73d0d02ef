"""Running jobs' activities over a network: progress, rate re-solves, completions.

Used when the platform describes a network. Each running job is driven by a *job model*
(job_activity.JobModel, chosen from its profile type by job_models.job_model_for) which starts
*activities* on the job's `ActivityContext`: SimGrid parallel tasks. An activity on hosts
E = (E[0], E[1], ...):

- uses flops on the CPU of each executor (one CPU element per executor, even for two on one
  host: SimGrid creates them apart, each counts as one user of the CPU), and bytes on every
  resource of the route of each flow (several flows of one activity on a link add up);
- first pays its latency once (the longest route latency among its flows), during which it
  uses nothing;
- then progresses as one cursor from 0 to 1 at the rate `ptask_sharing` gives it: SimGrid's
  fair-bottleneck rule, under which the activities on a saturated resource get equal shares of
  it in flop/s or bytes/s.

Rates are re-solved whenever an activity joins or leaves the sharing; activities started by
the callbacks of one instant join in one re-solve. One calendar entry stands for the next
completion; a re-solve makes the previous one stale (generation counter). A host's load, for
energy, is its flops x rate / its speed (the cursor's CPU share); a job's dynamic power is the
sum over its running activities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from joulesim.simulator.models.job_models import job_model_for
from joulesim.simulator.models.ptask_sharing import fair_bottleneck_periods

if TYPE_CHECKING:
    from joulesim.simulator.models.job_activity import JobModel
    from joulesim.simulator.platform.network_topology import NetworkTopology
    from joulesim.simulator.workload.job_record import JobRecord

# Activities predicted to end within this of a completion event end with it (absorbs float
# noise in the progress of activities whose rate changed many times).
_DONE_S = 1e-9
_NO_RESOURCES = np.empty(0, dtype=np.int64)
_NO_AMOUNTS = np.empty(0)


class _Activity:
    """One parallel task of a job (ActivityHandle)."""

    __slots__ = ("resources", "amounts", "own_period", "latency", "cpu_hosts", "cpu_flops",
                 "remaining", "period", "updated", "sharing", "end", "then", "over", "job")

    def __init__(self, then: Callable[[], None]):
        self.resources = _NO_RESOURCES
        self.amounts = _NO_AMOUNTS
        self.own_period = 0.0  # bound from outside the shared resources (delay, FATPIPE)
        self.latency = 0.0
        self.cpu_hosts: list[int] = []
        self.cpu_flops: list[float] = []
        self.remaining = 1.0  # fraction of the cursor left
        self.period = 0.0  # seconds for the whole activity at the current rate
        self.updated = 0.0
        self.sharing = False  # past its latency, progressing
        self.end = float("inf")  # predicted at the last re-solve
        self.then = then
        self.over = False  # completed, cancelled, or its job was killed
        self.job: "_RunningJob | None" = None

    def progress(self) -> float:
        return min(1.0, max(0.0, 1.0 - self.remaining))

    def cancel(self) -> None:
        """Stop it now (an MPI request cancelled): it stops using its resources; `then` is not called."""
        self.job.cancel(self)


class _RunningJob:
    """A running job's ActivityContext: its model, its hosts and its running activities."""

    __slots__ = ("runner", "record", "hosts", "model", "activities")

    def __init__(self, runner: "ParallelTaskRunner", record: "JobRecord", hosts: list[int]):
        self.runner = runner
        self.record = record
        self.hosts = hosts
        self.model: "JobModel | None" = None
        self.activities: list[_Activity] = []  # started, not over (in start order)

    def now(self) -> float:
        return self.runner._now()

    def execute(self, cpu: Sequence[tuple[int, float]], flows: Sequence[tuple[int, int, float]],
                then: Callable[[], None]) -> _Activity:
        activity = self.runner._build_activity(cpu, flows, then)
        self._launch(activity)
        return activity

    def sleep(self, seconds: float, then: Callable[[], None]) -> _Activity:
        activity = _Activity(then)
        activity.own_period = float(seconds)
        self._launch(activity)
        return activity

    def finish(self) -> None:
        runner = self.runner
        if runner.jobs.get(id(self.record)) is self:
            del runner.jobs[id(self.record)]
            runner._job_done(self.record)

    def cancel(self, activity: _Activity) -> None:
        if activity.over:
            return
        runner = self.runner
        runner._advance()
        activity.over = True
        self.activities.remove(activity)
        if activity.sharing:
            activity.sharing = False
            if runner._dynamic_power_changed is not None:
                runner._report_power(self)
            runner._resolve()

    def _launch(self, activity: _Activity) -> None:
        runner = self.runner
        activity.job = self
        now = runner._now()
        activity.updated = now
        self.activities.append(activity)
        if activity.latency > 0:
            runner._at(now + activity.latency, runner._latency_over, activity)
        else:
            runner._advance()  # the others' cursors to now, before the rates change
            activity.sharing = True
            runner._dirty = True


class ParallelTaskRunner:
    def __init__(self, network: "NetworkTopology", nb_hosts: int, host_speed: list[float], host_cores: list[int],
                 at: Callable[[float, Callable[[Any], None], Any], None], now: Callable[[], float],
                 job_done: Callable[["JobRecord"], None],
                 dynamic_power_changed: Callable[["JobRecord", float], None] | None,
                 wattages: Callable[[int], tuple[float, float]] | None,
                 traces_of: Callable[["JobRecord"], Any] | None = None):
        self.network = network
        self.nb_hosts = nb_hosts
        self.host_speed = host_speed  # the simulation's list: current speeds (of one core)
        self.host_cores = host_cores
        self._multicore = any(cores > 1 for cores in host_cores)
        self._at = at
        self._now = now
        self._job_done = job_done  # called when a job's model finishes it
        self._dynamic_power_changed = dynamic_power_changed  # None without energy
        self._wattages = wattages  # host -> (idle, max) W at its current pstate
        self.jobs: dict[int, _RunningJob] = {}  # by id(record)
        self._traces_of = traces_of  # the parsed traces of a trace profile's job
        self._generation = 0
        self._dirty = False  # an activity joined the sharing since the last re-solve
        self._advanced_to = -1.0  # the time every sharing cursor was last moved to
        self._deferred_at = -1.0  # the instant a re-solve is due at, for activities past their latency

    # ------------------------------------------------------------------ jobs
    def start(self, record: "JobRecord", executors: list[int], storages: dict[str, int] | None = None) -> None:
        """Start a job on its executors' hosts; `storages` maps its profile's storage labels
        to host ids (storage hosts come after the compute hosts)."""
        job = _RunningJob(self, record, executors)
        self.jobs[id(record)] = job
        job.model = job_model_for(record, storages or {}, self._traces_of, self.host_cores)
        job.model.start(job)
        self._resolve_if_dirty()

    def kill(self, record: "JobRecord") -> dict[str, Any]:
        """Stop the job now; its Batsim `job_progress` entry."""
        self._advance()
        job = self.jobs.pop(id(record))
        progress = job.model.progress()
        was_sharing = False
        for activity in job.activities:
            activity.over = True
            was_sharing |= activity.sharing
        job.activities = []
        if was_sharing:
            self._resolve()
        return progress

    def _latency_over(self, activity: _Activity) -> None:
        if activity.over:
            return  # its job was killed meanwhile
        self._advance()
        activity.sharing = True
        activity.updated = now = self._now()
        # Activities posted together end their latency together (an MPI rank's isends, a
        # collective's messages): one re-solve at the end of the instant serves them all.
        self._dirty = True
        if self._deferred_at != now:
            self._deferred_at = now
            self._at(now, self._deferred_resolve, None)

    def _deferred_resolve(self, _: Any) -> None:
        self._deferred_at = -1.0
        self._resolve_if_dirty()

    # ------------------------------------------------------------------ sharing
    def _sharing(self) -> list[tuple[_RunningJob, _Activity]]:
        return [(job, activity) for job in self.jobs.values() for activity in job.activities if activity.sharing]

    def _advance(self) -> None:
        """Move every progressing activity's cursor to now (once per instant: a cursor moved
        in two steps would not land on the same float)."""
        now = self._now()
        if now == self._advanced_to:
            return
        self._advanced_to = now
        for job in self.jobs.values():
            for activity in job.activities:
                if not activity.sharing:
                    continue
                if activity.period > 0 and now > activity.updated:
                    activity.remaining -= (now - activity.updated) / activity.period
                activity.updated = now

    def _resolve_if_dirty(self) -> None:
        if self._dirty:
            self._resolve()

    def _resolve(self) -> None:
        """New rates for every progressing activity; one calendar entry for the next completion."""
        self._dirty = False
        now = self._now()
        pairs = self._sharing()
        self._generation += 1
        if not pairs:
            return
        activities = [activity for _, activity in pairs]
        speeds = np.asarray(self.host_speed, dtype=float)
        if self._multicore:
            speeds = speeds * np.asarray(self.host_cores, dtype=float)
        capacity = np.concatenate([speeds, self.network.capacity])
        counts = [a.resources.size for a in activities]
        task_index = np.repeat(np.arange(len(activities)), counts)
        resources = np.concatenate([a.resources for a in activities])
        amounts = np.concatenate([a.amounts for a in activities])
        own = np.array([a.own_period for a in activities])
        periods = fair_bottleneck_periods(task_index, resources, amounts, capacity, own)
        next_end = np.inf
        changed: dict[int, _RunningJob] = {}
        for (job, activity), period in zip(pairs, periods.tolist()):
            if period != activity.period:
                activity.period = period
                changed[id(job)] = job
            end = activity.end = now + activity.remaining * period
            if end < next_end:
                next_end = end
        if self._dynamic_power_changed is not None:
            for job in changed.values():
                self._report_power(job)
        if np.isfinite(next_end):
            self._at(max(next_end, now), self._completions, self._generation)

    def _completions(self, generation: int) -> None:
        if generation != self._generation:
            return  # a later re-solve moved the next completion
        self._advance()
        # The entry was set at the earliest predicted end: that activity (at least) is done, even
        # if its float progress says 1e-16 is left (periods reach 1e7 s: 1e-9 s of "work").
        now = self._now()
        finished = [(job, activity) for job, activity in self._sharing() if activity.end <= now + _DONE_S]
        for job, activity in finished:
            activity.sharing = False
            activity.over = True
            activity.remaining = 0.0
            job.activities.remove(activity)
        if self._dynamic_power_changed is not None:
            for job in {id(job): job for job, _ in finished}.values():
                self._report_power(job)
        for job, activity in finished:
            if self.jobs.get(id(job.record)) is job:  # not finished by an earlier callback
                activity.then()
        self._resolve()  # once for every activity that ended or joined now

    def _report_power(self, job: _RunningJob) -> None:
        # The meter ignores a power equal to the job's last one.
        self._dynamic_power_changed(job.record, sum(self._dynamic_power(a) for a in job.activities if a.sharing))

    def _dynamic_power(self, activity: _Activity) -> float:
        if activity.period <= 0 or self._wattages is None:
            return 0.0
        watts = 0.0
        for host, flops in zip(activity.cpu_hosts, activity.cpu_flops):
            idle, peak = self._wattages(host)
            load = flops / (self.host_speed[host] * self.host_cores[host] * activity.period)
            watts += (peak - idle) * min(load, 1.0)
        return watts

    # ------------------------------------------------------------------ activity building
    def _build_activity(self, cpu: Sequence[tuple[int, float]], flows: Sequence[tuple[int, int, float]],
                        then: Callable[[], None]) -> _Activity:
        activity = _Activity(then)
        resources: list[int] = []
        amounts: list[float] = []
        for host, flops in cpu:
            if flops > 0:
                resources.append(host)
                amounts.append(flops)
                activity.cpu_hosts.append(host)
                activity.cpu_flops.append(flops)
                if self._multicore:  # ptask_L07's bound: an executor gets one core's speed at most
                    activity.own_period = max(activity.own_period, flops / self.host_speed[host])
        offset = self.nb_hosts
        fatpipe = self.network.fatpipe
        route, self_route = self.network.route, self.network.self_route
        usage: dict[int, float] = {}
        fat_usage: dict[int, float] = {}
        latency = 0.0
        for src, dst, amount in flows:
            if amount <= 0:
                continue
            # SimGrid routes a host's bytes to itself too (up its link and down again, in a cluster).
            route_resources, route_latency = route(src, dst) if src != dst else self_route(src)
            if route_latency > latency:
                latency = route_latency
            for resource in route_resources:
                if fatpipe[resource]:  # no sharing: each flow has the whole link (SimGrid: max)
                    fat_usage[resource] = max(fat_usage.get(resource, 0.0), amount)
                else:
                    key = offset + resource
                    usage[key] = usage.get(key, 0.0) + amount
        activity.latency = latency
        for resource, amount in fat_usage.items():
            activity.own_period = max(activity.own_period, amount / float(self.network.capacity[resource]))
        if resources or usage:
            activity.resources = np.array(resources + list(usage.keys()), dtype=np.int64)
            activity.amounts = np.array(amounts + list(usage.values()), dtype=float)
        return activity
