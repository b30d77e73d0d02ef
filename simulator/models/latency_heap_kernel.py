"""The instants the latencies of launched activities end at: a binary heap in arrays.

A launched activity (ptask_runner's batched launches) pays its route's latency before it joins
the sharing. Its (slot, key) waits here, ordered by the time its latency ends; `join_due`
takes those whose time has come. Entries of activities cancelled or killed meanwhile stay
until then and are recognised by their key (the slot may serve another activity). Entries of
one instant may come out in any order: they join the sharing by key. Compiled with numba,
called by the runner and by the compiled SMPI instants (smpi_instants_kernel.py).
"""

from __future__ import annotations

import numpy as np

from joulesim.simulator.models.activity_table_kernel import _advance_to, insert
from joulesim.simulator.models.fair_bottleneck_kernel import njit

__all__ = ["join_due", "push", "room"]


def room(when: np.ndarray, entries: np.ndarray, size: int, more: int) -> tuple[np.ndarray, np.ndarray]:
    """The heap's arrays, or larger copies, able to hold `more` entries beyond `size`."""
    if when.shape[0] >= size + more:
        return when, entries
    capacity = max(2 * when.shape[0], size + more, 64)
    grown_when = np.empty(capacity)
    grown_entries = np.empty((capacity, 2), dtype=np.int64)
    grown_when[:size] = when[:size]
    grown_entries[:size] = entries[:size]
    return grown_when, grown_entries


@njit(cache=True, nogil=True)
def _place(when: np.ndarray, entries: np.ndarray, position: int, moment: float, slot: int, slot_key: int) -> None:
    when[position] = moment
    entries[position, 0] = slot
    entries[position, 1] = slot_key


@njit(cache=True, nogil=True)
def push(when: np.ndarray, entries: np.ndarray, size: int, latent: np.ndarray, latent_when: np.ndarray,
         count: int) -> int:
    """Add latent[:count] (slot, key), ending at latent_when[:count]; the new size (room made before)."""
    for i in range(count):
        position = size
        size += 1
        moment = latent_when[i]
        while position > 0:  # sift up
            parent = (position - 1) // 2
            if when[parent] <= moment:
                break
            _place(when, entries, position, when[parent], entries[parent, 0], entries[parent, 1])
            position = parent
        _place(when, entries, position, moment, latent[i, 0], latent[i, 1])
    return size


@njit(cache=True, nogil=True)
def _pop(when: np.ndarray, entries: np.ndarray, size: int) -> int:
    """Remove the root; the new size."""
    size -= 1
    if size == 0:
        return 0
    moment = when[size]
    slot = entries[size, 0]
    slot_key = entries[size, 1]
    position = 0
    while True:  # sift the last entry down from the root
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and when[child + 1] < when[child]:
            child += 1
        if moment <= when[child]:
            break
        _place(when, entries, position, when[child], entries[child, 0], entries[child, 1])
        position = child
    _place(when, entries, position, moment, slot, slot_key)
    return size


@njit(cache=True, nogil=True)
def join_due(when: np.ndarray, entries: np.ndarray, size: int, order: np.ndarray, table_size: int,
             key: np.ndarray, held: np.ndarray, sharing: np.ndarray, remaining: np.ndarray, period: np.ndarray,
             now: float, advanced_to: float) -> tuple[int, int, int, float]:
    """The entries due by `now` leave the heap; those still there (same key: not cancelled, their
    job not killed) join the sharing, after the cursors moved to now.
    (heap size, table size, how many joined, advanced_to)."""
    joined = 0
    while size > 0 and when[0] <= now:
        slot = entries[0, 0]
        slot_key = entries[0, 1]
        size = _pop(when, entries, size)
        if held[slot] and key[slot] == slot_key and not sharing[slot]:
            advanced_to = _advance_to(order, table_size, remaining, period, now, advanced_to)
            sharing[slot] = True
            table_size = insert(order, table_size, key, slot)
            joined += 1
    return size, table_size, joined, advanced_to
