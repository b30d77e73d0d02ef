"""The kernel's started sleeps in one array, for runs where many sleep at once.

SimGrid's full update subtracts each step's length from every started action's remaining
duration, so a job's end depends, to the last bit, on every step taken while it slept: the
update cannot be skipped or done lazily. With thousands of jobs running (2,048 hosts and more),
that loop in Python was most of a run. Here the remaining durations sit in a float64 array and
one numpy subtraction updates them all (the smallest is found again only when one ends). numpy's
subtraction is the same IEEE operation as Python's, element by element, so the bits are those
of the dict the kernel keeps for a few sleeps (Kernel._step), and ended sleeps come back in
creation order, as there. (A compiled pass, numba, took 1.5 us a step but 1.2 s and 126 MB to
start: on the whole CEA-Curie trace it saved 10 s of 270 and cost an eighth of its memory.)

Free slots, and ended sleeps until they are removed, hold +inf: the smallest remaining
duration ignores them and subtracting a finite step leaves them at +inf.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

SURF_PRECISION: Final = 1e-9  # SimGrid's surf/precision (the kernel's)


class SleepArray:
    """Started sleeps: remaining duration and creation key by slot, and the sleeping actor by key."""

    __slots__ = ("remaining", "keys", "slot_of", "actor_of", "free", "high", "best")

    def __init__(self, capacity: int = 256):
        self.remaining = np.full(capacity, np.inf)
        self.keys = np.zeros(capacity, dtype=np.int64)
        self.slot_of: dict[int, int] = {}  # creation key -> slot
        self.actor_of: dict[int, Any] = {}  # creation key -> the actor that sleeps
        self.free: list[int] = []  # slots below `high` that hold no sleep
        self.high = 0  # slots at and above it were never used (the updates stop there)
        # The smallest remaining duration (+inf: none), None when a cancelled sleep may have been it.
        self.best: float | None = math.inf

    def __len__(self) -> int:
        return len(self.slot_of)

    def add(self, key: int, duration: float, actor: Any) -> None:
        if self.free:
            slot = self.free.pop()
        else:
            slot = self.high
            if slot == len(self.remaining):
                self.remaining = np.concatenate((self.remaining, np.full(slot, np.inf)))
                self.keys = np.concatenate((self.keys, np.zeros(slot, dtype=np.int64)))
            self.high = slot + 1
        self.remaining[slot] = duration
        self.keys[slot] = key
        self.slot_of[key] = slot
        self.actor_of[key] = actor
        if self.best is not None and duration < self.best:
            self.best = duration

    def remove(self, key: int, ended: bool = False) -> Any:
        """The actor of a sleep that leaves the started actions (`ended`: by `advance`, else
        cancelled), None if it had left."""
        slot = self.slot_of.pop(key, None)
        if slot is None:
            return None
        if not ended:
            self.remaining[slot] = math.inf
            self.best = None
        self.free.append(slot)
        return self.actor_of.pop(key)

    def items(self) -> list[tuple[int, float, Any]]:
        """(key, remaining duration, actor) of each sleep, in creation order."""
        return [(key, float(self.remaining[self.slot_of[key]]), self.actor_of[key]) for key in sorted(self.slot_of)]

    def shortest(self) -> float:
        """The smallest remaining duration (Model::next_occurring_event_full), -1 when none."""
        if not self.slot_of:
            return -1.0
        if self.best is None:
            self.best = float(self.remaining[:self.high].min())
        return self.best

    def advance(self, delta: float) -> list[int]:
        """Every sleep's remaining duration less `delta` (below surf/precision: over); the keys
        of the ended ones, in creation order; remove them with `ended=True`."""
        if not self.slot_of:  # (free slots stay at +inf)
            return []
        remaining = self.remaining[:self.high]
        remaining -= delta
        # IEEE subtraction is monotonic: the smallest stays the smallest, at its value less delta.
        best = float(remaining.min()) if self.best is None else self.best - delta
        if best >= SURF_PRECISION:  # (most steps end no sleep: no other pass)
            self.best = best
            return []
        # Mostly one sleep ends: the smallest (two passes, where looking for all costs four).
        slot = int(remaining.argmin())
        remaining[slot] = math.inf
        best = float(remaining.min())
        if best >= SURF_PRECISION:
            self.best = best
            return [int(self.keys[slot])]
        slots = np.flatnonzero(remaining < SURF_PRECISION)  # the others that end with it
        remaining[slots] = math.inf
        self.best = float(remaining.min())
        return sorted([int(self.keys[slot]), *self.keys[slots].tolist()])
