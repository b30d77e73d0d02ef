"""Numbers a user writes as text (options, platform properties, unit strings), read strictly.

Python's float() and int() take far more than a decimal number: other scripts' digits ("١٢",
"１.５"), digit-group underscores ("1_0"), "nan", "inf"/"Infinity", and float() turns "1e400"
into an infinity without a word. Any of these in a price, an option or a platform property
used to become a NaN or infinite result much later. Every place where user text becomes a
number goes through this module, so they all accept the same thing:

- a decimal: ``[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`` in ASCII, finite
  once converted (an exponent beyond a double is refused, not rounded to infinity); "inf" (any
  case, "+inf", "infinity") only where the caller allows it;
- an integer: ``[+-]? digits`` in ASCII (a caller may refuse the sign), at most
  MAX_INTEGER_DIGITS digits (int() of thousands of digits is slow, then refused by Python);

with nothing around them but ASCII blanks (space, tab, CR, LF).

Errors are NumberTextError (a ValueError) whose text says what is wrong and what is accepted;
callers add the file, field or option it comes from.
"""

from __future__ import annotations

import math
import re

__all__ = ["DECIMAL_PATTERN", "DECIMAL_TEXT", "INTEGER_TEXT", "MAX_INTEGER_DIGITS", "NumberTextError",
           "parse_decimal", "parse_integer"]

# The ASCII decimal grammar, without blanks (used by readers of "number + unit" strings too).
DECIMAL_PATTERN = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
# Integers of up to 18 digits fit a signed 64-bit integer: enough for any count or index.
MAX_INTEGER_DIGITS = 18

DECIMAL_TEXT = "an ASCII decimal number such as 12, -0.5 or 1.5e3"
INTEGER_TEXT = "an integer of ASCII digits such as 12"

_BLANKS = " \t\r\n"
_DECIMAL_RE = re.compile(DECIMAL_PATTERN)
_INTEGER_RE = re.compile(r"[+-]?([0-9]+)")
_INFINITY_RE = re.compile(r"\+?inf(?:inity)?", re.IGNORECASE)


class NumberTextError(ValueError):
    """A text that is not the number asked for; str() says why and what is accepted."""


def parse_decimal(text: str, *, allow_inf: bool = False) -> float:
    """The finite float written in `text` (positive infinity too for "inf" when `allow_inf`).

    Equal to float(text) wherever the grammar accepts `text`."""
    accepted = DECIMAL_TEXT + (", or inf" if allow_inf else "")
    if not isinstance(text, str):
        raise NumberTextError(f"{_shown(text)} is not text: expected {accepted}")
    body = text.strip(_BLANKS)
    if _DECIMAL_RE.fullmatch(body):
        value = float(body)
        if math.isinf(value):
            raise NumberTextError(f"{_shown(text)} is beyond the largest number a double holds (about 1.8e308): "
                                  f"expected {accepted}")
        return value
    if allow_inf and _INFINITY_RE.fullmatch(body):
        return math.inf
    raise NumberTextError(f"{_shown(text)} is not {accepted}")


def parse_integer(text: str, *, signed: bool = True) -> int:
    """The integer written in `text` (no sign accepted unless `signed`), of at most
    MAX_INTEGER_DIGITS digits."""
    accepted = INTEGER_TEXT if signed else INTEGER_TEXT.replace("an integer", "a non-negative integer") + ", without sign"
    if not isinstance(text, str):
        raise NumberTextError(f"{_shown(text)} is not text: expected {accepted}")
    body = text.strip(_BLANKS)
    match = _INTEGER_RE.fullmatch(body)
    if match is None or (not signed and body[0] in "+-"):
        raise NumberTextError(f"{_shown(text)} is not {accepted}")
    if len(match.group(1)) > MAX_INTEGER_DIGITS:
        raise NumberTextError(f"{_shown(text)} has more than {MAX_INTEGER_DIGITS} digits: expected {accepted}")
    return int(body)


def _shown(text: object, limit: int = 40) -> str:
    """repr(text), cut: a hostile file's property may be megabytes long."""
    if isinstance(text, str) and len(text) > limit:
        return repr(text[:limit]) + f"... ({len(text):,} characters)"
    return repr(text)
