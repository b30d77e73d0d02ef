"""Vivaldi coordinates, as SimGrid 3.32 reads and uses them (src/kernel/routing/VivaldiZone.cpp).

A host, router or peer may have ``coordinates="x y height"``: three numbers separated by single
spaces. SimGrid checks them on every element that has them, in any zone (a file with two
numbers, or with two spaces between them, does not load), and uses them in Vivaldi zones
only: a route between two members of a Vivaldi zone gets, on top of its links' latencies,

    (sqrt((x1 - x2)^2 + (y1 - y2)^2) + |height1| + |height2|) / 1000 seconds

(the coordinates are milliseconds), computed in that order. A member's route to itself gets
2 |height| / 1000 s.
"""

from __future__ import annotations

import math

from joulesim.inputs.input_error import InputError
from joulesim.protocol.number_text import NumberTextError, parse_decimal
from joulesim.simulator.platform.platform_checks import shown

Coordinates = tuple[float, float, float]

# Each coordinate's absolute value is at most this (ms): every Vivaldi latency then stays below
# 5e9 s, inside joulesim's time range (2^33 s). Real coordinates are tens or hundreds of ms.
MAX_COORDINATE = 1e12
# The attribute's length: SimGrid reads each part with std::stod, whatever its length, but three
# doubles take at most 3 x 24 characters (-1.2345678901234567e-308) and two spaces; a megabyte
# of digits ("0.000...01") is a broken file, refused before it is split or read.
MAX_COORDINATES_TEXT = 256
_FIX = 'write three numbers (ms) separated by single spaces, e.g. coordinates="12.5 -3 0.5" (x, y, height)'


def parse_coordinates(path: str, where: str, text: str) -> Coordinates:
    """The (x, y, height) of a `coordinates` attribute, or InputError naming `where`."""
    if len(text) > MAX_COORDINATES_TEXT:
        raise InputError(path, f"{where}, coordinates", f"is {len(text):,} characters long, more than joulesim's limit of "
                         f"{MAX_COORDINATES_TEXT} for three numbers", _FIX)
    parts = text.split(" ")  # SimGrid splits at each single space: "1  2 3" has four parts
    if len(parts) != 3:
        raise InputError(path, f"{where}, coordinates", f"coordinates {shown(text)} have {len(parts)} part(s) between single "
                         "spaces, not 3 (SimGrid 3.32 refuses the file: \"Coordinates of ... must have 3 dimensions\")", _FIX)
    values = []
    for part in parts:
        try:
            value = parse_decimal(part)
        except NumberTextError:
            raise InputError(path, f"{where}, coordinates", f"coordinate {shown(part)} of {shown(text)} is not a decimal number",
                             _FIX) from None
        if abs(value) > MAX_COORDINATE:
            raise InputError(path, f"{where}, coordinates", f"coordinate {shown(part)} is beyond +-{MAX_COORDINATE:g} ms "
                             "(joulesim's limit: latencies must stay within its time range)", _FIX)
        values.append(value)
    return values[0], values[1], values[2]


def vivaldi_latency(src: Coordinates, dst: Coordinates) -> float:
    """The latency (s) SimGrid's VivaldiZone adds to a route from `src` to `dst`, to the last bit."""
    distance = math.sqrt((src[0] - dst[0]) * (src[0] - dst[0]) + (src[1] - dst[1]) * (src[1] - dst[1])) + abs(src[2]) + abs(dst[2])
    return distance / 1000.0
