"""Counts of machines per state over time: `out_machine_states.csv` and the time_* totals.

Every compute machine is in exactly one category at any time. Rows are written as the
run goes, one per simulated time at which the counts changed, with the counts after
every change at that time.

Machine-seconds per category are integrated by parts, so that the work happens only when
machines move rather than at every time step: the integral of count(t) over [0, T] is
count(T) x T - sum(dcount_k x t_k) over the moves k. The sums are Neumaier-compensated
(inlined: this is on every job's path), so long runs do not drift.
"""

from __future__ import annotations

from typing import TextIO

MACHINE_STATES_COLUMNS = ["time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"]

# Categories, in the column order of the output (unavailable is not a Batsim column).
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
CATEGORY_NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")

_ROW = "%.6f,%d,%d,%d,%d,%d\n"  # the time as output_format.fmt writes it, then the counts


class MachineStates:
    def __init__(self, out: TextIO, initial_counts: list[int]):
        self._out = out
        self.counts = list(initial_counts)
        # sum(dcount x t) per category, as value + compensation.
        self._moments = [0.0] * len(CATEGORY_NAMES)
        self._compensations = [0.0] * len(CATEGORY_NAMES)
        self._t = 0.0
        self._last_row: list[int] | None = None
        out.write(",".join(MACHINE_STATES_COLUMNS) + "\n")

    def move(self, now: float, source: int, target: int, n: int) -> None:
        """Move n machines from category `source` to `target` at time `now`."""
        if now != self._t:
            self.advance(now)
        counts = self.counts
        counts[source] -= n
        counts[target] += n
        if now:
            moments, compensations = self._moments, self._compensations
            term = n * now
            old = moments[target]
            total = old + term
            if abs(old) >= term:
                compensations[target] += (old - total) + term
            else:
                compensations[target] += (term - total) + old
            moments[target] = total
            old = moments[source]
            total = old - term
            if abs(old) >= term:
                compensations[source] += (old - total) - term
            else:
                compensations[source] += (-term - total) + old
            moments[source] = total

    def advance(self, now: float) -> None:
        """Close the row of the previous time: later moves happen at `now`."""
        self._write_row()
        self._t = now

    def _write_row(self) -> None:
        row = self.counts[:UNAVAILABLE]
        if row != self._last_row:
            self._out.write(_ROW % (self._t, *row))
            self._last_row = row

    def time_in(self, category: int) -> float:
        """Machine-seconds spent in `category` from 0 to the time of the last advance/close."""
        return self.counts[category] * self._t - (self._moments[category] + self._compensations[category])

    def close(self, now: float) -> None:
        self.advance(now)
        self._write_row()
