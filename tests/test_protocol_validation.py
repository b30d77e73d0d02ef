"""Protocol validation: every valid event/decision passes, every violation is named precisely."""

from __future__ import annotations

import copy
import math

import pytest

from joulesim.protocol.codec import decode, encode
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import ProtocolError
from joulesim.protocol.schemas import DECISION_SCHEMAS, SIMULATOR_EVENT_SCHEMAS
from joulesim.protocol.validation import validate_decider_message, validate_simulator_message

T = 12.0


def ev(kind, data, ts=T):
    return {"timestamp": ts, "type": kind, "data": data}


def msg(*events, now=T):
    return {"now": now, "events": list(events)}


RESOURCE = {"id": 0, "name": "host0", "state": "idle", "properties": {}, "zone_properties": {}}
CONFIG = {
    "redis-enabled": False,
    "redis-hostname": "127.0.0.1",
    "redis-port": 6379,
    "redis-prefix": "default",
    "profiles-forwarded-on-submission": False,
    "dynamic-jobs-enabled": False,
    "dynamic-jobs-acknowledged": False,
    "profile-reuse-enabled": False,
    "sched-config": None,
    "forward-unknown-events": False,
}

VALID_EVENTS = {
    "SIMULATION_BEGINS": [
        {
            "nb_resources": 2,
            "nb_compute_resources": 2,
            "nb_storage_resources": 0,
            "allow_compute_sharing": False,
            "allow_storage_sharing": True,
            "config": CONFIG,
            "compute_resources": [RESOURCE, {**RESOURCE, "id": 1, "name": "host1", "state": "sleeping"}],
            "storage_resources": [],
            "workloads": {"w0": "workloads/small.json"},
            "profiles": {"w0": {"p1": {"type": "delay", "delay": 10}}},
        }
    ],
    "JOB_SUBMITTED": [
        {"job_id": "w0!1", "job": {"id": "w0!1", "subtime": 12, "res": 4, "profile": "p1", "walltime": 100, "user": "x"}},
        {"job_id": "w0!2", "job": {"id": "w0!2", "subtime": 12.5, "res": 1, "profile": "p1"}, "profile": {"type": "delay", "delay": 3}},
    ],
    "JOB_COMPLETED": [
        {"job_id": "w0!1", "job_state": s, "return_code": rc, "alloc": "0-3 5"}
        for s, rc in [("COMPLETED_SUCCESSFULLY", 0), ("COMPLETED_FAILED", 1), ("COMPLETED_WALLTIME_REACHED", -1), ("COMPLETED_KILLED", -1)]
    ],
    "JOB_KILLED": [
        {"job_ids": ["w0!1"]},
        {
            "job_ids": ["w0!1", "w0!2"],
            "job_progress": {
                "w0!1": {"profile_name": "p1", "progress": 0.25},
                "w0!2": {"profile_name": "seq", "current_task_index": 1, "current_task": {"profile_name": "p1", "progress": 0.5}},
            },
        },
    ],
    "RESOURCE_STATE_CHANGED": [{"resources": "0-1", "state": "1"}],
    "REQUESTED_CALL": [{}],
    "ANSWER": [{"consumed_energy": 1234.5}, {"consumed_energy": 0}],
    "NOTIFY": [
        {"type": "no_more_static_job_to_submit"},
        {"type": "no_more_external_event_to_occur"},
        {"type": "event_machine_unavailable", "resources": "0-1 3"},
        {"type": "event_machine_available", "resources": "3"},
    ],
    "SIMULATION_ENDS": [{}],
}

VALID_DECISIONS = {
    "EXECUTE_JOB": [
        {"job_id": "w0!1", "alloc": "0-3"},
        {"job_id": "w0!1", "alloc": "3 0-1"},
        {"job_id": "w0!1", "alloc": "0-1", "mapping": {"0": 0, "1": "0", "2": 1}},
        {"job_id": "w0!1", "alloc": "0-1", "storage_mapping": {"pfs": 2, "nfs": "3"}},
    ],
    "REJECT_JOB": [{"job_id": "w0!7"}],
    "KILL_JOB": [{"job_ids": ["w0!1", "w1!2"]}],
    "CALL_ME_LATER": [{"timestamp": 20}, {"timestamp": 12.5}],
    "SET_RESOURCE_STATE": [{"resources": "0-3", "state": "1"}, {"resources": "2", "state": 0}],
    "QUERY": [{"requests": {"consumed_energy": {}}}],
    "REGISTER_PROFILE": [{"workload_name": "dyn", "profile_name": "d10", "profile": {"type": "delay", "delay": 10}}],
    "REGISTER_JOB": [{"job_id": "dyn!1", "job": {"id": "dyn!1", "subtime": 12, "res": 1, "profile": "d10", "walltime": -1}}],
    "NOTIFY": [{"type": "registration_finished"}, {"type": "continue_registration"}],
    "SET_JOB_METADATA": [{"job_id": "w0!1", "metadata": "note"}],
    "CHANGE_JOB_STATE": [
        {"job_id": "w0!1", "job_state": "COMPLETED_KILLED", "kill_reason": "preempted"},
        {"job_id": "w0!1", "job_state": "RUNNING"},
    ],
}


def test_every_type_has_a_valid_sample():
    assert set(VALID_EVENTS) == set(SIMULATOR_EVENT_SCHEMAS)
    assert set(VALID_DECISIONS) == set(DECISION_SCHEMAS)


@pytest.mark.parametrize("kind,data", [(k, d) for k, ds in VALID_EVENTS.items() for d in ds])
def test_valid_simulator_event_passes(kind, data):
    validate_simulator_message(msg(ev(kind, data)))
    validate_simulator_message(decode(encode(msg(ev(kind, data), now=T + 1)), "simulator"))


@pytest.mark.parametrize("kind,data", [(k, d) for k, ds in VALID_DECISIONS.items() for d in ds])
def test_valid_decision_passes(kind, data):
    validate_decider_message(msg(ev(kind, data)), call_now=T)
    validate_decider_message(decode(encode(msg(ev(kind, data))), "decider"), call_now=T)


def test_all_events_in_one_message_and_time_dilation_cases():
    validate_simulator_message(msg(*[ev(k, d, ts=T - 1) for k, ds in VALID_EVENTS.items() for d in ds]))
    decisions = [ev(k, d) for k, ds in VALID_DECISIONS.items() for d in ds if k != "CALL_ME_LATER"]
    validate_decider_message(msg(*decisions), call_now=T)  # ignore thinking time
    validate_decider_message(msg(*[dict(e, timestamp=T + 3) for e in decisions], now=T + 3), call_now=T)  # at the end
    on_the_fly = [dict(e, timestamp=T + i * 0.5) for i, e in enumerate(decisions)]
    validate_decider_message(msg(*on_the_fly, now=T + 100), call_now=T)
    validate_decider_message(msg(now=T), call_now=T)  # empty reply
    validate_decider_message({"now": 12, "events": []}, call_now=12.0)  # ints are numbers


def test_decider_library_output_passes():
    d = Decider()
    d.now = T
    d.execute_job("w0!1", "0-3")
    d.execute_job("w0!2", [4, 5, 7], mapping={0: 0, 1: 1, 2: 2, 3: 0})
    d.reject_job("w0!3")
    d.think(1.5)
    d.kill_jobs(["w0!1"])
    d.call_me_later(T + 10)
    d.set_resource_state("0-1", 2)
    d.query_consumed_energy()
    d.register_profile("dyn", "d10", {"type": "delay", "delay": 10})
    d.register_job("dyn!1", {"id": "dyn!1", "subtime": T, "res": 1, "profile": "d10"})
    d.notify_registration_finished()
    d.notify_continue_registration()
    d.set_job_metadata("w0!2", "hello")
    d.change_job_state("w0!2", "COMPLETED_KILLED")
    assert {e["type"] for e in d._events} == set(DECISION_SCHEMAS)
    validate_decider_message({"now": d.now, "events": d._events}, call_now=T)
    validate_decider_message(decode(encode({"now": d.now, "events": d._events}), "decider"), call_now=T)


def test_decider_handle_roundtrip_passes():
    class Sched(Decider):
        def on_job_submitted(self, job):
            self.execute_job(job.id, "0")
            self.think(0.1)

    reply = Sched().handle(msg(ev("JOB_SUBMITTED", VALID_EVENTS["JOB_SUBMITTED"][0])))
    validate_decider_message(reply, call_now=T)


# ------------------------------------------------------------------------- violations
def execute(ts=T, **data):
    return ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-3", **data}, ts)


OK = execute()

DECIDER_VIOLATIONS = [
    # id, message, call_now, fragments the error must contain
    ("missing now", {"events": []}, T, ["decider reply", "now is missing"]),
    ("missing events", {"now": T}, T, ["events is missing"]),
    ("now not a number", {"now": "12", "events": []}, T, ["now must be a number", "'12'"]),
    ("now is bool", {"now": True, "events": []}, T, ["now must be a number", "True"]),
    ("now infinite", {"now": math.inf, "events": []}, T, ["now must be a finite number"]),
    ("events not a list", {"now": T, "events": {}}, T, ["events must be a list"]),
    ("event not an object", msg(OK, "EXECUTE_JOB"), T, ["events[1]", "must be an object", "'EXECUTE_JOB'"]),
    ("missing timestamp", msg(OK, {"type": "REJECT_JOB", "data": {"job_id": "w0!1"}}), T, ["events[1] (REJECT_JOB)", "timestamp is missing"]),
    ("missing type", msg(OK, {"timestamp": T, "data": {}}), T, ["events[1]", "type is missing"]),
    ("missing data", msg(OK, OK, {"timestamp": T, "type": "REJECT_JOB"}), T, ["events[2] (REJECT_JOB at t=12)", "data is missing"]),
    ("data not an object", msg(ev("REJECT_JOB", ["w0!1"])), T, ["events[0] (REJECT_JOB at t=12)", "data must be an object"]),
    ("type not a string", msg(ev(3, {})), T, ["events[0]", "type must be a string", "3"]),
    ("timestamp a string", msg(execute(ts="12")), T, ["events[0] (EXECUTE_JOB)", "timestamp must be a number", "'12'"]),
    ("timestamp a bool", msg(execute(ts=True)), T, ["events[0] (EXECUTE_JOB)", "timestamp must be a number", "True"]),
    ("timestamp NaN", msg(execute(ts=math.nan)), T, ["events[0]", "timestamp must be a finite number"]),
    ("unknown type", msg(OK, ev("EXECUTE_JOBS", {})), T, ["events[1] (EXECUTE_JOBS at t=12)", "unknown decision type 'EXECUTE_JOBS'", "known decision types: CALL_ME_LATER", "REJECT_JOB"]),
    ("simulator-only type", msg(ev("JOB_SUBMITTED", VALID_EVENTS["JOB_SUBMITTED"][0])), T, ["events[0] (JOB_SUBMITTED at t=12)", "is an event the simulator sends, not a decision", "EXECUTE_JOB"]),
    ("timestamp after now", msg(execute(ts=13)), T, ["events[0] (EXECUTE_JOB at t=13)", "after the reply's now (12)", "time dilation"]),
    ("timestamp -inf", msg(execute(ts=-math.inf)), T, ["events[0]", "timestamp must be a finite number"]),
    ("job_id missing", msg(ev("EXECUTE_JOB", {"alloc": "0"})), T, ["events[0] (EXECUTE_JOB at t=12)", "data.job_id is missing"]),
    ("job_id not a string", msg(ev("REJECT_JOB", {"job_id": 7})), T, ["events[0] (REJECT_JOB at t=12)", "data.job_id must be", "got 7"]),
    ("alloc not a string", msg(OK, OK, execute(alloc=12)), T, ['events[2] (EXECUTE_JOB at t=12): data.alloc must be an interval set string like "0-3 5"; got 12']),
    ("alloc malformed", msg(execute(alloc="0-3,5")), T, ["events[0] (EXECUTE_JOB at t=12)", "data.alloc must be an interval set", "'0-3,5'"]),
    ("alloc reversed", msg(execute(alloc="3-1")), T, ["data.alloc must be an interval set", "'3-1'"]),
    # The everyday two-field EXECUTE_JOB has a fast check: it must refuse what the schema refuses.
    ("job_id without workload", msg(ev("EXECUTE_JOB", {"job_id": "!1", "alloc": "0"})), T, ["data.job_id must be", "'!1'"]),
    ("job_id without local id", msg(ev("EXECUTE_JOB", {"job_id": "w0!", "alloc": "0"})), T, ["data.job_id must be", "'w0!'"]),
    ("job_id without '!'", msg(ev("EXECUTE_JOB", {"job_id": "7", "alloc": "0"})), T, ["data.job_id must be", "'7'"]),
    ("mapping bad key", msg(execute(mapping={"a": 0})), T, ["data.mapping must be", "{'a': 0}"]),
    ("mapping bad value", msg(execute(mapping={"0": "x"})), T, ["data.mapping.0 must be", "'x'"]),
    ("mapping bool value", msg(execute(mapping={"0": True})), T, ["data.mapping.0 must be", "True"]),
    ("empty job_ids", msg(ev("KILL_JOB", {"job_ids": []})), T, ["events[0] (KILL_JOB at t=12)", "data.job_ids must be a non-empty list", "got []"]),
    ("job_ids not a list", msg(ev("KILL_JOB", {"job_ids": "w0!1"})), T, ["data.job_ids must be", "'w0!1'"]),
    ("job_ids item without !", msg(ev("KILL_JOB", {"job_ids": ["w0!1", "2"]})), T, ["data.job_ids[1] must be a job id", "'2'", "fix"]),
    ("CALL_ME_LATER now", msg(ev("CALL_ME_LATER", {"timestamp": T})), T, ["events[0] (CALL_ME_LATER at t=12)", "data.timestamp must be strictly after", "got 12.0"]),
    ("CALL_ME_LATER past", msg(ev("CALL_ME_LATER", {"timestamp": 14}, ts=15), now=15), T, ["events[0] (CALL_ME_LATER at t=15)", "data.timestamp must be strictly after", "(15)", "got 14"]),
    ("CALL_ME_LATER bool", msg(ev("CALL_ME_LATER", {"timestamp": True})), T, ["events[0] (CALL_ME_LATER at t=12)", "data.timestamp must be a number", "not a boolean", "got True"]),
    ("CALL_ME_LATER missing", msg(ev("CALL_ME_LATER", {})), T, ["data.timestamp is missing"]),
    ("state abc", msg(ev("SET_RESOURCE_STATE", {"resources": "0", "state": "abc"})), T, ["events[0] (SET_RESOURCE_STATE at t=12)", "data.state must be", "string of digits", "'abc'"]),
    ("state bool", msg(ev("SET_RESOURCE_STATE", {"resources": "0", "state": False})), T, ["data.state must be", "False"]),
    ("resources malformed", msg(ev("SET_RESOURCE_STATE", {"resources": "0-", "state": "1"})), T, ["data.resources must be an interval set", "'0-'"]),
    ("QUERY no consumed_energy", msg(ev("QUERY", {"requests": {}})), T, ["events[0] (QUERY at t=12)", "data.requests.consumed_energy is missing", 'fix']),
    ("QUERY no requests", msg(ev("QUERY", {})), T, ["data.requests is missing"]),
    ("REGISTER_JOB without !", msg(ev("REGISTER_JOB", {"job_id": "17", "job": {"res": 1, "profile": "p"}})), T, ["events[0] (REGISTER_JOB at t=12)", "data.job_id must be a job id", '"workload!id"', "got '17'", 'fix: prefix']),
    ("REGISTER_JOB res bool", msg(ev("REGISTER_JOB", {"job_id": "d!1", "job": {"res": True, "profile": "p"}})), T, ["data.job.res must be", "got True"]),
    ("REGISTER_PROFILE missing profile", msg(ev("REGISTER_PROFILE", {"workload_name": "d", "profile_name": "p"})), T, ["data.profile is missing"]),
    ("NOTIFY unknown type", msg(ev("NOTIFY", {"type": "no_more_static_job_to_submit"})), T, ["events[0] (NOTIFY at t=12)", "data.type must be", "registration_finished", "'no_more_static_job_to_submit'"]),
    ("SET_JOB_METADATA not string", msg(ev("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": {"a": 1}})), T, ["data.metadata must be a string", "{'a': 1}"]),
    ("CHANGE_JOB_STATE bad state", msg(ev("CHANGE_JOB_STATE", {"job_id": "w0!1", "job_state": "FINISHED"})), T, ["events[0] (CHANGE_JOB_STATE at t=12)", "data.job_state must be", "COMPLETED_KILLED", "'FINISHED'"]),
    ("CHANGE_JOB_STATE kill_reason", msg(ev("CHANGE_JOB_STATE", {"job_id": "w0!1", "job_state": "RUNNING", "kill_reason": 3})), T, ["data.kill_reason must be a string", "got 3"]),
    ("message is a list", [OK], T, ["decider reply: the message must be a JSON object", "got [{"]),
    ("message is a string", "EXECUTE_JOB", T, ["decider reply: the message must be a JSON object", "got 'EXECUTE_JOB'"]),
    ("message is None", None, T, ["must be a JSON object", "got None"]),
]


def test_times_before_the_call_are_accepted_as_batsim_accepts_them():
    # Batsim 4 applies a decision stamped in the past at its current time; batsched prints
    # times with fewer digits than it was given (a call at 2904.1530000000002, a reply at 2904.153).
    validate_decider_message(msg(OK, execute(ts=11.5)), T)
    validate_decider_message(msg(execute(ts=14), execute(ts=13), now=15), T)
    validate_decider_message(msg(now=11), T)
    validate_decider_message({"now": 2904.153, "events": [
        {"timestamp": 2904.153, "type": "EXECUTE_JOB", "data": {"job_id": "w0!7", "alloc": "0-3"}}]}, 2904.1530000000002)


@pytest.mark.parametrize("bad,call_now,fragments", [v[1:] for v in DECIDER_VIOLATIONS], ids=[v[0] for v in DECIDER_VIOLATIONS])
def test_decider_violation(bad, call_now, fragments):
    with pytest.raises(ProtocolError) as info:
        validate_decider_message(bad, call_now)
    text = str(info.value)
    assert text.startswith("decider reply: ")
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in {text!r}"


def test_long_values_are_truncated():
    with pytest.raises(ProtocolError) as info:
        validate_decider_message(msg(execute(alloc="x" * 500)), T)
    assert "..." in str(info.value) and len(str(info.value)) < 400


SUBMITTED = VALID_EVENTS["JOB_SUBMITTED"][0]
SIMULATOR_VIOLATIONS = [
    ("missing now", {"events": []}, ["simulator message: now is missing"]),
    ("now is bool", {"now": False, "events": []}, ["now must be a number", "False"]),
    ("non-object", [], ["simulator message: the message must be a JSON object", "got []"]),
    ("timestamp after now", msg(ev("REQUESTED_CALL", {}, ts=13)), ["events[0] (REQUESTED_CALL at t=13)", "after the message's now (12)"]),
    ("decreasing", msg(ev("REQUESTED_CALL", {}, ts=11), ev("SIMULATION_ENDS", {}, ts=10)), ["events[1] (SIMULATION_ENDS at t=10)", "non-decreasing"]),
    ("unknown type", msg(ev("JOB_STARTED", {})), ["events[0] (JOB_STARTED at t=12)", "unknown event type", "JOB_SUBMITTED"]),
    ("decision type", msg(OK), ["events[0] (EXECUTE_JOB at t=12)", "is a decision a decider sends, not a simulator event"]),
    ("timestamp bool", msg(ev("SIMULATION_ENDS", {}, ts=True)), ["events[0] (SIMULATION_ENDS)", "timestamp must be a number"]),
    ("job_id without !", msg(ev("JOB_SUBMITTED", {**SUBMITTED, "job_id": "1"})), ["events[0] (JOB_SUBMITTED at t=12)", "data.job_id must be a job id"]),
    ("job res bool", msg(ev("JOB_SUBMITTED", {**SUBMITTED, "job": {**SUBMITTED["job"], "res": True}})), ["data.job.res must be", "True"]),
    ("job_state", msg(ev("JOB_COMPLETED", {**VALID_EVENTS["JOB_COMPLETED"][0], "job_state": "RUNNING"})), ["data.job_state must be a final job state", "'RUNNING'"]),
    ("alloc malformed", msg(ev("JOB_COMPLETED", {**VALID_EVENTS["JOB_COMPLETED"][0], "alloc": "a-b"})), ["data.alloc must be an interval set", "'a-b'"]),
    ("energy bool", msg(ev("ANSWER", {"consumed_energy": True})), ["events[0] (ANSWER at t=12)", "data.consumed_energy must be", "True"]),
    ("notify unknown", msg(ev("NOTIFY", {"type": "registration_finished"})), ["data.type must be", "'registration_finished'"]),
    ("notify without resources", msg(ev("NOTIFY", {"type": "event_machine_available"})), ["data.resources is missing"]),
    ("pstate not digits", msg(ev("RESOURCE_STATE_CHANGED", {"resources": "0", "state": 1})), ["data.state must be", "got 1"]),
    ("begins missing config", msg(ev("SIMULATION_BEGINS", {k: v for k, v in VALID_EVENTS["SIMULATION_BEGINS"][0].items() if k != "config"})), ["events[0] (SIMULATION_BEGINS at t=12)", "data.config is missing"]),
    ("begins bad machine state", msg(ev("SIMULATION_BEGINS", {**VALID_EVENTS["SIMULATION_BEGINS"][0], "compute_resources": [{**RESOURCE, "state": "busy"}]})), ["data.compute_resources[0].state must be a machine state", "'busy'"]),
]


@pytest.mark.parametrize("bad,fragments", [v[1:] for v in SIMULATOR_VIOLATIONS], ids=[v[0] for v in SIMULATOR_VIOLATIONS])
def test_simulator_violation(bad, fragments):
    with pytest.raises(ProtocolError) as info:
        validate_simulator_message(bad)
    text = str(info.value)
    assert text.startswith("simulator message: ")
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in {text!r}"


def test_validation_does_not_mutate():
    m = msg(execute(mapping={"0": 0}), ev("CALL_ME_LATER", {"timestamp": 20}))
    before = copy.deepcopy(m)
    validate_decider_message(m, T)
    assert m == before


# ------------------------------------------------------------------------------ codec
@pytest.mark.parametrize(
    "raw,fragments",
    [
        (b'{"now": 1, "events": [', ["malformed JSON from decider", "first bytes: b'{\"now\": 1"]),
        (b"", ["malformed JSON from decider"]),
        (b'{"now": NaN, "events": []}', ["malformed JSON from decider"]),
        (b"\xff\xfe{}", ["malformed JSON from decider", "UTF-8", "first bytes: b'\\xff\\xfe{}'"]),
        (b'{"now": "\xc3\x28"}', ["malformed JSON from decider", "UTF-8"]),
    ],
    ids=["truncated", "empty", "nan literal", "invalid utf-8 bom", "invalid utf-8 in string"],
)
def test_decode_malformed(raw, fragments):
    with pytest.raises(ProtocolError) as info:
        decode(raw, "decider")
    for fragment in fragments:
        assert fragment in str(info.value)


def test_decode_long_input_is_truncated():
    with pytest.raises(ProtocolError) as info:
        decode(b'{"x": ' + b"1" * 10_000 + b" ?", "simulator")
    assert "malformed JSON from simulator" in str(info.value) and len(str(info.value)) < 300


@pytest.mark.parametrize(
    "message,path",
    [
        ({"now": math.nan, "events": []}, "now"),
        (msg(ev("CALL_ME_LATER", {"timestamp": math.inf})), "events[0].data.timestamp"),
        (msg(ev("ANSWER", {"consumed_energy": -math.inf})), "events[0].data.consumed_energy"),
    ],
)
def test_encode_rejects_non_finite(message, path):
    with pytest.raises(ProtocolError) as info:
        encode(message)
    text = str(info.value)
    assert path in text and ("nan" in text or "inf" in text)


def test_encode_roundtrip_keeps_null_and_int_keys():
    raw = encode({"now": 1.5, "events": [], "x": None, "m": {0: 1}})
    assert decode(raw, "simulator") == {"now": 1.5, "events": [], "x": None, "m": {"0": 1}}


def test_encode_unserializable():
    with pytest.raises(ProtocolError, match="cannot encode"):
        encode({"now": 1, "events": [object()]})


def test_a_plain_execute_job_is_checked_without_its_schema_and_any_other_with_it(monkeypatch):
    """The everyday EXECUTE_JOB ({"job_id", "alloc"}) is checked by hand: its schema's validator
    is compiled (milliseconds) only for a reply that needs it, which it then checks."""
    from joulesim.protocol import validation

    fresh = validation._Validators(DECISION_SCHEMAS)
    monkeypatch.setattr(validation, "_DECISION_VALIDATORS", fresh)
    validate_decider_message(msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-3"})), T, 8)
    assert fresh._compiled == {}
    with pytest.raises(ProtocolError, match="alloc"):
        validate_decider_message(msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": 3})), T, 8)
    assert list(fresh._compiled) == ["EXECUTE_JOB"]
    validate_decider_message(msg(ev("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0-3", "mapping": {"0": 0}})), T, 8)
