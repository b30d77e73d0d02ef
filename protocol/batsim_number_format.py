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
from typing import Any

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
        return float("%f" % value)  # correctly rounded, as glibc's printf
    return value


# The members are looked at in the loops below, so that strings and integers (most of a message)
# cost no call: this runs on every message. `last` holds the last float written and what it
# became: a message's events mostly carry its `now` again as their timestamps.


def _dict_as_written(value: dict, last: list) -> dict:
    written = value.copy()  # then its floats and containers replaced (the keys keep their order)
    for key, item in value.items():
        kind = type(item)
        if kind is float:
            if item == last[0] and item:  # (not for zeros: -0.0 == 0.0, and -0.0 stays -0.0)
                written[key] = last[1]
            else:
                last[0] = item
                written[key] = last[1] = float("%f" % item)
        elif kind is dict:
            written[key] = _dict_as_written(item, last)
        elif kind is list:
            written[key] = _list_as_written(item, last)
    return written


def _list_as_written(value: list, last: list) -> list:
    written = []
    for item in value:
        kind = type(item)
        if kind is float:
            if item == last[0] and item:
                item = last[1]
            else:
                last[0] = item
                item = last[1] = float("%f" % item)
        elif kind is dict:
            item = _dict_as_written(item, last)
        elif kind is list:
            item = _list_as_written(item, last)
        written.append(item)
    return written
