"""Proportional shutdown (seed 001 §7.4.2): EASY keeping a fixed share of the machines off.

Option `rho` in [0, 1] is the proportion of machines used "most of the time": floor(rho*m)
of the m machines are used, the other m - floor(rho*m) form an off reservation (§7.3.2).
As in the thesis, rho=1 is EASY (plus opportunistic shutdown when `t_idle` is given).

Before each EASY pass the reservation is topped up to its size with machines not
computing, already-off machines first (no new switch), then switching off, then idle ones
(highest ids first); reserved idle machines are switched off at once. The constraint is
only violated for the priority job: the reservation never grows past (available machines -
first waiting job's size), and when the priority job needs more machines than all the
non-reserved ones, just enough reserved machines are given back (§7.4.4); they are
switched on if EASY chooses them. The reservation is rebuilt as machines become free.
Reserved machines are never counted in EASY's reservation or backfilling.
"""

from __future__ import annotations

import math

from joulesim.deciders.common.decider_options import float_option
from joulesim.deciders.energy.easy_shutdown import EasyWithShutdown
from joulesim.deciders.energy.shutdown_machinery import ShutdownMixin

__all__ = ["ProportionalShutdown"]


class ProportionalShutdown(EasyWithShutdown):
    """EASY with a fixed proportion of machines kept off (seed 001 §7.4.2)."""

    OPTIONS = {
        "rho": "proportion of machines used most of the time, in [0, 1] (default 0.9); "
               "the others are kept off",
        **ShutdownMixin.SHUTDOWN_OPTIONS,
    }

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.rho = float_option(type(self).__name__, self.options, "rho", 0.9, minimum=0.0, maximum=1.0)
        self.reservation_size = 0

    def on_simulation_begins(self, data) -> None:
        super().on_simulation_begins(data)
        # The epsilon keeps decimal products exact (0.29 * 100 is 28.999999999999996).
        self.reservation_size = self.nb_machines - math.floor(self.rho * self.nb_machines + 1e-9)

    def plan_before_schedule(self) -> None:
        target = self.reservation_size
        first = self.first_waiting_job()
        if first is not None:
            available = (self.all_mask & ~self.unavailable_mask).bit_count()
            target = min(target, max(0, available - first.res))
        missing = target - self.off_reserved.bit_count()
        if missing > 0:
            self.reserve_off(missing)
