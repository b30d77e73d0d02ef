"""What reaches the simulation from outside the decider: the workloads' jobs at their submission
times, and the external events (machines unavailable or available again) at theirs.

`EventSources` is part of `Simulation` (its base class), as the job life cycle is.
"""

from __future__ import annotations

from typing import Any

from joulesim.protocol.interval_set import format_interval_set
from joulesim.simulator.engine.workflow_runs import WorkflowRun
from joulesim.simulator.workload.dax_workflow import WorkflowTask
from joulesim.simulator.workload.job_record import SUBMITTED, JobRecord
from joulesim.simulator.workload.workload_loader import parse_job


class EventSources:
    """The workloads' submissions and the external events of a `Simulation` (its base class)."""

    def start_event_sources(self, with_workloads: bool) -> None:
        """Put the workloads' first submissions and the external events on the calendar."""
        for index, workload in enumerate(self.config.workloads if with_workloads else ()):
            if workload.jobs:
                self.at(workload.jobs[0].subtime, self._submit_from, (index, 0))
            else:
                self._submitter_done()
        for run in self.workflow_runs.values() if with_workloads else ():
            self.at(max(run.workflow.start_time, 0.0), self.workflow_step, run)
        if self.submitters_left == 0 and not self.config.workloads:
            self.emit("NOTIFY", {"type": "no_more_static_job_to_submit"})
        if self.config.external_events:
            self.at(self.config.external_events[0].timestamp, self._external_from, 0)
        elif self.config.has_events_file:
            self.emit("NOTIFY", {"type": "no_more_external_event_to_occur"})

    def _submit_from(self, cursor: tuple[int, int]) -> None:
        index, position = cursor
        jobs = self.config.workloads[index].jobs
        now = self.env._now
        while position < len(jobs) and jobs[position].subtime <= now:
            self.submit(self.records[jobs[position].id])
            position += 1
        if position < len(jobs):
            self.at(jobs[position].subtime, self._submit_from, (index, position))
        else:
            self._submitter_done()

    def workflow_step(self, run: WorkflowRun) -> None:
        """A workflow submits its ready tasks; with nothing left, its submitter is done."""
        now = self.env._now
        for task in run.take_ready():
            self.submit(self.workflow_record(run, task, now))
        if run.finished() and not run.over:
            run.over = True
            self._submitter_done()

    def workflow_record(self, run: WorkflowRun, task: WorkflowTask, now: float) -> JobRecord:
        """The job of a workflow task submitted now (its profile registered in the workflow's workload)."""
        raw, profile_name, profile = run.job_of(task, now)
        profiles = self.profiles[run.name]
        profiles[profile_name] = profile
        job = parse_job(raw, 0, run.name, profiles, run.workflow.path)
        record = self.records[job.id] = JobRecord(job, profiles)
        return record

    def _submitter_done(self) -> None:
        self.submitters_left -= 1
        if self.submitters_left == 0:
            self.emit("NOTIFY", {"type": "no_more_static_job_to_submit"})

    def job_entered(self) -> None:
        """A job enters the simulation (submitted, or started at once by --no-sched): it is to
        finish, and the first opens Batsim's energy window."""
        if self._energy_first_submission is None and self.energy is not None:
            self._energy_first_submission = self.energy.window_start(self.env._now)
        self.nb_unfinished += 1

    def submit(self, record: JobRecord, announce: bool = True) -> None:
        if self.config.ignore_beyond_last_workflow and self.workflow_runs and all(r.over for r in self.workflow_runs.values()):
            return  # Batsim's --ignore-beyond-last-workflow: never submitted, never in the outputs
        self.job_entered()
        record.state = SUBMITTED
        if announce:
            self.pending.append({"timestamp": self.env._now, "type": "JOB_SUBMITTED", "data": self.job_data(record)})

    def job_data(self, record: JobRecord) -> dict[str, Any]:
        """A job as JOB_SUBMITTED tells it: its id, its JSON, and its profile when forwarded."""
        data: dict[str, Any] = {"job_id": record.job.id, "job": record.job.json}
        if self.config.forward_profiles:
            data["profile"] = record.profiles[record.job.profile]
        return data

    def _external_from(self, position: int) -> None:
        events = self.config.external_events
        now = self.env._now
        while position < len(events) and events[position].timestamp <= now:
            event = events[position]
            if event.forwarded is not None:  # an unknown type, forwarded whole (--forward-unknown-events)
                self.emit("NOTIFY", event.forwarded)
            else:
                self._set_availability(event.resources, available=event.type == "machine_available")
                self.emit("NOTIFY", {"type": "event_" + event.type, "resources": format_interval_set(event.resources)})
            position += 1
        if position < len(events):
            self.at(events[position].timestamp, self._external_from, position)
        else:
            self.event_submitter_done = True
            if self.config.has_events_file:
                self.emit("NOTIFY", {"type": "no_more_external_event_to_occur"})

    def _set_availability(self, resources, available: bool) -> None:
        now = self.env._now
        for host in resources:
            if self.host_unavailable[host] != available:
                continue  # already in the requested state
            self.host_unavailable[host] = not available
            self.nb_unavailable += -1 if available else 1
            self.machines.set_availability(now, host, available)
