"""batprotocol's messages (protocol/batprotocol): binary and JSON forms read and written by
joulesim's own codec, checked against messages that batprotocol's C++ library wrote
(tests/data/batprotocol: each event as NAME.bin, flatbuffers binary, and NAME.json, the same
message as the library's JSON), round trips of generated messages, and every kind of broken
buffer: a clear BatprotocolError naming where, never another exception or a hang."""

from __future__ import annotations

import struct
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from joulesim.protocol.batprotocol.binary_format import BatprotocolError, decode_message, encode_message
from joulesim.protocol.batprotocol.json_format import decode_json, encode_json, read_json
from joulesim.protocol.batprotocol.message_layout import ENUMS, TABLES, UNIONS, slots

DATA = Path(__file__).resolve().parent / "data" / "batprotocol"
EXAMPLES = sorted(path.stem for path in DATA.glob("*.bin"))


def test_the_examples_are_there():
    assert len(EXAMPLES) == 21 and all((DATA / f"{name}.json").exists() for name in EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_library_s_binary_and_json_read_as_the_same_message(name):
    binary = decode_message((DATA / f"{name}.bin").read_bytes())
    assert binary == decode_json((DATA / f"{name}.json").read_bytes())
    assert binary["now"] == 10.0 and len(binary["events"]) == 1
    assert decode_message(encode_message(binary)) == binary  # our writing reads back the same
    assert decode_json(encode_json(binary)) == binary


def test_fields_read_from_the_library_s_buffers_by_hand():
    submitted = decode_message((DATA / "job_submitted.bin").read_bytes())["events"][0]
    assert submitted["event_type"] == "JobSubmittedEvent" and submitted["timestamp"] == 10.0
    job = submitted["event"]["job"]
    assert (submitted["event"]["job_id"], job["resource_request"], job["walltime"], job["profile_id"]) == \
        ("w0!1", 2, 100.0, "w0!delay10")
    execute = decode_message((DATA / "execute_job.bin").read_bytes())["events"][0]["event"]
    assert execute["allocation"]["host_allocation"] == "0-1"
    assert execute["allocation"]["executor_placement_type"] == "PredefinedExecutorPlacementStrategyWrapper"
    assert execute["allocation"]["executor_placement"] == {"strategy": "SpreadOverHostsFirst"}
    periodic = decode_message((DATA / "call_me_later_periodic.bin").read_bytes())["events"][0]["event"]
    assert periodic["when_type"] == "Periodic" and periodic["when"]["mode_type"] in ("Infinite", "FinitePeriodNumber")
    begins = decode_message((DATA / "simulation_begins.bin").read_bytes())["events"][0]["event"]
    assert begins["computation_host_number"] == len(begins["computation_hosts"]) == 2


def test_an_absent_walltime_is_none_and_defaults_fill_the_rest():
    message = {"now": 1.0, "events": [{"timestamp": 1.0, "event_type": "JobSubmittedEvent",
                                       "event": {"job_id": "w!1", "job": {"resource_request": 3}}}]}
    for decoded in (decode_message(encode_message(message)), decode_json(encode_json(message))):
        job = decoded["events"][0]["event"]["job"]
        assert job == {"resource_request": 3, "walltime": None, "extra_data": None, "rigid": True, "profile_id": None}
        assert decoded["events"][0]["event"]["submission_time"] == 0.0
    assert b"walltime" not in encode_json(message)  # (absent, not null)


# --------------------------------------------------------------- generated round trips
def _value(kind: str, of: str, depth: int):
    if kind == "str":
        return st.text(max_size=8)
    if kind == "bool":
        return st.booleans()
    if kind == "u8":
        return st.sampled_from(ENUMS[of])
    if kind == "u32":
        return st.integers(0, 2 ** 32 - 1)
    if kind == "u64":
        return st.integers(0, 2 ** 64 - 1)
    if kind == "f64":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "table":
        return _table(of, depth + 1)
    element = kind[1:-1]
    return st.lists(_value(element, of, depth + 1), max_size=2)


def _table(name: str, depth: int = 0):
    """A message table with every field drawn (unions included), absent ones left out at random."""
    parts = {}
    for field, _ in slots(name):
        if field.kind == "union":
            members = UNIONS[field.of] if depth < 3 else UNIONS[field.of][:1]
            parts[field.name] = st.sampled_from(members).flatmap(
                lambda member, d=depth: st.tuples(st.just(member), _table(member, d + 1)))
        elif depth >= 3 and field.kind in ("table", "[table]") and not field.required:
            continue
        else:
            parts[field.name] = _value(field.kind, field.of, depth)

    def build(values: dict) -> dict:
        out = {}
        for field, _ in slots(name):
            if field.name not in values:
                continue
            if field.kind == "union":
                out[f"{field.name}_type"], out[field.name] = values[field.name]
            else:
                out[field.name] = values[field.name]
        return out

    optional = [f.name for f, _ in slots(name) if not f.required and f.name in parts]
    return st.fixed_dictionaries(parts).flatmap(
        lambda values: st.sets(st.sampled_from(optional) if optional else st.nothing()).map(
            lambda dropped: build({k: v for k, v in values.items() if k not in dropped})))


@settings(max_examples=150, deadline=None)
@given(event=st.sampled_from(UNIONS["Event"]).flatmap(lambda kind: st.tuples(st.just(kind), _table(kind))),
       now=st.floats(0, 1e9))
def test_any_message_reads_back_the_same_in_both_forms(event, now):
    kind, body = event
    message = {"now": now, "events": [{"timestamp": now, "event_type": kind, "event": body}]}
    binary = decode_message(encode_message(message))
    assert binary == decode_json(encode_json(message))
    assert decode_message(encode_message(binary)) == binary
    assert binary["events"][0]["event_type"] == kind
    for field, _ in slots(kind):  # every given scalar, text and plain vector is read back as given
        if field.name in body and field.kind not in ("union", "table", "[table]"):
            assert binary["events"][0]["event"][field.name] == body[field.name]


# ------------------------------------------------------------------------ broken input
@pytest.mark.parametrize("name", ["job_submitted", "simulation_begins", "jobs_killed"])
def test_every_truncation_of_a_buffer_is_refused_cleanly(name):
    data = (DATA / f"{name}.bin").read_bytes()
    for cut in range(len(data)):
        try:
            decode_message(data[:cut])
        except BatprotocolError as exc:
            assert str(exc).startswith("message")
        # (a prefix that still holds a whole message is fine: flatbuffers ends where its offsets do)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_give_a_message_or_a_batprotocol_error(data):
    try:
        decoded = decode_message(data)
    except BatprotocolError:
        return
    assert set(decoded) == {"now", "events"}


@settings(max_examples=300, deadline=None)
@given(position=st.integers(0, 10_000), value=st.integers(0, 255))
def test_a_corrupted_byte_gives_a_message_or_a_batprotocol_error(position, value):
    data = bytearray((DATA / "simulation_begins.bin").read_bytes())
    data[position % len(data)] = value
    try:
        decode_message(bytes(data))
    except BatprotocolError:
        pass


def test_a_huge_vector_length_is_refused_at_once():
    data = bytearray((DATA / "kill_jobs.bin").read_bytes())
    message = decode_message(bytes(data))
    assert message["events"][0]["event"]["job_ids"]
    # find the job_ids vector's length (1) and make it 2^31: no loop over two billion entries
    encoded = encode_message({"now": 0.0, "events": [{"timestamp": 0.0, "event_type": "KillJobsEvent",
                                                      "event": {"job_ids": ["zz!zz"]}}]})
    index = encoded.index(b"zz!zz") - 12  # [vector length 1][offset to the string][string length 5]["zz!zz"]
    assert struct.unpack_from("<I", encoded, index)[0] == 1
    broken = encoded[:index] + struct.pack("<I", 2 ** 31) + encoded[index + 4:]
    with pytest.raises(BatprotocolError, match="job_ids: a vector of 2147483648 elements runs past the buffer's end"):
        decode_message(broken)


def test_offsets_that_loop_are_refused():
    # a table whose only field (a sub-table) points back at itself: Message.events[0] = itself
    message = encode_message({"now": 1.0, "events": [{"timestamp": 1.0, "event_type": "JobSubmittedEvent",
                                                      "event": {"job_id": "a!1", "job": {"resource_request": 1}}}]})
    root = struct.unpack_from("<I", message, 0)[0]
    vtable = root - struct.unpack_from("<i", message, root)[0]
    events_field = root + struct.unpack_from("<H", message, vtable + 4 + 2)[0]
    vector = events_field + struct.unpack_from("<I", message, events_field)[0]
    looped = bytearray(message)
    struct.pack_into("<I", looped, vector + 4, (root - (vector + 4)) % 2 ** 32)  # element 0 -> the root
    with pytest.raises(BatprotocolError):
        decode_message(bytes(looped))


def test_an_enum_or_union_out_of_range_is_named():
    message = encode_message({"now": 1.0, "events": [{"timestamp": 1.0, "event_type": "JobCompletedEvent",
                                                      "event": {"job_id": "a!1", "state": "REJECTED"}}]})
    code = ENUMS["FinalJobState"].index("REJECTED")
    patched = message.replace(bytes([code]), bytes([9]), 1) if message.count(bytes([code])) else message
    try:
        decode_message(patched)
    except BatprotocolError as exc:
        assert "FinalJobState" in str(exc) or "Event" in str(exc)
    as_json = {"now": 1.0, "events": [{"timestamp": 1.0, "event_type": "NoSuchEvent", "event": {}}]}
    with pytest.raises(BatprotocolError, match=r"message.events\[0\].event_type: 'NoSuchEvent' is no Event"):
        decode_json(orjson.dumps(as_json))


@pytest.mark.parametrize("document, expected", [
    (b"{not json", "message: is not JSON"),
    (b"[]", "message: is [], not a Message object"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "JobCompletedEvent", "event": {"state": "REJECTED"}}]}',
     "message.events[0].event.job_id: is missing, and a JobCompletedEvent needs it"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "RejectJobEvent", "event": {"job_id": 5}}]}',
     "message.events[0].event.job_id: is 5, not a string"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "RejectJobEvent", "event": {"job_id": "a!1", "why": 1}}]}',
     "message.events[0].event.why: a RejectJobEvent has no such field (its fields: job_id)"),
    (b'{"now": "soon", "events": []}', "message.now: is 'soon', not a finite number"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "JobCompletedEvent", "event": {"job_id": "a!1", "state": "LOST"}}]}',
     "message.events[0].event.state: 'LOST' is no FinalJobState"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "SimulationErrorEvent", "event": {}}]}',
     "SimulationErrorEvent belongs to a batprotocol revision later than the one joulesim speaks"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "ExternalEventOccurredEvent", "event": {}}]}',
     "message.events[0].event.id: is missing, and a ExternalEventOccurredEvent needs it"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "ExternalEventOccurredEvent", "event": {"id": "ee0!0", '
     b'"external_event_type": "GenericExternalEvent", "external_event": {"data": 1}}}]}',
     "message.events[0].event.external_event.data: is 1, not a string"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "TurnOnOffHostsEvent", "event": {"state": 1}}]}',
     "message.events[0].event.host_ids: is missing, and a TurnOnOffHostsEvent needs it"),
    (b'{"now": 1, "events": [{"timestamp": 1, "event_type": "JobCompletedEvent", "event": {"job_id": "a!1", "return_code": -1}}]}',
     "message.events[0].event.return_code: is -1, not an integer from 0 to 2^32 - 1"),
])
def test_bad_json_messages_name_the_field(document, expected):
    for read in (decode_json, read_json):  # (the fast reader falls back on the walk to say why)
        with pytest.raises(BatprotocolError) as caught:
            read(document)
        assert expected in str(caught.value)


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_fast_reader_accepts_what_the_walk_accepts(name):
    text = (DATA / f"{name}.json").read_bytes()
    fast = read_json(text)
    assert fast == orjson.loads(text)  # (as written: no copy, no defaults)
    assert decode_json(encode_json(fast)) == decode_json(text)


@settings(max_examples=300, deadline=None)
@given(event=st.sampled_from(UNIONS["Event"]).flatmap(lambda kind: st.tuples(st.just(kind), _table(kind))),
       path=st.lists(st.integers(0, 50), max_size=4), junk=st.sampled_from([None, -1, "x", 2.5, True, [], {}, 2 ** 40]))
def test_the_fast_reader_and_the_walk_agree_on_broken_messages(event, path, junk):
    """One value somewhere replaced by junk: both readers accept it, or both refuse it."""
    kind, body = event
    message = {"now": 1.0, "events": [{"timestamp": 1.0, "event_type": kind, "event": body}]}
    node = message["events"][0]["event"]
    for step in path:  # walk down to some object or list, and break one of its values
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        children = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
        if not children:
            break
        node = children[step % len(children)][1]
    if isinstance(node, dict) and node:
        node[sorted(node)[len(path) % len(node)]] = junk
    elif isinstance(node, list) and node:
        node[0] = junk
    text = orjson.dumps(message)
    try:
        walked = decode_json(text)
    except BatprotocolError:
        with pytest.raises(BatprotocolError):
            read_json(text)
        return
    assert decode_json(encode_json(read_json(text))) == walked


def test_a_json_c_string_s_nul_is_accepted():
    text = (DATA / "reject_job.json").read_bytes()
    assert decode_json(text + b"\0") == decode_json(text)


def test_the_layout_has_every_table_a_union_names():
    for union, members in UNIONS.items():
        assert all(member in TABLES for member in members), union


# ------------------------------------------------------------------ the bridge on any reply
DECISION_EVENTS = ("ExecuteJobEvent", "RejectJobEvent", "KillJobsEvent", "RegisterJobEvent", "RegisterProfileEvent",
                   "CallMeLaterEvent", "StopCallMeLaterEvent", "FinishRegistrationEvent", "ForceSimulationStopEvent",
                   "CreateProbeEvent", "EDCHelloEvent", "JobSubmittedEvent")


@settings(max_examples=400, deadline=None)
@given(events=st.lists(st.sampled_from(DECISION_EVENTS).flatmap(lambda kind: st.tuples(st.just(kind), _table(kind))),
                       max_size=4),
       known=st.booleans())
def test_any_well_formed_reply_translates_or_is_refused_by_name(events, known):
    """Whatever well-formed events an EDC replies, the bridge gives Batsim 4 decisions or a
    JoulesimError naming the event, never another exception."""
    from joulesim.protocol.batprotocol.batsim4_bridge import BridgeState, to_batsim4
    from joulesim.protocol.errors import JoulesimError

    state = BridgeState()
    if known:  # (the jobs the events name were submitted)
        for _, body in events:
            for job_id in [body.get("job_id"), *(body.get("job_ids") or [])]:
                if isinstance(job_id, str):
                    state.job_sizes[job_id] = 1
    # (as an EDC may write it: optional fields absent, not filled with their defaults)
    text = orjson.dumps({"now": 5.0, "events": [{"timestamp": 5.0, "event_type": kind, "event": body}
                                                 for kind, body in events]})
    reply = read_json(text)
    try:
        translated = to_batsim4(reply, state, "edc")
    except JoulesimError as exc:
        assert str(exc).startswith("edc: event ")
        return
    assert translated["now"] == 5.0
    assert all(decision["type"] in ("EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "REGISTER_JOB", "REGISTER_PROFILE",
                                    "CALL_ME_LATER", "NOTIFY") for decision in translated["events"])
