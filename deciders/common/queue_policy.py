"""What the queue-based scheduling policies (FCFS, SJF, EASY, conservative) share.

`QueuePolicy` keeps, from protocol messages only:

- the waiting queue, in submission order (`self.queue`, a `WaitingQueue`);
- the machines usable now (`self.free_mask`): every compute resource announced at
  SIMULATION_BEGINS (except those already `unavailable` there), minus the machines of
  running jobs, minus the machines made unavailable by NOTIFY `event_machine_unavailable`,
  plus those made available again. A machine that becomes unavailable while a job runs on
  it stays out of the pool when the job ends;
- the running jobs (`self.running`: job id -> `RunningJob` with alloc, start time and
  estimated end = start + walltime, or `math.inf` without walltime).

Machine sets are kept as bitmasks (machine_masks.py); the free machines also as runs
(free_runs.py), from which an allocation takes the lowest ones, and their count, both kept
through starts and ends rather than found again in the mask. Jobs that can never fit (more
machines than the platform has compute resources, or fewer than one) are rejected at submission.

Subclasses implement `schedule()`, called from `decide()` when something that can change a
decision happened since the last call (a submission, a job end, an availability change).
The order in which a pass visits the waiting jobs is `self.queue_order` (a `QueueOrder`,
submission order by default; see queue_order.py); `strict_pass` starts jobs in that order
while they fit (`start_from_head` is its submission-order fast path).

The build compiles this class and EASY's (setup.py), as classes that Python classes may extend:
the callbacks and hooks a subclass overrides (`schedule`, `decide`, `_release`, `on_*`) are
annotated to return `Any`, so that an override that returns something is not refused (compiled
code checks a result against a built-in annotation such as None; protocol/decider.py).

Option `pinned` (pinned_jobs.py) names jobs that start on given machines as soon as they are
submitted, before the pass: a live cluster's running jobs, for a forecast from its state.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Iterator, Mapping

from procset import ProcSet

from joulesim.deciders.common.decider_options import label_ids_option
from joulesim.deciders.common.free_runs import FreeRuns
from joulesim.deciders.common.machine_masks import (
    lowest_bits,
    mask_runs,
    mask_to_procset,
    procset_to_mask,
)
from joulesim.deciders.common.pinned_jobs import PINNED_OPTION, check_pinned_machines, pinned_option
from joulesim.deciders.common.queue_order import SUBMISSION_ORDER, QueueOrder
from joulesim.deciders.common.waiting_queue import RunningJob, WaitingQueue
from joulesim.protocol.decider import Decider, SubmittedJob
from joulesim.protocol.interval_set import procset_from_canonical_runs as _procset_from_runs, procset_runs

try:  # (mypyc's class options: mypy_extensions comes with mypy, at build time only)
    from mypy_extensions import mypyc_attr
except ImportError:
    from joulesim.protocol.compiled_class_options import mypyc_attr  # type: ignore[no-redef]

__all__ = ["QueuePolicy"]


# --------------------------------------------------------------------------- the policy
@mypyc_attr(allow_interpreted_subclasses=True)
class QueuePolicy(Decider):
    """Base of the queue policies: waiting queue, usable machines, running jobs."""

    #: Options the decider accepts (name -> description); `load_decider` rejects others.
    OPTIONS: ClassVar[dict[str, str]] = {
        "storage_mapping": "storage labels of the jobs' pfs and data_staging profiles -> storage resource ids, "
                           "sent with every EXECUTE_JOB (e.g. pfs:128,bb:129; default: none, Batsim's guess)",
        **PINNED_OPTION,
    }
    #: The order in which passes visit the waiting jobs (a policy with another order sets its own).
    queue_order: ClassVar[QueueOrder] = SUBMISSION_ORDER

    def __init__(self, options: Mapping[str, Any] | None = None):
        super().__init__(options)
        self.storage_mapping = label_ids_option(type(self).__name__, self.options, "storage_mapping")
        self.pinned = pinned_option(type(self).__name__, self.options)  # job id -> machines (pinned_jobs.py)
        self.queue = WaitingQueue()
        self.running: dict[str, RunningJob] = {}
        self.all_mask = 0  # every compute resource
        self.unavailable_mask = 0  # made unavailable by NOTIFY (or at SIMULATION_BEGINS)
        self.busy_mask = 0  # given to running jobs
        self.free_mask = 0  # usable now: all & ~busy & ~unavailable (a property: its count is kept)
        # True once two running jobs were given the same machine (a decider's own masks): the
        # end of one no longer frees exactly its own machines, so the count is made again.
        self._masks_overlap = False
        self.nb_machines = 0
        self.needs_schedule = False  # something happened that can change a decision
        self.resources_changed = True  # a job ended or availability changed since schedule()

    # ---------------------------------------------------------------- state queries
    @property
    def free_mask(self) -> int:
        """The machines usable now: all & ~busy & ~unavailable (bit i: machine i)."""
        return self._free_mask

    @free_mask.setter
    def free_mask(self, mask: int) -> None:
        self._free_mask = mask
        self._free_count = -1  # (counted again when asked: see free_count)
        self._free_runs: FreeRuns | None = None  # (found again when a job needs the lowest: start_job)

    def free_count(self) -> int:
        """How many machines are free: counted once per change of free_mask. A count costs the
        mask's size (microseconds on 93,312 machines), and most decider calls (a job submitted
        to a full platform) ask it with nothing changed since the last."""
        count = self._free_count
        if count < 0:
            count = self._free_count = self._free_mask.bit_count()
        return count

    @property
    def nb_free(self) -> int:
        return self.free_count()

    @property
    def free_machines(self) -> ProcSet:
        return mask_to_procset(self.free_mask)

    @property
    def unavailable_machines(self) -> ProcSet:
        return mask_to_procset(self.unavailable_mask)

    @staticmethod
    def walltime_of(job: SubmittedJob) -> float:
        """The requested walltime; `math.inf` when the job has none (Batsim: -1, any negative)."""
        return math.inf if job.walltime < 0 else job.walltime

    # ---------------------------------------------------------------- decisions
    def allocate(self, n: int) -> ProcSet:
        """The n lowest-id free machines (fewer when not enough are free)."""
        return mask_to_procset(lowest_bits(self.free_mask, n))

    def start_job(self, job: SubmittedJob, mask: int | None = None) -> RunningJob:
        """Execute a waiting job now, on `mask` (default: its res lowest-id free machines)."""
        if mask is None:
            free_runs = self._free_runs
            if free_runs is None:  # (the free machines were set whole since: their runs once)
                free_runs = self._free_runs = FreeRuns(mask_runs(self._free_mask))
            runs = free_runs.take_lowest(job.res)
            if len(runs) == 1:
                first, last = runs[0]
                size = last - first + 1
                mask = ((1 << size) - 1) << first
            else:  # every free machine up to the last one taken
                size = sum(last - first + 1 for first, last in runs)
                mask = self._free_mask & ((1 << (runs[-1][1] + 1)) - 1) if runs else 0
            self._free_mask ^= mask  # (one operation where &= ~mask makes two)
            if self._free_count >= 0:  # (every machine taken was free: no need to count them all again)
                self._free_count -= size
        else:
            runs = mask_runs(mask)
            size = sum(last - first + 1 for first, last in runs)
            if mask & self.busy_mask:  # (machines shared with a running job: see _release)
                self._masks_overlap = True
            self.free_mask &= ~mask
        alloc = _procset_from_runs(runs)
        job_id = job.id
        self.queue.remove(job_id)
        self.execute_job(job_id, alloc, storage_mapping=self.storage_mapping)
        self.busy_mask |= mask
        walltime = job.walltime
        record = RunningJob(job, alloc, mask, self.now, self.now + walltime if walltime >= 0 else math.inf, size)
        self.running[job_id] = record
        return record

    def strict_pass(self) -> tuple[SubmittedJob | None, Iterator[SubmittedJob] | None]:
        """Start the waiting jobs in `self.queue_order` while they fit. Returns the first that
        does not fit (None when all started) and the jobs after it in that order, as an iterator
        (None in submission order, whose fast path reads the queue's head)."""
        order = self.queue_order
        if order.submission_order:
            return self.start_from_head(), None
        jobs = order.ordered(self.queue, self.now)
        return self.start_in_order(jobs), jobs

    def start_in_order(self, jobs: Iterator[SubmittedJob]) -> SubmittedJob | None:
        """The strict pass: start the jobs of `jobs` (waiting jobs in priority order) while they
        fit; return the first that does not (None when all started). `jobs` is left just after it."""
        for job in jobs:
            if job.res > self.free_count():
                return job
            self.start_job(job)
        return None

    def start_from_head(self) -> SubmittedJob | None:
        """`start_in_order` in submission order, read from the queue's head: the fast path of
        FCFS and plain EASY (no iterator, no order object in their per-event loop)."""
        queue = self.queue
        while True:
            job = queue.first()
            if job is None or job.res > self.free_count():
                return job
            self.start_job(job)

    def _release(self, job_id: str) -> Any:
        # Idempotent: a job both killed and completed, or unknown, frees nothing twice.
        record = self.running.pop(job_id, None)
        if record is None:
            return
        mask = record.mask
        self.busy_mask ^= mask & self.busy_mask  # (&= ~mask without negating a mask: half the cost on wide ones)
        if self.unavailable_mask or self._masks_overlap:
            self.free_mask |= mask & ~self.unavailable_mask
        else:
            # Every machine of the job was busy, none free: the count grows by the job's size,
            # where counting the whole mask again costs its width (on every job's end), and its
            # runs join the free ones.
            self._free_mask |= mask
            if self._free_count >= 0:
                self._free_count += record.size
            if self._free_runs is not None:
                self._free_runs.give_back(procset_runs(record.alloc))
        self.needs_schedule = True
        self.resources_changed = True

    # ---------------------------------------------------------------- callbacks
    def on_simulation_begins(self, data: dict[str, Any]) -> Any:
        resources = self.compute_resources
        if resources:
            ids = [int(r["id"]) for r in resources]
            down = [int(r["id"]) for r in resources if r.get("state") == "unavailable"]
        else:
            ids = list(range(self.nb_resources))
            down = []
        self.all_mask = 0
        for i in ids:
            self.all_mask |= 1 << i
        self.unavailable_mask = 0
        for i in down:
            self.unavailable_mask |= 1 << i
        self.nb_machines = self.all_mask.bit_count()
        self.busy_mask = 0
        self.free_mask = self.all_mask & ~self.unavailable_mask
        self.needs_schedule = True
        self.resources_changed = True

    def on_job_submitted(self, job: SubmittedJob) -> Any:
        pinned = self.pinned.pop(job.id, None) if self.pinned else None
        if pinned is not None:
            self.start_pinned(job, pinned)
            return
        if job.res < 1 or job.res > self.nb_machines:
            self.reject_job(job.id)
            return
        self.queue.append(job)
        self.needs_schedule = True

    def start_pinned(self, job: SubmittedJob, mask: int) -> None:
        """Start `job` now on `mask` (option `pinned`): before this call's pass, which then sees
        those machines busy. It goes through the queue and `start_job`, so that the policies'
        own bookkeeping (EASY's estimated ends, conservative's profile) counts it; subclasses'
        submission hooks find it already gone from the queue and leave it alone."""
        check_pinned_machines(job.id, job.res, mask, self.all_mask, self.busy_mask)
        self.queue.append(job)
        self.start_job(job, mask)
        self.needs_schedule = True
        self.resources_changed = True  # (conservative rebuilds its plan rather than extend it)

    def on_job_running(self, job: SubmittedJob, alloc: ProcSet, start: float) -> Any:
        """Take over a job running on `alloc` since `start` (a forked simulation's new decider):
        it goes through the queue and `start_job` at its start time, as `start_pinned` does, so
        that the policies' own bookkeeping counts it with its estimated end, and the EXECUTE_JOB
        that makes is withdrawn (the job runs already)."""
        mask = procset_to_mask(alloc)
        check_pinned_machines(job.id, job.res, mask, self.all_mask, self.busy_mask)
        now = self.now
        self.now = start
        emitted = len(self._events)
        try:
            self.queue.append(job)
            self.start_job(job, mask)
        finally:
            self.now = now
        del self._events[emitted:]
        self.needs_schedule = True
        self.resources_changed = True

    def on_job_completed(self, job: SubmittedJob, state: str, return_code: int, alloc: ProcSet) -> Any:
        self._release(job.id)

    def on_job_killed(self, job_ids: list[str], progress: dict[str, Any]) -> Any:
        for job_id in job_ids:
            self._release(job_id)

    def on_machine_unavailable(self, resources: ProcSet) -> Any:
        mask = procset_to_mask(resources) & self.all_mask
        self.unavailable_mask |= mask
        self.free_mask &= ~mask
        self.needs_schedule = True
        self.resources_changed = True

    def on_machine_available(self, resources: ProcSet) -> Any:
        mask = procset_to_mask(resources) & self.all_mask
        self.unavailable_mask &= ~mask
        self.free_mask |= mask & ~self.busy_mask
        self.needs_schedule = True
        self.resources_changed = True

    def decide(self) -> Any:
        if self.needs_schedule:
            self.needs_schedule = False
            if self.queue:
                self.schedule()
                self.resources_changed = False
                self.queue.compact()

    def schedule(self) -> Any:
        """Start (or reject) waiting jobs; called from `decide()`."""
        raise NotImplementedError
