"""Power-capped EASY backfilling, the baseline of seed 001 §6.5.2 ("PC").

"A power limit is set during the whole energy budget period, which is set to the energy
budget (J) divided by the period length (s). The platform energy consumption is estimated
with P~platform = n_idle * P~idle + n_computing * P~computing [...]. This algorithm is
roughly the same as EASY backfilling, but jobs are not executed if they cause P~platform to
be greater than the power limit."
"""

from __future__ import annotations

import math
from typing import Sequence

from joulesim.deciders.batch.easy import Reservation
from joulesim.deciders.energy.budgeted_easy import TOLERANCE, BudgetedEasy, PlannedJob
from joulesim.protocol.decider import SubmittedJob

__all__ = ["PowerCappedEasy"]


class PowerCappedEasy(BudgetedEasy):
    """EASY backfilling under a power cap of B / (t_e - t_s) watts during [t_s, t_e] (§6.5.2).

    A job may start when, during the part of its execution (start to start + walltime) that
    falls within the budget period, P~platform with it stays at most the cap. Running jobs
    only end in the estimate, so the power is checked where it is highest: where the job's
    execution enters the period. The first blocked job is reserved at the earliest running
    job end (or t_e) where it has machines and fits under the cap; backfilled jobs follow
    EASY's rule, fit under the cap now, and when they still run at the reserved start, fit
    under the cap together with the first job then. No energy is measured or saved: the cap
    cannot use energy left unspent (§6.5.4), so no monitoring and no -E needed.
    """

    NAME = "powercap"

    def _fits_cap(self, jobs: Sequence[PlannedJob]) -> bool:
        """P~platform <= cap wherever one of `jobs` (start, end, machines) enters the period."""
        period = self.period
        cap = period.rate
        plan = self.plan
        for start, end, _ in jobs:
            t = max(start, period.start)
            if t >= min(end, period.end):
                continue
            computing = plan.computing_at(t) + sum(m for s, e, m in jobs if s <= t < e)
            if self.platform_power(computing) > cap + TOLERANCE:
                return False
        return True

    def fits_now(self, job: SubmittedJob) -> bool:
        return self._fits_cap([self.planned(job, self.now)])

    def reservation_need(self, job: SubmittedJob, t: float) -> float | None:
        return 0.0 if self._fits_cap([self.planned(job, t)]) else None

    def fits_backfill(self, job: SubmittedJob, reservation: Reservation) -> bool:
        jobs = [self.planned(job, self.now)]
        if not math.isinf(reservation.time):
            jobs.append(self.planned(reservation.job, reservation.time))
        return self._fits_cap(jobs)
