"""Inertial shutdown (seed 001 §7.4.3, Algorithm 3): EASY with an off reservation whose size
follows the variation of the system's unresponsiveness.

Every `period` seconds (T, CALL_ME_LATER), the mean LLH (§7.4.1) over the last period,
v_t, is compared with the previous period's, v_(t-T). The LLH is evaluated after every
message's decisions and again, on the same state, at the next message's time (just before
its events); the mean integrates these values by trapezoids. Algorithm 3 then decides:

- if v_t >= v_ub, machines must be switched on: a SWITCH OFF trend becomes SWITCH ON with
  no switch counted, and v_(t-T) is taken as 0;
- if the previous type was SWITCH ON and v_t > v_(t-T), or SWITCH OFF and
  v_t <= v_(t-T), the same type again for min(max(f(#real), 1), mu) machines, where #real
  is the number of machines the previous decision really switched and f is `n+1` or `2n`;
- else the type toggles and nothing is switched now (no overreaction).

The first decision is at T; before it the trend is SWITCH ON with no switch (as in the
thesis's implementation), so that an unloaded platform toggles to SWITCH OFF at T and
starts switching machines off at 2T, one, then f(1), ...

SWITCH OFF adds machines to the off reservation (kept off; EASY does not use them):
machines already off for being idle are taken first ("stolen", no new switch, §7.4.4),
then idle ones, then, with `future_switches`, computing ones whose job ends soonest (they
are switched off when it ends). mu is the number of such machines, bounded so that the
priority job is not delayed: at most EASY's extra machines at its shadow time.
SWITCH ON takes reserved machines out of the reservation and switches them on, sleeping
ones first, then off-for-idle ones (with `future_switches`, machines still switching off,
switched on once off); mu counts them. #real counts the machines whose switch was
initiated (or found done, when stolen) since the decision; switches planned by a decision
and not initiated by the next one are cancelled. Opportunistic shutdown (`t_idle`) and
§7.4.4's release of reserved machines for the priority job work as in the shared code.
Periodic calls stop once nothing is left to do.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from joulesim.deciders.common.decider_options import bool_option, choice_option, float_option
from joulesim.deciders.common.machine_masks import lowest_bits
from joulesim.deciders.common.machine_power import machine_ids
from joulesim.deciders.energy.easy_shutdown import EasyWithShutdown
from joulesim.deciders.energy.liquid_load_horizon import LoadProfile
from joulesim.deciders.energy.shutdown_machinery import ShutdownMixin

__all__ = ["InertialShutdown", "SWITCH_OFF", "SWITCH_ON", "inertial_decision"]

SWITCH_ON = "SWITCH ON"
SWITCH_OFF = "SWITCH OFF"

SWITCH_COUNT_FUNCTIONS = {"n+1": lambda n: n + 1, "2n": lambda n: 2 * n}


def inertial_decision(previous_type: str, real_switches: int, mean_now: float, mean_before: float,
                      v_ub: float, f) -> tuple[str, int]:
    """Algorithm 3: (decision type, number of machines to switch before the bound mu)."""
    if mean_now >= v_ub:
        if previous_type == SWITCH_OFF:
            previous_type = SWITCH_ON
            real_switches = 0
        mean_before = 0.0
    if (previous_type == SWITCH_ON and mean_now > mean_before) or \
            (previous_type == SWITCH_OFF and mean_now <= mean_before):
        return previous_type, max(f(real_switches), 1)
    return (SWITCH_OFF if previous_type == SWITCH_ON else SWITCH_ON), 0


class InertialShutdown(EasyWithShutdown):
    """EASY with an off reservation adapted to the LLH trend (seed 001 §7.4.3, Algorithm 3)."""

    OPTIONS = {
        "period": "seconds between two energy decisions, T (default 600)",
        "v_ub": "upper bound of the mean LLH (seconds): above it machines are switched on (default 10000)",
        "f": "switch-count function of the previous decision's switches: 'n+1' or '2n' (default 'n+1')",
        "future_switches": "true: decisions may switch machines later (computing machines off when their "
                           "job ends, switching-off machines on once off); false: only machines "
                           "switchable now (default false)",
        **ShutdownMixin.SHUTDOWN_OPTIONS,
    }

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        name = type(self).__name__
        self.period = float_option(name, self.options, "period", 600.0, minimum=0.0, minimum_excluded=True)
        self.v_ub = float_option(name, self.options, "v_ub", 1e4, minimum=0.0, allow_inf=True)
        self.f_name = choice_option(name, self.options, "f", tuple(SWITCH_COUNT_FUNCTIONS), "n+1")
        self.f = SWITCH_COUNT_FUNCTIONS[self.f_name]
        self.future_switches = bool_option(name, self.options, "future_switches", False)
        # Algorithm 3's state.
        self.decision_type = SWITCH_ON
        self.real_switches = 0
        self.previous_mean = 0.0
        self.next_period = math.inf
        # The latest decisions (time, type, machines switched, mean LLH), for inspection.
        self.decisions: deque[tuple[float, str, int, float]] = deque(maxlen=1000)
        # Machines a decision planned to switch, counted in real_switches when initiated.
        self._planned_off = 0
        self._planned_on = 0
        # LLH integral over the current period.
        self._llh_area = 0.0
        self._llh_time = 0.0
        self._llh_value = 0.0
        self._profile: LoadProfile | None = None

    # ---------------------------------------------------------------- LLH tracking
    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        now = float(message["now"])
        if self._profile is not None and now > self._llh_time:
            before = self._profile.horizon_at(now)  # the state has not changed since the last reply
            self._llh_area += (self._llh_value + before) / 2 * (now - self._llh_time)
            self._llh_time = now
            self._llh_value = before
        return super().handle(message)

    def load_profile(self) -> LoadProfile:
        """The provisional schedule as the LLH sees it (§7.4.1): the load of the waiting jobs;
        idle usable machines free now; computing machines freed at their job's estimated end
        (not those reserved off or unavailable); machines switching on for no job at their
        expected arrival; held machines at (expected arrival + walltime) of their job.
        Off machines never free (switch durations: the last observed ones)."""
        now = self.now
        power = self.power
        load = 0.0
        for job in self.queue:
            if job.id not in self.awaited:
                load += job.res * job.walltime if job.walltime >= 0 else math.inf
        usable = self.usable_mask()
        keep = ~self.unavailable_mask & ~self.off_reserved
        releases = [(end, (record.mask & keep).bit_count()) for end, _, record in self._by_end]
        booting = usable & power.switching_on_mask
        releases += [(power.expected_on_time(m, now), 1) for m in machine_ids(booting)]
        for start in self.awaited.values():
            if start.job.walltime < 0:
                continue
            on_duration = power.switch_on_duration or 0.0
            ready = now
            for machine in machine_ids(start.mask):
                if (power.on_mask | power.switching_on_mask) >> machine & 1:
                    ready = max(ready, power.expected_on_time(machine, now))
                elif power.switching_off_mask >> machine & 1:  # off first, then on
                    ready = max(ready, power.switch_started[machine] + (power.switch_off_duration or 0.0)
                                + on_duration)
                else:  # sleeping (and unavailable: it would be switched on otherwise)
                    ready = max(ready, now + on_duration)
            releases.append((ready + start.job.walltime, start.mask.bit_count()))
        return LoadProfile(load, (usable & power.on_mask).bit_count(), tuple(releases))

    # ---------------------------------------------------------------- periodic decisions
    def plan_at_start(self) -> None:
        self._llh_time = self.now
        self.next_period = self.now + self.period
        self.request_call(self.next_period)

    def plan_after_schedule(self) -> None:
        if not self.reached(self.next_period) or self.drained:
            return
        while self.reached(self.next_period):
            self.next_period += self.period
        self.request_call(self.next_period)
        mean = self._llh_area / self.period
        self._llh_area = 0.0
        # Planned switches not initiated since the last decision are cancelled (a machine a
        # job now waits for stays wanted).
        if self._planned_off:
            self.off_reserved &= ~self._planned_off
            self.needs_schedule = True
        self.wanted_on &= ~(self._planned_on & ~self.awaited_mask)
        self._planned_off = self._planned_on = 0
        self.decision_type, due = inertial_decision(self.decision_type, self.real_switches, mean,
                                                    self.previous_mean, self.v_ub, self.f)
        self.previous_mean = mean
        self.real_switches = 0
        if due:
            due = self._switch_off_more(due) if self.decision_type == SWITCH_OFF else self._switch_on_more(due)
        self.decisions.append((self.now, self.decision_type, due, mean))

    def _switch_off_more(self, due: int) -> int:
        """Reserve min(due, mu) more machines off; how many."""
        pool = self.usable_mask() & self.power.switchable_mask
        power = self.power
        candidates = (pool & (power.sleeping_mask | power.switching_off_mask | power.on_mask)).bit_count()
        if self.future_switches:
            busy = self.busy_mask & power.switchable_mask & ~self.off_reserved & ~self.unavailable_mask
            candidates += sum((record.mask & busy).bit_count() for _, _, record in self._by_end)
        priority = self.first_waiting_job()
        if priority is not None:  # keep the priority job's start: at most EASY's extra machines
            _, extra = self.shadow_with_power(priority.res, self.usable_mask().bit_count())
            candidates = min(candidates, extra)
        chosen = self.reserve_off(min(due, candidates), allow_busy=self.future_switches)
        already_off = chosen & (power.sleeping_mask | power.switching_off_mask)
        self.real_switches += already_off.bit_count()  # stolen from opportunistic shutdown
        self._planned_off = chosen & ~already_off
        return chosen.bit_count()

    def _switch_on_more(self, due: int) -> int:
        """Take min(due, mu) machines out of the off state and switch them on; how many."""
        power = self.power
        switchable_now = power.sleeping_mask
        later = power.switching_off_mask if self.future_switches else 0
        reserved = self.off_reserved
        idle_off = self.usable_mask() & ~self.wanted_on
        chosen = 0
        for group in (reserved & switchable_now, reserved & later, idle_off & switchable_now, idle_off & later):
            chosen |= lowest_bits(group, due - chosen.bit_count())
        self.off_reserved &= ~chosen
        self.wanted_on |= chosen
        self._planned_on = chosen
        self.needs_schedule = True
        return chosen.bit_count()

    # ---------------------------------------------------------------- switch counting
    def switch_off(self, mask: int) -> None:
        counted = mask & self._planned_off
        self._planned_off &= ~counted
        self.real_switches += counted.bit_count()
        super().switch_off(mask)

    def switch_on(self, mask: int) -> None:
        counted = mask & self._planned_on
        self._planned_on &= ~counted
        self.real_switches += counted.bit_count()
        super().switch_on(mask)

    def decide(self) -> None:
        super().decide()
        self._profile = self.load_profile()
        self._llh_value = self._profile.horizon_at(self.now)
        self._llh_time = self.now
