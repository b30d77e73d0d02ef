"""Shortest job first, without backfilling."""

from __future__ import annotations

import heapq
import math

from joulesim.deciders.common.queue_policy import QueuePolicy
from joulesim.protocol.decider import SubmittedJob


class SJF(QueuePolicy):
    """Shortest (requested walltime) job first, strict, no backfilling; no walltime = infinitely long."""

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self._heap: list[tuple[float, int, str]] = []
        self._seq = 0

    def on_job_submitted(self, job: SubmittedJob) -> None:
        super().on_job_submitted(job)
        if job.id in self.queue:
            walltime = job.walltime if job.walltime >= 0 else math.inf
            heapq.heappush(self._heap, (walltime, self._seq, job.id))
            self._seq += 1

    def schedule(self) -> None:
        heap = self._heap
        queue = self.queue
        jobs = self.jobs
        while heap:
            job_id = heap[0][2]
            if job_id not in queue:  # left the queue some other way
                heapq.heappop(heap)
                continue
            job = jobs[job_id]
            if job.res > self.free_count():
                return
            heapq.heappop(heap)
            self.start_job(job)
