"""Click parameter types for numeric command-line options, read by protocol.number_text.

click's INT, FLOAT, IntRange and FloatRange call int() and float(), which take "١٢", "1_0",
"nan" (that passes every range check, since NaN compares False) and "inf"; these types read the
same ASCII decimals as every other number joulesim takes from a user, then check the range.
A bad value is click's usual usage error (exit 2) naming the option.
"""

from __future__ import annotations

import math
import re

import click

from joulesim.protocol.number_text import NumberTextError, parse_decimal, parse_integer

__all__ = ["DecimalRange", "IntegerRange"]

_ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")
_LONGEST_RANGE_CHECKED = 100


def _bound(value: float | None, unbounded: str) -> str:
    if value is None:
        return unbounded
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _bounds_text(minimum: float | None, maximum: float | None, min_open: bool, max_open: bool) -> str:
    low, high = _bound(minimum, "-inf"), _bound(maximum, "inf")
    return f"{']' if min_open else '['}{low}, {high}{'[' if max_open else ']'}"


class DecimalRange(click.ParamType):
    """A finite decimal number in a range (open or closed at each end); inf too if allow_inf."""

    name = "number"

    def __init__(self, minimum: float | None = None, maximum: float | None = None, *, min_open: bool = False,
                 max_open: bool = False, allow_inf: bool = False):
        self.minimum, self.maximum = minimum, maximum
        self.min_open, self.max_open = min_open, max_open
        self.allow_inf = allow_inf

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
            number = float(value)  # a default given in code
        else:
            try:
                number = parse_decimal(str(value), allow_inf=self.allow_inf)
            except NumberTextError as exc:
                self.fail(str(exc), param, ctx)
        low, high = self.minimum, self.maximum
        if ((low is not None and (number <= low if self.min_open else number < low))
                or (high is not None and not (self.allow_inf and math.isinf(number))
                    and (number >= high if self.max_open else number > high))):
            self.fail(f"{value!r} is not in the range {_bounds_text(low, high, self.min_open, self.max_open)}", param, ctx)
        return number


class IntegerRange(click.ParamType):
    """An integer of ASCII digits (at most number_text.MAX_INTEGER_DIGITS) in [minimum, maximum]."""

    name = "integer"

    def __init__(self, minimum: int | None = None, maximum: int | None = None):
        self.minimum, self.maximum = minimum, maximum

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, int) and not isinstance(value, bool):
            number = value  # a default given in code
        else:
            text = str(value).strip()
            try:
                number = parse_integer(text)
            except NumberTextError as exc:
                # ASCII digits beyond parse_integer's length (a seed up to 2**63 - 1 has 19): read
                # exactly while short enough for int() to be instant, so that the range is named.
                if not (_ASCII_INTEGER.fullmatch(text) and len(text) <= _LONGEST_RANGE_CHECKED):
                    self.fail(str(exc), param, ctx)
                number = int(text)
        if (self.minimum is not None and number < self.minimum) or (self.maximum is not None and number > self.maximum):
            self.fail(f"{value!r} is not in the range {_bounds_text(self.minimum, self.maximum, False, False)}", param, ctx)
        return number
