"""ActivityTable's event steps compiled (numba); see activity_table.py for what each does.

The same float operations, in the same order, as the table's numpy code, so either gives the
same bits. `AVAILABLE` is False without numba (the table's numpy code runs then).
"""

from __future__ import annotations

import math

import numpy as np

from joulesim.simulator.models import fair_bottleneck_kernel
from joulesim.simulator.models.fair_bottleneck_kernel import AVAILABLE, njit

__all__ = ["AVAILABLE", "advance", "finished", "insert", "resolve"]


@njit(cache=True, nogil=True)
def insert(order: np.ndarray, size: int, key: np.ndarray, slot: int) -> int:
    """`slot` into `order[:size]`, after every slot of a key <= its own; the new size."""
    position = size
    while position > 0 and key[order[position - 1]] > key[slot]:
        order[position] = order[position - 1]
        position -= 1
    order[position] = slot
    return size + 1


@njit(cache=True, nogil=True)
def advance(order: np.ndarray, size: int, remaining: np.ndarray, period: np.ndarray, elapsed: float) -> None:
    for i in range(size):
        slot = order[i]
        if period[slot] > 0:
            remaining[slot] -= elapsed / period[slot]


@njit(cache=True, nogil=True)
def finished(order: np.ndarray, size: int, end: np.ndarray, remaining: np.ndarray, limit: float,
             done: np.ndarray) -> tuple[int, int]:
    """(how many ended, the new size); the ended ones in `done`, in order."""
    count = 0
    kept = 0
    for i in range(size):
        slot = order[i]
        if end[slot] <= limit:
            done[count] = slot
            count += 1
            remaining[slot] = 0.0
        else:
            order[kept] = slot
            kept += 1
    return count, kept


@njit(cache=True, nogil=True)
def resolve(order: np.ndarray, size: int, elem_start: np.ndarray, elem_count: np.ndarray, resource_pool: np.ndarray,
            amount_pool: np.ndarray, own_pool: np.ndarray, capacity: np.ndarray, remaining: np.ndarray,
            period: np.ndarray, end: np.ndarray, changed: np.ndarray, now: float, precision: float,
            tolerance: float, max_rounds: int) -> float:
    total = 0
    for i in range(size):
        total += elem_count[order[i]]
    task_index = np.empty(total, dtype=np.int64)
    resource = np.empty(total, dtype=np.int64)
    amount = np.empty(total)
    own = np.empty(size)
    k = 0
    for i in range(size):
        slot = order[i]
        own[i] = own_pool[slot]
        start = elem_start[slot]
        for e in range(start, start + elem_count[slot]):
            task_index[k] = i
            resource[k] = resource_pool[e]
            amount[k] = amount_pool[e]
            k += 1
    periods = fair_bottleneck_kernel.fair_bottleneck_periods(task_index, resource, amount, capacity, own, precision,
                                                             tolerance, max_rounds)
    next_end = math.inf
    for i in range(size):
        slot = order[i]
        changed[slot] = periods[i] != period[slot]
        period[slot] = periods[i]
        ends = now + remaining[slot] * periods[i]
        end[slot] = ends
        if ends < next_end:
            next_end = ends
    return next_end
