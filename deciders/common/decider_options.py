"""Reading a decider's `--option key=value` strings into typed values, with clear errors.

Every error is a JoulesimError that names the decider, the option, the value given and the
values accepted, so that a run with a mistyped option stops before the simulation starts.
"""

from __future__ import annotations

import math

from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.number_text import NumberTextError, parse_decimal, parse_integer

__all__ = ["bool_option", "choice_option", "float_option", "int_option", "label_ids_option"]


def _invalid(decider: str, name: str, value: str, accepted: str) -> JoulesimError:
    shown = repr(value) if len(value) <= 60 else repr(value[:60]) + f"... ({len(value):,} characters)"
    return JoulesimError(f"decider {decider}: option {name}={shown} is invalid: accepted values are {accepted}")


def float_option(decider: str, options: dict[str, str], name: str, default: float, *,
                 minimum: float = -math.inf, maximum: float = math.inf,
                 minimum_excluded: bool = False, allow_inf: bool = False) -> float:
    """A number in [minimum, maximum] (]minimum, maximum] when minimum_excluded), written in
    ASCII decimal notation (protocol.number_text); 'inf' too when allow_inf."""
    if name not in options:
        return default
    text = str(options[name]).strip(" \t\r\n")  # ASCII blanks only, as number_text reads them
    low = "]" if minimum_excluded else "["
    accepted = (f"numbers in {low}{minimum:g}, {maximum:g}]" + (" or 'inf'" if allow_inf else "")
                + " (ASCII decimal notation, e.g. 600, 0.5 or 1e3)")
    try:
        value = parse_decimal(text, allow_inf=allow_inf)
    except NumberTextError:
        raise _invalid(decider, name, text, accepted) from None
    too_low = value <= minimum if minimum_excluded else value < minimum
    if too_low or (value > maximum and not (allow_inf and math.isinf(value))):
        raise _invalid(decider, name, text, accepted)
    return value


def int_option(decider: str, options: dict[str, str], name: str, default: int | None, *,
               minimum: int = 0) -> int | None:
    """An integer >= minimum, of ASCII digits (protocol.number_text)."""
    if name not in options:
        return default
    text = str(options[name]).strip(" \t\r\n")
    accepted = f"integers >= {minimum} (ASCII digits)"
    try:
        value = parse_integer(text)
    except NumberTextError:
        raise _invalid(decider, name, text, accepted) from None
    if value < minimum:
        raise _invalid(decider, name, text, accepted)
    return value


def choice_option(decider: str, options: dict[str, str], name: str, choices: tuple[str, ...],
                  default: str) -> str:
    """One of `choices`, exactly."""
    if name not in options:
        return default
    text = str(options[name]).strip()
    if text not in choices:
        raise _invalid(decider, name, text, ", ".join(repr(c) for c in choices))
    return text


def label_ids_option(decider: str, options: dict[str, str], name: str) -> dict[str, int] | None:
    """LABEL:ID pairs separated by commas (e.g. pfs:128,bb:129), each label once, as a dict; None
    when absent."""
    if name not in options:
        return None
    text = str(options[name]).strip()
    accepted = "LABEL:ID pairs separated by commas, IDs integers >= 0 (e.g. pfs:128,bb:129)"
    pairs: dict[str, int] = {}
    for part in text.split(","):
        label, colon, number = part.strip().rpartition(":")
        try:
            value = parse_integer(number.strip())
        except NumberTextError:
            raise _invalid(decider, name, text, accepted) from None
        if not colon or not label or value < 0:
            raise _invalid(decider, name, text, accepted)
        if label in pairs:  # (a dict would keep the last one without a word)
            raise _invalid(decider, name, text, f"{accepted}, each label once (here {label!r} is mapped to "
                                                f"{pairs[label]} and to {value})")
        pairs[label] = value
    return pairs


_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


def bool_option(decider: str, options: dict[str, str], name: str, default: bool) -> bool:
    """true/false (also 1/0, yes/no; any case)."""
    if name not in options:
        return default
    text = str(options[name]).strip()
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise _invalid(decider, name, text, "true, false")
