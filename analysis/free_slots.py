"""Fragmentation over time: how many machines no job holds, and the largest block of contiguous
such machines (the widest job that could start now on contiguous machines).

Batsim's outputs give each job's machines as host ranges; a machine is free between the end of
one job holding it and the start of the next (a job ending at t frees its machines at t, one
starting at t holds them from t). The values are exact after each instant given: the run's own
instants of change when there are few enough (instants x machines at most EXACT_WORK), else
evenly spaced instants (the report says how many), so that CEA-Curie's 93,312 machines and
600,000 instants cost seconds, not hours.
"""

from __future__ import annotations

import numpy as np

#: Exact instants while instants x machines stays below this (numpy work per instant: a pass
#: over the machines); above, SAMPLES evenly spaced instants.
EXACT_WORK = 2e8
SAMPLES = 4000


def free_machines(start: np.ndarray, finish: np.ndarray, lows: np.ndarray, highs: np.ndarray, nb_machines: int,
                  instants: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(free machines, largest block of contiguous free machines) after each of `instants`
    (sorted), given each allocated host range [lows, highs] held over [start, finish)."""
    held = ~np.isnan(start) & ~np.isnan(finish)
    start, finish, lows, highs = start[held], finish[held], lows[held].astype(np.int64), highs[held].astype(np.int64)
    by_start, by_finish = np.argsort(start, kind="stable"), np.argsort(finish, kind="stable")
    starts_sorted, finishes_sorted = start[by_start], finish[by_finish]
    holders = np.zeros(nb_machines + 1, dtype=np.int64)  # differences: jobs holding each machine, cumulated
    free = np.empty(instants.size, dtype=np.int64)
    largest = np.empty(instants.size, dtype=np.int64)
    begun = ended = 0
    for k, t in enumerate(instants):
        now_begun = int(np.searchsorted(starts_sorted, t, side="right"))
        now_ended = int(np.searchsorted(finishes_sorted, t, side="right"))
        if now_begun > begun:
            rows = by_start[begun:now_begun]
            np.add.at(holders, lows[rows], 1)
            np.add.at(holders, highs[rows] + 1, -1)
        if now_ended > ended:
            rows = by_finish[ended:now_ended]
            np.add.at(holders, lows[rows], -1)
            np.add.at(holders, highs[rows] + 1, 1)
        begun, ended = now_begun, now_ended
        idle = np.cumsum(holders[:-1]) == 0
        free[k] = int(idle.sum())
        largest[k] = longest_run(idle)
    return free, largest


def longest_run(flags: np.ndarray) -> int:
    """The length of the longest run of True in a boolean array."""
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    begins, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int((ends - begins).max()) if begins.size else 0


def report_instants(start: np.ndarray, finish: np.ndarray, nb_machines: int, end: float) -> tuple[np.ndarray, bool]:
    """The instants the report gives the values at, and whether they are every instant of change
    (else SAMPLES evenly spaced over [0, end])."""
    changes = np.unique(np.concatenate([[0.0], start[~np.isnan(start)], finish[~np.isnan(finish)]]))
    if changes.size * max(nb_machines, 1) <= EXACT_WORK:
        return changes, True
    return np.linspace(0.0, end, SAMPLES), False
