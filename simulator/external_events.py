"""Loading Batsim external events files (one JSON object per line)."""

import math
from dataclasses import dataclass

import orjson
from procset import ProcSet

from joulesim.protocol.interval_set import parse_interval_set
from joulesim.simulator.input_error import InputError

EVENT_TYPES = ("machine_unavailable", "machine_available")

_EXAMPLE = '{"type": "machine_unavailable", "resources": "0-1 3", "timestamp": 20}'


@dataclass
class ExternalEvent:
    """One event of the file; `line` is its 1-based line number, for messages."""

    timestamp: float
    type: str
    resources: ProcSet
    line: int


def load_external_events(path: str, nb_compute_hosts: int) -> list[ExternalEvent]:
    """Read and validate an external events file; events are sorted by timestamp (stable).

    Blank lines are skipped. Raises InputError naming the line and field of any problem.
    """
    path = str(path)
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except FileNotFoundError as exc:
        raise InputError(path, "file", "does not exist",
                         "give the path of an external events file (one JSON object per line)") from exc
    except OSError as exc:
        raise InputError(path, "file", f"cannot be read: {exc.strerror or exc}",
                         "check the path and its permissions") from exc

    events: list[ExternalEvent] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {number}"
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(path, where, f"malformed JSON: {exc}",
                             f"each line must be one JSON object like {_EXAMPLE}") from exc
        if not isinstance(obj, dict):
            raise InputError(path, where, f"is a {type(obj).__name__}, not an object",
                             f"each line must be one JSON object like {_EXAMPLE}")
        for key in ("type", "timestamp", "resources"):
            if key not in obj:
                raise InputError(path, f"{where}: field '{key}'", "is missing",
                                 f"each event needs type, timestamp and resources, like {_EXAMPLE}")

        etype = obj["type"]
        if etype not in EVENT_TYPES:
            raise InputError(path, f"{where}: field 'type'", f"unknown event type {etype!r}",
                             "type must be one of: " + ", ".join(EVENT_TYPES))

        timestamp = obj["timestamp"]
        if (not isinstance(timestamp, (int, float)) or isinstance(timestamp, bool)
                or not math.isfinite(timestamp) or timestamp < 0):
            raise InputError(path, f"{where}: field 'timestamp'", f"invalid value {timestamp!r}",
                             "timestamp must be a number >= 0 (seconds)")

        try:
            resources = parse_interval_set(obj["resources"])
        except ValueError as exc:
            raise InputError(path, f"{where}: field 'resources'", str(exc),
                             "resources must be an interval set string like '0-1 3'") from exc
        if not resources:
            raise InputError(path, f"{where}: field 'resources'", "is empty",
                             "resources must name at least one machine, like '0-1 3'")
        if resources.max > nb_compute_hosts - 1:
            raise InputError(path, f"{where}: field 'resources'",
                             f"'{resources}' goes beyond the platform's {nb_compute_hosts} compute hosts",
                             f"resources must be within 0-{nb_compute_hosts - 1}")

        events.append(ExternalEvent(float(timestamp), etype, resources, number))

    events.sort(key=lambda e: e.timestamp)
    return events
