"""Each machine's power state over time, for the band the report's Gantt draws behind the jobs:
on, switching on, switching off, or asleep (switched off), read from PREFIX_pstate_changes.csv.

Batsim's machine_states file only counts machines per state; which machine was in which state
is in the pstate changes: `time,machine_id,new_pstate`, machine_id an interval set, each row
holding for its machines until their next row (simulator/output/pstate_changes_output.py). A
switch shows as -2 (switching off) or -1 (switching on) when requested, then the target pstate
when reached. Which pstates are sleep pstates is not written in the file, but follows from it:
a switch-off (-2) ends in one, a switch-on (-1) starts from one; the others are computation
pstates ("on": idle where the Gantt draws no job over it). A run's first rows give every
machine's pstate at time 0.

The band is a rectangle per state, time span and contiguous range of machines (machines with
the same state over the same span are one rectangle), a machine's consecutive spans in one
state joined.
"""

from __future__ import annotations

import numpy as np

from joulesim.analysis.run_outputs import DamagedOutputError, RunOutputs, parse_interval_set

ON, SWITCHING_ON, SWITCHING_OFF, ASLEEP = range(4)
# (name in the legend, colour: those of the machine states figure, drawn light behind the jobs)
STATES = (("on (idle where no job)", "#009E73"), ("switching on", "#E69F00"), ("switching off", "#D55E00"),
          ("asleep / off", "#999999"))  # (Okabe and Ito's colour-blind-safe colours, drawn light under the jobs)
_FIX = "rerun the simulation with -E to rewrite it"


def machine_power_spans(run: RunOutputs, until: float) -> dict[str, np.ndarray] | None:
    """The band's rectangles: arrays left, right (times), first, last (machines), state (ON...),
    in a fixed order (state, then left, then first machine); None for a run without energy. A
    machine's last row holds until `until` (or its own time if later)."""
    changes = run.pstate_changes
    if changes is None:
        return None
    path = run.path("pstate_changes")
    times = changes["time"].to_numpy(dtype=float)
    pstates = changes["new_pstate"].to_numpy(dtype=float)
    machines, row_of = [], []
    for row, text in enumerate(changes["machine_id"].tolist()):
        try:
            runs = parse_interval_set(text)
        except ValueError as exc:
            raise DamagedOutputError(path, f"data row {row + 1}, column machine_id",
                                     f"{text!r} is not an interval set like '0-3 5': {exc}", _FIX) from None
        for lo, hi in runs:
            if hi >= run.nb_machines:
                raise DamagedOutputError(path, f"data row {row + 1}, column machine_id",
                                         f"names machine {hi}, but the run had {run.nb_machines}", _FIX)
            machines.append(np.arange(lo, hi + 1))
            row_of.append(np.full(hi - lo + 1, row))
    bad = ~np.isfinite(times) | ~np.isfinite(pstates) | (pstates != np.round(pstates))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DamagedOutputError(path, f"data row {row + 1}", "has a time or new_pstate that is not a number "
                                 "(new_pstate: a whole number)", _FIX)
    if not machines:
        return _empty()
    machine = np.concatenate(machines)
    row = np.concatenate(row_of)
    order = np.lexsort((row, machine))  # each machine's rows in file (time) order
    machine, row = machine[order], row[order]
    start, pstate = times[row], pstates[row].astype(np.int64)
    same_machine = machine[1:] == machine[:-1]
    # sleep pstates: where a switch-off arrives, and where a switch-on leaves from
    sleep = set(pstate[1:][same_machine & (pstate[:-1] == -2)].tolist())
    sleep |= set(pstate[:-1][same_machine & (pstate[1:] == -1)].tolist())
    sleep -= {-1, -2}
    state = np.full(pstate.size, ON, dtype=np.int8)
    state[pstate == -1] = SWITCHING_ON
    state[pstate == -2] = SWITCHING_OFF
    state[np.isin(pstate, sorted(sleep))] = ASLEEP
    # a machine's consecutive rows in one state are one span
    first_of_span = np.concatenate([[True], ~same_machine | (state[1:] != state[:-1])])
    machine, start, state = machine[first_of_span], start[first_of_span], state[first_of_span]
    next_same = np.concatenate([machine[1:] == machine[:-1], [False]])
    end = np.where(next_same, np.concatenate([start[1:], [0.0]]), np.maximum(until, start))
    keep = end > start  # (a switch requested and done at one printed time spans nothing)
    machine, start, end, state = machine[keep], start[keep], end[keep], state[keep]
    # machines side by side in the same state over the same span: one rectangle
    order = np.lexsort((machine, end, start, state))
    machine, start, end, state = machine[order], start[order], end[order], state[order]
    new = np.concatenate([[True], (state[1:] != state[:-1]) | (start[1:] != start[:-1]) | (end[1:] != end[:-1])
                          | (machine[1:] != machine[:-1] + 1)])
    heads = np.flatnonzero(new)
    tails = np.concatenate([heads[1:] - 1, [machine.size - 1]])
    return {"left": start[heads], "right": end[heads], "first": machine[heads].astype(np.int32),
            "last": machine[tails].astype(np.int32), "state": state[heads]}


def _empty() -> dict[str, np.ndarray]:
    return {"left": np.empty(0), "right": np.empty(0), "first": np.empty(0, np.int32),
            "last": np.empty(0, np.int32), "state": np.empty(0, np.int8)}
