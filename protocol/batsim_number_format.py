"""Numbers as Batsim 4.2.1 writes them: every double with printf's "%6f" (six decimals).

Batsim's JSON writer (src/protocol.hpp, class Writer) overrides rapidjson's Double() with
`snprintf(buffer, 32, "%6f", d)`: a decider reads `now`, the events' timestamps and every other
double of a message rounded to the microsecond (298.84400000299996 is sent as 298.844000).
Deciders then stamp their decisions with those rounded times, and Batsim sleeps until a stamp
that lies ahead of its clock: the rounding feeds back into the simulated time, so a simulation
that means to send Batsim's messages must send the same rounded numbers. Integers stay integers,
as in rapidjson.
"""

from __future__ import annotations

from math import nan
from typing import Any, Final

#: The step of the times a decider reads: Batsim prints them to the microsecond (rounding to
#: nearest), so the `now` of a REQUESTED_CALL asked for at t may read up to half of it before t.
#: A decider comparing a time it computed with `now` should allow this much.
TIME_PRINT_STEP_S = 1e-6


def as_batsim_writes(value: Any) -> Any:
    """`value` (a JSON-able message) with every float as Batsim's writer prints it."""
    kind = type(value)
    if kind is dict:
        return _dict_as_written(value, [nan, nan])
    if kind is list:
        return _list_as_written(value, [nan, nan])
    if kind is float:
        return _float_as_written(value, [nan, nan])
    return value


# Below 2^33 s (MAX_SIMULATED_TIME) a double's half ulp is under half a microsecond. There, a
# double that is the nearest one to a whole number m of microseconds (m / 1e6 == x: a division
# of two exact doubles, correctly rounded) prints as m's six decimals, which read back as x
# itself: the printing can be skipped. (Beyond, printing moves no double at all: it rounds by
# less than half an ulp.) A workload's times (subtime 12.345) and the clock at most decisions are
# such doubles; a clock moved by a latency is not.
_WHOLE_MICROSECONDS_BELOW: Final = 2.0 ** 33


def _float_as_written(item: float, last: list[float]) -> float:
    """float("%f" % item), correctly rounded as glibc's printf; `last` holds the last float
    printed and what it became (a message's events mostly carry its `now` again)."""
    if item == last[0]:  # (never a zero, which the shortcut below takes: -0.0 == 0.0, and -0.0 stays -0.0)
        return last[1]
    if -_WHOLE_MICROSECONDS_BELOW < item < _WHOLE_MICROSECONDS_BELOW and \
            float(int(item * 1e6 + 0.5)) / 1e6 == item:  # (the rounding of m is free: the test decides)
        return item
    last[0] = item
    written = last[1] = float("%f" % item)
    return written


# The members are looked at in the loops below, so that strings and integers (most of a message)
# cost no call: this runs on every message.


def _dict_as_written(value: dict, last: list[float]) -> dict:
    written = value.copy()  # then its floats and containers replaced (the keys keep their order)
    for key, item in value.items():
        kind = type(item)
        if kind is float:
            written[key] = _float_as_written(item, last)
        elif kind is dict:
            written[key] = _dict_as_written(item, last)
        elif kind is list:
            written[key] = _list_as_written(item, last)
    return written


def _list_as_written(value: list, last: list[float]) -> list:
    written = []
    for item in value:
        kind = type(item)
        if kind is float:
            item = _float_as_written(item, last)
        elif kind is dict:
            item = _dict_as_written(item, last)
        elif kind is list:
            item = _list_as_written(item, last)
        written.append(item)
    return written
