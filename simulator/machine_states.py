"""Counts of machines per state over time: `out_machine_states.csv` and the time_* totals.

Every compute machine is in exactly one category at any time. Rows are written as the
run goes, one per simulated time at which the counts changed, with the counts after
every change at that time. Machine-seconds per category are integrated exactly between
changes (compensated sums: no drift over long runs).
"""

from __future__ import annotations

from typing import TextIO

from joulesim.simulator.compensated_sum import CompensatedSum
from joulesim.simulator.output_format import fmt

MACHINE_STATES_COLUMNS = ["time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"]

# Categories, in the column order of the output (unavailable is not a Batsim column).
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING, UNAVAILABLE = range(6)
CATEGORY_NAMES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")


class MachineStates:
    def __init__(self, out: TextIO, initial_counts: list[int]):
        self._out = out
        self.counts = list(initial_counts)
        # Machine-seconds spent in each category.
        self._times = [CompensatedSum() for _ in CATEGORY_NAMES]
        self._t = 0.0
        self._last_row: tuple[int, ...] | None = None
        out.write(",".join(MACHINE_STATES_COLUMNS) + "\n")

    def move(self, now: float, source: int, target: int, n: int) -> None:
        """Move n machines from category `source` to `target` at time `now`."""
        if now != self._t:
            self.advance(now)
        counts = self.counts
        counts[source] -= n
        counts[target] += n

    def advance(self, now: float) -> None:
        """Close the row of the previous time and integrate up to `now`."""
        self._write_row()
        elapsed = now - self._t
        for time_in, count in zip(self._times, self.counts):
            if count:
                time_in.add(elapsed * count)
        self._t = now

    def _write_row(self) -> None:
        row = tuple(self.counts[:UNAVAILABLE])
        if row != self._last_row:
            self._out.write(f"{fmt(self._t)},{row[0]},{row[1]},{row[2]},{row[3]},{row[4]}\n")
            self._last_row = row

    def time_in(self, category: int) -> float:
        return self._times[category].value

    def close(self, now: float) -> None:
        self.advance(now)
        self._write_row()
