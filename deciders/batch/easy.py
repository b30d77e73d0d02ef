"""EASY backfilling (Algorithm 1 of the Batsim thesis), over any queue order.

In submission order (the default `queue_order`) this is plain EASY. With another order
(queue_order.py) it is EASY with priorities (Mu'alem and Feitelson 2001, "Utilization,
predictability, workloads, and user runtime estimates in scheduling the IBM SP2 with
backfilling", IEEE TPDS 12(6)): the head of the ordered queue gets the reservation and the
other jobs are backfilled in that order when they do not delay it.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from typing import Iterator

from joulesim.deciders.common.queue_policy import QueuePolicy
from joulesim.deciders.common.waiting_queue import RunningJob
from joulesim.protocol.decider import SubmittedJob


def _end_of(entry: tuple[float, int, RunningJob]) -> float:
    return entry[0]


class EasyBackfilling(QueuePolicy):
    """EASY backfilling: FCFS plus backfilling that never delays the first blocked job.

    1. Start queue jobs in order while they fit.
    2. Reserve for the first blocked job at the shadow time: the earliest estimated end
       (start + walltime) of running jobs at which enough machines are free for it. The
       machines free at the shadow time beyond its needs are the "extra" machines.
    3. Backfill, in queue order, every later job that fits now and either ends
       (now + walltime) no later than the shadow time, or fits in the extra machines (which
       it then consumes). A job without walltime can only use extra machines.

    The reservation counts machines (hosts are interchangeable); allocations are the
    lowest-id free machines. Machines of running jobs that became unavailable are not
    counted as freed at their end. When no reservation is possible at all (not enough
    machines will ever be freed), the shadow time is infinite and every job that fits is
    backfilled.
    """

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        # Running jobs with a finite estimated end, kept sorted by (end, start order): the
        # shadow time is found by walking it, without sorting at every call.
        self._by_end: list[tuple[float, int, RunningJob]] = []
        self._started = 0

    def start_job(self, job: SubmittedJob, mask: int | None = None) -> RunningJob:
        record = super().start_job(job, mask)
        if record.estimated_end != math.inf:
            self._started += 1
            insort(self._by_end, (record.estimated_end, self._started, record))
        return record

    def _release(self, job_id: str) -> None:
        record = self.running.get(job_id)
        if record is not None and record.estimated_end != math.inf:
            by_end = self._by_end
            i = bisect_left(by_end, record.estimated_end, key=_end_of)
            while by_end[i][2] is not record:
                i += 1
            del by_end[i]
        super()._release(job_id)

    def shadow(self, needed: int) -> tuple[float, int]:
        """(shadow time, extra machines) for a job needing `needed` machines, blocked now."""
        available = self.free_mask.bit_count()
        usable = ~self.unavailable_mask
        for end, _, record in self._by_end:
            available += (record.mask & usable).bit_count()
            if available >= needed:
                return max(end, self.now), available - needed
        return math.inf, 0

    def schedule(self) -> None:
        # 1. Start jobs in order while they fit; 2-3. reserve for the first that does not, backfill.
        blocked, later = self.strict_pass()
        if blocked is not None:
            self.backfill(blocked, later)

    def backfill(self, blocked: SubmittedJob, later: Iterator[SubmittedJob] | None = None) -> None:
        """Steps 2 and 3: reserve for `blocked` (the first job in order that does not fit), then
        backfill the waiting jobs of `later` (those after it in order, as `strict_pass` leaves
        them), in that order; `later` None: the jobs after `blocked` in submission order (made
        only when needed)."""
        queue = self.queue
        free = self.free_mask.bit_count()
        smallest = queue.min_res()  # no waiting job fits in fewer machines
        if free < smallest or len(queue) == 1:
            return  # nothing can be backfilled: the reservation would not be used
        if later is None:
            later = queue.iter_from(blocked.id)
            next(later)  # the blocked job itself
        # 2. Reservation for the first blocked job.
        shadow, extra = self.shadow(blocked.res)
        # 3. Backfilling.
        now = self.now
        for job in later:
            if free < smallest:
                break
            res = job.res
            if res > free:
                continue
            walltime = job.walltime
            if walltime >= 0 and now + walltime <= shadow:
                self.start_job(job)
                free -= res
            elif res <= extra:
                self.start_job(job)
                free -= res
                extra -= res
