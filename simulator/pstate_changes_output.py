"""`out_pstate_changes.csv`: `time,machine_id,new_pstate`, one row per group of machines that
reached the same pstate at the same time (machine_id is an interval set), as Batsim writes it.

The first rows give every machine's initial pstate at t=0. A switch-off or switch-on shows
as two changes: into the virtual switching pstate when requested, into the target pstate
when the transition ends.
"""

from __future__ import annotations

from typing import TextIO

from joulesim.protocol.interval_set import format_runs, runs_of_sorted_ids

PSTATE_COLUMNS = ["time", "machine_id", "new_pstate"]


class PstateChangesOutput:
    def __init__(self, out: TextIO, initial_pstates: list[int]):
        self._out = out
        out.write(",".join(PSTATE_COLUMNS) + "\n")
        by_pstate: dict[int, list[int]] = {}
        for host, pstate in enumerate(initial_pstates):
            by_pstate.setdefault(pstate, []).append(host)
        for pstate in sorted(by_pstate, key=lambda p: by_pstate[p][0]):
            self.write(0.0, by_pstate[pstate], pstate)

    def write(self, now: float, hosts: list[int], pstate: int) -> None:
        """`hosts` ascending and distinct."""
        if hosts:
            self._out.write(f"{now:.6f},{format_runs(runs_of_sorted_ids(hosts))},{pstate}\n")
