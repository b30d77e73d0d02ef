"""A running sum that does not drift: Neumaier's compensated summation.

Energy is a sum of millions of (watts x seconds) products over a long run, and the power
of the platform is a sum of as many +/- changes. A plain float accumulator loses about one
rounding error per addition; the compensation term keeps the total within a few ulps of
the exact sum, so a week-long trace ends with the joules a closed form gives.
"""

from __future__ import annotations


class CompensatedSum:
    __slots__ = ("_sum", "_compensation")

    def __init__(self, start: float = 0.0):
        self._sum = float(start)
        self._compensation = 0.0

    def add(self, value: float) -> None:
        total = self._sum + value
        if abs(self._sum) >= abs(value):
            self._compensation += (self._sum - total) + value
        else:
            self._compensation += (value - total) + self._sum
        self._sum = total

    @property
    def value(self) -> float:
        return self._sum + self._compensation
