"""Bytes on the wire <-> Python objects, with orjson.

orjson silently writes NaN and infinities as `null`; `encode` refuses them instead, naming
the value and where it is, since a `null` timestamp or energy would only fail later, far
from its cause.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

from joulesim.protocol.errors import ProtocolError

__all__ = ["encode", "decode"]

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _first_bytes(raw: Any, limit: int = 60) -> str:
    try:
        head = bytes(raw[:limit])
    except Exception:  # noqa: BLE001 - only for the error message
        return repr(raw)[:limit]
    suffix = "..." if len(raw) > limit else ""
    return repr(head) + suffix


def _non_finite(value: Any, path: str) -> tuple[str, Any] | None:
    """Path and value of the first NaN/infinity inside `value`, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _non_finite(item, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(value, (str, bytes, int, type(None))):  # bool is an int
        return None
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _non_finite(value.tolist(), path)
    return None


def encode(msg: dict) -> bytes:
    """Serialize one protocol message; raises ProtocolError on NaN/infinity or unserializable values."""
    try:
        raw = orjson.dumps(msg, option=_OPTIONS)
    except orjson.JSONEncodeError as exc:
        raise ProtocolError(f"cannot encode message as JSON: {exc}") from None
    if b"null" in raw:  # rare: a real None, or a non-finite float orjson turned into null
        found = _non_finite(msg, "")
        if found:
            path, value = found
            raise ProtocolError(
                f"cannot encode message: {path or 'the message'} is {value!r}, which JSON cannot represent "
                "(orjson would silently write null); fix: send a finite number"
            )
    return raw


# Batsim 1.x's text messages: "VERSION:NOW|TIME:STAMP[:CONTENT]|...".
_OLD_TEXT_PROTOCOL = re.compile(rb"\s*\d+(\.\d+)?:\d+(\.\d*)?(e[-+]?\d+)?\|")


def decode(raw: bytes, source: str) -> Any:
    """Parse one message received from `source` ("decider", "simulator", ...)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if isinstance(raw, (bytes, bytearray, memoryview)) and _OLD_TEXT_PROTOCOL.match(bytes(raw[:64])):
            raise ProtocolError(
                f"{source} speaks Batsim's old text protocol (Batsim 1.x: messages like '2:15.0|15.0:N', first "
                f"bytes: {_first_bytes(raw)}); joulesim speaks Batsim 4's JSON protocol "
                '({"now": t, "events": [...]}): use a decider written for Batsim 4 (pybatsim >= 3, '
                "batsched >= 1.4)") from None
        raise ProtocolError(f"malformed JSON from {source}: {exc}, first bytes: {_first_bytes(raw)}") from None
    except TypeError as exc:
        raise ProtocolError(
            f"malformed JSON from {source}: expected bytes or str, got {type(raw).__name__}, "
            f"first bytes: {_first_bytes(raw)} ({exc})"
        ) from None
