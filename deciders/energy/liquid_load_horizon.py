"""The liquid load horizon (LLH), seed 001 §7.4.1: an estimator of system unresponsiveness.

The pending load l = sum over waiting jobs of q_j * wall_j (machines x seconds) is poured,
as a liquid, into the free area of the provisional schedule from now on: `free_now`
machines are free at once, and each (time, count) release frees `count` more machines at
`time` (a running job's estimated end, a switch-on's expected end). The LLH is the time it
takes to consume l: 0 for no load, +inf when the machines that will ever be free cannot
absorb it (e.g. every machine is off or switching off).

Figure 7.1's situation (reconstructed, the figure's numbers are not in the text): 5
machines, machine 5 off; job 1 holds 2 machines until t+1, job 2 one machine until t+3,
one machine idle; jobs 3 (3 machines x 3 s) and 4 (1 x 2 s) wait: l = 11; the liquid fills
1 machine over [t, t+1], 3 over [t+1, t+3], then 4 need 1 s more: LLH = 4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

__all__ = ["LoadProfile", "liquid_load_horizon"]


def liquid_load_horizon(load: float, now: float, free_now: int,
                        releases: Iterable[tuple[float, int]]) -> float:
    """The LLH at `now`: seconds needed to spread `load` over the free machines from now on.

    `releases` are (time, machines freed then), in any order; those at or before `now`
    count as free now.
    """
    if load <= 0:
        return 0.0
    if math.isinf(load):
        return math.inf
    free = free_now
    upcoming = []
    for time, count in releases:
        if time <= now:
            free += count
        elif not math.isinf(time):
            upcoming.append((time, count))
    upcoming.sort()
    current = now
    for time, count in upcoming:
        area = free * (time - current)
        if area >= load:
            break
        load -= area
        current = time
        free += count
    if free <= 0:
        return math.inf
    return current + load / free - now


@dataclass(frozen=True, slots=True)
class LoadProfile:
    """The LLH inputs of one moment, to evaluate the LLH later while nothing changes."""

    load: float
    free_now: int
    releases: tuple[tuple[float, int], ...]

    def horizon_at(self, time: float) -> float:
        return liquid_load_horizon(self.load, time, self.free_now, self.releases)
