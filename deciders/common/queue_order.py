"""Orders of the waiting queue: in which order a queue policy's pass visits the waiting jobs.

A pass (the strict pass `QueuePolicy.strict_pass`, used by FCFS; EASY's pass
`EasyBackfilling.schedule`) takes the waiting jobs in priority order; an order says what
that order is. A queue policy is then an order plus a pass (`QueuePolicy.queue_order`):

- `QueueOrder` itself is submission order (FCFS), `SUBMISSION_ORDER` its shared instance.
  It walks the `WaitingQueue` directly, without copying or sorting it: the path FCFS and EASY
  always took (they even read the queue's head directly when `submission_order` is set).
- `ScoreOrder` sorts the waiting jobs by a score of per-job facts (lowest or highest first).
  A dynamic score (one that depends on the current time, e.g. on the job's age) is
  recomputed at every pass, so priorities change with time (dynamic priorities, as in Tang
  et al. 2009, "Fault-aware, utility-based job scheduling on BlueGene/P systems", CLUSTER
  2009, whose utility scores are re-evaluated before each dispatch); a static score is
  computed once, when the job is admitted. Ties keep submission order (the sort is stable
  and the queue is walked in submission order).

API of an order: `ordered(queue, now)` -> an iterator over the waiting jobs in priority
order. The passes remove jobs from the queue while iterating (start them), which both
kinds of iterator allow. A `ScoreOrder` also needs its owner to `admit(job_id, facts, now)`
each job entering the waiting queue and `discard(job_id)` each job leaving it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import TYPE_CHECKING, Generic, TypeVar

from joulesim.protocol.decider import SubmittedJob

if TYPE_CHECKING:
    from joulesim.deciders.common.waiting_queue import WaitingQueue

__all__ = ["SUBMISSION_ORDER", "QueueOrder", "ScoreOrder"]

F = TypeVar("F")
_first = itemgetter(0)


class QueueOrder:
    """Submission order (first come, first served); the base of every order."""

    #: True when `ordered` is the queue's own (submission) order.
    submission_order: bool = True

    def ordered(self, queue: WaitingQueue, now: float) -> Iterator[SubmittedJob]:
        """The waiting jobs in priority order (here: the queue itself, walked lazily)."""
        return iter(queue)


#: The order of FCFS and of plain EASY.
SUBMISSION_ORDER = QueueOrder()


class ScoreOrder(QueueOrder, Generic[F]):
    """Waiting jobs sorted by `score(facts, now)`, ties in submission order.

    `facts` is what the owner gives at `admit` (e.g. the job's runtime, size and submission
    time). `dynamic=False` says the score ignores `now`: it is then computed once, at
    admission, where a NaN (a learned function evaluated outside its domain) is made to rank
    last. A dynamic score, evaluated for every waiting job at every pass, must not be NaN.
    """

    submission_order = False

    def __init__(self, score: Callable[[F, float], float], *, highest_first: bool, dynamic: bool):
        self.score = score
        self.highest_first = highest_first
        self.dynamic = dynamic
        self._last = -math.inf if highest_first else math.inf  # what a NaN becomes
        self._facts: dict[str, F] = {}  # dynamic scores: re-scored at each pass
        self._scores: dict[str, float] = {}  # static scores

    def admit(self, job_id: str, facts: F, now: float) -> None:
        """A job entered the waiting queue."""
        if self.dynamic:
            self._facts[job_id] = facts
        else:
            value = self.score(facts, now)
            self._scores[job_id] = self._last if math.isnan(value) else value

    def discard(self, job_id: str) -> None:
        """A job left the waiting queue (started or rejected)."""
        self._facts.pop(job_id, None)
        self._scores.pop(job_id, None)

    def scores(self, queue: WaitingQueue, now: float) -> list[tuple[float, SubmittedJob]]:
        """(score, job) of every waiting job, in submission order."""
        if self.dynamic:
            score, facts = self.score, self._facts
            return [(score(facts[job.id], now), job) for job in queue]
        scores = self._scores
        return [(scores[job.id], job) for job in queue]

    def ordered(self, queue: WaitingQueue, now: float) -> Iterator[SubmittedJob]:
        keyed = self.scores(queue, now)
        keyed.sort(key=_first, reverse=self.highest_first)  # stable, also when reversed
        return (job for _, job in keyed)
