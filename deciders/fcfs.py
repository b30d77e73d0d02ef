"""Strict first-come-first-served."""

from __future__ import annotations

from joulesim.deciders.queue_policy import QueuePolicy


class FCFS(QueuePolicy):
    """Strict first-come-first-served: start queue-head jobs while they fit, stop at the first that does not."""

    def schedule(self) -> None:
        # The strict pass over the policy's order; submission order takes the fast path.
        order = self.queue_order
        if order.submission_order:
            self.start_from_head()
        else:
            self.start_in_order(order.ordered(self.queue, self.now))
