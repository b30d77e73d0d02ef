"""The (job, node) feature matrix in one compiled pass (numba), for `PairObservation.build`.

The same values as the numpy path of `joulesim.deciders.learned.pair_observation` (table 3.1, eq. 3.6,
Frobenius normalisation, then optionally each feature over its largest value), computed pair by
pair with no temporaries: the observation of a reinforcement-learning step is otherwise a dozen
numpy passes over up to num_jobs x nodes rows, the largest cost of an environment step after
the simulation itself. Two passes: the first finds the valid pairs and the sum of squares, the
second writes the scaled values; `scale_columns` then divides each feature by its largest
value, in float32 as numpy would (a numpy column max and divide cost ~300 us at 3,600 rows).
`AVAILABLE` is False without numba (the numpy path is used then).
"""

from __future__ import annotations

import math

import numpy as np

try:
    from numba import njit

    AVAILABLE = True
except ImportError:  # the rl extra brings numba; without it the numpy path serves
    AVAILABLE = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        return lambda function: function

__all__ = ["AVAILABLE", "fill_pairs", "scale_columns"]


@njit(cache=True, nogil=True)
def _pair_values(j: int, n: int, now: float, rows: np.ndarray, idle: np.ndarray, size: np.ndarray,
                 clock: np.ndarray, static: np.ndarray, idle_power: np.ndarray, dynamic: np.ndarray,
                 speed: np.ndarray, assigned: np.ndarray, values: np.ndarray) -> bool:
    """The 9 features of pair (j, n) into `values`; False when the pair is not valid."""
    subtime, req_time, tasks, limit = rows[j, 0], rows[j, 1], rows[j, 2], rows[j, 3]
    if tasks > idle[n]:
        return False
    estimate = (req_time * speed[n]) * (static[n] / (assigned[n] + 1.0) + tasks * dynamic[n])
    if estimate > limit:
        return False
    busy = size[n] - idle[n]
    values[0] = now - subtime
    values[1] = req_time
    values[2] = subtime
    values[3] = tasks
    values[4] = idle[n] / size[n]
    values[5] = clock[n]
    values[6] = static[n] if busy > 0 else idle_power[n]
    values[7] = busy * dynamic[n]
    values[8] = estimate
    return True


@njit(cache=True, nogil=True)
def fill_pairs(out: np.ndarray, mask: np.ndarray, now: float, rows: np.ndarray, idle: np.ndarray,
               size: np.ndarray, clock: np.ndarray, static: np.ndarray, idle_power: np.ndarray,
               dynamic: np.ndarray, speed: np.ndarray, assigned: np.ndarray, chosen: np.ndarray) -> None:
    """Write the chosen features (indexes into table 3.1's 9, in order) of every valid pair of
    the jobs `rows` x the nodes into `out` (zeroed), over the matrix's Frobenius norm, and set
    `mask` to 1 there."""
    n_nodes = idle.shape[0]
    values = np.empty(9)
    total = 0.0
    for j in range(rows.shape[0]):
        for n in range(n_nodes):
            if _pair_values(j, n, now, rows, idle, size, clock, static, idle_power, dynamic, speed, assigned,
                            values):
                mask[j * n_nodes + n] = 1
                for f in range(chosen.shape[0]):
                    v = values[chosen[f]]
                    total += v * v
    if total <= 0.0:
        return
    scale = 1.0 / math.sqrt(total)
    for j in range(rows.shape[0]):
        for n in range(n_nodes):
            row = j * n_nodes + n
            if mask[row]:
                _pair_values(j, n, now, rows, idle, size, clock, static, idle_power, dynamic, speed, assigned,
                             values)
                for f in range(chosen.shape[0]):
                    out[row, f] = values[chosen[f]] * scale


@njit(cache=True, nogil=True)
def scale_columns(out: np.ndarray, rows: int) -> None:
    """Divide each column of `out[:rows]` (float32, values >= 0) by its largest value, where it
    is not 0: the float32 quotients numpy's `out / out.max(axis=0)` gives, in one pass each."""
    width = out.shape[1]
    top = np.zeros(width, dtype=np.float32)
    for row in range(rows):
        for f in range(width):
            if out[row, f] > top[f]:
                top[f] = out[row, f]
    for row in range(rows):
        for f in range(width):
            if top[f] > 0:
                out[row, f] = out[row, f] / top[f]
