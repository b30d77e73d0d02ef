"""energyBud and reducePC: EASY backfilling under an energy budget (seed 001, §6.4).

The counter C_ea (`EnergyBudget.available`) is the energy the algorithm may spend: what
rule 1 made available since t_s (B / (t_e - t_s) joules per second of the budget period)
minus what the platform consumed in the period (§6.4.2). It is updated (§6.4.3, "Energy
Consumption Monitoring"):

- at every message, by the rate times the elapsed period time, minus the consumption since
  the previous message overestimated by counting machines:
  n_idle * P~idle + n_computing * P~computing;
- at every monitoring stage, at t_s + k * `period`: the decider sends QUERY
  consumed_energy and, on the ANSWER, replaces the estimate made since the previous stage
  with the measured consumption (the estimate being an overestimate, C_ea usually grows
  then). Stages are only held while the budget holds jobs back (a CALL_ME_LATER cannot be
  cancelled and would keep the simulation running); a stage missed meanwhile is held at
  the next call that needs it.

Rule 2 ("never have energy debts") is checked on `EnergyOutlook`: C_ea projected from now on
with the running jobs computing until their estimated ends (start + walltime) and every
other machine idle. Starting a job is allowed when the projected C_ea stays >= 0 from now
until the job and every running job have ended (or t_e), the job computing meanwhile. The
thesis states the check for "the entire execution time of the job"; it is extended to the
running jobs' ends because otherwise the new job could push a job already running into debt.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from joulesim.deciders.batch.easy import Reservation
from joulesim.deciders.common.decider_options import float_option
from joulesim.deciders.energy.budget_period import BudgetPeriod
from joulesim.deciders.energy.budgeted_easy import BUDGET_OPTIONS, TOLERANCE, BudgetedEasy, MachinePlan, PlannedJob
from joulesim.protocol.decider import SubmittedJob

# Projections with at least this many breakpoints are evaluated with numpy.
_VECTOR_FROM = 16

__all__ = ["EnergyBudget", "EnergyOutlook", "ReducePC", "ReservedEnergy"]

@dataclass(frozen=True, slots=True)
class ReservedEnergy:
    """Energy kept for the first blocked job until its reserved start (§6.4.4).

    energyBud subtracts `amount` from C_ea until `until`; reducePC lowers the rate instead,
    by amount / (until - now) joules per second, so the kept energy grows linearly from 0
    now to `amount` at `until`.
    """

    amount: float
    until: float
    spread: bool  # True: reducePC's lowered rate; False: energyBud's subtraction

    def at(self, t: float, now: float, period: BudgetPeriod) -> float:
        if t > self.until:
            return 0.0
        if not self.spread:
            return self.amount
        span = period.clock(self.until) - period.clock(now)
        if span <= 0:
            return self.amount
        return self.amount * (period.clock(t) - period.clock(now)) / span


class EnergyOutlook:
    """C_ea from now to t_e if no other job started: piecewise linear, breaking at job ends.

    `times[i]` are now, the distinct estimated ends of running jobs before t_e, and t_e;
    C_ea is `balances[i]` at `times[i]` and changes by `slopes[i]` joules per second of the
    budget period until `times[i + 1]`.
    """

    __slots__ = ("now", "period", "plan", "extra_power", "times", "balances", "slopes", "lowest_so_far", "_times_np")

    def __init__(self, now: float, available: float, period: BudgetPeriod, plan: MachinePlan,
                 idle_power: float, extra_power: float):
        self.now = now
        self.period = period
        self.plan = plan
        self.extra_power = extra_power  # P~computing - P~idle: what a computing machine adds
        rate = period.rate
        clock = period.clock
        times = [now]
        balances = [available]
        slopes: list[float] = []
        computing = plan.computing_now
        for t, freed in zip(plan.end_times, plan.freed_by):
            if t >= period.end:
                break
            slope = rate - idle_power - extra_power * computing
            balances.append(balances[-1] + slope * (clock(t) - clock(times[-1])))
            slopes.append(slope)
            times.append(t)
            computing = plan.computing_now - freed
        if now < period.end:
            slope = rate - idle_power - extra_power * computing
            balances.append(balances[-1] + slope * (clock(period.end) - clock(times[-1])))
            slopes.append(slope)
            times.append(period.end)
        self.times = times
        self.balances = balances
        self.slopes = slopes
        lowest = []
        low = math.inf
        for b in balances:
            low = b if b < low else low
            lowest.append(low)
        self.lowest_so_far = lowest  # lowest_so_far[i]: min of balances[0..i]
        self._times_np: np.ndarray | None = None

    def balance_at(self, t: float) -> float:
        """Projected C_ea at t >= now (frozen after t_e)."""
        times = self.times
        i = bisect_right(times, t) - 1
        if i >= len(self.slopes):
            return self.balances[-1]
        return self.balances[i] + self.slopes[i] * (self.period.clock(t) - self.period.clock(times[i]))

    def _horizon(self, jobs: Sequence[PlannedJob]) -> float:
        last = self.plan.last_end
        for _, end, _ in jobs:
            last = end if end > last else last
        return min(self.period.end, last)

    def _value(self, t: float, jobs: Sequence[PlannedJob], kept: ReservedEnergy | None) -> float:
        clock = self.period.clock
        value = self.balance_at(t)
        for start, end, machines in jobs:
            if t > start:
                value -= machines * self.extra_power * (clock(end if end < t else t) - clock(start))
        if kept is not None:
            value -= kept.at(t, self.now, self.period)
        return value

    def lowest(self, jobs: Sequence[PlannedJob], kept: ReservedEnergy | None = None,
               since: float | None = None) -> float:
        """Lowest C_ea over [since (default now), horizon] if `jobs` also ran and `kept` was
        set aside; the horizon is t_e or the last estimated end of running jobs and `jobs`.

        The projection is linear between its breakpoints (job ends, job starts, the end of
        the kept energy), so its minimum is at one of them.
        """
        since = self.now if since is None else since
        if since >= self.period.end:
            return math.inf  # the budget no longer constrains anything
        horizon = max(since, self._horizon(jobs))
        points = [since, horizon]
        times = self.times
        points.extend(times[bisect_right(times, since):bisect_right(times, horizon)])
        for start, end, _ in jobs:
            if since < start < horizon:
                points.append(start)
            if since < end < horizon:
                points.append(end)
        if kept is not None and since < kept.until < horizon:
            points.append(kept.until)
        if len(points) < _VECTOR_FROM:
            return min(self._value(t, jobs, kept) for t in points)
        return self._lowest_vectorized(np.array(points), jobs, kept)

    def _lowest_vectorized(self, points: np.ndarray, jobs: Sequence[PlannedJob],
                           kept: ReservedEnergy | None) -> float:
        """min(_value(t) for t in points) with numpy: the same float operations in the same
        order, so the same result, at a fraction of the cost on long projections (a platform
        with thousands of running jobs has thousands of breakpoints)."""
        period = self.period
        start, end = period.start, period.end

        def clock(values: np.ndarray) -> np.ndarray:
            return np.where(values < start, start, np.where(values > end, end, values))

        times = self._times_array()
        index = np.searchsorted(times, points, side="right") - 1
        frozen = index >= len(self.slopes)
        inner = np.where(frozen, 0, index)
        balances = np.asarray(self.balances)
        slopes = np.asarray(self.slopes) if self.slopes else np.zeros(1)
        values = np.where(frozen, balances[-1],
                          balances[inner] + slopes[np.minimum(inner, len(slopes) - 1)]
                          * (clock(points) - clock(times[inner])))
        for job_start, job_end, machines in jobs:
            used = machines * self.extra_power * (clock(np.where(job_end < points, job_end, points))
                                                  - period.clock(job_start))
            values = np.where(points > job_start, values - used, values)
        if kept is not None:
            if kept.spread:
                span = period.clock(kept.until) - period.clock(self.now)
                amount = (np.full(len(points), kept.amount) if span <= 0 else
                          kept.amount * (clock(points) - period.clock(self.now)) / span)
            else:
                amount = np.full(len(points), kept.amount)
            values = np.where(points > kept.until, values, values - amount)
        return float(values.min())

    def _times_array(self) -> np.ndarray:
        array = getattr(self, "_times_np", None)
        if array is None:
            array = self._times_np = np.asarray(self.times)
        return array

    def allows(self, jobs: Sequence[PlannedJob], kept: ReservedEnergy | None = None) -> bool:
        """Rule 2 from now: C_ea stays >= 0 with `jobs` running and `kept` set aside."""
        # Quick acceptance: the lowest base balance up to the horizon, minus everything the
        # jobs and the kept energy could take, is a lower bound of the exact minimum.
        horizon = self._horizon(jobs)
        i = bisect_right(self.times, horizon) - 1
        bound = min(self.lowest_so_far[i], self.balance_at(horizon))
        clock = self.period.clock
        for start, end, machines in jobs:
            bound -= machines * self.extra_power * (clock(end) - clock(start))
        if kept is not None:
            bound -= kept.amount
        if bound >= -TOLERANCE:
            return True
        return self.lowest(jobs, kept) >= -TOLERANCE


class EnergyBudget(BudgetedEasy):
    """energyBud: EASY backfilling under an energy budget (seed 001 §6.4, Algorithm 2).

    Jobs start in queue order while machines and energy suffice (rule 2 on the projected
    C_ea). The first blocked job gets a reservation at the earliest decision time (a running
    job's estimated end, a monitoring stage, or t_e) at which it would have both machines
    and energy; the energy it needs then (C_ea it would take down to its lowest point) is
    subtracted from C_ea while backfilling (§6.4.4: "the reserved energy is subtracted from
    C_ea"), and the job is counted in the projection from its reserved start. Backfilled
    jobs follow EASY's rule and rule 2 on that projection.

    Called at job events and at monitoring stages; at a stage the algorithm runs only if the
    first waiting job has enough energy to start (§6.4.3, "Differences with EASY
    backfilling"). With budget=inf it is EASY backfilling exactly; once t_e is past, too.
    Needs the simulator's energy accounting (-E) for the monitoring QUERY.
    """

    NAME = "energybud"
    OPTIONS: dict[str, str] = {
        **BUDGET_OPTIONS,
        "period": "monitoring period in seconds: QUERY consumed_energy this often while jobs wait (default: 600)",
    }
    #: How the first job's reserved energy is kept from backfilled jobs (see ReservedEnergy).
    SPREAD_RESERVED_ENERGY = False

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.monitoring_period = float_option(self.NAME, self.options, "period", 600.0, minimum=0.0,
                                              minimum_excluded=True)
        self.available = 0.0  # C_ea at `accounted_until`
        self.accounted_until = 0.0
        self._last_stage: tuple[float, float, float] | None = None  # (time, C_ea, consumed_energy)
        self._awaiting_answer = False
        self._next_stage = 0  # index k of the next monitoring stage, at t_s + k * period
        self._energy_news = False  # an ANSWER just updated C_ea
        self._outlook: EnergyOutlook | None = None
        self._outlook_key: tuple[Any, float] | None = None

    # ---------------------------------------------------------------- C_ea
    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        if not self.period.unlimited:
            self._account_until(float(message["now"]))
        return super().handle(message)

    def _account_until(self, t: float) -> None:
        """Rule 1's income minus the overestimated consumption since the previous message."""
        elapsed = self.period.overlap(self.accounted_until, t)
        if elapsed > 0:
            power = self.platform_power(self.computing_machines())
            self.available += (self.period.rate - power) * elapsed
        if t > self.accounted_until:
            self.accounted_until = t

    def on_answer(self, data: dict[str, Any]) -> None:
        if "consumed_energy" not in data:
            return
        consumed = float(data["consumed_energy"])
        if self._last_stage is not None:
            # The measured consumption replaces the estimate made since the previous stage.
            t, available, previous = self._last_stage
            self.available = available + self.period.rate * self.period.overlap(t, self.now) - (consumed - previous)
        self._last_stage = (self.now, self.available, consumed)
        self._awaiting_answer = False
        self._energy_news = True

    @property
    def outlook(self) -> EnergyOutlook:
        key = (self.plan, self.available)  # rebuilt after a start, an end, or a new C_ea
        if self._outlook is None or self._outlook_key != key:
            self._outlook = EnergyOutlook(self.now, self.available, self.period, key[0],
                                          self.nb_machines * self.p_idle, self.p_computing - self.p_idle)
            self._outlook_key = key
        return self._outlook

    # ---------------------------------------------------------------- monitoring stages
    def _stage_time(self, k: int) -> float:
        return self.period.start + k * self.monitoring_period

    def arm_wakeups(self) -> None:
        """Monitoring stages while energy holds jobs back: query the consumed energy if a
        stage is due; otherwise wake up at the next stage (at t_e after the last one). The
        next wake-up waits for the ANSWER: if it lets every job start, none is needed."""
        now = self.now
        if now >= self.period.start and self._stage_time(self._next_stage) <= now:
            if not self._awaiting_answer:
                self.query_consumed_energy()
                self._awaiting_answer = True
            self._next_stage = max(self._next_stage, int((now - self.period.start) // self.monitoring_period))
            while self._stage_time(self._next_stage) <= now:
                self._next_stage += 1
        if self._awaiting_answer:
            return
        stage = self._stage_time(self._next_stage)
        if stage < self.period.end:
            self.wake_up_at(stage)
        else:
            super().arm_wakeups()

    def decision_times(self) -> list[float]:
        now, end = self.now, self.period.end
        if now >= end:
            return []
        k = max(0, math.ceil((now - self.period.start) / self.monitoring_period))
        times = []
        while (t := self._stage_time(k)) < end:
            if t > now:
                times.append(t)
            k += 1
        times.append(end)
        return times

    def decide(self) -> None:
        if self._energy_news:
            self._energy_news = False
            first = self.first_waiting()
            if (not self.needs_schedule and first is not None and self.constrained()
                    and self.outlook.allows([self.planned(first, self.now)])):
                self.needs_schedule = True
        super().decide()

    # ---------------------------------------------------------------- rule 2 and reservations
    def fits_now(self, job: SubmittedJob) -> bool:
        return self.outlook.allows([self.planned(job, self.now)])

    def reservation_need(self, job: SubmittedJob, t: float) -> float | None:
        if t >= self.period.end:
            return 0.0
        outlook = self.outlook
        lowest = outlook.lowest([self.planned(job, t)], since=t)
        if lowest < -TOLERANCE:
            return None
        return max(0.0, outlook.balance_at(t) - lowest)

    def reserved_energy(self, reservation: Reservation) -> ReservedEnergy | None:
        if reservation.need <= 0 or math.isinf(reservation.time):
            return None
        return ReservedEnergy(reservation.need, reservation.time, self.SPREAD_RESERVED_ENERGY)

    def fits_backfill(self, job: SubmittedJob, reservation: Reservation) -> bool:
        jobs = [self.planned(job, self.now)]
        if not math.isinf(reservation.time):
            jobs.append(self.planned(reservation.job, reservation.time))
        return self.outlook.allows(jobs, self.reserved_energy(reservation))


class ReducePC(EnergyBudget):
    """reducePC: energyBud where the reservation lowers the power rate (seed 001 §6.4.4).

    Identical to energyBud except while backfilling: the first job's reserved energy E is
    not subtracted from C_ea; instead the joules made available per second are reduced by
    E / (start - now) between now and the reserved start (so backfilled jobs may use a part
    of E that grows linearly with time), and, as under a power cap, a backfilled job must
    keep P~platform at most that reduced rate while it runs before the reserved start. So a
    short job using every free machine can be backfilled by energyBud when enough energy is
    saved, but not by reducePC (§6.4.4). The cap applies to every backfilled job, the
    reduction being 0 when the first job needs no energy at its start, as in the pybatsim
    scheduler the thesis evaluated (§6.5: schedulers/easyEnergyBudget.py there).
    """

    NAME = "reducepc"
    SPREAD_RESERVED_ENERGY = True

    def reduced_rate(self, reservation: Reservation) -> float:
        """B / (t_e - t_s) minus E / (start - now) (per second of the budget period)."""
        rate = self.period.rate
        if reservation.need <= 0 or math.isinf(reservation.time):
            return rate
        span = self.period.clock(reservation.time) - self.period.clock(self.now)
        return rate - reservation.need / span if span > 0 else rate

    def fits_backfill(self, job: SubmittedJob, reservation: Reservation) -> bool:
        start, end, machines = self.planned(job, self.now)
        capped_from = max(start, self.period.start)
        if capped_from < min(end, reservation.time, self.period.end):
            # The plan only loses computing machines over time: the power is highest first.
            power = self.platform_power(self.plan.computing_at(capped_from) + machines)
            if power > self.reduced_rate(reservation) + TOLERANCE:
                return False
        return super().fits_backfill(job, reservation)
