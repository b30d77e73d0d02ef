"""EASY backfilling under an energy budget: what energyBud, reducePC and the power cap share.

Seed 001 (Batsim thesis), chapter 6. A budget of B joules applies over the budget period
[t_s, t_e]; it is made available at the rate B / (t_e - t_s) watts (§6.4.2, rule 1), which
the power-capping comparison of §6.5.2 uses as its power limit. Every decider here
estimates the platform's power by counting machines (§6.4.3, "Energy Consumption
Estimation"; §6.5.2):

    P~platform = n_idle * P~idle + n_computing * P~computing

where n_computing counts the machines of running jobs (and, with opportunistic shutdown,
of jobs waiting for their machines to switch on) and n_idle every other compute machine,
sleeping, switching or unavailable ones included: an overestimate (§6.4.3, "Interactions
with opportunistic shutdown").

The budget itself (B, t_s, t_e, the rate, the period clock that integrals run on, and its
options) is budget_period.py. This module holds:

- `MachinePlan`: machines computing from now on if no other job started, each running job
  until its estimated end (start + walltime), from which future power is estimated;
- `BudgetedEasy`: Algorithm 2's skeleton, i.e. EASY backfilling (deciders/batch/easy.py) where
  "the system has enough processors" becomes "enough processors and the budget allows it",
  with a reservation for the first blocked job both in processors and in budget. Subclasses
  say what "the budget allows" means (`fits_now`, `reservation_need`, `fits_backfill`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import Any, Iterable, Iterator

from joulesim.deciders.batch.easy import EasyBackfilling, Reservation
from joulesim.deciders.common.decider_options import float_option
from joulesim.deciders.common.machine_masks import lowest_bits
from joulesim.deciders.common.waiting_queue import RunningJob
from joulesim.deciders.energy.budget_period import BudgetPeriod, full_power, read_budget_fraction, read_budget_period
from joulesim.deciders.energy.shutdown_machinery import ShutdownMixin
from joulesim.protocol.decider import SubmittedJob
from joulesim.protocol.errors import JoulesimError

__all__ = [
    "BUDGET_OPTIONS",
    "BudgetedEasy",
    "MachinePlan",
    "PlannedJob",
    "RefusedShapes",
    "TOLERANCE",
]

#: Options every budgeted decider accepts (name -> description); defaults from seed 001
#: table 6.1. The shutdown options (`t_idle`, ...) select the variant with opportunistic
#: shutdown (deciders/__init__.py, OPTION_VARIANTS).
BUDGET_OPTIONS: dict[str, str] = {
    "budget": "energy budget B in joules over [start, end], or a percentage such as 80% of what every machine "
              "would consume computing at full power over the period (default: inf, no budget: plain EASY)",
    "start": "t_s, start of the budget period in seconds of simulated time (default: 0)",
    "end": "t_e, end of the budget period in seconds (required with a finite budget)",
    "p_idle": "overestimated power of an idle machine P~idle, in watts (default: 100)",
    "p_computing": "overestimated power of a computing machine P~computing, in watts (default: 203.12)",
    **ShutdownMixin.SHUTDOWN_OPTIONS,
}

#: A job in a projection: (start, estimated end = start + walltime, machines).
PlannedJob = tuple[float, float, int]

# Float slack when comparing joules and watts, so that a budget exactly sufficient on
# paper is not refused for a rounding error in its last bits.
TOLERANCE = 1e-6


class MachinePlan:
    """Machines computing at each time from `now` on, if no other job started.

    Built from (estimated end, machines) pairs: each job computes until its estimated end,
    start + walltime (the walltime bounds its duration: an overestimate), forever without
    walltime; a job already past its estimated end is counted as ending now, as EASY's
    shadow time does.
    """

    __slots__ = ("now", "computing_now", "end_times", "freed_by", "last_end")

    def __init__(self, now: float, computations: Iterable[tuple[float, int]]):
        ends = sorted((end, machines) for end, machines in computations if end > now)
        self.now = now
        self.computing_now = sum(machines for _, machines in ends)
        self.end_times: list[float] = []  # distinct, ascending
        self.freed_by: list[int] = []  # machines freed by the ends up to end_times[i] included
        freed = 0
        for end, machines in ends:
            freed += machines
            if self.end_times and self.end_times[-1] == end:
                self.freed_by[-1] = freed
            else:
                self.end_times.append(end)
                self.freed_by.append(freed)
        self.last_end = ends[-1][0] if ends else now

    def computing_at(self, t: float) -> int:
        """Machines computing at t >= now (a job ending at t no longer computes at t)."""
        i = bisect_right(self.end_times, t)
        return self.computing_now - (self.freed_by[i - 1] if i else 0)


class RefusedShapes:
    """(machines, walltime) of jobs the budget refused to backfill in one pass, plan unchanged.

    Budget checks are monotone: a job at least as wide and as long as a refused one takes
    at least as much power and energy, so it is refused too. Kept as a Pareto frontier
    (machines ascending, walltimes strictly descending) so that the test is a bisection.
    """

    __slots__ = ("machines", "lengths")

    def __init__(self) -> None:
        self.machines: list[int] = []
        self.lengths: list[float] = []

    def covers(self, machines: int, length: float) -> bool:
        i = bisect_right(self.machines, machines) - 1
        return i >= 0 and self.lengths[i] <= length

    def add(self, machines: int, length: float) -> None:
        """Record a refusal (of a shape that `covers` does not already cover)."""
        i = bisect_left(self.machines, machines)
        j = i
        while j < len(self.machines) and self.lengths[j] >= length:
            j += 1  # wider and at least as long: now covered by the new shape
        self.machines[i:j] = [machines]
        self.lengths[i:j] = [length]

    def clear(self) -> None:
        self.machines.clear()
        self.lengths.clear()


class BudgetedEasy(EasyBackfilling):
    """EASY backfilling whose starts must also fit a budget over [t_s, t_e] (Algorithm 2).

    1. Start queue jobs in order while enough machines are free and `fits_now(job)`.
    2. Reserve for the first blocked job the earliest decision time (an estimated end of a
       running job, or one of `decision_times()`) at which it has enough machines and
       `reservation_need(job, t)` is not None; the machines free then beyond its needs are
       EASY's extra machines.
    3. Backfill later jobs that fit now, either end before the reservation or fit in the
       extra machines (EASY's rule), and pass `fits_backfill(job, reservation)`.

    With an unlimited budget, or once the budget period is over, this is exactly
    `EasyBackfilling.schedule`. A wake-up is requested at t_e while jobs wait, because the
    budget stops constraining them then (see `arm_wakeups`).

    The machine hooks (`pool_mask`, `waiting_jobs`, `place`, `releases`, `computations`)
    are EASY's free machines here; deciders/energy/budgeted_easy_shutdown.py maps them onto
    `ShutdownMixin` for opportunistic shutdown.
    """

    OPTIONS: dict[str, str] = dict(BUDGET_OPTIONS)
    #: Name used in option errors.
    NAME = "budgeted-easy"
    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.period = read_budget_period(self.options, self.NAME)
        self.budget_fraction = read_budget_fraction(self.options, self.NAME)
        self.p_idle = float_option(self.NAME, self.options, "p_idle", 100.0, minimum=0.0)
        self.p_computing = float_option(self.NAME, self.options, "p_computing", 203.12, minimum=self.p_idle)
        self._plan: MachinePlan | None = None  # rebuilt lazily after a start or an end
        self._wakeups: set[float] = set()  # CALL_ME_LATER times asked for and not yet received
        self.budget_refused = False  # the last schedule() held a job back for the budget only
        self._refused = RefusedShapes()  # shapes refused in the current backfilling pass

    def on_simulation_begins(self, data: dict[str, Any]) -> None:
        super().on_simulation_begins(data)
        if self.budget_fraction is not None:  # a budget in %: of the platform's full-load energy
            if not self.compute_resources:
                raise JoulesimError(f"decider {self.NAME}: a budget in % needs the compute resources' properties "
                                    "in SIMULATION_BEGINS; give the budget in joules")
            power = getattr(self, "power", None)  # the shutdown variants' machine power states
            pstate = power.compute_pstate if power is not None else 0
            watts = full_power(self.compute_resources, pstate, self.NAME)
            start, end = self.period.start, self.period.end
            self.period = BudgetPeriod(self.budget_fraction * watts * (end - start), start, end)

    # ---------------------------------------------------------------- estimates
    def constrained(self) -> bool:
        """Whether the budget constrains decisions taken now."""
        return not self.period.unlimited and not self.reached(self.period.end)

    def platform_power(self, computing: int) -> float:
        """P~platform with `computing` computing machines (§6.5.2), in watts."""
        return self.nb_machines * self.p_idle + computing * (self.p_computing - self.p_idle)

    @property
    def plan(self) -> MachinePlan:
        plan = self._plan
        if plan is None or plan.now != self.now:
            plan = self._plan = MachinePlan(self.now, self.computations())
        return plan

    @staticmethod
    def planned(job: SubmittedJob, start: float) -> PlannedJob:
        """(start, estimated end, machines) of `job` if started at `start`."""
        return start, start + job.walltime if job.walltime >= 0 else math.inf, job.res

    # ---------------------------------------------------------------- budget hooks
    def fits_now(self, job: SubmittedJob) -> bool:
        """Whether the budget allows starting `job` now (it has enough free machines)."""
        raise NotImplementedError

    def reservation_need(self, job: SubmittedJob, t: float) -> float | None:
        """None when the budget forbids starting `job` at t >= now (given the running jobs);
        otherwise what it reserves in the budget (joules, 0 for the power cap)."""
        raise NotImplementedError

    def fits_backfill(self, job: SubmittedJob, reservation: Reservation) -> bool:
        """Whether the budget allows backfilling `job` now without delaying `reservation`."""
        raise NotImplementedError

    def decision_times(self) -> list[float]:
        """Times after now, ascending, at which this decider reconsiders waiting jobs besides
        job ends: the first job's reservation can only be at one of those or at a job end."""
        return [] if self.reached(self.period.end) else [self.period.end]

    # ---------------------------------------------------------------- machine hooks
    def pool_mask(self) -> int:
        """Machines a job may be given now."""
        return self.free_mask

    def waiting_jobs(self) -> Iterator[SubmittedJob]:
        """Waiting jobs that have no machines yet, in queue order."""
        return iter(self.queue)

    def first_waiting(self) -> SubmittedJob | None:
        return next(self.waiting_jobs(), None)

    def place(self, job: SubmittedJob, pool: int) -> int:
        """Start `job` now on machines of `pool`; the machines it took."""
        return self.start_job(job, lowest_bits(pool, job.res)).mask

    def releases(self) -> Iterator[tuple[float, int]]:
        """(estimated end, machines back to the pool then), by end, as EASY's shadow counts them."""
        usable = ~self.unavailable_mask
        return ((end, record.mask & usable) for end, _, record in self._by_end)

    def computations(self) -> Iterator[tuple[float, int]]:
        """(estimated end, machines) of every job computing or about to compute."""
        return ((record.estimated_end, record.size) for record in self.running.values())

    def computing_machines(self) -> int:
        """Machines counted as computing in the estimate of past consumption."""
        return self.busy_mask.bit_count()

    # ---------------------------------------------------------------- machinery
    def start_job(self, job: SubmittedJob, mask: int | None = None) -> RunningJob:
        record = super().start_job(job, mask)
        self._plan = None
        return record

    def _release(self, job_id: str) -> None:
        super()._release(job_id)
        self._plan = None

    def on_requested_call(self) -> None:
        self._wakeups = {t for t in self._wakeups if not self.reached(t)}
        if not self.period.unlimited and self.reached(self.period.end):
            self.needs_schedule = True  # the budget period is over: plain EASY from now on

    def wake_up_at(self, t: float) -> None:
        """CALL_ME_LATER at t, once."""
        if t > self.now and t not in self._wakeups:
            self._wakeups.add(t)
            self.call_me_later(t)

    def decide(self) -> None:
        super().decide()
        if self.budget_refused and self.queue and self.constrained():
            self.arm_wakeups()

    def arm_wakeups(self) -> None:
        """Called while the budget holds waiting jobs back: make sure the decider is called
        again when that may change. Here: at t_e, unless a running job ends before (its
        end calls the decider anyway; CALL_ME_LATER cannot be cancelled and would keep the
        simulation going)."""
        plan = self.plan
        if plan.computing_now == 0 or plan.last_end >= self.period.end:
            self.wake_up_at(self.period.end)

    def schedule(self) -> None:
        self.budget_refused = False
        if not self.constrained():
            super().schedule()
            return
        # EASY's pass with the budget's conditions on its starts (Algorithm 2).
        self._refused = RefusedShapes()
        self.pooled_pass(self.pool_mask(), self.waiting_jobs, self.place, self.reserve,
                         admits_now=self._budget_admits_now, admits_backfill=self._budget_admits_backfill)

    def _budget_admits_now(self, job: SubmittedJob) -> bool:
        if self.fits_now(job):
            return True
        self.budget_refused = True
        return False

    def _budget_admits_backfill(self, job: SubmittedJob, reservation: Reservation) -> bool:
        length = job.walltime if job.walltime >= 0 else math.inf
        refused = self._refused
        if refused.covers(job.res, length):
            return False  # a job of this shape or smaller was refused with the plan unchanged
        if not self.fits_backfill(job, reservation):
            refused.add(job.res, length)
            self.budget_refused = True
            return False
        refused.clear()  # the plan changes with this start
        return True

    def reserve(self, job: SubmittedJob, free: int) -> Reservation:
        """The earliest candidate time at which `job` fits the budget (see `candidate_times`)."""
        refused = math.nan  # ends may share a time: the budget's answer is the same
        for t, available in self.candidate_times(job.res, free):
            if t == refused:
                continue
            need = self.reservation_need(job, t)
            if need is not None:
                return Reservation(job, t, available - job.res, need)
            refused = t
        return Reservation(job, math.inf, 0, 0.0)

    def candidate_times(self, needed: int, free: int) -> Iterator[tuple[float, int]]:
        """(time, machines available then) when a job needing `needed` machines could start,
        ascending: the estimated ends of running jobs (at least now) and `decision_times()`
        at which enough machines are available. Machines are counted as EASY's shadow counts
        them: `free` now, then each running job gives its machines back at its estimated
        end, one job at a time."""
        now = self.now
        others = self.decision_times()
        k = 0
        available = free
        for end, machines in self.releases():
            end = max(end, now)
            while k < len(others) and others[k] < end:
                if available >= needed:
                    yield others[k], available
                k += 1
            available += machines.bit_count()
            if available >= needed:
                yield end, available
        if available >= needed:
            for t in others[k:]:
                yield t, available
