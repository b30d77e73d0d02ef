"""The network runner's activities as arrays: cursors, periods, elements, and who is sharing.

`ptask_runner` used to keep each activity's state in its Python object and rebuild the solver's
arrays from them at every re-solve; the SMPI replay re-solves at every message event (12,000
times for 25,000 actions), and that rebuilding cost more than the solve. Here the state lives in
arrays indexed by *slot* (one per activity from its building to its end), and the three steps of
an event (move the cursors to now, find what ended, re-solve) are one call each over them,
compiled with numba when it is there (activity_table_kernel.py), in numpy otherwise; both do
the same float operations in the same order as the old per-object code, so the outputs are
byte-identical whichever runs (a test compares them).

The sharing activities are kept in `order`, sorted by key (job start sequence, then launch
sequence): the order the old code visited them in (jobs in start order, each job's activities
in launch order), which is the order of the solver's elements and so of its float sums.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from joulesim.simulator.models import activity_table_kernel as kernel
from joulesim.simulator.models import ptask_sharing

_INITIAL_SLOTS = 64
_INITIAL_ELEMENTS = 1024


class ActivityTable:
    """Slots of activities (cursor left, period, predicted end, own period, elements) and the
    sorted list of those sharing the platform."""

    def __init__(self) -> None:
        self.remaining = np.ones(_INITIAL_SLOTS)  # fraction of the cursor left
        self.period = np.zeros(_INITIAL_SLOTS)  # seconds for the whole activity at its rate
        self.end = np.full(_INITIAL_SLOTS, np.inf)  # predicted at the last re-solve
        self.own = np.zeros(_INITIAL_SLOTS)  # bound from outside the shared resources
        self.key = np.zeros(_INITIAL_SLOTS, dtype=np.int64)
        self.elem_start = np.zeros(_INITIAL_SLOTS, dtype=np.int64)
        self.elem_count = np.zeros(_INITIAL_SLOTS, dtype=np.int64)
        self.held = np.zeros(_INITIAL_SLOTS, dtype=bool)
        self.sharing = np.zeros(_INITIAL_SLOTS, dtype=bool)  # in `order`
        # Activities launched in batches (launch_commands) have no Python object: the job (its
        # start sequence) and the token its model gave them; -1 for the runner's own objects.
        self.batch_job = np.full(_INITIAL_SLOTS, -1, dtype=np.int64)
        self.token = np.zeros(_INITIAL_SLOTS, dtype=np.int64)
        # Slots of transfers whose progress is kept elsewhere (Batsim's messages, stepped by the
        # kernel): they share the resources, the steps leave them alone.
        self.external = np.zeros(_INITIAL_SLOTS, dtype=bool)
        self.resource = np.zeros(_INITIAL_ELEMENTS, dtype=np.int64)
        self.amount = np.zeros(_INITIAL_ELEMENTS)
        self.top = 0  # elements pool: next free element
        self.free = np.arange(_INITIAL_SLOTS - 1, -1, -1, dtype=np.int64)  # a stack of free slots
        self.free_top = _INITIAL_SLOTS
        self.order = np.zeros(_INITIAL_SLOTS, dtype=np.int64)  # sharing slots, by key
        self.size = 0  # how many of `order` are sharing
        self.changed = np.zeros(_INITIAL_SLOTS, dtype=bool)  # period changed at the last re-solve
        self.version = 0  # changes when the sharing or its periods change (cpu_usage's copies stay valid until then)

    @staticmethod
    def compiled() -> bool:
        return kernel.AVAILABLE and ptask_sharing.USE_KERNEL

    # ------------------------------------------------------------------ slots
    def add(self, resources: Sequence[int], amounts: Sequence[float], own_period: float) -> int:
        """A slot for a new activity (not sharing yet)."""
        self.reserve(1, len(resources))
        self.free_top -= 1
        slot = int(self.free[self.free_top])
        count = len(resources)
        start = self.top
        self.resource[start:start + count] = resources
        self.amount[start:start + count] = amounts
        self.top = start + count
        self.elem_start[slot] = start
        self.elem_count[slot] = count
        self.own[slot] = own_period
        self.remaining[slot] = 1.0
        self.period[slot] = 0.0
        self.end[slot] = np.inf
        self.held[slot] = True
        self.batch_job[slot] = -1
        return slot

    def reserve(self, slots: int, elements: int) -> None:
        """Room for `slots` more activities with `elements` elements in all."""
        if self.free_top < slots:
            self._grow_slots(slots)
        if self.top + elements > self.resource.shape[0]:
            self._compact(elements)

    def release(self, slot: int) -> None:
        """The activity is over (not sharing): its slot may serve another."""
        self.held[slot] = False
        self.external[slot] = False
        self.free[self.free_top] = slot
        self.free_top += 1

    def release_many(self, slots: np.ndarray) -> None:
        """release() of each of `slots`, in order."""
        self.held[slots] = False
        self.external[slots] = False
        self.free[self.free_top:self.free_top + slots.size] = slots
        self.free_top += slots.size

    def drop(self, slots: np.ndarray) -> None:
        """The activities at `slots` are over before their end (their job killed): out of the
        sharing, their slots freed."""
        self.version += 1
        if self.size:
            sharing = self.order[:self.size]
            staying = sharing[~np.isin(sharing, slots)]
            self.order[:staying.size] = staying
            self.size = staying.size
        self.sharing[slots] = False
        self.release_many(slots)

    def join(self, slot: int) -> None:
        """The activity starts progressing (past its latency), placed by its key (set before)."""
        self.version += 1
        self.sharing[slot] = True
        if self.compiled():
            self.size = kernel.insert(self.order, self.size, self.key, slot)
            return
        keys = self.key[self.order[:self.size]]
        position = int(np.searchsorted(keys, self.key[slot], side="right"))
        self.order[position + 1:self.size + 1] = self.order[position:self.size]
        self.order[position] = slot
        self.size += 1

    def leave(self, slot: int) -> None:
        """The activity stops progressing before its end (cancelled, its job killed)."""
        self.version += 1
        sharing = self.order[:self.size]
        position = int(np.flatnonzero(sharing == slot)[0])
        self.order[position:self.size - 1] = self.order[position + 1:self.size]
        self.size -= 1
        self.sharing[slot] = False

    def sharing_slots(self) -> np.ndarray:
        return self.order[:self.size]

    # ------------------------------------------------------------------ event steps
    def advance(self, elapsed: float) -> None:
        """Every sharing cursor moves by `elapsed` seconds at its period."""
        if self.size == 0:
            return
        if self.compiled():
            kernel.advance(self.order, self.size, self.remaining, self.period, elapsed)
            return
        slots = self.order[:self.size]
        periods = self.period[slots]
        moving = slots[periods > 0]
        self.remaining[moving] -= elapsed / self.period[moving]

    def next_step(self) -> float:
        """The seconds until the first sharing activity ends at its rate, as ptask_L07's full
        update finds it (Model::next_occurring_event_full: remains / rate, the rate being
        1 / period); -1 when none progresses."""
        if self.compiled():
            return kernel.next_step(self.order, self.size, self.remaining, self.period, self.external)
        slots = self.order[:self.size]
        slots = slots[~self.external[slots]]
        periods = self.period[slots]
        moving = periods < np.inf
        if not moving.any():
            return -1.0
        left = self.remaining[slots][moving]
        periods = periods[moving]
        with np.errstate(divide="ignore"):
            values = np.where(periods == 0, 0.0, np.where(left > 0, left / (1.0 / np.where(periods > 0, periods, 1.0)), 0.0))
        return float(values.min())

    def step(self, delta: float, precision: float) -> tuple[int, float]:
        """Every sharing cursor moves by its rate x `delta` (HostL07Model::update_actions_state:
        Action::update_remains, a cursor left below `precision` is 0): how many reached 0, and
        what next_step gives now (computed in the same pass)."""
        if self.compiled():
            return kernel.step(self.order, self.size, self.remaining, self.period, self.external, delta, precision)
        ended = 0
        best = -1.0
        for slot in self.order[:self.size].tolist():  # (the same operations as the compiled loop)
            if self.external[slot]:
                continue
            period = float(self.period[slot])
            if 0 < period < np.inf:
                rate = 1.0 / period
                left = float(self.remaining[slot]) - rate * delta
            elif period == 0:
                rate = np.inf
                left = 0.0
            else:
                continue
            if left < precision:
                left = 0.0
                ended += 1
            self.remaining[slot] = left
            value = left / rate if left > 0 else 0.0
            if best < 0 or value < best:
                best = value
        return ended, best

    def finished(self, limit: float, precision: float = 0.0) -> np.ndarray:
        """The sharing activities predicted to end by `limit` or with less than `precision`
        of their cursor left, in order, taken out of the sharing with their cursor at 0."""
        self.version += 1
        if self.compiled():
            done = np.empty(self.size, dtype=np.int64)
            count, self.size = kernel.finished(self.order, self.size, self.end, self.remaining, limit, done, precision)
            done = done[:count]
        else:
            slots = self.order[:self.size]
            ending = (self.end[slots] <= limit) | (self.remaining[slots] < precision)
            done = slots[ending]
            staying = slots[~ending]
            self.order[:staying.size] = staying
            self.size = staying.size
            self.remaining[done] = 0.0
        self.sharing[done] = False
        return done

    def resolve(self, now: float, capacity: np.ndarray) -> float:
        """New periods and predicted ends of the sharing activities (fair bottleneck); the
        earliest end. `changed` flags the slots whose period changed."""
        self.version += 1
        if self.compiled():
            return kernel.resolve(self.order, self.size, self.elem_start, self.elem_count, self.resource, self.amount,
                                  self.own, capacity, self.remaining, self.period, self.end, self.changed, now,
                                  ptask_sharing.REMAINING_PRECISION, ptask_sharing.BOUND_TOLERANCE,
                                  ptask_sharing.MAX_ROUNDS)
        slots = self.order[:self.size]
        counts, _, offsets = self._elements_of(slots)
        task_index = np.repeat(np.arange(slots.size), counts)
        periods = ptask_sharing.fair_bottleneck_periods(task_index, self.resource[offsets], self.amount[offsets],
                                                        capacity, self.own[slots])
        self.changed[slots] = periods != self.period[slots]
        self.period[slots] = periods
        ends = now + self.remaining[slots] * periods
        self.end[slots] = ends
        ends = ends[~np.isnan(ends)]  # (0 left x an infinite period: never the next end, as before)
        return float(ends.min()) if ends.size else np.inf

    def cpu_usage(self, nb_hosts: int, also: np.ndarray | None = None) -> np.ndarray:
        """The flops per second each of the `nb_hosts` CPUs gives the sharing activities (and
        `also`, activities just finished, at their last rate): SimGrid's Host::get_load, its CPU
        constraint's usage (each element's weight x its variable's value, summed)."""
        slots = self.order[:self.size]
        if also is not None and also.size:
            slots = np.concatenate([slots, also])
        usage = np.zeros(nb_hosts)
        if slots.size:
            counts, _, offsets = self._elements_of(slots)
            periods = np.repeat(self.period[slots], counts)
            resources = self.resource[offsets]
            on_cpu = (resources < nb_hosts) & (periods > 0) & (periods < np.inf)
            np.add.at(usage, resources[on_cpu], self.amount[offsets][on_cpu] / periods[on_cpu])
        return usage

    # ------------------------------------------------------------------ storage
    def _grow_slots(self, needed: int) -> None:
        old = self.remaining.shape[0]
        new = 2 * old
        while new - old + self.free_top < needed:
            new *= 2
        for name, fill in (("remaining", 1.0), ("period", 0.0), ("end", np.inf), ("own", 0.0), ("key", 0),
                           ("elem_start", 0), ("elem_count", 0), ("held", False), ("order", 0), ("changed", False),
                           ("sharing", False), ("batch_job", -1), ("token", 0), ("external", False)):
            array = getattr(self, name)
            grown = np.full(new, fill, dtype=array.dtype)
            grown[:old] = array
            setattr(self, name, grown)
        # the new slots under the free old ones (the stack pops the old ones first, as before)
        free = np.empty(new, dtype=np.int64)
        free[:new - old] = np.arange(new - 1, old - 1, -1)
        free[new - old:new - old + self.free_top] = self.free[:self.free_top]
        self.free = free
        self.free_top += new - old

    def _elements_of(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The element counts of `slots`, where each one's elements would start if gathered
        in that order, and the pool positions of all of them in that order."""
        counts = self.elem_count[slots]
        firsts = np.cumsum(counts) - counts
        # element k of the gathered list sits at elem_start[its slot] + its rank within the slot
        offsets = np.repeat(self.elem_start[slots] - firsts, counts) + np.arange(int(counts.sum()))
        return counts, firsts, offsets

    def _compact(self, needed: int) -> None:
        """Elements of over activities are dropped; the pool grows if the live ones fill half."""
        slots = np.flatnonzero(self.held)
        counts, firsts, offsets = self._elements_of(slots)
        live = offsets.size
        size = self.resource.shape[0]
        while live + needed > size // 2:
            size *= 2
        resource = np.zeros(size, dtype=np.int64)
        amount = np.zeros(size)
        resource[:live] = self.resource[offsets]
        amount[:live] = self.amount[offsets]
        self.resource, self.amount = resource, amount
        self.elem_start[slots] = firsts
        self.top = live
