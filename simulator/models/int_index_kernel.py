"""A map of non-negative int64 keys to int64 values, in one numpy array, for compiled code.

numba's typed Dict would do, but making one from Python, or storing into it from Python,
compiles code in every process (0.8 s each, not cached), and it weighs on the compilation of
the kernels that use it. This one is an (capacity, 2) array of (key, value) rows, key -1 for
an empty row, found by open addressing (Fibonacci hashing, linear probing). The capacity is a
power of 2 that its owner keeps at least twice the number of keys (`room`), so a probe always
ends at an empty row.
"""

from __future__ import annotations

import numpy as np

from joulesim.simulator.models.fair_bottleneck_kernel import njit

__all__ = ["get", "new_index", "put", "room"]

_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio


def new_index(keys: int = 0) -> np.ndarray:
    """An empty index with room for `keys` keys."""
    capacity = 16
    while capacity < 2 * keys:
        capacity *= 2
    index = np.empty((capacity, 2), dtype=np.int64)
    index[:, 0] = -1
    return index


def room(index: np.ndarray, keys: int) -> np.ndarray:
    """`index`, or a larger copy of it, able to hold `keys` keys in all."""
    if index.shape[0] >= 2 * keys:
        return index
    grown = new_index(keys)
    _copy_into(index, grown)
    return grown


@njit(cache=True, nogil=True)
def _row(index: np.ndarray, key: int) -> int:
    """The row holding `key`, or the empty row where it would go."""
    mask = index.shape[0] - 1
    row = np.int64((np.uint64(key) * _FIBONACCI) >> np.uint64(32)) & mask
    while index[row, 0] != key and index[row, 0] != -1:
        row = (row + 1) & mask
    return row


@njit(cache=True, nogil=True)
def get(index: np.ndarray, key: int) -> int:
    """The value of `key` (values are non-negative), -1 if it has none."""
    row = _row(index, key)
    return index[row, 1] if index[row, 0] == key else -1


@njit(cache=True, nogil=True)
def put(index: np.ndarray, key: int, value: int) -> None:
    row = _row(index, key)
    index[row, 0] = key
    index[row, 1] = value


@njit(cache=True, nogil=True)
def _copy_into(old: np.ndarray, new: np.ndarray) -> None:
    for row in range(old.shape[0]):
        if old[row, 0] != -1:
            put(new, old[row, 0], old[row, 1])
