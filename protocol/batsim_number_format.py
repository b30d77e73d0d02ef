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

from typing import Any


def as_batsim_writes(value: Any) -> Any:
    """`value` (a JSON-able message) with every float as Batsim's writer prints it."""
    kind = type(value)
    if kind is float:
        return float(f"{value:f}")  # correctly rounded, as glibc's printf
    if kind is dict:
        return {key: as_batsim_writes(item) for key, item in value.items()}
    if kind is list:
        return [as_batsim_writes(item) for item in value]
    return value
