"""Strict first-come-first-served."""

from __future__ import annotations

from joulesim.deciders.queue_policy import QueuePolicy


class FCFS(QueuePolicy):
    """Strict first-come-first-served: start queue-head jobs while they fit, stop at the first that does not."""

    def schedule(self) -> None:
        queue = self.queue
        while True:
            job = queue.first()
            if job is None or job.res > self.free_mask.bit_count():
                return
            self.start_job(job)
