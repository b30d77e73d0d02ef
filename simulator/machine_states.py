"""Counts of machines per state over time: `out_machine_states.csv` and the time_* totals.

Rows are written as the run goes, one per simulated time at which the counts changed,
with the counts after every change at that time.
"""

from __future__ import annotations

from typing import TextIO

from joulesim.simulator.output_format import fmt

MACHINE_STATES_COLUMNS = ["time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"]


class MachineStates:
    def __init__(self, out: TextIO, nb_machines: int):
        self._out = out
        self.idle = nb_machines
        self.computing = 0
        self.unavailable = 0
        # Machine-seconds spent in each state, integrated exactly between changes.
        self.time_idle = 0.0
        self.time_computing = 0.0
        self.time_unavailable = 0.0
        self._t = 0.0
        self._last_row: tuple[int, int] | None = None
        out.write(",".join(MACHINE_STATES_COLUMNS) + "\n")

    def change(self, now: float, idle: int, computing: int, unavailable: int) -> None:
        """Add these (signed) numbers of machines to each state at time `now`."""
        if now != self._t:
            self.advance(now)
        self.idle += idle
        self.computing += computing
        self.unavailable += unavailable

    def advance(self, now: float) -> None:
        """Close the row of the previous time and integrate up to `now`."""
        self._write_row()
        elapsed = now - self._t
        self.time_idle += elapsed * self.idle
        self.time_computing += elapsed * self.computing
        self.time_unavailable += elapsed * self.unavailable
        self._t = now

    def _write_row(self) -> None:
        row = (self.idle, self.computing)
        if row != self._last_row:
            self._out.write(f"{fmt(self._t)},0,0,0,{self.idle},{self.computing}\n")
            self._last_row = row

    def close(self, now: float) -> None:
        self.advance(now)
        self._write_row()
