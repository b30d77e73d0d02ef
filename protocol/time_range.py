"""The range of simulated times that joulesim represents exactly enough to simulate.

Times are IEEE-754 doubles (as in Batsim and on the wire). A double's spacing grows with its
magnitude: below 2**33 s (about 272 years) consecutive doubles are at most 2**-20 s
(0.95 us) apart, so every time and every duration of a microsecond or more keeps its value;
at 1e20 s the spacing is 16,384 s and a one-hour job would last 0 s. Rather than silently
lose durations, joulesim refuses any time (a submission time, a walltime, a delay, a
timestamp, a `now`) at or beyond MAX_SIMULATED_TIME, and any simulated clock that would
pass it.
"""

from __future__ import annotations

import math
from typing import Final

MAX_SIMULATED_TIME: Final = 2.0 ** 33  # 8,589,934,592 s; spacing of doubles below it <= 2**-20 s

TIME_RANGE_TEXT: Final = (f"simulated times must be finite and below 2^33 s = {MAX_SIMULATED_TIME:,.0f} s "
                   "(about 272 years), where every microsecond is still exact")


def time_out_of_range(value: float) -> bool:
    """True for a NaN, an infinity, or a magnitude at or beyond MAX_SIMULATED_TIME."""
    return not (-MAX_SIMULATED_TIME < value < MAX_SIMULATED_TIME)  # NaN compares False


def check_time(value: float, what: str) -> str | None:
    """None when `value` is a usable time; otherwise a sentence naming `what` and the fix."""
    if time_out_of_range(value):
        shown = "NaN" if isinstance(value, float) and math.isnan(value) else f"{value:g}"
        return (f"{what} is {shown}: {TIME_RANGE_TEXT}; rebase the times (e.g. subtract the "
                "first submission time) or shorten them")
    return None
