"""Strict first-come-first-served."""

from __future__ import annotations

from joulesim.deciders.common.queue_policy import QueuePolicy


class FCFS(QueuePolicy):
    """Strict first-come-first-served: start queue-head jobs while they fit, stop at the first that does not."""

    def schedule(self) -> None:
        self.strict_pass()
