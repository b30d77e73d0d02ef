"""Batsim's workflow submitters (job_submitter.cpp, workflow_submitter_process): each workflow
submits its ready tasks as jobs, and each completion makes its children ready.

At the workflow's start time its tasks without parents are ready (in id order). Ready tasks are
submitted in order while fewer than --workflow-jobs-limit of its jobs are in flight (0: no
limit). A task becomes job `WF!N` (N counts the workflow's jobs from 0) of `res` = num_procs,
walltime runtime + 10 s, profile `WF_<task id>` = a delay of its runtime, submitted at that
moment. When one of its jobs completes, its children whose parents have all completed become
ready, after the ones already waiting. The workflow is over when nothing is ready or in flight.
"""

from __future__ import annotations

from typing import Any

from joulesim.simulator.workload.dax_workflow import Workflow, WorkflowTask

# Batsim's walltime of a workflow job: its runtime plus this.
WALLTIME_MARGIN_S = 10.0


class WorkflowRun:
    def __init__(self, workflow: Workflow, jobs_limit: int):
        self.workflow = workflow
        self.jobs_limit = jobs_limit
        self.ready: list[WorkflowTask] = [task for task in workflow.tasks.values() if not task.parents]
        self.parents_done = dict.fromkeys(workflow.tasks, 0)
        self.in_flight: dict[str, WorkflowTask] = {}  # job id -> task
        self.next_number = 0
        self.over = False  # the submitter said goodbye
        self.called_back: set[str] = set()  # jobs whose end the server told (Batsim's actors)

    @property
    def name(self) -> str:
        return self.workflow.name

    def take_ready(self) -> list[WorkflowTask]:
        """The ready tasks to submit now (the limit counts the jobs in flight)."""
        out: list[WorkflowTask] = []
        while self.ready and (self.jobs_limit == 0 or self.jobs_limit > len(self.in_flight) + len(out)):
            out.append(self.ready.pop(0))
        return out

    def job_of(self, task: WorkflowTask, now: float) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """(the job's JSON, its profile's name, the profile) for a task submitted at `now`."""
        number = str(self.next_number)
        self.next_number += 1
        profile_name = f"{self.name}_{task.id}"
        self.in_flight[f"{self.name}!{number}"] = task
        job = {"id": number, "subtime": now, "walltime": task.runtime + WALLTIME_MARGIN_S, "res": task.num_procs,
               "profile": profile_name}
        return job, profile_name, {"type": "delay", "delay": task.runtime}

    def completed(self, job_id: str) -> None:
        task = self.in_flight.pop(job_id)
        self.called_back.discard(job_id)
        tasks = self.workflow.tasks
        for child in task.children:
            self.parents_done[child] += 1
            if self.parents_done[child] == len(tasks[child].parents):
                self.ready.append(tasks[child])

    def finished(self) -> bool:
        return not self.ready and not self.in_flight
