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
from joulesim.simulator.memory_contention import speedup

if TYPE_CHECKING:
    from joulesim.simulator.energy_meter import EnergyMeter
    from joulesim.simulator.job_record import JobRecord
    from joulesim.simulator.node_hierarchy import NodeHierarchy, Processor

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


class _Task:
    __slots__ = ("job", "core", "remaining", "rate", "bandwidth", "updated")

    def __init__(self, job: "_RunningJob", core: int, ops: float, bandwidth: float, now: float):
        self.job = job
        self.core = core
        self.remaining = ops
        self.rate = 1.0  # ops/s, set by the first re-solve
        self.bandwidth = bandwidth
        self.updated = now

    def finish_time(self) -> float:
        return self.updated + self.remaining / self.rate if self.remaining > 0 else self.updated


class _RunningJob:
    __slots__ = ("record", "tasks", "ops", "processors", "generation")

    def __init__(self, record: "JobRecord", ops: float):
        self.record = record
        self.tasks: list[_Task] = []
        self.ops = ops
        self.processors: dict[int, int] = {}  # processor index -> cores it holds there
        self.generation = 0


class _ProcessorState:
    __slots__ = ("spec", "tasks", "held", "used", "nominal")

    def __init__(self, spec: "Processor"):
        self.spec = spec
        self.tasks: list[_Task] = []
        self.held = 0  # cores held by running jobs
        self.used = False  # a task has run here (IRMaSim's idle-power rule)
        self.nominal = spec.mops * 1e6  # ops/s of one core without contention


class CoreTaskRunner:
    def __init__(self, hierarchy: "NodeHierarchy", at: Callable[[float, Callable[[Any], None], Any], None],
                 now: Callable[[], float], job_done: Callable[["JobRecord"], None],
                 energy: "EnergyMeter | None", running: "list[JobRecord | None]", idle_power: str = "irmasim"):
        if idle_power not in IDLE_POWER_RULES:
            raise ValueError(f"idle_power must be one of {IDLE_POWER_RULES}")
        self.hierarchy = hierarchy
        self._at = at
        self._now = now
        self._job_done = job_done
        self._energy = energy
        self._running = running  # the simulation's host -> running job list
        self.idle_power = idle_power
        self._processors = [_ProcessorState(p) for p in hierarchy.processors]
        self._core_processor = hierarchy.core_processor
        self.jobs: dict[int, _RunningJob] = {}  # by id(record)

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
        self.jobs[id(record)] = job
        mem_vol = float(profile.get("mem_vol", 0.0))
        touched = []
        for core in cores:
            index = self._core_processor[core]
            state = self._processors[index]
            if index not in job.processors:
                job.processors[index] = 0
                touched.append(index)
                self._advance(state, now)
            job.processors[index] += 1
            # Bandwidth over the task's run alone at nominal speed (IRMaSim's definition).
            bandwidth = mem_vol / (ops / state.nominal) if ops > 0 else 0.0
            task = _Task(job, core, ops, bandwidth, now)
            job.tasks.append(task)
            state.tasks.append(task)
        if self._energy is not None:
            dynamic = 0.0
            for index, count in job.processors.items():
                state = self._processors[index]
                dynamic += count * state.spec.dynamic_power
                state.used = True
                state.held += count
                if state.held == count:  # was idle: its static power rises to full
                    self._set_processor_static(state, now, busy=True)
            self._energy.set_dynamic_power(now, record, dynamic)
        else:
            for index, count in job.processors.items():
                self._processors[index].held += count
        self._resolve(touched, now)

    def kill(self, record: "JobRecord") -> dict[str, Any]:
        """Stop the job now; its Batsim `job_progress` entry."""
        now = self._now()
        job = self.jobs.pop(id(record))
        for index in job.processors:
            self._advance(self._processors[index], now)
        left = max((task.remaining for task in job.tasks), default=0.0)
        progress = 1.0 - left / job.ops if job.ops > 0 else 1.0
        self._release(job, now)
        return {"profile_name": record.job.profile, "progress": min(1.0, max(0.0, progress))}

    def _job_ends(self, item: tuple[_RunningJob, int]) -> None:
        job, generation = item
        if generation != job.generation or id(job.record) not in self.jobs:
            return  # rescheduled since, or killed
        now = self._now()
        del self.jobs[id(job.record)]
        for index in job.processors:
            self._advance(self._processors[index], now)
        for task in job.tasks:
            task.remaining = 0.0
        self._job_done(job.record)  # settles the job's energy before its processors' power drops
        self._release(job, now)

    def _release(self, job: _RunningJob, now: float) -> None:
        """Take the job's tasks off its processors, lower their power, re-solve them."""
        gone = set(map(id, job.tasks))
        for index, count in job.processors.items():
            state = self._processors[index]
            state.tasks = [task for task in state.tasks if id(task) not in gone]
            state.held -= count
            if self._energy is not None and state.held == 0:
                self._set_processor_static(state, now, busy=False)
        self._resolve(list(job.processors), now)

    # ------------------------------------------------------------------ rates
    @staticmethod
    def _advance(state: _ProcessorState, now: float) -> None:
        for task in state.tasks:
            if task.remaining > 0 and now > task.updated:
                task.remaining -= task.rate * (now - task.updated)
                if task.remaining <= _DONE_OPS:
                    task.remaining = 0.0
            task.updated = now

    def _resolve(self, processors: list[int], now: float) -> None:
        """New speeds on these processors (advanced to now), new predicted ends for their jobs."""
        affected: dict[int, _RunningJob] = {}
        for index in processors:
            state = self._processors[index]
            active = [task for task in state.tasks if task.remaining > 0]
            total = sum(task.bandwidth for task in active)
            others = len(active) - 1
            c = state.spec.contention
            for task in active:
                task.rate = state.nominal * speedup(total, task.bandwidth, others, c["b"], c["c"], c["da"],
                                                    c["db"], c["dc"], c["dd"])
            for task in state.tasks:
                affected[id(task.job)] = task.job
        for job in affected.values():
            self._schedule_end(job)

    def _schedule_end(self, job: _RunningJob) -> None:
        if id(job.record) not in self.jobs:
            return
        job.generation += 1
        end = max(task.finish_time() for task in job.tasks)
        self._at(max(end, self._now()), self._job_ends, (job, job.generation))

    # ------------------------------------------------------------------ power
    def _set_processor_static(self, state: _ProcessorState, now: float, busy: bool) -> None:
        spec = state.spec
        watts = spec.static_power if busy else spec.min_power * spec.static_power
        share = watts / len(spec.cores)
        self._energy.set_static_watts(now, spec.cores, [share] * len(spec.cores), self._running, row=False)
