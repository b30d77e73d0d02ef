"""Jobs of `cpu_ops` profiles on IRMaSim's node model: one task per core, contention per processor.

A job allocated cores C runs one task per core, each executing ops = ceil(req_ops / ipc)
operations. A task asks memory bandwidth mem_vol / (ops / core speed). On each processor, the
speed of every busy core is nominal x `memory_contention.speedup(X, own bandwidth, others)`,
re-solved on that processor whenever a job starts or ends there (IRMaSim's modelV1 does the
same: a task that finishes inside a still-running job changes nothing until the job ends).
A job ends when its last task does. One calendar entry stands for each job's predicted end; a
re-solve makes the previous one stale (generation counter).

Power, when energy is on (per processor): static_power + dynamic_power x the cores held by
running jobs, or min_power x static_power when it holds none. A core keeps drawing dynamic
power until its whole job ends, as in IRMaSim. Under IRMaSim's rule (`idle_power="irmasim"`,
its own accounting) a processor draws nothing until its first task starts; under
`idle_power="always"` it draws min power from t=0. In the energy meter, processor static
power is spread evenly over its cores, so a job's energy is its cores' dynamic power plus
their share of their processors' static power while it runs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from joulesim.protocol.errors import DecisionError
from joulesim.simulator.models.memory_contention import speedup

if TYPE_CHECKING:
    from joulesim.simulator.energy.energy_meter import EnergyMeter
    from joulesim.simulator.platform.node_hierarchy import NodeHierarchy, Processor
    from joulesim.simulator.workload.job_record import JobRecord

IDLE_POWER_RULES = ("irmasim", "always")

# Tasks within half an operation of their end are done (IRMaSim counts whole operations).
_DONE_OPS = 0.5


def initial_static_watts(hierarchy: "NodeHierarchy", idle_power: str) -> list[float]:
    """Per core: its share of its processor's power before anything runs."""
    watts = [0.0] * hierarchy.nb_cores
    if idle_power == "always":
        for spec in hierarchy.processors:
            share = spec.min_power * spec.static_power / len(spec.cores)
            for core in spec.cores:
                watts[core] = share
    return watts


class _Tasks:
    """A job's tasks on one processor: identical (same operations, bandwidth and speed), so
    they are kept as one group of `count` tasks."""

    __slots__ = ("job", "count", "remaining", "rate", "bandwidth", "updated")

    def __init__(self, job: "_RunningJob", count: int, ops: float, bandwidth: float, now: float):
        self.job = job
        self.count = count
        self.remaining = ops  # operations left to each task
        self.rate = 1.0  # ops/s of each task, set by the first re-solve
        self.bandwidth = bandwidth  # asked by each task
        self.updated = now

    def finish_time(self) -> float:
        return self.updated + self.remaining / self.rate if self.remaining > 0 else self.updated


class _RunningJob:
    __slots__ = ("record", "groups", "ops", "generation")

    def __init__(self, record: "JobRecord", ops: float):
        self.record = record
        self.groups: dict[int, _Tasks] = {}  # processor index -> its tasks there
        self.ops = ops
        self.generation = 0


class _ProcessorState:
    __slots__ = ("spec", "groups", "held", "nominal")

    def __init__(self, spec: "Processor"):
        self.spec = spec
        self.groups: list[_Tasks] = []
        self.held = 0  # cores held by running jobs
        self.nominal = spec.mops * 1e6  # ops/s of one core without contention


class CoreTaskRunner:
    def __init__(self, hierarchy: "NodeHierarchy", at: Callable[[float, Callable[[Any], None], Any], None],
                 now: Callable[[], float], job_done: Callable[["JobRecord"], None],
                 energy: "EnergyMeter | None", running: "list[JobRecord | None]"):
        # The idle-power rule only sets the processors' power before their first task
        # (initial_static_watts): once used, an idle processor draws min power under both.
        self._at = at
        self._now = now
        self._job_done = job_done
        self._energy = energy
        self._running = running  # the simulation's host -> running job list
        self._processors = [_ProcessorState(p) for p in hierarchy.processors]
        self._core_processor = hierarchy.core_processor
        self.jobs: dict["JobRecord", _RunningJob] = {}  # by record (its identity: a checkpoint keeps the key)

    # ------------------------------------------------------------------ jobs
    def start(self, record: "JobRecord", cores: list[int]) -> None:
        profile = record.profiles[record.job.profile]
        if profile["type"] != "cpu_ops":
            raise DecisionError(f"EXECUTE_JOB {record.job.id}: profile {record.job.profile!r} is of type "
                                f"{profile['type']!r}; on a node-model (IRMaSim) platform jobs run delay or "
                                "cpu_ops profiles")
        now = self._now()
        ops = float(math.ceil(profile["req_ops"] / profile.get("ipc", 1)))
        job = _RunningJob(record, ops)
        self.jobs[record] = job
        counts: dict[int, int] = {}
        core_processor = self._core_processor
        for core in cores:
            index = core_processor[core]
            counts[index] = counts.get(index, 0) + 1
        mem_vol = float(profile.get("mem_vol", 0.0))
        energy = self._energy
        dynamic = 0.0
        for index, count in counts.items():
            state = self._processors[index]
            self._advance(state, now)
            # Bandwidth over the task's run alone at nominal speed (IRMaSim's definition).
            bandwidth = mem_vol / (ops / state.nominal) if ops > 0 else 0.0
            group = job.groups[index] = _Tasks(job, count, ops, bandwidth, now)
            state.groups.append(group)
            state.held += count
            if energy is not None:
                dynamic += count * state.spec.dynamic_power
                if state.held == count:  # was idle: its static power rises to full
                    self._set_processor_static(state, now, busy=True)
        if energy is not None:
            energy.set_dynamic_power(now, record, dynamic)
        self._resolve(counts, now)

    def kill(self, record: "JobRecord") -> dict[str, Any]:
        """Stop the job now; its Batsim `job_progress` entry."""
        now = self._now()
        job = self.jobs.pop(record)
        for index in job.groups:
            self._advance(self._processors[index], now)
        left = max((group.remaining for group in job.groups.values()), default=0.0)
        progress = 1.0 - left / job.ops if job.ops > 0 else 1.0
        self._release(job, now)
        return {"profile_name": record.job.profile, "progress": min(1.0, max(0.0, progress))}

    def _job_ends(self, item: tuple[_RunningJob, int]) -> None:
        job, generation = item
        if generation != job.generation or job.record not in self.jobs:
            return  # rescheduled since, or killed
        now = self._now()
        del self.jobs[job.record]
        for index, group in job.groups.items():
            self._advance(self._processors[index], now)
            group.remaining = 0.0
        self._job_done(job.record)  # settles the job's energy before its processors' power drops
        self._release(job, now)

    def _release(self, job: _RunningJob, now: float) -> None:
        """Take the job's tasks off its processors, lower their power, re-solve them."""
        for index, group in job.groups.items():
            state = self._processors[index]
            state.groups.remove(group)
            state.held -= group.count
            if self._energy is not None and state.held == 0:
                self._set_processor_static(state, now, busy=False)
        self._resolve(job.groups, now)

    # ------------------------------------------------------------------ rates
    @staticmethod
    def _advance(state: _ProcessorState, now: float) -> None:
        for group in state.groups:
            if group.remaining > 0 and now > group.updated:
                group.remaining -= group.rate * (now - group.updated)
                if group.remaining <= _DONE_OPS:
                    group.remaining = 0.0
            group.updated = now

    def _resolve(self, processors: "dict[int, Any]", now: float) -> None:
        """New speeds on these processors (advanced to now), new predicted ends for their jobs."""
        affected: dict[int, _RunningJob] = {}
        for index in processors:
            state = self._processors[index]
            active = [group for group in state.groups if group.remaining > 0]
            total = 0.0
            tasks = 0
            for group in active:
                total += group.bandwidth * group.count
                tasks += group.count
            c = state.spec.contention
            for group in active:
                group.rate = state.nominal * speedup(total, group.bandwidth, tasks - 1, c["b"], c["c"], c["da"],
                                                     c["db"], c["dc"], c["dd"])
            for group in state.groups:
                affected[id(group.job)] = group.job
        for job in affected.values():
            self._schedule_end(job)

    def _schedule_end(self, job: _RunningJob) -> None:
        if job.record not in self.jobs:
            return
        job.generation += 1
        end = max(group.finish_time() for group in job.groups.values())
        self._at(max(end, self._now()), self._job_ends, (job, job.generation))

    # ------------------------------------------------------------------ power
    def _set_processor_static(self, state: _ProcessorState, now: float, busy: bool) -> None:
        spec = state.spec
        watts = spec.static_power if busy else spec.min_power * spec.static_power
        share = watts / len(spec.cores)
        self._energy.set_static_watts(now, spec.cores, [share] * len(spec.cores), self._running, row=False)
