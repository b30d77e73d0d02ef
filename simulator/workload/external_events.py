"""Loading Batsim external events files (one JSON object per line).

Types machine_unavailable and machine_available change the machines; any other type is refused,
unless unknown events are forwarded (Batsim's `--forward-unknown-events`): then the event, whole,
goes to the decider as a NOTIFY's data at its time (batsim events.cpp, EVENT_GENERIC).
"""

from dataclasses import dataclass, field
from typing import Any

from procset import ProcSet

from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import read_input_file
from joulesim.inputs.json_input import clip, decode_json, is_time, shown, time_error
from joulesim.protocol.interval_set import parse_interval_set

EVENT_TYPES = ("machine_unavailable", "machine_available")

_EXAMPLE = '{"type": "machine_unavailable", "resources": "0-1 3", "timestamp": 20}'


@dataclass
class ExternalEvent:
    """One event of the file; `line` is its 1-based line number, for messages."""

    timestamp: float
    type: str
    resources: ProcSet
    line: int
    #: A forwarded event of an unknown type: the object as the file gives it (its NOTIFY's data).
    forwarded: dict[str, Any] | None = None
    source: str = field(default="", compare=False)  # the file (or list) it comes from, for messages
    list_index: int = 0  # which events file of the run it comes from (0: the first)


def load_external_events(path: str, nb_compute_hosts: int, forward_unknown: bool = False) -> list[ExternalEvent]:
    """Read and validate an external events file; events are sorted by timestamp (stable).

    Blank lines are skipped. Raises InputError naming the line and field of any problem. A file
    without any event (empty, or blank lines only) is refused: Batsim 4.2.1 reads it as no
    events, but a run given an events file that holds none is a mistake (a generator that
    failed, a wrong path) better told than run.
    """
    path = str(path)
    raw = read_input_file(path, "an external events file (one JSON object per line)")
    if not raw.strip():
        raise InputError(path, "file", "holds no event (it is empty" + (", or blank lines only)" if raw else ")"),
                         f"write one JSON object per line, like {_EXAMPLE}, or run without this events file")
    return events_from_bytes(path, raw, nb_compute_hosts, forward_unknown)


def events_from_bytes(path: str, raw: bytes, nb_compute_hosts: int, forward_unknown: bool = False) -> list[ExternalEvent]:
    """Validate external events given as JSON lines; `path` names them in messages. With
    `forward_unknown`, an event of another type needs only its type and timestamp."""
    lines = raw.split(b"\n")

    events: list[ExternalEvent] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"line {number}"
        obj = decode_json(path, raw, _EXAMPLE, number)
        if not isinstance(obj, dict):
            raise InputError(path, where, f"is {shown(obj)}, not an object",
                             f"each line must be one JSON object like {_EXAMPLE}")
        if "type" not in obj:
            raise InputError(path, f"{where}: field 'type'", "is missing",
                             f"each event needs type, timestamp and resources, like {_EXAMPLE}")
        etype = obj["type"]
        if not isinstance(etype, str) or (etype not in EVENT_TYPES and not forward_unknown):
            raise InputError(path, f"{where}: field 'type'", f"unknown event type {shown(etype)}",
                             "type must be one of: " + ", ".join(EVENT_TYPES) +
                             " (or --forward-unknown-events to send other types to the decider)")
        forwarded = etype not in EVENT_TYPES
        for key in ("timestamp",) if forwarded else ("timestamp", "resources"):
            if key not in obj:
                raise InputError(path, f"{where}: field '{key}'", "is missing",
                                 f"each event needs type, timestamp and resources, like {_EXAMPLE}")

        timestamp = obj["timestamp"]
        if not is_time(timestamp):
            raise time_error(path, f"{where}: field 'timestamp'", timestamp, "timestamp",
                             "timestamp must be a number >= 0 (seconds)")
        if forwarded:
            events.append(ExternalEvent(float(timestamp), etype, ProcSet(), number, forwarded=obj, source=path))
            continue

        if not isinstance(obj["resources"], str):
            raise InputError(path, f"{where}: field 'resources'", f"invalid value {shown(obj['resources'])}",
                             "resources must be an interval set string like '0-1 3'")
        try:
            # ids are distinct: a set among n hosts has at most n intervals, longer ones are refused
            resources = parse_interval_set(obj["resources"], max(1, nb_compute_hosts))
        except ValueError as exc:
            raise InputError(path, f"{where}: field 'resources'", str(exc),
                             "resources must be an interval set string like '0-1 3'") from None
        if not resources:
            raise InputError(path, f"{where}: field 'resources'", "is empty",
                             "resources must name at least one machine, like '0-1 3'")
        if resources.max > nb_compute_hosts - 1:
            raise InputError(path, f"{where}: field 'resources'",
                             f"'{clip(str(resources))}' goes beyond the platform's {nb_compute_hosts} compute hosts",
                             f"resources must be within 0-{nb_compute_hosts - 1}")

        events.append(ExternalEvent(float(timestamp), etype, resources, number, source=path))

    events.sort(key=lambda e: e.timestamp)
    return events


def merged_event_files(files: list[list[ExternalEvent]]) -> list[ExternalEvent]:
    """The events of several files (each sorted by time) as one list, sorted by time; ties in
    file order, as Batsim gives each file its own submitter, started in order."""
    merged = []
    for index, events in enumerate(files):
        for event in events:
            event.list_index = index
            merged.append(event)
    merged.sort(key=lambda e: e.timestamp)
    return merged


def batsim5_event_ids(events: list[ExternalEvent]) -> list[str]:
    """With a Batsim 5 EDC: the id Batsim 5.0.0-rc2 gives each generic event, in the order the
    core forwards them (by time, ties in file order). rc2 reads one type, "generic", with its
    `data` a string, and numbers every event of its file number K (from 0) "eeK!N", N its place
    in the file from 0 (cli.cpp, external_events.cpp). machine_unavailable and
    machine_available (joulesim's, Batsim 4's) change the machines and are not told: batprotocol
    has no event for them. Any other type is refused, as rc2 refuses it when loading the file."""
    places = {}
    for list_index in {event.list_index for event in events}:
        in_file = sorted((e for e in events if e.list_index == list_index), key=lambda e: e.line)
        places.update({(list_index, event.line): index for index, event in enumerate(in_file)})
    ids = []
    for event in events:
        if event.forwarded is None:
            continue
        where = f"line {event.line}"
        if event.type != "generic":
            raise InputError(event.source, f"{where}: field 'type'", f"unknown event type {shown(event.type)}",
                             "with a Batsim 5 EDC, an event is 'generic' (its string 'data' goes to the EDC, as "
                             "Batsim 5 sends it), machine_unavailable or machine_available")
        if not isinstance(event.forwarded.get("data"), str):
            raise InputError(event.source, f"{where}: field 'data'",
                             "is missing" if "data" not in event.forwarded else f"is {shown(event.forwarded['data'])}",
                             "a generic event carries its data as a string, as Batsim 5 reads it (JSON inside it "
                             "stays text)")
        ids.append(f"ee{event.list_index}!{places[event.list_index, event.line]}")
    return ids
