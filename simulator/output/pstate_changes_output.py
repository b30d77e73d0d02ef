"""`out_pstate_changes.csv`: `time,machine_id,new_pstate`, one row per group of machines that
reached the same pstate at the same time (machine_id is an interval set), as Batsim writes it:
times printed with %g.

The first rows give every machine's initial pstate at t=0, one row per pstate, by ascending
pstate. A SET_RESOURCE_STATE shows as two
rows for all its machines, as Batsim 4 writes them: -2 (switching towards a sleep pstate) or
-1 (towards a computation pstate) when requested, then the target pstate when its last machine
has arrived.
"""

from __future__ import annotations

from typing import TextIO

from joulesim.protocol.interval_set import format_runs, runs_of_sorted_ids
from joulesim.simulator.output.output_format import fmt_time

PSTATE_COLUMNS = ["time", "machine_id", "new_pstate"]


class PstateChangesOutput:
    def __init__(self, out: TextIO, initial_pstates: list[int]):
        self._out = out
        out.write(",".join(PSTATE_COLUMNS) + "\n")
        by_pstate: dict[int, list[int]] = {}
        for host, pstate in enumerate(initial_pstates):
            by_pstate.setdefault(pstate, []).append(host)
        for pstate in sorted(by_pstate):
            self.write(0.0, by_pstate[pstate], pstate)

    def write(self, now: float, hosts: list[int], pstate: int) -> None:
        """`hosts` ascending and distinct."""
        if hosts:
            self._out.write(f"{fmt_time(now)},{format_runs(runs_of_sorted_ids(hosts))},{pstate}\n")
