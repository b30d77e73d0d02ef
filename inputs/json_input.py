"""JSON input files: decoding with an error that points at the bad spot, and the checks of
JSON values (numbers, integers, times) that the workload, profile and events loaders share.

JSON numbers are the only numbers: a number written as a string ("12"), a boolean (true is an
int in Python), null, NaN or Infinity (which orjson refuses, unlike json.loads) are refused.
orjson also refuses numbers beyond a double (1e400, 10**400) and nesting deeper than 1,024.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from joulesim.inputs.input_error import InputError
from joulesim.protocol.time_range import MAX_SIMULATED_TIME, check_time

# Batsim reads res, nb_res and ret as C ints; larger values are no machine count either.
MAX_INT32 = 2 ** 31 - 1
# Fields joulesim does not read (extra job and profile fields) go to the decider inside protocol
# messages that add about 5 levels; orjson encodes at most 254.
MAX_EXTRA_FIELD_DEPTH = 100

_UTF8_BOM = b"\xef\xbb\xbf"


def decode_json(path: str, raw: bytes, example: str, first_line: int = 1) -> Any:
    """The JSON value of `raw`; on a syntax error, an InputError naming the line, the column and
    the text around the error. `example` shows a valid document for the fix; `first_line` is the
    line number of raw's first line in the file (for a file of one JSON document per line)."""
    if raw.startswith(_UTF8_BOM):  # RFC 8259 lets parsers ignore it; editors on Windows add it
        raw = raw[3:]
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _syntax_error(path, raw, exc, example, first_line) from None


def _syntax_error(path: str, raw: bytes, exc: orjson.JSONDecodeError, example: str,
                  first_line: int) -> InputError:
    message = exc.msg
    if not raw.strip():
        return InputError(path, "file", "is empty", f"write a JSON document like {example}")
    if "UTF-8" in message:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            line = raw.count(b"\n", 0, bad.start) + 1
            column = bad.start - (raw.rfind(b"\n", 0, bad.start) + 1) + 1
            return InputError(path, f"line {first_line + line - 1} column {column}",
                              f"malformed JSON: invalid UTF-8 bytes {raw[bad.start:bad.start + 4]!r}",
                              "JSON files are UTF-8 text: save the file as UTF-8 (is it a binary file?)")
    doc = exc.doc or ""
    near = doc[max(0, exc.pos - 30):exc.pos + 20]
    if "infinity" in message:
        fix = "JSON numbers must fit a double (magnitude below 1.8e308): fix the number"
    elif "depth limit" in message:
        fix = "JSON arrays and objects may nest at most 1,024 levels deep; a workload needs 4"
    elif doc[exc.pos:exc.pos + 3] in ("NaN", "Inf", "-In", "nan", "inf"):
        fix = "JSON has no NaN nor Infinity: write a finite number"
    else:
        fix = f"fix the JSON syntax; a valid document looks like {example}"
    return InputError(path, f"line {first_line + exc.lineno - 1} column {exc.colno}",
                      f"malformed JSON: {message}, near {near!r}", fix)


def is_number(value: Any) -> bool:
    """A finite JSON number (orjson gives exact int and float types; a bool is no number)."""
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))


def is_int(value: Any) -> bool:
    return type(value) is int


def is_time(value: Any) -> bool:
    """A number of seconds in [0, MAX_SIMULATED_TIME): a NaN or an infinity compares False."""
    kind = type(value)
    return (kind is int or kind is float) and 0 <= value < MAX_SIMULATED_TIME


def nests_deeper(value: Any, levels: int) -> bool:
    """True when `value` nests lists and objects more than `levels` deep ([] is one level).
    Level by level, without recursion; stops at the first level beyond."""
    current = [value] if type(value) is list or type(value) is dict else []
    depth = 0
    while current:
        depth += 1
        if depth > levels:
            return True
        children: list[Any] = []
        for item in current:
            children.extend(item if type(item) is list else item.values())
        current = [item for item in children if type(item) is list or type(item) is dict]
    return False


def clip(text: str, limit: int = 40) -> str:
    """A name or id from the file, cut for messages (a hostile file may hold megabyte names)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def shown(value: Any) -> str:
    """A wrong JSON value as the user wrote it, with a hint when its type is the problem."""
    kind = type(value)
    if kind is bool:
        return f"{'true' if value else 'false'} (a boolean, not a number)"
    if value is None:
        return "null"
    if kind is str:
        text = repr(value) if len(value) <= 40 else repr(value[:40]) + f"... ({len(value):,} characters)"
        return f"{text} (a string: write numbers without quotes)" if _looks_numeric(value) else text
    if kind is list:
        return f"a list of {len(value):,} values"
    if kind is dict:
        return "an object"
    if kind is float:
        return f"{value:g}"
    text = str(value)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-4:]} ({len(text)} digits)"


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def time_error(path: str, where: str, value: Any, what: str, fix: str) -> InputError:
    """The error for a `value` that failed is_time: beyond the simulated range (check_time's
    message, which says how to fix it), or else not a number >= 0 (then `fix` tells the form)."""
    if is_number(value) and value > 0:
        beyond = check_time(value, what)
        if beyond:
            return InputError(path, where, beyond)
    return InputError(path, where, f"invalid value {shown(value)}", fix)
