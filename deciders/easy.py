"""EASY backfilling (Algorithm 1 of the Batsim thesis)."""

from __future__ import annotations

import math

from joulesim.deciders.queue_policy import QueuePolicy


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

    def shadow(self, needed: int) -> tuple[float, int]:
        """(shadow time, extra machines) for a job needing `needed` machines, blocked now."""
        available = self.free_mask.bit_count()
        now = self.now
        usable = ~self.unavailable_mask
        ends = sorted(
            (record.estimated_end, (record.mask & usable).bit_count())
            for record in self.running.values()
            if record.estimated_end != math.inf
        )
        for end, count in ends:
            available += count
            if available >= needed:
                return max(end, now), available - needed
        return math.inf, 0

    def schedule(self) -> None:
        queue = self.queue
        # 1. Start jobs in queue order while they fit.
        while True:
            job = queue.first()
            if job is None:
                return
            if job.res > self.free_mask.bit_count():
                break
            self.start_job(job)
        blocked = job
        # 2. Reservation for the first blocked job.
        shadow, extra = self.shadow(blocked.res)
        # 3. Backfilling.
        free = self.free_mask.bit_count()
        now = self.now
        smallest = queue.min_res()  # no waiting job fits in fewer machines
        candidates = iter(queue)
        next(candidates)  # the blocked job itself
        for job in candidates:
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
