"""Running jobs' parallel tasks over a network: progress, rate re-solves, completions.

Used when the platform describes a network. Each running job executes its profile one leaf
task at a time (a `composed` profile unrolled, `repeat` times). A leaf task on executors
E = (host of executor 0, 1, ...):

- uses `cpu[i]` flops on the CPU of E[i], and `com[i][j]` bytes on every resource of the
  route from E[i] to E[j] (`parallel`; `parallel_homogeneous` and `..._total` spread their
  amounts as Batsim does);
- first pays its latency once (the longest route latency among the pairs that communicate),
  during which it uses nothing;
- then progresses as one cursor from 0 to 1 at the rate `ptask_sharing` gives it: SimGrid's
  fair-bottleneck rule, under which the tasks on a saturated resource get equal shares of it
  in flop/s or bytes/s (one CPU element per executor, one link element per task and link).

Rates are re-solved whenever a task joins or leaves the sharing. One calendar entry stands
for the next completion; a re-solve makes the previous one stale (generation counter).
A host's load, for energy, is its flops x rate / its speed (the cursor's CPU share).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from joulesim.simulator.models.ptask_sharing import fair_bottleneck_periods

if TYPE_CHECKING:
    from joulesim.simulator.platform.network_topology import NetworkTopology
    from joulesim.simulator.workload.job_record import JobRecord

# Tasks predicted to end within this of a completion event end with it (absorbs float noise
# in the progress of tasks whose rate changed many times).
_DONE_S = 1e-9


class _LeafTask:
    """The leaf task a job is executing now."""

    __slots__ = ("name", "resources", "amounts", "own_period", "latency", "cpu_hosts", "cpu_flops",
                 "remaining", "period", "updated", "sharing", "end")

    def __init__(self, name: str):
        self.name = name
        self.resources = np.empty(0, dtype=np.int64)
        self.amounts = np.empty(0)
        self.own_period = 0.0  # bound from outside the shared resources (delay, FATPIPE)
        self.latency = 0.0
        self.cpu_hosts: list[int] = []
        self.cpu_flops: list[float] = []
        self.remaining = 1.0  # fraction of the cursor left
        self.period = 0.0  # seconds for the whole task at the current rate
        self.updated = 0.0
        self.sharing = False  # past its latency, progressing
        self.end = float("inf")  # predicted at the last re-solve


class _RunningJob:
    __slots__ = ("record", "executors", "sequence", "index", "task")

    def __init__(self, record: "JobRecord", executors: list[int], sequence: list[str]):
        self.record = record
        self.executors = executors
        self.sequence = sequence  # leaf profile names, composed profiles unrolled
        self.index = 0
        self.task: _LeafTask | None = None


class ParallelTaskRunner:
    def __init__(self, network: "NetworkTopology", nb_hosts: int, host_speed: list[float],
                 at: Callable[[float, Callable[[Any], None], Any], None], now: Callable[[], float],
                 job_done: Callable[["JobRecord"], None],
                 dynamic_power_changed: Callable[["JobRecord", float], None] | None,
                 wattages: Callable[[int], tuple[float, float]] | None):
        self.network = network
        self.nb_hosts = nb_hosts
        self.host_speed = host_speed  # the simulation's list: current speeds
        self._at = at
        self._now = now
        self._job_done = job_done  # called when a job's last task completes
        self._dynamic_power_changed = dynamic_power_changed  # None without energy
        self._wattages = wattages  # host -> (idle, max) W at its current pstate
        self.jobs: dict[int, _RunningJob] = {}  # by id(record)
        self._generation = 0
        self._last_time = 0.0

    # ------------------------------------------------------------------ jobs
    def start(self, record: "JobRecord", executors: list[int]) -> None:
        sequence = _unroll(record.job.profile, record.profiles)
        job = _RunningJob(record, executors, sequence)
        self.jobs[id(record)] = job
        self._begin_task(job)

    def kill(self, record: "JobRecord") -> dict[str, Any]:
        """Stop the job now; its Batsim `job_progress` entry."""
        self._advance()
        job = self.jobs.pop(id(record))
        task = job.task
        progress = min(1.0, max(0.0, 1.0 - task.remaining)) if task is not None else 0.0
        if task is not None and task.sharing:
            self._resolve()
        leaf = {"profile_name": task.name if task else record.job.profile, "progress": progress}
        profile = record.profiles[record.job.profile]
        if profile["type"] != "composed":
            return leaf
        return {"profile_name": record.job.profile, "current_task_index": job.index, "current_task": leaf}

    def _begin_task(self, job: _RunningJob, resolve: bool = True) -> None:
        """Start the job's next leaf task (or end the job). `resolve=False`: the caller
        advanced every cursor to now already and re-solves once after a batch of starts."""
        now = self._now()
        if job.index >= len(job.sequence):
            del self.jobs[id(job.record)]
            self._job_done(job.record)
            return
        task = self._build_task(job, job.sequence[job.index])
        job.task = task
        task.updated = now
        if task.latency > 0:
            self._at(now + task.latency, self._latency_over, job)
        elif resolve:
            self._join(job)
        else:
            task.sharing = True

    def _latency_over(self, job: _RunningJob) -> None:
        if self.jobs.get(id(job.record)) is job:  # not killed meanwhile
            self._join(job)

    def _join(self, job: _RunningJob) -> None:
        self._advance()
        job.task.sharing = True
        job.task.updated = self._now()
        self._resolve()

    # ------------------------------------------------------------------ sharing
    def _sharing_jobs(self) -> list[_RunningJob]:
        return [job for job in self.jobs.values() if job.task is not None and job.task.sharing]

    def _advance(self) -> None:
        """Move every progressing task's cursor to now."""
        now = self._now()
        for job in self._sharing_jobs():
            task = job.task
            if task.period > 0 and now > task.updated:
                task.remaining -= (now - task.updated) / task.period
            task.updated = now

    def _resolve(self) -> None:
        """New rates for every progressing task; one calendar entry for the next completion."""
        now = self._now()
        jobs = self._sharing_jobs()
        self._generation += 1
        if not jobs:
            return
        tasks = [job.task for job in jobs]
        capacity = np.concatenate([np.asarray(self.host_speed, dtype=float), self.network.capacity])
        counts = [t.resources.size for t in tasks]
        task_index = np.repeat(np.arange(len(tasks)), counts)
        resources = np.concatenate([t.resources for t in tasks])
        amounts = np.concatenate([t.amounts for t in tasks])
        own = np.array([t.own_period for t in tasks])
        periods = fair_bottleneck_periods(task_index, resources, amounts, capacity, own)
        next_end = np.inf
        for job, task, period in zip(jobs, tasks, periods.tolist()):
            if period != task.period:
                task.period = period
                if self._dynamic_power_changed is not None:
                    self._dynamic_power_changed(job.record, self._dynamic_power(task))
            end = task.end = now + task.remaining * period
            if end < next_end:
                next_end = end
        if np.isfinite(next_end):
            self._at(max(next_end, now), self._completions, self._generation)

    def _completions(self, generation: int) -> None:
        if generation != self._generation:
            return  # a later re-solve moved the next completion
        self._advance()
        # The entry was set at the earliest predicted end: that task (at least) is done, even
        # if its float progress says 1e-16 is left (periods reach 1e7 s: 1e-9 s of "work").
        now = self._now()
        finished = [job for job in self._sharing_jobs() if job.task.end <= now + _DONE_S]
        for job in finished:
            job.task.sharing = False
            job.task.remaining = 0.0
            if self._dynamic_power_changed is not None:
                self._dynamic_power_changed(job.record, 0.0)
        for job in finished:
            job.index += 1
            self._begin_task(job, resolve=False)
        self._resolve()  # once for every task that ended or joined now

    def _dynamic_power(self, task: _LeafTask) -> float:
        if task.period <= 0 or self._wattages is None:
            return 0.0
        watts = 0.0
        for host, flops in zip(task.cpu_hosts, task.cpu_flops):
            idle, peak = self._wattages(host)
            load = flops / (self.host_speed[host] * task.period)
            watts += (peak - idle) * min(load, 1.0)
        return watts

    # ------------------------------------------------------------------ task building
    def _build_task(self, job: _RunningJob, name: str) -> _LeafTask:
        profile = job.record.profiles[name]
        task = _LeafTask(name)
        kind = profile["type"]
        if kind == "delay":
            task.own_period = float(profile["delay"])
            return task
        executors = job.executors
        n = len(executors)
        if kind == "parallel":
            cpu = [float(c) for c in profile["cpu"]]
            com = profile["com"]

            def bytes_between(i: int, j: int) -> float:
                return float(com[i * n + j])
        elif kind == "parallel_homogeneous":
            cpu = [float(profile["cpu"])] * n
            pair = float(profile["com"])

            def bytes_between(i: int, j: int) -> float:
                return pair if i != j else 0.0
        elif kind == "parallel_homogeneous_total":
            cpu = [float(profile["cpu"]) / n] * n if n else []
            pair = float(profile["com"]) / (n * (n - 1)) if n > 1 else 0.0

            def bytes_between(i: int, j: int) -> float:
                return pair if i != j else 0.0
        else:
            raise ValueError(f"profile {name!r} has type {kind!r}, which the network model does not run")
        # One CPU element per executor, even for two executors on one host (SimGrid creates
        # them apart: each counts as one user of the CPU); one link element per link.
        cpu_elements: list[tuple[int, float]] = []
        usage: dict[int, float] = {}
        for host, flops in zip(executors, cpu):
            if flops > 0:
                cpu_elements.append((host, flops))
                task.cpu_hosts.append(host)
                task.cpu_flops.append(flops)
        offset = self.nb_hosts
        fatpipe = self.network.fatpipe
        fat_usage: dict[int, float] = {}
        latency = 0.0
        route = self.network.route
        for i in range(n):
            src = executors[i]
            for j in range(n):
                amount = bytes_between(i, j)
                dst = executors[j]
                if amount <= 0 or src == dst:
                    continue
                resources, route_latency = route(src, dst)
                if route_latency > latency:
                    latency = route_latency
                for resource in resources:
                    if fatpipe[resource]:  # no sharing: each flow has the whole link (SimGrid: max)
                        fat_usage[resource] = max(fat_usage.get(resource, 0.0), amount)
                    else:
                        key = offset + resource
                        usage[key] = usage.get(key, 0.0) + amount
        task.latency = latency
        for resource, amount in fat_usage.items():
            task.own_period = max(task.own_period, amount / float(self.network.capacity[resource]))
        task.resources = np.array([host for host, _ in cpu_elements] + list(usage.keys()), dtype=np.int64)
        task.amounts = np.array([flops for _, flops in cpu_elements] + list(usage.values()), dtype=float)
        return task


def _unroll(name: str, profiles: dict[str, dict[str, Any]]) -> list[str]:
    """The leaf profiles a job runs, in order (composed profiles expanded, `repeat` times)."""
    profile = profiles[name]
    if profile["type"] != "composed":
        return [name]
    once = [leaf for sub in profile["seq"] for leaf in _unroll(sub, profiles)]
    return once * int(profile.get("repeat", 1))
