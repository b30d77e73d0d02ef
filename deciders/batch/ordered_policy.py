"""A queue policy made of a score order (queue_order.py) and a pass: strict or EASY.

The base of the utility-ordered deciders (utility_policies.py). It composes existing parts:

- the order: a `ScoreOrder` over `JobFacts` (r, n, submission time), which a subclass
  builds in `make_order()`;
- the pass: `backfill=none` (the default, the setting of seed 003 and of the authors'
  simulator) is the strict pass `QueuePolicy.strict_pass`, which starts jobs in order
  until the first that does not fit, which then waits; `backfill=easy` is
  `EasyBackfilling.schedule` over the same order (EASY with priorities, Mu'alem and
  Feitelson 2001): the head of the ordered queue gets the reservation, computed from the
  walltimes of running jobs as in plain EASY, and the other jobs are backfilled in order
  when they fit now and do not delay it.

The order is recomputed at every scheduling pass, which runs when something happens (a
submission, a job end, an availability change), as the authors' simulator re-sorts before
each dispatch; nothing runs between events, as in seed 003 ("o escalonamento é re-efetuado
sempre que um recurso é liberado ou quando uma nova tarefa é submetida").

Option `runtime=walltime|profile` chooses what r is (job_runtime.py). The backfilling rule
always uses walltimes, as EASY does: `runtime=profile` changes only the order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from joulesim.deciders.batch.easy import EasyBackfilling
from joulesim.deciders.common.decider_options import choice_option
from joulesim.deciders.common.job_runtime import RUNTIME_SOURCES, RuntimeReader
from joulesim.deciders.common.pinned_jobs import PINNED_OPTION
from joulesim.deciders.common.queue_order import ScoreOrder
from joulesim.deciders.common.waiting_queue import RunningJob
from joulesim.protocol.decider import SubmittedJob

__all__ = ["BACKFILL_CHOICES", "JobFacts", "OrderedPolicy"]

#: Option values of `backfill`: the default first.
BACKFILL_CHOICES = ("none", "easy")


@dataclass(frozen=True, slots=True)
class JobFacts:
    """What the scores read of a job."""

    r: float  # runtime (s): walltime or profile delay (option runtime)
    n: int  # machines requested (the job's res)
    submit: float  # submission time (s), simulation clock
    s: float  # submission time relative to the start of the simulation (SIMULATION_BEGINS)


class OrderedPolicy(EasyBackfilling):
    """A score order plus the strict pass (backfill=none) or EASY's pass (backfill=easy)."""

    NAME = "ordered"
    OPTIONS: dict[str, str] = {
        "backfill": "none (default: wait until the first job in order fits) or easy (EASY backfilling "
                    "in the same order)",
        "runtime": "walltime (default: r is the requested walltime) or profile (r is the delay of the "
                   "job's delay profile: the actual runtime)",
        **PINNED_OPTION,
    }

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.backfilling = choice_option(self.NAME, self.options, "backfill", BACKFILL_CHOICES, "none") == "easy"
        self.runtimes = RuntimeReader(
            self.NAME, choice_option(self.NAME, self.options, "runtime", RUNTIME_SOURCES, "walltime"))
        self.origin = 0.0  # the simulation's start: s = submission time - origin
        self.queue_order: ScoreOrder[JobFacts] = self.make_order()

    def make_order(self) -> ScoreOrder[JobFacts]:
        """The order of this policy (called once, from __init__, after the options are read)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- callbacks
    def on_simulation_begins(self, data: dict[str, Any]) -> None:
        super().on_simulation_begins(data)
        self.origin = self.now
        self.runtimes.begin(data)

    def on_job_submitted(self, job: SubmittedJob) -> None:
        super().on_job_submitted(job)
        if job.id in self.queue:  # not rejected
            facts = JobFacts(self.runtimes.runtime(job), job.res, job.subtime, job.subtime - self.origin)
            self.queue_order.admit(job.id, facts, self.now)

    def start_job(self, job: SubmittedJob, mask: int | None = None) -> RunningJob:
        self.queue_order.discard(job.id)
        return super().start_job(job, mask)

    # ---------------------------------------------------------------- the pass
    def schedule(self) -> None:
        if self.free_count() < self.queue.min_res():
            return  # no waiting job fits: neither pass can start one, no need to score the queue
        if self.backfilling:
            super().schedule()  # EASY's pass, over this policy's order
        else:
            self.strict_pass()
