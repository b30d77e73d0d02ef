"""IRMaSim's modelV1: how memory-bandwidth contention slows the tasks sharing a processor.

Each busy core asks a memory bandwidth y (its task's memory volume over its run time alone);
X is the sum over the processor's busy cores and n the number of other busy tasks. A core then
runs at `speedup(X, y, n)` of its nominal speed, with the processor's parameters b, c, da, db,
dc, dd: no slowdown while X < c, then a linear fall of slope b, floored by a smoothstep in the
core's own demand that tends to 1 / (1 + 0.6 n) for heavy demanders. Rounded to 9 decimals,
as IRMaSim rounds it (results match IRMaSim's to the printed digits).
"""

from __future__ import annotations


def _smoothstep_down(x: float) -> float:
    """1 below 0, 0 above 1, and the quintic smoothstep 1 - (6x^5 - 15x^4 + 10x^3) between."""
    if x < 0:
        return 1.0
    if x > 1:
        return 0.0
    return 1 - x * x * x * (x * (x * 6 - 15) + 10)


def speedup(total_bandwidth: float, own_bandwidth: float, others: int, b: float, c: float,
            da: float, db: float, dc: float, dd: float) -> float:
    """The fraction of its nominal speed a core gets (see the module docstring)."""
    if total_bandwidth < c:
        return 1.0
    sharing = others * 0.6
    floor = (_smoothstep_down((own_bandwidth - (da - others) * db) / (dc - others * dd))
             * (sharing / (1 + sharing)) + 1 / (1 + sharing))
    if total_bandwidth > (floor + b * c - 1) / b:
        return round(floor, 9)
    return round(b * (total_bandwidth - c) + 1, 9)
