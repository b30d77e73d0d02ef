"""The machine-switching machinery the shutdown policies share (seed 001 §7.3.2): which machines
are usable, held for a job while they switch on, reserved off, switched off when idle.

`ShutdownMixin`, to mix before EasyBackfilling or a subclass of it:

- options `t_idle`, `compute_pstate`, `sleep_pstate` (`SHUTDOWN_OPTIONS`, to merge into the
  class's `OPTIONS`); `self.power` is the `MachinePower` bookkeeping;
- `usable_mask()`: machines a job may be given now (idle, sleeping or switching; not
  computing, awaited, unavailable or off-reserved); `choose_machines(n, pool)` picks n of
  them, those that compute soonest first; `launch(job, mask)` executes a waiting job now or
  holds the machines and switches them on; `shadow_with_power(needed, free)` is EASY's
  shadow time over that pool;
- off reservations (§7.3.2): `off_reserved` (machines kept off: idle ones are switched off
  at once, computing ones when their job ends), `reserve_off(n, allow_busy)`,
  `release_off(n)`, `wanted_on` (off machines to switch on as soon as possible);
  `release_for_priority(job)` applies §7.4.4's rule that reserved machines are given back
  only when the priority job needs more than all the other machines;
- hooks: `plan_at_start()` in the SIMULATION_BEGINS message; then, in every other message,
  by `decide()` in this order: awaited jobs whose machines are on start;
  `plan_before_schedule()`; `schedule()` when something changed; `plan_after_schedule()`
  (a `schedule()` again if it changed the pool); then switches: wanted machines on,
  reserved idle ones off, idle-timer shutdowns; `switch_off(mask)` / `switch_on(mask)` are
  the only places that emit SET_RESOURCE_STATE (override them to count switches);
- `request_call(t)`: CALL_ME_LATER at t, once per time; `drained`: nothing left to do.

A policy that needs to refuse a start (e.g. a power cap) can override `launch` or its own
`schedule()` built on `usable_mask()` / `choose_machines()`.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Iterator

from procset import ProcSet

from joulesim.deciders.batch.easy import Reservation
from joulesim.deciders.common.decider_options import float_option, int_option
from joulesim.deciders.common.machine_masks import lowest_bits, mask_to_procset, procset_to_mask
from joulesim.deciders.common.machine_power import MachinePower, machine_ids
from joulesim.deciders.common.waiting_queue import RunningJob
from joulesim.protocol.decider import SubmittedJob

__all__ = ["AwaitedStart", "ShutdownMixin", "highest_bits"]


def highest_bits(mask: int, n: int) -> int:
    """The n highest set bits of `mask` (all of them when it has fewer than n)."""
    result = 0
    while n > 0 and mask:
        top = 1 << (mask.bit_length() - 1)
        result |= top
        mask ^= top
        n -= 1
    return result


@dataclass(slots=True)
class AwaitedStart:
    """A job chosen to run on machines that are being switched on."""

    job: SubmittedJob
    mask: int
    chosen_at: float
    size: int = 0  # machines in mask

    def __post_init__(self) -> None:
        self.size = self.mask.bit_count()

    @property
    def estimated_end(self) -> float:
        return self.chosen_at + self.job.walltime if self.job.walltime >= 0 else math.inf


class ShutdownMixin:
    """Machine switching for queue policies: opportunistic shutdown, off reservations,
    jobs awaiting their machines (seed 001 §7.3.2, §7.4.4). See the module docstring."""

    SHUTDOWN_OPTIONS: dict[str, str] = {
        "t_idle": "seconds a machine stays idle before it is switched off (0: at once; 'inf': never; "
                  "default: never)",
        "compute_pstate": "computation pstate machines are switched on into (default 0)",
        "sleep_pstate": "sleep pstate machines are switched off into (default: each host's first "
                        "sleep_pstates triple)",
    }

    # Attributes of the queue policy this is mixed into (QueuePolicy / EasyBackfilling).
    queue: Any
    running: dict[str, RunningJob]
    all_mask: int
    busy_mask: int
    unavailable_mask: int
    free_mask: int
    needs_schedule: bool
    _by_end: list[tuple[float, int, RunningJob]]

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)  # type: ignore[call-arg]
        name = type(self).__name__
        self.t_idle = float_option(name, self.options, "t_idle", math.inf, minimum=0.0, allow_inf=True)
        self.power = MachinePower(int_option(name, self.options, "compute_pstate", None),
                                  int_option(name, self.options, "sleep_pstate", None), name)
        self.off_reserved = 0  # machines the policy keeps off
        self.wanted_on = 0  # off machines to switch on as soon as they can be
        self.awaited: dict[str, AwaitedStart] = {}  # in the order they were chosen
        self.awaited_mask = 0
        self.no_more_jobs = False
        self._just_began = False  # this message is SIMULATION_BEGINS: the workload is unknown yet
        # (idle_since + t_idle, machine, idle_since): a stale entry is skipped when popped.
        self._idle_expiries: list[tuple[float, int, float]] = []
        self._requested_calls: set[float] = set()

    # ---------------------------------------------------------------- state queries
    @property
    def drained(self) -> bool:
        """No job is to come, wait, or run: switching machines would only lengthen the run."""
        return self.no_more_jobs and not self.queue and not self.running and not self.awaited

    def usable_mask(self) -> int:
        """Machines a job may be given now: idle, sleeping or switching, not held by anything."""
        return self.all_mask & ~self.unavailable_mask & ~self.busy_mask & ~self.awaited_mask & ~self.off_reserved

    def choose_machines(self, n: int, pool: int) -> int:
        """n machines of `pool`, idle ones first, then switching on, sleeping, switching off
        (lowest ids first in each group): §7.3.2, idle machines before off ones."""
        power = self.power
        chosen = 0
        for group in (power.on_mask, power.switching_on_mask, power.sleeping_mask, power.switching_off_mask):
            chosen |= lowest_bits(pool & group, n - chosen.bit_count())
            if chosen.bit_count() >= n:
                break
        return chosen

    def jobs_without_machines(self) -> Iterator[SubmittedJob]:
        """Waiting jobs not already holding machines, in queue order."""
        awaited = self.awaited
        return (job for job in self.queue if job.id not in awaited)

    def launch_on(self, job: SubmittedJob, pool: int) -> int:
        """`launch` `job` now on machines chosen in `pool`; the machines it took."""
        mask = self.choose_machines(job.res, pool)
        self.launch(job, mask)
        return mask

    def reserve_with_power(self, job: SubmittedJob, free: int) -> Reservation:
        """EASY's reservation for `job` over the usable machines (`shadow_with_power`)."""
        return Reservation(job, *self.shadow_with_power(job.res, free))

    def first_waiting_job(self) -> SubmittedJob | None:
        """The first queued job not already holding machines (EASY's priority job candidate)."""
        return next(self.jobs_without_machines(), None)

    # ---------------------------------------------------------------- starting jobs
    def launch(self, job: SubmittedJob, mask: int) -> None:
        """Execute `job` on `mask` now if every machine is on, else hold them and switch them on."""
        off = mask & ~self.power.on_mask
        if not off:
            self.start_job(job, mask)  # type: ignore[attr-defined]
            return
        self.awaited[job.id] = AwaitedStart(job, mask, self.now)  # type: ignore[attr-defined]
        self.awaited_mask |= mask
        self.free_mask &= ~mask
        self.wanted_on |= off & ~self.power.switching_on_mask

    def start_job(self, job: SubmittedJob, mask: int | None = None) -> RunningJob:
        record = super().start_job(job, mask)  # type: ignore[misc]
        self.power.computation_started(record.mask)
        return record

    def _release(self, job_id: str) -> None:
        record = self.running.get(job_id)
        super()._release(job_id)  # type: ignore[misc]
        if record is not None:
            self.power.computation_ended(record.mask, self.now)  # type: ignore[attr-defined]
            self._watch_idle(record.mask)

    def _start_ready_jobs(self) -> None:
        on = self.power.on_mask
        ready = [start for start in self.awaited.values() if not start.mask & ~on]
        for start in ready:
            del self.awaited[start.job.id]
            self.awaited_mask &= ~start.mask
            self.start_job(start.job, start.mask)

    def shadow_with_power(self, needed: int, free: int) -> tuple[float, int]:
        """(shadow time, extra machines) for a job needing `needed` machines when `free` are
        usable now: EASY's shadow, where awaited jobs end at chosen time + walltime and the
        machines of running jobs that are reserved off or unavailable are not freed."""
        now = self.now  # type: ignore[attr-defined]
        if free >= needed:
            return now, free - needed
        keep = ~self.unavailable_mask & ~self.off_reserved
        running = ((end, record.mask) for end, _, record in self._by_end)
        awaited = sorted((start.estimated_end, start.mask) for start in self.awaited.values()
                         if start.estimated_end != math.inf)
        available = free
        for end, mask in heapq.merge(running, awaited, key=itemgetter(0)):
            available += (mask & keep).bit_count()
            if available >= needed:
                return max(end, now), available - needed
        return math.inf, 0

    # ---------------------------------------------------------------- off reservations
    def reserve_off(self, n: int, allow_busy: bool = False) -> int:
        """Add up to n machines to the off reservation; the machines added.

        Machines already off are taken first ("stolen" from opportunistic shutdown, §7.4.4:
        no new switch), then switching off, then idle ones, then (allow_busy) computing ones
        whose job ends soonest. Highest ids first, leaving low ids to jobs."""
        pool = self.usable_mask() & self.power.switchable_mask
        power = self.power
        chosen = 0
        for group in (power.sleeping_mask, power.switching_off_mask, power.on_mask):
            chosen |= highest_bits(pool & group, n - chosen.bit_count())
        if allow_busy and chosen.bit_count() < n:
            candidates = self.busy_mask & power.switchable_mask & ~self.off_reserved & ~self.unavailable_mask
            for _, _, record in self._by_end:
                chosen |= highest_bits(record.mask & candidates, n - chosen.bit_count())
                if chosen.bit_count() >= n:
                    break
        self.off_reserved |= chosen
        self.wanted_on &= ~chosen
        if chosen:
            self.needs_schedule = True
        return chosen

    def release_off(self, n: int) -> int:
        """Take up to n machines out of the off reservation; the machines released.

        Those that can compute soonest first: idle (not switched off yet), sleeping,
        switching off, then computing ones (not switched off yet); lowest ids first."""
        power = self.power
        reserved = self.off_reserved
        chosen = 0
        for group in (power.idle_mask, power.sleeping_mask, power.switching_off_mask, power.computing_mask):
            chosen |= lowest_bits(reserved & group, n - chosen.bit_count())
        self.off_reserved &= ~chosen
        if chosen:
            self.needs_schedule = True
        return chosen

    def release_for_priority(self, job: SubmittedJob) -> int:
        """§7.4.4: off-reserved machines are given back only when the priority job needs more
        machines than all the others (on, switching, or off because idle). The machines released."""
        if not self.off_reserved:
            return 0
        others = self.all_mask & ~self.unavailable_mask & ~self.off_reserved
        missing = job.res - others.bit_count()
        return self.release_off(missing) if missing > 0 else 0

    # ---------------------------------------------------------------- switching
    def switch_off(self, mask: int) -> None:
        for group, pstate in self.power.begin_switch_off(mask, self.now):  # type: ignore[attr-defined]
            self.set_resource_state(mask_to_procset(group), pstate)  # type: ignore[attr-defined]

    def switch_on(self, mask: int) -> None:
        for group, pstate in self.power.begin_switch_on(mask, self.now):  # type: ignore[attr-defined]
            self.set_resource_state(mask_to_procset(group), pstate)  # type: ignore[attr-defined]

    def _apply_switches(self) -> None:
        power = self.power
        usable = ~self.unavailable_mask
        wake = self.wanted_on & power.sleeping_mask & usable
        if wake:
            self.wanted_on &= ~wake
            self.switch_on(wake)
        sleep = self.off_reserved & power.idle_mask & power.switchable_mask & usable
        if sleep:
            self.switch_off(sleep)
        self._opportunistic_shutdown()

    def _opportunistic_shutdown(self) -> None:
        """§7.3.2: switch off the machines idle for t_idle (not held, not wanted for a job)."""
        heap = self._idle_expiries
        power = self.power
        eligible = (power.idle_mask & power.switchable_mask & ~self.awaited_mask & ~self.off_reserved
                    & ~self.unavailable_mask)
        idle_since = power.idle_since
        expired = 0
        while heap and self.reached(heap[0][0]):  # type: ignore[attr-defined]
            _, machine, since = heapq.heappop(heap)
            if eligible >> machine & 1 and idle_since.get(machine) == since:
                expired |= 1 << machine
        if expired:
            self.switch_off(expired)

    def _watch_idle(self, mask: int) -> None:
        """Start the idle timers of machines that just became idle."""
        if math.isinf(self.t_idle):
            return
        idle_since = self.power.idle_since
        heap = self._idle_expiries
        t_idle = self.t_idle
        for machine in machine_ids(mask):
            since = idle_since.get(machine)
            if since is not None:
                heapq.heappush(heap, (since + t_idle, machine, since))

    def _arm_idle_timer(self) -> None:
        """One CALL_ME_LATER at the next idle expiry, unless an earlier call is pending."""
        heap = self._idle_expiries
        idle_since = self.power.idle_since
        while heap and idle_since.get(heap[0][1]) != heap[0][2]:
            heapq.heappop(heap)  # stale: the machine computed or was switched since
        if heap and not any(t <= heap[0][0] for t in self._requested_calls):
            self.request_call(heap[0][0])

    def request_call(self, timestamp: float) -> None:
        """CALL_ME_LATER at `timestamp` (> now), unless one at that time is pending."""
        if timestamp > self.now and timestamp not in self._requested_calls:  # type: ignore[attr-defined]
            self._requested_calls.add(timestamp)
            self.call_me_later(timestamp)  # type: ignore[attr-defined]

    # ---------------------------------------------------------------- callbacks
    def on_simulation_begins(self, data: dict[str, Any]) -> None:
        super().on_simulation_begins(data)  # type: ignore[misc]
        self.power.setup(self.compute_resources, self.nb_resources, self.now)  # type: ignore[attr-defined]
        self._watch_idle(self.power.idle_mask)
        self._just_began = True

    def on_resource_state_changed(self, resources: ProcSet, state: str) -> None:
        woke, _ = self.power.state_changed(procset_to_mask(resources), self.now)  # type: ignore[attr-defined]
        self._watch_idle(woke & ~self.awaited_mask)
        self.needs_schedule = True  # idle machines are now preferred to off ones

    def on_machine_available(self, resources: ProcSet) -> None:
        super().on_machine_available(resources)  # type: ignore[misc]
        self._watch_idle(procset_to_mask(resources))

    def on_no_more_static_job_to_submit(self) -> None:
        self.no_more_jobs = True

    def plan_at_start(self) -> None:
        """Hook: called in the SIMULATION_BEGINS message, which takes no other decision."""

    def plan_before_schedule(self) -> None:
        """Hook: energy decisions to take before EASY's pass (e.g. off reservation sizes)."""

    def plan_after_schedule(self) -> None:
        """Hook: energy decisions to take after EASY's pass (e.g. periodic decisions)."""

    def decide(self) -> None:
        if self._requested_calls:
            self._requested_calls = {t for t in self._requested_calls if not self.reached(t)}  # type: ignore[attr-defined]
        if self._just_began:
            # SIMULATION_BEGINS comes alone, jobs of t=0 in the next message: switching now
            # would switch off machines those jobs need. Timers are armed; the rest waits.
            self._just_began = False
            self.plan_at_start()
            self._arm_idle_timer()
        else:
            self._decide_energy_and_jobs()
        self.free_mask = self.usable_mask() & self.power.on_mask

    def _decide_energy_and_jobs(self) -> None:
        self._start_ready_jobs()
        self.plan_before_schedule()
        self._schedule_if_needed()
        self.plan_after_schedule()
        self._schedule_if_needed()
        if not self.drained:
            self._apply_switches()
            self._arm_idle_timer()

    def _schedule_if_needed(self) -> None:
        if self.needs_schedule:
            self.needs_schedule = False
            if self.queue:
                self.schedule()  # type: ignore[attr-defined]
                self.queue.compact()
