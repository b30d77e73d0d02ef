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
from dataclasses import dataclass
from typing import Any, Callable, Final, Iterator, Mapping

from joulesim.deciders.common.queue_policy import QueuePolicy
from joulesim.deciders.common.waiting_queue import RunningJob
from joulesim.protocol.decider import SubmittedJob

try:  # (mypyc's class options: mypy_extensions comes with mypy, at build time only)
    from mypy_extensions import mypyc_attr
except ImportError:
    from joulesim.protocol.compiled_class_options import mypyc_attr  # type: ignore[no-redef]


#: When at most this many machines can be given (free now, or extra at the shadow time when no
#: waiting job ends before it), the backfilling pass in submission order reads only the waiting
#: jobs that ask for no more (WaitingQueue.fitting_after) instead of every one.
FEW_FREE_MACHINES: Final = 16


def _end_of(entry: tuple[float, int, RunningJob]) -> float:
    return entry[0]


@dataclass(slots=True)
class Reservation:
    """Where the first blocked job will start (EASY's step 2; Algorithm 2 of seed 001 reserves
    energy too)."""

    job: SubmittedJob
    time: float  # math.inf: not enough machines will ever be freed (no reservation)
    extra: int  # machines free at `time` beyond the job's needs (EASY's extra machines)
    need: float = 0.0  # joules the job needs available at `time` (energy deciders)


@mypyc_attr(allow_interpreted_subclasses=True)
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

    def __init__(self, options: Mapping[str, Any] | None = None):
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

    def _release(self, job_id: str) -> Any:
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
        available = self.free_count()
        if self.unavailable_mask:  # (machines of running jobs made unavailable are not freed at their end)
            usable = ~self.unavailable_mask
            for end, _, record in self._by_end:
                available += (record.mask & usable).bit_count()
                if available >= needed:
                    return max(end, self.now), available - needed
            return math.inf, 0
        # Every running job frees its machines: their counts, kept since their start (a bit
        # count costs time in the platform's size, on a walk over thousands of running jobs).
        for end, _, record in self._by_end:
            available += record.size
            if available >= needed:
                return max(end, self.now), available - needed
        return math.inf, 0

    def schedule(self) -> Any:
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
        free = self.free_count()
        smallest = queue.min_res()  # no waiting job fits in fewer machines
        if free < smallest or len(queue) == 1:
            return  # nothing can be backfilled: the reservation would not be used
        # 2. Reservation for the first blocked job.
        shadow, extra = self.shadow(blocked.res)
        # 3. Backfilling.
        now = self.now
        # Whether some waiting job but the blocked one could end before the shadow time (now +
        # walltime grows with the walltime; the jobs the pass starts only raise the smallest).
        none_ends_before = now + queue.min_walltime(blocked) > shadow
        if extra < smallest and none_ends_before:
            # No waiting job fits in the extra machines, and none ends before the shadow time:
            # the pass below would start nothing, and on a long queue it would look at every
            # job to find that out.
            return
        if later is None:
            # Only the jobs that may start: those that fit now, and when none ends before the
            # shadow time, in the extra machines (the rest would be skipped below).
            most = min(free, extra) if none_ends_before else free
            if most <= FEW_FREE_MACHINES:
                later = queue.fitting_after(blocked.id, most)
            else:
                later = queue.iter_from(blocked.id)
                next(later)  # the blocked job itself
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
                if extra < smallest and none_ends_before:
                    break  # (the same reason as above, now that the extra machines are used)

    def pooled_pass(self, pool: int, waiting: Callable[[], Iterator[SubmittedJob]],
                    place: Callable[[SubmittedJob, int], int],
                    reserve: Callable[[SubmittedJob, int], Reservation],
                    room_for: Callable[[SubmittedJob], int] | None = None,
                    admits_now: Callable[[SubmittedJob], bool] | None = None,
                    admits_backfill: Callable[[SubmittedJob, Reservation], bool] | None = None) -> None:
        """EASY's three steps over a pool of machines, for the policies that change which machines
        and jobs EASY sees or add a condition to its starts (opportunistic shutdown, energy
        budgets, the power cap): they compose their schedule from this pass instead of copying it.

        `pool`: the machines a job may be given now; `waiting()`: the waiting jobs without
        machines, in queue order; `place(job, pool)` starts (or holds machines for) a job now on
        machines of `pool` and returns them; `reserve(job, free)`: the reservation of the first
        blocked job when `free` machines of the pool are left. Optional conditions:
        `room_for(job)`, machines added to the pool for the first job that does not fit (0: none);
        `admits_now(job)`, whether step 1 may start a job that fits (False blocks it);
        `admits_backfill(job, reservation)`, whether step 3 may start a job EASY's rule allows.
        `schedule` above is the same rule on EASY's own free machines, written for speed.
        """
        free = pool.bit_count()
        # 1. Start jobs in order while they fit (and are admitted).
        blocked = None
        for job in waiting():
            if job.res > free and room_for is not None:
                released = room_for(job)
                pool |= released
                free += released.bit_count()
            if job.res > free or (admits_now is not None and not admits_now(job)):
                blocked = job
                break
            pool &= ~place(job, pool)
            free -= job.res
        if blocked is None:
            return
        # 2. Reservation for the first blocked job.
        reservation = reserve(blocked, free)
        # 3. Backfilling: a later job that fits now and ends before the reservation, or fits in
        # the extra machines (which it then consumes).
        now = self.now
        smallest = self.queue.min_res()
        if reservation.extra < smallest and now + self.queue.min_walltime(blocked) > reservation.time:
            return  # no candidate could pass the test below (see backfill): the walk is spared
        candidates = waiting()
        for job in candidates:
            if job is blocked:
                break
        for job in candidates:
            if free < smallest:
                break
            res = job.res
            if res > free:
                continue
            walltime = job.walltime
            ends_before = walltime >= 0 and now + walltime <= reservation.time
            if not ends_before and res > reservation.extra:
                continue
            if admits_backfill is not None and not admits_backfill(job, reservation):
                continue
            pool &= ~place(job, pool)
            free -= res
            if not ends_before:
                reservation.extra -= res
