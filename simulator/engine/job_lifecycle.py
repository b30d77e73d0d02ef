"""A job's life inside the simulation once submitted: start on its hosts (with its profile's
duration, or on the runner that shares the platform), end of its tasks or walltime, kill,
rejection, and the rows and statistics it leaves.

`JobLifecycle` is part of `Simulation` (its base class): these methods use the simulation's
hosts, calendar, energy meter and outputs. Decisions (decisions.py) call `start_job`,
`kill_job` and `reject_job`.
"""

from __future__ import annotations

from functools import partial
from heapq import heappush
from typing import Any

from simpy.events import NORMAL

from joulesim.protocol.errors import DecisionError
from joulesim.protocol.interval_set import expand_runs
from joulesim.simulator.engine.calendar_entry import CalendarEntry
from joulesim.simulator.models.job_execution import (
    profile_busy_seconds,
    profile_duration,
    profile_progress,
    profile_return_code,
)
from joulesim.simulator.output.schedule_trace import kill_is_traced
from joulesim.simulator.workload.job_record import RUNNING, JobRecord

# Profiles Batsim runs as one SimGrid parallel task on the job's hosts only (pfs and staging
# tasks add a storage host: never an Exec of one host).
_PARALLEL_TASKS = ("parallel", "parallel_homogeneous", "parallel_homogeneous_total")


class JobLifecycle:
    """The job life cycle of a `Simulation` (its base class)."""

    def start_job(self, record: JobRecord, runs: list[tuple[int, int]], size: int, alloc_str: str,
                  executors: list[int] | None, storages: dict[str, int] | None = None) -> None:
        """Run a job on the hosts of `runs` (canonical intervals); `executors` maps its executors
        to hosts when a mapping was given (None: one executor per host, in order); `storages`
        maps its profile's storage labels to storage resource ids."""
        now = self.env._now
        job = record.job
        record.state = RUNNING
        record.start = now
        record.alloc = runs
        record.alloc_str = alloc_str
        if self.host_running is not None:  # compute sharing: hosts idle until now start computing
            self.host_running.add(record, runs)
        else:
            host_job, busy = self.host_job, self.host_busy
            for a, b in runs:
                host_job[a:b + 1] = [record] * (b - a + 1)
                busy[a:b + 1] = b"\x01" * (b - a + 1)
        self.machines.job_started(now, record, runs)
        if storages and not self.config.storage_sharing:
            for storage in storages.values():
                self.storage_job[storage] = record
        profile = record.profiles[job.profile]
        dynamic_power = 0.0
        if (self.runner is not None or self.runner_wanted) and (profile["type"] != "delay" or self.host_running is not None):
            if self.runner is None:
                self.start_runner()
            self._start_on_runner(record, runs, executors or expand_runs(runs), storages or {})
            return
        if profile["type"] == "delay":  # the common case: no speeds involved
            duration = profile["delay"]
        else:
            host_speed = self.host_speed
            executor_hosts = executors or expand_runs(runs)
            record.speeds = [host_speed[h] for h in executor_hosts]
            duration = profile_duration(job.profile, record.profiles, record.speeds)
            if self.energy is not None and duration > 0:
                dynamic_power = self._dynamic_power(record, executor_hosts, duration)
        # With Batsim's actors and SimGrid's joules, the job's actor writes its row after its reads.
        actor_row = self.actors is not None and self.energy is not None and self.energy.simgrid is not None
        if self.energy is not None:
            self.energy.job_started(now, record, runs, dynamic_power, row=not actor_row)
        # Batsim sleeps a delay job's whole delay only when it is shorter than the walltime
        # (do_delay_task: `sleeptime < remaining_time`): a delay equal to the walltime is a walltime
        # reached. A parallel task that ends with its walltime ends first (its action is older
        # than the timeout's), so it succeeds.
        if profile["type"] == "delay":
            walltime_reached = 0 < job.walltime <= duration
        else:
            walltime_reached = 0 < job.walltime < duration
        if walltime_reached:
            duration = job.walltime
        self._set_end_state(record, walltime_reached)
        if self.actors is not None:  # the job's actor, on its first host, sleeps the duration
            job_hosts = expand_runs(runs) if self.actors.machines is not None else None
            start_row = (lambda: self.energy.write_row(self.env._now, "s")) if actor_row else None
            self.actors.after(duration, self._job_ends, record, runs[0][0], job=record, job_hosts=job_hosts,
                              start_row=start_row)
            return
        heappush(self._queue, (now + duration, NORMAL, next(self._event_ids), CalendarEntry(self._job_ends, record)))  # at()

    def _start_on_runner(self, record: JobRecord, runs: list[tuple[int, int]], executor_hosts: list[int],
                         storages: dict[str, int]) -> None:
        """Work that shares the platform (a network's links, a processor's memory bandwidth):
        the runner decides when it ends."""
        now = self.env._now
        record.speeds = [self.host_speed[h] for h in executor_hosts]
        if self.energy is not None:
            self.energy.job_started(now, record, runs, 0.0)  # the runner sets the dynamic part
            if self.host_running is not None:
                self.host_running.share_static_power(now, runs, self.energy)
        walltime = record.job.walltime
        if walltime > 0:
            if self.actors is not None:  # Batsim's job actor waits for its task at most the walltime, on
                # the job's first host; an end before cancels that wait (no clock step at the walltime)
                self.actors.after(walltime, self._walltime_reached, record, runs[0][0], job=record)
            else:
                self.at(now + walltime, self._walltime_reached, record)
        if self.actors is not None and len(set(executor_hosts)) == 1 and \
                record.profiles[record.job.profile]["type"] in _PARALLEL_TASKS:  # (an Exec of one host, in SimGrid)
            self.actors.exec_starts_on(executor_hosts[0])
        if storages:  # resource ids -> network host numbers (--mmax may leave compute hosts out)
            shift = len(self.config.platform.compute_hosts) - self.nb_hosts
            self.runner.start(record, executor_hosts, {label: resource + shift for label, resource in storages.items()})
        else:  # the node model's runner too, which has no storages
            self.runner.start(record, executor_hosts)

    @staticmethod
    def _set_end_state(record: JobRecord, walltime_reached: bool) -> None:
        """What JOB_COMPLETED will say: the walltime, else the profile's return code."""
        if walltime_reached:
            record.end_state = "COMPLETED_WALLTIME_REACHED"
            record.return_code = -1
        else:
            code = record.return_code = profile_return_code(record.job.profile, record.profiles)
            record.end_state = "COMPLETED_FAILED" if code else "COMPLETED_SUCCESSFULLY"

    def _tasks_done(self, record: JobRecord) -> None:
        self._set_end_state(record, walltime_reached=False)
        self._job_ends(record)

    def _walltime_reached(self, record: JobRecord) -> None:
        if record.state != RUNNING:
            return  # it finished (or was killed) first
        runner = self.runner
        if getattr(runner, "stepped", False):
            # Batsim's job actor stops waiting for its task, reports, and ends; only then does
            # SimGrid cancel the task (an actor's activities die with it): meanwhile it loads
            # its CPUs and links, e.g. the links the report crosses.
            runner.abandon(record)
            self.actors.when_actor_ends(partial(runner.end_abandoned, record))
        else:
            runner.kill(record)
        self._set_end_state(record, walltime_reached=True)
        self._job_ends(record)

    def _dynamic_power(self, record: JobRecord, executor_hosts: list[int], duration: float) -> float:
        """Mean dynamic watts of a compute job: sum of (max - idle) x busy seconds / duration.

        Exact for one parallel task; a composed job whose tasks load hosts differently gets
        its mean over the whole profile (its total dynamic energy is exact either way).
        """
        busy = profile_busy_seconds(record.job.profile, record.profiles, record.speeds)
        hosts, pstates = self.hosts, self.host_pstate
        joules = 0.0
        for host, seconds in zip(executor_hosts, busy):
            idle, peak = hosts[host].wattage_per_state[pstates[host]]
            joules += (peak - idle) * seconds
        return joules / duration

    def _job_ends(self, record: JobRecord) -> None:
        if record.state != RUNNING:
            return  # killed earlier: this end no longer happens
        state = record.end_state
        self._finish(record, state, kill_traced=state == "COMPLETED_WALLTIME_REACHED")
        self.pending.append({"timestamp": self.env._now, "type": "JOB_COMPLETED", "data": {  # emit(), inlined
            "job_id": record.job.id,
            "job_state": state,
            "return_code": record.return_code,
            "alloc": record.alloc_str,
        }})

    def kill_job(self, record: JobRecord) -> dict[str, Any]:
        """Kill a running job now; returns its Batsim `job_progress` entry."""
        if self.actors is not None:
            self.actors.kill_job_actor(record)
        if self.runner is not None and record in self.runner.jobs:
            progress = self.runner.kill(record)
        else:
            progress = profile_progress(record.job.profile, record.profiles, record.speeds,
                                        self.env.now - record.start)
        self._finish(record, "COMPLETED_KILLED", kill_traced=kill_is_traced(progress, record.profiles))
        return progress

    def _finish(self, record: JobRecord, state: str, kill_traced: bool) -> None:
        """The job leaves its hosts now; `kill_traced`: the Pajé trace shows it killed."""
        now = self.env._now
        job = record.job
        record.state = state
        record.finish = now
        if self.host_running is not None:  # compute sharing: only hosts left with no job are idle
            self.host_running.remove(record)
        else:
            host_job, busy = self.host_job, self.host_busy
            for a, b in record.alloc:
                host_job[a:b + 1] = [None] * (b - a + 1)
                busy[a:b + 1] = bytes(b - a + 1)
        if self.storage_job:
            for storage in [s for s, holder in self.storage_job.items() if holder is record]:
                del self.storage_job[storage]
        self.machines.job_ended(now, record, record.alloc, kill_traced)
        energy = 0.0
        if self.energy is not None:
            energy = self.energy.job_ended(now, record)
            if record.exact_energy is not None:  # Batsim's long double, printed as it prints it
                from joulesim.simulator.energy.long_double import fixed  # (numpy: energy runs only)

                energy = fixed(record.exact_energy)
            self._energy_last_end = self.energy.energy_at(now)
            if self.host_running is not None:
                self.host_running.share_static_power(now, record.alloc, self.energy)
        row = (job.local_id, job.workload, job.profile, job.subtime, job.res, job.walltime, state, record.start,
               now, record.alloc_str, energy)
        if self.actors is not None and self.actors.away_from_server():
            # Batsim's server writes the row when it takes the job's JOB_COMPLETED message (a
            # partial, not a closure: a checkpoint holds the reports on their way).
            self.actors.when_server_takes(partial(self._row_written, row, record))
        else:
            self._row_written(row, record)
        self.stats.record_finished(state, job.subtime, record.start, now)
        self._job_left(record)

    def _row_written(self, row: tuple, record: JobRecord) -> None:
        """A finished job's row of the jobs output; its end is then told to the decider."""
        self.jobs_out.write_finished(*row, record.metadata)
        self.ends_handled.append(record)

    def _job_left(self, record: JobRecord) -> None:
        """What follows any end of a job (completed, killed or rejected): one job less to wait
        for, its profile to collect (Batsim's garbage collection), progress, and in a workflow its
        children may be ready (with Batsim's actors the server tells the workflow's submitter:
        batsim_actors.py)."""
        self.nb_unfinished -= 1
        job = record.job
        if self._collect_profiles:
            self._profiles_to_collect.append((job.workload, job.profile))
        if self._progress is not None:
            self._progress.update()
        run = self.workflow_runs.get(job.workload) if self.workflow_runs else None
        if run is not None and self.actors is None and job.id in run.in_flight:
            run.completed(job.id)
            self.workflow_step(run)

    def reject_job(self, record: JobRecord, state: str = "REJECTED") -> None:
        job = record.job
        record.state = state
        record.finish = self.env._now
        self.jobs_out.write_rejected(job.local_id, job.workload, job.profile, job.subtime, job.res,
                                     job.walltime, record.metadata, state)
        self.ends_handled.append(record)
        self.stats.record_rejected()
        self._job_left(record)

    def record_of(self, job_id: str, context: str) -> JobRecord:
        record = self.records.get(job_id)
        if record is None:
            raise DecisionError(f"{context}: unknown job {job_id!r}: no workload has it (job ids look like "
                                f"'w0!1'; register dynamic jobs with REGISTER_JOB first)")
        return record
