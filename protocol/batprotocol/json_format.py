"""batprotocol messages in flatbuffers' JSON form (batprotocol's "JSON" format).

The text is what flatbuffers writes for a message: an object per table, union fields as
`x_type` (the member's name) and `x`, enums by name. Reading accepts what flatbuffers' own
parser accepts from an EDC (fields in any order, absent fields at their default, enums by name
or number) and refuses anything else with the field's path: an unknown field, a value of the
wrong type, a required field missing.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from joulesim.protocol.batprotocol.binary_format import BatprotocolError
from joulesim.protocol.batprotocol.message_layout import (ENUMS, JSON_ONLY_MEMBERS, LATER_EVENTS, ROOT, TABLES,
                                                           UNIONS, Field)

_UNSIGNED_BITS = {"u8": 8, "u32": 32, "u64": 64}


def _document(text: bytes | str) -> Any:
    """The JSON value of a message's text (C strings end with a NUL, which is dropped)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).rstrip(b"\0")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BatprotocolError(f"message: is not JSON ({exc})") from None


def decode_json(text: bytes | str) -> dict[str, Any]:
    """The message a JSON text holds, in the form binary_format.decode_message gives."""
    return _table(_document(text), ROOT, "message")


def read_json(text: bytes | str) -> dict[str, Any]:
    """The message a JSON text holds, checked as decode_json checks it but, when its enums and
    union kinds are names (as flatbuffers writes them), left as written (absent fields absent):
    the fast way to read an EDC's replies. The check is Python compiled from the layout at
    import, a function per table; a message that fails it goes through decode_json's walk,
    which names the faulty field or, for enums given by number, returns the message normalised."""
    document = _document(text)
    try:
        _check_message(document)
    except _Invalid:  # an error (told precisely by the walk), or enums given by number: normalised
        return _table(document, ROOT, "message")
    return document


def flatbuffers_double(value: float) -> float:
    """A double as flatbuffers' JSON writer prints it (fixed, 12 decimals), read back.

    From 2**13 on, a double's spacing exceeds 1e-12: rounding to 12 decimals moves it by at most
    0.5e-12, less than half that spacing, so the printed value reads back as the value itself
    (2**14 here, with room to spare): no printing needed, and long runs' times are there."""
    if -16384.0 < value < 16384.0:
        return float(f"{value:.12f}")
    return value


def as_flatbuffers_prints(value: Any) -> Any:
    """`value` with every float as flatbuffers' JSON writer prints a double (fixed, 12 decimals:
    util.h's FloatToString(t, 12)), so that an EDC in the JSON format reads the numbers Batsim 5
    sends it (in the binary format they travel as they are)."""
    kind = type(value)
    if kind is float:
        return flatbuffers_double(value)
    if kind is dict:
        return {key: as_flatbuffers_prints(item) for key, item in value.items()}
    if kind is list:
        return [as_flatbuffers_prints(item) for item in value]
    return value


def encode_json(message: dict[str, Any], checked: bool = True) -> bytes:
    """The JSON text of a message, default scalars written out as flatbuffers does.
    `checked=False`: the message is known to be well formed (the simulator's own, from the
    bridge, with no None value): written as it is, which is several times faster."""
    if not checked:
        return orjson.dumps(message)
    return orjson.dumps(_table(message, ROOT, "message", fill=True, drop_none=True))


# Each table's fields and the keys its JSON object may hold (a union field's two), made once.
_KNOWN = {name: frozenset([f.name for f in fields] + [f"{f.name}_type" for f in fields if f.kind == "union"])
          for name, fields in TABLES.items()}


def _table(value: Any, name: str, where: str, fill: bool = True, drop_none: bool = False) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BatprotocolError(f"{where}: is {_kind(value)}, not a {name} object")
    fields = TABLES[name]
    known = _KNOWN[name]
    for key in value:
        if key not in known:
            expected = ", ".join(field.name for field in fields) or "no field"
            raise BatprotocolError(f"{where}.{key}: a {name} has no such field (its fields: {expected})")
    out: dict[str, Any] = {}
    for field in fields:
        path = f"{where}.{field.name}"
        given = value.get(field.name)
        if field.kind == "union":
            member = value.get(f"{field.name}_type", "NONE")
            members = UNIONS[field.of]
            if isinstance(member, int) and not isinstance(member, bool) and 0 <= member <= len(members):
                member = "NONE" if member == 0 else members[member - 1]
            if member in LATER_EVENTS:
                raise BatprotocolError(f"{path}_type: {member} belongs to a batprotocol revision later than the "
                                       "one joulesim speaks (2024-11): joulesim does not support it")
            if member != "NONE" and member not in members and member not in JSON_ONLY_MEMBERS.get(field.of, ()):
                raise BatprotocolError(f"{path}_type: {member!r} is no {field.of} (one of: {', '.join(members)})")
            if member == "NONE" or given is None:
                if field.required:
                    raise BatprotocolError(f"{path}: is missing, and a {name} needs it")
                if not drop_none:
                    out[f"{field.name}_type"], out[field.name] = "NONE", None
                continue
            out[f"{field.name}_type"] = member
            out[field.name] = _table(given, member, path, fill, drop_none)
        elif given is None:
            if field.required:
                raise BatprotocolError(f"{path}: is missing, and a {name} needs it")
            default = ENUMS[field.of][field.default] if field.kind == "u8" else field.default
            if not (drop_none and default is None):
                out[field.name] = default
        else:
            out[field.name] = _value(given, field, path, fill, drop_none)
    return out


def _value(value: Any, field: Field, where: str, fill: bool, drop_none: bool) -> Any:
    kind = field.kind
    if kind == "str":
        if not isinstance(value, str):
            raise BatprotocolError(f"{where}: is {_kind(value)}, not a string")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise BatprotocolError(f"{where}: is {_kind(value)}, not true or false")
        return value
    if kind == "u8":
        names = ENUMS[field.of]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
            return names[value]
        if value not in names:
            raise BatprotocolError(f"{where}: {value!r} is no {field.of} (one of: {', '.join(names)})")
        return value
    if kind in _UNSIGNED_BITS:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2 ** _UNSIGNED_BITS[kind]:
            raise BatprotocolError(f"{where}: is {_kind(value)}, not an integer from 0 to 2^{_UNSIGNED_BITS[kind]} - 1")
        return value
    if kind == "f64":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise BatprotocolError(f"{where}: is {_kind(value)}, not a finite number")
        return float(value)
    if kind == "table":
        return _table(value, field.of, where, fill, drop_none)
    if not isinstance(value, list):
        raise BatprotocolError(f"{where}: is {_kind(value)}, not a list")
    element = Field(field.name, kind[1:-1], field.of)
    return [_value(item, element, f"{where}[{index}]", fill, drop_none) for index, item in enumerate(value)]


def _kind(value: Any) -> str:
    text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode() if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------ the compiled check
class _Invalid(Exception):
    """Raised by the compiled checks (which only say yes or no: decode_json says why)."""


def _check_source(name: str) -> str:
    """Python source of a function checking a table's object (no copy, no defaults filled)."""
    lines = [f"def check_{name}(v):",
             "    if type(v) is not dict: raise _Invalid",
             f"    if not KNOWN_{name}.issuperset(v): raise _Invalid"]  # (a loop in C over its keys)
    for field in TABLES[name]:
        key = field.name
        if field.kind == "union":
            lines += [f"    t = v.get({key + '_type'!r}, 'NONE')",
                      f"    x = v.get({key!r})",
                      "    if t == 'NONE' or x is None:",
                      f"        {'raise _Invalid' if field.required else 'pass'}",
                      "    else:",
                      f"        c = UNION_{field.of}.get(t) if type(t) is str else None",
                      "        if c is None: raise _Invalid",
                      "        c(x)"]
            continue
        lines.append(f"    x = v.get({key!r})")
        lines.append("    if x is None:")
        lines.append(f"        {'raise _Invalid' if field.required else 'pass'}")
        lines.append("    else:")
        lines += ["        " + line for line in _value_check(field.kind, field.of, "x")]
    return "\n".join(lines) + "\n"


def _value_check(kind: str, of: str, x: str) -> list[str]:
    if kind == "str":
        return [f"if type({x}) is not str: raise _Invalid"]
    if kind == "bool":
        return [f"if type({x}) is not bool: raise _Invalid"]
    if kind == "u8":
        return [f"if {x}.__class__ is not str or {x} not in ENUM_{of}: raise _Invalid"]
    if kind in _UNSIGNED_BITS:
        return [f"if type({x}) is not int or not 0 <= {x} < {2 ** _UNSIGNED_BITS[kind]}: raise _Invalid"]
    if kind == "f64":
        return [f"if type({x}) is float:",
                f"    if not isfinite({x}): raise _Invalid",
                f"elif type({x}) is not int: raise _Invalid"]
    if kind == "table":
        return [f"check_{of}({x})"]
    element = kind[1:-1]
    return [f"if type({x}) is not list: raise _Invalid",
            f"for y in {x}:"] + ["    " + line for line in _value_check(element, of, "y")]


def _compile_checks() -> Any:
    scope: dict[str, Any] = {"_Invalid": _Invalid, "isfinite": math.isfinite}
    for name, names in ENUMS.items():
        scope[f"ENUM_{name}"] = frozenset(names)
    for name in TABLES:
        scope[f"KNOWN_{name}"] = _KNOWN[name]
    exec(compile("".join(_check_source(name) for name in TABLES), "<batprotocol json checks>", "exec"), scope)
    for union, members in UNIONS.items():  # member name -> its check
        scope[f"UNION_{union}"] = {member: scope[f"check_{member}"]
                                   for member in (*members, *JSON_ONLY_MEMBERS.get(union, ()))}
    return scope[f"check_{ROOT}"]


_check_message = _compile_checks()
