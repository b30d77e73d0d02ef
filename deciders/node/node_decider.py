"""What IRMaSim's workload managers share, as a decider on the protocol: the node platform
view, the jobs read as IRMaSim sees them, and IRMaSim's order of work within one time step.

In IRMaSim a time step first hands the submitted jobs to the manager, which schedules; then
it frees the cores of the jobs that ended and hands them over, and the manager schedules
again. A message holding both submissions and completions is handled the same way here:
`schedule()` runs after the submissions with the ending jobs' cores still busy, then once
more after they are freed. (Decisions all carry the message's time; cores not yet freed are
simply not used by the first pass.) Cores made unavailable or available by the simulator
change the view at once, and a pass follows.

Jobs that no node of the platform could ever take are rejected at submission (IRMaSim would
keep them pending forever).

Subclasses set NAME and OPTIONS and implement `job_needs`, `fits_ever`, `admit`,
`schedule` and, when they keep per-job state, `released`.
"""

from __future__ import annotations

from typing import Any

from procset import ProcSet

from joulesim.deciders.node.node_jobs import JobReader, NodeJob
from joulesim.deciders.node.node_platform import NodePlatform, NodeRun, hierarchy_required_error
from joulesim.protocol.decider import Decider, SubmittedJob

__all__ = ["NodeDecider"]


class NodeDecider(Decider):
    """Base of the deciders for IRMaSim platforms (resources are cores of a node hierarchy)."""

    NAME = "node"
    OPTIONS: dict[str, str] = {}
    #: Whether the platform view keeps each node's first-processor bandwidth.
    track_bandwidth = False

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.platform: NodePlatform | None = None
        self.reader: JobReader | None = None
        self.pending: dict[str, NodeJob] = {}  # submitted, not rejected, not started
        self._submitted = False
        self._completed: list[str] = []
        self._availability_changed = False

    # ------------------------------------------------------------------ hooks
    def job_needs(self) -> dict[str, str]:
        """Job fields needed beyond the size (see JobReader) -> the option needing it."""
        return {}

    def setup(self) -> None:
        """Called once the platform view exists."""

    def before_admission(self, job: NodeJob) -> None:
        """Called for every submitted job, before it is rejected or admitted."""

    def fits_ever(self, job: NodeJob) -> bool:
        raise NotImplementedError

    def admit(self, job: NodeJob) -> None:
        raise NotImplementedError

    def schedule(self) -> None:
        raise NotImplementedError

    def released(self, job_id: str, run: NodeRun) -> None:
        """Called once a started job's cores are free again."""

    # ------------------------------------------------------------------ helpers
    def start(self, job: NodeJob, placement: list[tuple[int, int]]) -> ProcSet:
        """Start a pending job: each (node, tasks) of `placement` gives that many of the node's
        first idle cores."""
        assert self.platform is not None
        alloc = self.platform.start(job.id, placement, job.mem, job.ops, job.mem_vol)
        del self.pending[job.id]
        self.execute_job(job.id, alloc)
        return alloc

    # ------------------------------------------------------------------ callbacks
    def on_simulation_begins(self, data: dict[str, Any]) -> None:
        self.platform = NodePlatform(self.NAME, data, track_bandwidth=self.track_bandwidth)
        self.reader = JobReader(self.NAME, data.get("profiles"), self.job_needs())
        self.setup()

    def on_job_submitted(self, job: SubmittedJob) -> None:
        if self.reader is None:
            raise hierarchy_required_error(self.NAME)
        self._submitted = True
        node_job = self.reader.read(job)
        self.before_admission(node_job)
        if not self.fits_ever(node_job):
            self.reject_job(job.id)
            return
        self.pending[job.id] = node_job
        self.admit(node_job)

    def on_job_completed(self, job: SubmittedJob, state: str, return_code: int, alloc: ProcSet) -> None:
        self._completed.append(job.id)

    def on_machine_unavailable(self, resources: ProcSet) -> None:
        if self.platform is not None:
            self.platform.set_unavailable(resources, True)
            self._availability_changed = True

    def on_machine_available(self, resources: ProcSet) -> None:
        if self.platform is not None:
            self.platform.set_unavailable(resources, False)
            self._availability_changed = True

    def decide(self) -> None:
        platform = self.platform
        if platform is None:
            return
        if self._submitted:
            self._submitted = False
            self.schedule()
        if self._completed or self._availability_changed:
            completed, self._completed = self._completed, []
            self._availability_changed = False
            for job_id in completed:
                run = platform.finish(job_id)
                if run is not None:
                    self.released(job_id, run)
            self.schedule()
