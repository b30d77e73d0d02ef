"""Validate protocol messages in both directions, fast, with readable errors.

`validate_decider_message(msg, call_now)` checks a decider's reply to a call made at
simulated time `call_now`; `validate_simulator_message(msg)` checks what the simulator
sends. Both raise `ProtocolError` whose message names the sender, the event (index, type,
timestamp), the field path, what was expected, what was received and how to fix it.

Speed: this runs on every message. The envelope is checked by hand; each event's `data` goes
through one fastjsonschema validator picked by a dict lookup on `type` (compiled at its first use);
interval sets go through a regular-expression fast path before the authoritative
`parse_interval_set`. The detailed error message is built only once something failed.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Final

import fastjsonschema
from fastjsonschema import JsonSchemaValueException

from joulesim.protocol.errors import ProtocolError
from joulesim.protocol.interval_set import known_interval_set, parse_runs
from joulesim.protocol.time_range import TIME_RANGE_TEXT, time_out_of_range
from joulesim.protocol.schemas import (
    DECISION_SCHEMAS,
    INTERVAL_SET_FIELDS,
    SIMULATOR_EVENT_SCHEMAS,
)

__all__ = ["validate_decider_message", "validate_simulator_message"]

DECIDER = "decider reply"
SIMULATOR = "simulator message"


class _Validators:
    """The validator of each type's `data`, compiled when a message first carries that type: a
    compilation takes about 2 ms, and a run meets a few of the 20 types (compiling them all at
    import was 30-45 ms of every process that checks messages, the simulator's and a decider's)."""

    def __init__(self, schemas: dict[str, Any]) -> None:
        self._schemas = schemas
        self._compiled: dict[str, Callable[[Any], Any]] = {}

    def knows(self, kind: Any) -> bool:
        """Whether `kind` names a type with a schema (without compiling its validator: the
        everyday EXECUTE_JOB's data is checked by hand, and compiles none)."""
        return type(kind) is str and kind in self._schemas

    def get(self, kind: str) -> Callable[[Any], Any] | None:
        """The validator of `kind`, None for a type without a schema."""
        validator = self._compiled.get(kind)
        if validator is None:
            schema = self._schemas.get(kind)
            if schema is None:
                return None
            validator = self._compiled[kind] = fastjsonschema.compile(schema)
        return validator


_DECISION_VALIDATORS = _Validators(DECISION_SCHEMAS)
_EVENT_VALIDATORS = _Validators(SIMULATOR_EVENT_SCHEMAS)
_DECISION_INTERVAL_FIELDS: Final = {t: f for (side, t), f in INTERVAL_SET_FIELDS.items() if side == "decider"}
_EVENT_INTERVAL_FIELDS: Final = {t: f for (side, t), f in INTERVAL_SET_FIELDS.items() if side == "simulator"}

_KNOWN_DECISIONS = ", ".join(sorted(DECISION_SCHEMAS))
_KNOWN_EVENTS = ", ".join(sorted(SIMULATOR_EVENT_SCHEMAS))

# A strict subset of what parse_runs accepts; anything else takes the slow path.
_INTERVAL_FAST: Final = re.compile(r"[0-9]{1,18}(?:-[0-9]{1,18})?(?: [0-9]{1,18}(?:-[0-9]{1,18})?)*").fullmatch
_RANGE: Final = re.compile(r"([0-9]+)-([0-9]+)").findall

_TIME_DILATION = (
    "time dilation: a decision takes effect at its timestamp, at most the reply's now (the "
    "decider's clock when it finished thinking)"
)


# --------------------------------------------------------------------------- helpers
def _got(value: Any, limit: int = 80) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _t(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _where(index: int, event: Any) -> str:
    """`events[2] (EXECUTE_JOB at t=12)` with what is known of the event."""
    if not isinstance(event, dict):
        return f"events[{index}]"
    kind = event.get("type")
    ts = event.get("timestamp")
    label = kind if isinstance(kind, str) else "type ?"
    if _is_number(ts):
        return f"events[{index}] ({label} at t={_t(ts)})"
    return f"events[{index}] ({label})"


def _fail(who: str, where: str, text: str) -> ProtocolError:
    prefix = f"{who}: {where}: " if where else f"{who}: "
    return ProtocolError(prefix + text)


def _interval_problem(text: Any, max_intervals: int | None) -> str | None:
    """None for a valid interval-set string; otherwise what is wrong with it."""
    if type(text) is not str:
        return f"expected a string, got {_got(text)}"
    if max_intervals is None or text.count(" ") < max_intervals:
        if known_interval_set(text):  # (a valid one met lately: most allocations repeat)
            return None
        if _INTERVAL_FAST(text):
            if "-" not in text:
                return None
            for a, b in _RANGE(text):
                if int(a) > int(b):
                    break
            else:
                return None
    try:
        parse_runs(text, max_intervals)
    except ValueError as exc:
        return str(exc)
    return None


def _schema_error(who: str, where: str, data: Any, exc: JsonSchemaValueException) -> ProtocolError:
    """Turn a fastjsonschema failure into a message naming path, expectation, value, fix."""
    definition = exc.definition if isinstance(exc.definition, dict) else {}
    path = exc.name or "data"
    rule = exc.rule
    fix = definition.get("x-fix")
    if rule == "required":
        value = exc.value
        required = definition.get("required", [])
        missing = [k for k in required if not (isinstance(value, dict) and k in value)]
        first = missing[0] if missing else "?"
        prop = (definition.get("properties") or {}).get(first) or {}
        expected = prop.get("description") or "a value"
        text = (
            f"{path}.{first} is missing (required: {', '.join(required)}); got {_got(value)}"
            f"; fix: add \"{first}\": {expected}"
        )
        if fix:
            text += f" ({fix})"
        return _fail(who, where, text)
    expected = definition.get("description")
    if not expected:
        if rule == "enum":
            expected = "one of " + ", ".join(map(str, definition.get("enum", [])))
        elif rule == "type":
            expected = f"of JSON type {definition.get('type')}"
        else:
            # minItems, minimum, pattern, propertyNames ... : fastjsonschema's own words
            msg = exc.message
            expected = msg.split(" must ", 1)[1] if " must " in msg else msg
    elif rule == "enum":
        expected += " (one of " + ", ".join(map(str, definition.get("enum", []))) + ")"
    elif rule in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        expected += f" ({exc.message.split(' must ', 1)[-1]})"
    text = f"{path} must be {expected}; got {_got(exc.value)}"
    if fix:
        text += f"; fix: {fix}"
    return _fail(who, where, text)


def _check_envelope(who: str, msg: Any) -> tuple[Any, list]:
    if type(msg) is not dict:
        if not isinstance(msg, dict):
            raise _fail(
                who, "",
                f"the message must be a JSON object {{\"now\": <number>, \"events\": [...]}}; got {_got(msg)}",
            )
    try:
        now = msg["now"]
    except KeyError:
        raise _fail(
            who, "",
            f"now is missing; the message must be {{\"now\": <number>, \"events\": [...]}}; got keys {_got(list(msg))}",
        ) from None
    try:
        events = msg["events"]
    except KeyError:
        raise _fail(
            who, "",
            "events is missing; the message must be {\"now\": <number>, \"events\": [...]}"
            f"; got keys {_got(list(msg))}; fix: send \"events\": [] when there is nothing to say",
        ) from None
    if not (type(now) is float or type(now) is int):
        if not _is_number(now):
            raise _fail(who, "", f"now must be a number (int or float, not a boolean); got {_got(now)}")
    if time_out_of_range(now):
        raise _fail(who, "", f"now must be a finite number below 2^33 s; got {_got(now)} ({TIME_RANGE_TEXT})")
    if now < 0:
        raise _fail(who, "", f"now must be a time >= 0 (simulated time starts at 0); got {_got(now)}; fix: "
                    "answer with the time of the call (the message's now) or later")
    if type(events) is not list:
        raise _fail(who, "", f"events must be a list of events {{\"timestamp\", \"type\", \"data\"}}; got {_got(events)}")
    return now, events


def _check_event_fields(who: str, index: int, event: Any) -> None:
    """Slow path: say exactly what is wrong with an event's own fields."""
    where = f"events[{index}]"
    if not isinstance(event, dict):
        raise _fail(who, where, f"must be an object {{\"timestamp\", \"type\", \"data\"}}; got {_got(event)}")
    where = _where(index, event)
    for key in ("timestamp", "type", "data"):
        if key not in event:
            raise _fail(
                who, where,
                f"{key} is missing; every event needs \"timestamp\", \"type\" and \"data\"; got keys {_got(list(event))}",
            )
    if not _is_number(event["timestamp"]):
        raise _fail(who, where, f"timestamp must be a number (int or float, not a boolean); got {_got(event['timestamp'])}")
    if not isinstance(event["type"], str):
        raise _fail(who, where, f"type must be a string naming the event; got {_got(event['type'])}")
    if not isinstance(event["data"], dict):
        raise _fail(who, where, f"data must be an object ({{}} when empty); got {_got(event['data'])}")


def _unpack(who: str, index: int, event: Any) -> tuple[Any, Any, Any]:
    """(timestamp, type, data) of an event, or the ProtocolError saying which is missing."""
    try:
        return event["timestamp"], event["type"], event["data"]
    except (KeyError, TypeError):
        _check_event_fields(who, index, event)
        raise  # pragma: no cover - _check_event_fields always raises here


def _check_data(who: str, index: int, event: Any, data: Any, validator: Any,
                interval_fields: Any, max_intervals: int | None = None) -> None:
    """The event's data against its schema, then its interval-set fields."""
    try:
        validator(data)
    except JsonSchemaValueException as exc:
        if not isinstance(data, dict):
            _check_event_fields(who, index, event)
        raise _schema_error(who, _where(index, event), data, exc) from None
    if interval_fields is not None:
        for name in interval_fields:
            value = data.get(name)
            if value is None:
                continue
            problem = _interval_problem(value, max_intervals)
            if problem is not None:
                raise _fail(
                    who, _where(index, event),
                    f"data.{name} must be an interval set string like \"0-3 5\": {problem}",
                )


def _execute_job_is_plain(data: Any, max_intervals: int | None) -> bool:
    """True for the everyday EXECUTE_JOB, {"job_id": "w!id", "alloc": "<interval set>"}, which
    the schema accepts: checked here without the generic validator (one per job). Anything
    else returns False and goes through the schema, which explains what is wrong."""
    if type(data) is not dict or len(data) != 2:
        return False
    job_id = data.get("job_id")
    alloc = data.get("alloc")
    if type(job_id) is not str or type(alloc) is not str:
        return False
    bang = job_id.find("!")  # the schema's pattern "^[^!]+!."
    return 0 < bang < len(job_id) - 1 and _interval_problem(alloc, max_intervals) is None


# ---------------------------------------------------------------------- public API
def validate_decider_message(msg: Any, call_now: float, nb_resources: int | None = None) -> None:
    """Check a decider's reply to a call made at simulated time `call_now` (times before it, but
    not before 0, are accepted, as Batsim accepts them; the simulator applies them at its clock).

    With `nb_resources`, an interval set listing more intervals than there are resources is
    refused before it is parsed (its ids must repeat), which bounds the work a reply can cause.

    Raises ProtocolError on the first violation.
    """
    who = DECIDER
    now, events = _check_envelope(who, msg)
    # Times before the call (a reply's now, a decision's timestamp) are not refused, at any
    # age: Batsim 4.2.1 applies such a decision at its current time (protocol.cpp,
    # JsonProtocolReader::send_message_at_time sleeps only until a later time), and deciders
    # that print times with fewer digits (batsched) answer 2904.153 to a call at
    # 2904.1530000000002. The simulator applies them at the running clock (see
    # Simulation._call_decider). Refused: a timestamp after the reply's now, as in Batsim, and
    # negative times, which no clock starting at 0 can give (Batsim would apply them too).
    validators = _DECISION_VALIDATORS
    interval_fields = _DECISION_INTERVAL_FIELDS
    for index, event in enumerate(events):
        ts, kind, data = _unpack(who, index, event)
        if not validators.knows(kind):
            _check_event_fields(who, index, event)
            where = _where(index, event)
            if kind in SIMULATOR_EVENT_SCHEMAS:
                raise _fail(
                    who, where,
                    f"type {kind!r} is an event the simulator sends, not a decision; "
                    f"a decider may send: {_KNOWN_DECISIONS}",
                )
            raise _fail(who, where, f"unknown decision type {_got(kind)}; known decision types: {_KNOWN_DECISIONS}")
        if not (type(ts) is float or type(ts) is int) and not _is_number(ts):
            _check_event_fields(who, index, event)
        if not 0 <= ts <= now or time_out_of_range(ts):
            where = _where(index, event)
            if time_out_of_range(ts):
                raise _fail(who, where, f"timestamp must be a finite number below 2^33 s in magnitude; got {_got(ts)}")
            if ts < 0:
                raise _fail(who, where, f"timestamp {_t(ts)} is negative: simulated time starts at 0, so no decision "
                            "can take effect before it; fix: stamp decisions with the time of the call (the "
                            "message's now) or later")
            raise _fail(
                who, where,
                f"timestamp {_t(ts)} is after the reply's now ({_t(now)}); {_TIME_DILATION}; fix: set the "
                f"reply's now to the decider's clock at the end of the call (>= {_t(ts)})",
            )
        if kind == "EXECUTE_JOB" and _execute_job_is_plain(data, nb_resources):
            continue
        _check_data(who, index, event, data, validators.get(kind), interval_fields.get(kind), nb_resources)
        if kind == "CALL_ME_LATER":
            when = data["timestamp"]
            if time_out_of_range(when):
                raise _fail(who, _where(index, event), f"data.timestamp must be a finite number below 2^33 s; "
                            f"got {_got(when)} ({TIME_RANGE_TEXT})")
            if not when > ts:
                raise _fail(
                    who, _where(index, event),
                    f"data.timestamp must be strictly after the decision's own timestamp ({_t(ts)}); "
                    f"got {_got(when)}; fix: ask for a call at a later time (e.g. {_t(ts)} + delay), "
                    "or do the work now",
                )


def validate_simulator_message(msg: Any) -> None:
    """Check a message the simulator sends (decider side, and simulator tests).

    Raises ProtocolError on the first violation.
    """
    who = SIMULATOR
    now, events = _check_envelope(who, msg)
    validators = _EVENT_VALIDATORS
    interval_fields = _EVENT_INTERVAL_FIELDS
    previous = 0.0  # simulated time starts at 0
    for index, event in enumerate(events):
        ts, kind, data = _unpack(who, index, event)
        if not validators.knows(kind):
            _check_event_fields(who, index, event)
            where = _where(index, event)
            if kind in DECISION_SCHEMAS:
                raise _fail(
                    who, where,
                    f"type {kind!r} is a decision a decider sends, not a simulator event; "
                    f"the simulator sends: {_KNOWN_EVENTS}",
                )
            raise _fail(who, where, f"unknown event type {_got(kind)}; known event types: {_KNOWN_EVENTS}")
        if not (type(ts) is float or type(ts) is int) and not _is_number(ts):
            _check_event_fields(who, index, event)
        if not (previous <= ts <= now):
            where = _where(index, event)
            if ts != ts or math.isinf(ts):
                raise _fail(who, where, f"timestamp must be a finite number; got {_got(ts)}")
            if ts > now:
                raise _fail(
                    who, where,
                    f"timestamp {_t(ts)} is after the message's now ({_t(now)}); every event must have happened "
                    "by the time it is sent; fix: send it in a later message, or set now to the current time",
                )
            if ts < 0:
                raise _fail(who, where, f"timestamp {_t(ts)} is negative: simulated time starts at 0")
            raise _fail(
                who, where,
                f"timestamp {_t(ts)} is before the previous event's ({_t(previous)}, events[{index - 1}]); "
                "events must be in non-decreasing timestamp order; fix: sort the events by timestamp",
            )
        previous = ts
        _check_data(who, index, event, data, validators.get(kind), interval_fields.get(kind))
