"""Seeded mutations of protocol messages, for fuzzing joulesim end to end.

A reply mutation takes the decider's honest reply (a dict), the simulator message it
answers and what the fuzzer knows of the run (`RunState`), and returns the bytes to send
instead, or None when it does not apply to this reply. Each is labelled:

- ALWAYS_INVALID: the result certainly breaks the protocol or cannot be honoured; a run
  that ends normally after it has accepted something invalid.
- MAYBE_VALID: the result may or may not be valid; the run must end normally or with a
  clean error, never a traceback or a hang.

Simulator-message mutations (sent to `joulesim decide`) follow the same shape.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

ALWAYS_INVALID = "always-invalid"
MAYBE_VALID = "maybe-valid"

_JUNK_ALLOCS = ["１", "²", "٣", "0_1", "+1", "0\t1", "0\n", "0 ", " 0", "0  1", "0,1", "0-", "-1", "1-0", "0x1",
                "1e2", "0\u00a01", "9" * 19, "a", "0-1-2"]


@dataclass
class RunState:
    """What the fuzzer knows: the call's time, the platform size, jobs seen and ended."""

    nb_hosts: int
    energy: bool = False
    dynamic_jobs: bool = False
    future_jobs: set[str] = field(default_factory=set)  # in the workload, not yet submitted
    submitted: set[str] = field(default_factory=set)
    finished: set[str] = field(default_factory=set)
    call_now: float = 0.0

    def observe(self, message: dict[str, Any]) -> None:
        """Update from one simulator message."""
        self.call_now = message["now"]
        for event in message["events"]:
            data = event["data"]
            if event["type"] == "JOB_SUBMITTED":
                self.submitted.add(data["job_id"])
                self.future_jobs.discard(data["job_id"])
            elif event["type"] == "JOB_COMPLETED":
                self.finished.add(data["job_id"])


Mutation = Callable[[dict, RunState, random.Random], "bytes | None"]


def _enc(value: Any) -> bytes:
    return orjson.dumps(value)


def _with_event(reply: dict, event: dict, rng: random.Random) -> bytes:
    events = list(reply["events"])
    events.insert(rng.randint(0, len(events)), event)
    return _enc({**reply, "events": events})


def _at(reply: dict) -> float:
    """A timestamp valid for a decision appended to this reply."""
    return reply["now"]


def _decision(reply: dict, kind: str, data: dict) -> dict:
    return {"timestamp": _at(reply), "type": kind, "data": data}


def _append(reply: dict, event: dict) -> bytes:
    return _enc({**reply, "events": [*reply["events"], event]})


# --------------------------------------------------------------------- always invalid
def not_json(reply, state, rng):
    return rng.choice([b"", b"{", b"\xff\xfe", b"hello", b'{"now": 1,}', b"NaN", b'{"now": NaN, "events": []}'])


def truncated_json(reply, state, rng):
    raw = _enc(reply)
    return raw[: rng.randint(0, len(raw) - 1)]


def array_instead_of_object(reply, state, rng):
    return _enc([reply["now"], reply["events"]])


def deep_nesting(reply, state, rng):
    depth = rng.choice([1100, 5000, 100_000])
    return b'{"now": %s, "events": ' % _enc(reply["now"]) + b"[" * depth + b"]" * depth + b"}"


def now_before_call(reply, state, rng):
    return _enc({**reply, "now": state.call_now - rng.choice([1e-6, 1, 1e9]), "events": []})


def now_beyond_time_range(reply, state, rng):
    return _enc({**reply, "now": rng.choice([2.0 ** 33, 1e20, 1.7e308]), "events": []})


def missing_envelope_field(reply, state, rng):
    key = rng.choice(["now", "events"])
    return _enc({k: v for k, v in reply.items() if k != key})


def events_not_a_list(reply, state, rng):
    return _enc({**reply, "events": rng.choice([{}, "EXECUTE_JOB", 3, None])})


def unknown_decision_type(reply, state, rng):
    kind = rng.choice(["EXECUTE", "JOB_SUBMITTED", "execute_job", "", "SIMULATION_ENDS"])
    return _with_event(reply, {"timestamp": _at(reply), "type": kind, "data": {}}, rng)


def event_missing_field(reply, state, rng):
    event = _decision(reply, "REJECT_JOB", {"job_id": "w0!1"})
    del event[rng.choice(["timestamp", "type", "data"])]
    return _with_event(reply, event, rng)


def timestamp_before_call(reply, state, rng):
    return _with_event(reply, {"timestamp": state.call_now - rng.choice([1e-3, 1, 100]), "type": "CALL_ME_LATER",
                               "data": {"timestamp": reply["now"] + 10}}, rng)


def timestamp_after_reply_now(reply, state, rng):
    return _append(reply, {"timestamp": reply["now"] + rng.choice([1e-3, 1, 100]), "type": "CALL_ME_LATER",
                           "data": {"timestamp": reply["now"] + 1000}})


def execute_unknown_job(reply, state, rng):
    return _append(reply, _decision(reply, "EXECUTE_JOB", {"job_id": rng.choice(["w0!nope", "w9!1", "x!0"]),
                                                           "alloc": "0"}))


def execute_future_job(reply, state, rng):
    if not state.future_jobs:
        return None
    job = rng.choice(sorted(state.future_jobs))
    return _append(reply, _decision(reply, "EXECUTE_JOB", {"job_id": job, "alloc": "0"}))


def execute_finished_job(reply, state, rng):
    if not state.finished:
        return None
    job = rng.choice(sorted(state.finished))
    return _append(reply, _decision(reply, "EXECUTE_JOB", {"job_id": job, "alloc": "0"}))


def _executes(reply):
    return [i for i, e in enumerate(reply["events"]) if e.get("type") == "EXECUTE_JOB"]


def _change_an_execute(reply, rng, key, make):
    """One EXECUTE_JOB of the reply with data[key] = make(rng), or None when it has none."""
    found = _executes(reply)
    if not found:
        return None
    events = [dict(e) for e in reply["events"]]
    i = rng.choice(found)
    events[i]["data"] = {**events[i]["data"], key: make(rng)}
    return _enc({**reply, "events": events})


def alloc_junk_syntax(reply, state, rng):
    return _change_an_execute(reply, rng, "alloc", lambda r: r.choice(_JUNK_ALLOCS))


def alloc_outside_platform(reply, state, rng):
    def outside(r):
        host = state.nb_hosts + r.choice([0, 1, 1000, 10**12])
        return f"0-{host}" if r.random() < 0.5 else str(host)
    return _change_an_execute(reply, rng, "alloc", outside)


def alloc_repeated_ids(reply, state, rng):
    return _change_an_execute(reply, rng, "alloc",
                              lambda r: " ".join(["0"] * (state.nb_hosts + r.choice([1, 10**6]))))


def execute_twice(reply, state, rng):
    found = _executes(reply)
    if not found:
        return None
    event = reply["events"][rng.choice(found)]
    return _append(reply, {**event, "timestamp": reply["now"]})


def kill_unknown_job(reply, state, rng):
    return _append(reply, _decision(reply, "KILL_JOB", {"job_ids": ["w0!unknown"]}))


def kill_no_job(reply, state, rng):
    return _append(reply, _decision(reply, "KILL_JOB", {"job_ids": []}))


def switch_no_machine(reply, state, rng):
    return _append(reply, _decision(reply, "SET_RESOURCE_STATE", {"resources": "", "state": "0"}))


def switch_outside_platform(reply, state, rng):
    return _append(reply, _decision(reply, "SET_RESOURCE_STATE",
                                    {"resources": f"0-{state.nb_hosts + rng.choice([0, 10**9])}", "state": "0"}))


def switch_to_unknown_pstate(reply, state, rng):
    return _append(reply, _decision(reply, "SET_RESOURCE_STATE",
                                    {"resources": "0", "state": rng.choice(["999", 1000, "9" * 18])}))


def metadata_of_finished_job(reply, state, rng):
    if not state.finished:
        return None
    job = rng.choice(sorted(state.finished))
    return _append(reply, _decision(reply, "SET_JOB_METADATA", {"job_id": job, "metadata": "late"}))


def register_without_dynamic_jobs(reply, state, rng):
    if state.dynamic_jobs:
        return None
    return _append(reply, _decision(reply, "REGISTER_JOB", {"job_id": "dyn!1", "job": {"res": 1, "profile": "p"}}))


def call_me_later_not_later(reply, state, rng):
    when = rng.choice([reply["now"], reply["now"] - 1, 2.0 ** 33, 1e300])
    return _append(reply, _decision(reply, "CALL_ME_LATER", {"timestamp": when}))


def wrong_type_required_field(reply, state, rng):
    kind, data = rng.choice([
        ("EXECUTE_JOB", {"job_id": 1, "alloc": "0"}),
        ("EXECUTE_JOB", {"job_id": "w0!1", "alloc": [0, 1]}),
        ("REJECT_JOB", {"job_id": None}),
        ("KILL_JOB", {"job_ids": "w0!1"}),
        ("CALL_ME_LATER", {"timestamp": "10"}),
        ("CALL_ME_LATER", {"timestamp": True}),
        ("SET_RESOURCE_STATE", {"resources": 0, "state": "0"}),
        ("SET_JOB_METADATA", {"job_id": "w0!1", "metadata": 5}),
        ("NOTIFY", {"type": "no_such_notification"}),
        ("CHANGE_JOB_STATE", {"job_id": "w0!1", "job_state": "DANCING"}),
    ])
    return _append(reply, _decision(reply, kind, data))


def query_without_energy(reply, state, rng):
    if state.energy:
        return None
    return _append(reply, _decision(reply, "QUERY", {"requests": {"consumed_energy": {}}}))


def mapping_out_of_alloc(reply, state, rng):
    return _change_an_execute(reply, rng, "mapping", lambda r: {"0": r.choice([10**6, "9" * 30, -1])})


# --------------------------------------------------------------------- maybe valid
def drop_an_event(reply, state, rng):
    if not reply["events"]:
        return None
    events = list(reply["events"])
    del events[rng.randrange(len(events))]
    return _enc({**reply, "events": events})


def shuffle_events(reply, state, rng):
    events = list(reply["events"])
    rng.shuffle(events)
    return _enc({**reply, "events": events})


def think_longer(reply, state, rng):
    return _enc({**reply, "now": reply["now"] + rng.choice([0.5, 10, 1e6])})


def flip_a_byte(reply, state, rng):
    raw = bytearray(_enc(reply))
    raw[rng.randrange(len(raw))] = rng.randrange(256)
    return bytes(raw)


def replace_a_value(reply, state, rng):
    """Some value somewhere replaced by a random JSON value."""
    junk = rng.choice([None, True, -1, 0, 1.5, 2.0 ** 40, "", "x", "0", [], {}, [1], {"a": 1}])
    events = [dict(e) for e in reply["events"]]
    if not events or rng.random() < 0.2:
        return _enc({**reply, "now": junk})
    event = rng.choice(events)
    if rng.random() < 0.3:
        event[rng.choice(["timestamp", "type", "data"])] = junk
    elif isinstance(event.get("data"), dict) and event["data"]:
        data = dict(event["data"])
        data[rng.choice(sorted(data))] = junk
        event["data"] = data
    return _enc({**reply, "events": events})


def add_unknown_field(reply, state, rng):
    events = [dict(e) for e in reply["events"]]
    if events:
        event = rng.choice(events)
        event["data"] = {**event.get("data", {}), "extra": rng.choice([1, "x", {"deep": [1, 2]}])}
    return _enc({**reply, "events": events, "extra": True})


def reject_a_submitted_job(reply, state, rng):
    if not state.submitted:
        return None
    job = rng.choice(sorted(state.submitted))
    return _append(reply, _decision(reply, "REJECT_JOB", {"job_id": job}))


def switch_a_machine(reply, state, rng):
    host = rng.randrange(state.nb_hosts)
    return _append(reply, _decision(reply, "SET_RESOURCE_STATE", {"resources": str(host), "state": rng.choice(["0", "1", 2])}))


REPLY_MUTATIONS: dict[str, tuple[str, Mutation]] = {
    f.__name__: (label, f) for label, fs in [
        (ALWAYS_INVALID, [not_json, truncated_json, array_instead_of_object, deep_nesting,
                          now_beyond_time_range, missing_envelope_field, events_not_a_list, unknown_decision_type,
                          event_missing_field, timestamp_after_reply_now,
                          execute_unknown_job, execute_future_job, execute_finished_job, alloc_junk_syntax,
                          alloc_outside_platform, alloc_repeated_ids, execute_twice, kill_unknown_job, kill_no_job,
                          switch_no_machine, switch_outside_platform, switch_to_unknown_pstate,
                          metadata_of_finished_job, register_without_dynamic_jobs, call_me_later_not_later,
                          wrong_type_required_field, query_without_energy, mapping_out_of_alloc]),
        # A time before the call applies at the call's time, as in Batsim.
        (MAYBE_VALID, [drop_an_event, shuffle_events, think_longer, flip_a_byte, replace_a_value, add_unknown_field,
                       reject_a_submitted_job, switch_a_machine, now_before_call, timestamp_before_call]),
    ] for f in fs
}


# ------------------------------------------------------------- simulator messages (to a decider)
def sim_job_submitted_twice(message, rng):
    submitted = [e for e in message["events"] if e["type"] == "JOB_SUBMITTED"]
    if not submitted:
        return None
    return _enc({**message, "events": [*message["events"], rng.choice(submitted)]})


def sim_time_backwards(message, rng):
    return _enc({**message, "now": -1.0, "events": []})


def sim_resources_beyond_platform(message, rng):
    t = message["now"]
    kind = rng.choice(["event_machine_unavailable", "event_machine_available"])
    return _enc({**message, "events": [*message["events"], {"timestamp": t, "type": "NOTIFY", "data": {
        "type": kind, "resources": rng.choice(["0-100000000000", "999999", "0 " * 40 + "0"])}}]})


def sim_event_after_end(message, rng):
    t = message["now"]
    return _enc({**message, "events": [*message["events"], {"timestamp": t, "type": "SIMULATION_ENDS", "data": {}},
                                       {"timestamp": t, "type": "REQUESTED_CALL", "data": {}}]})


def sim_not_json(message, rng):
    return rng.choice([b"", b"{", b"\xff", b"[1, 2]", b'{"now": 1}'])


def sim_unknown_event(message, rng):
    return _enc({**message, "events": [{"timestamp": message["now"], "type": "EXECUTE_JOB", "data": {}}]})


def sim_flip_a_byte(message, rng):
    raw = bytearray(_enc(message))
    raw[rng.randrange(len(raw))] = rng.randrange(256)
    return bytes(raw)


def sim_replace_a_value(message, rng):
    return replace_a_value(message, None, rng)


SIMULATOR_MUTATIONS: dict[str, tuple[str, Callable[[dict, random.Random], "bytes | None"]]] = {
    f.__name__: (label, f) for label, fs in [
        (ALWAYS_INVALID, [sim_job_submitted_twice, sim_time_backwards, sim_resources_beyond_platform,
                          sim_event_after_end, sim_not_json, sim_unknown_event]),
        (MAYBE_VALID, [sim_flip_a_byte, sim_replace_a_value]),
    ] for f in fs
}


# ------------------------------------------------------------- input texts (files, options)
_TEXT_JUNK = ['"', "<", ">", "{", "}", "[", "]", ",", "=", "-", "1e999", "nan", "inf", "0", "99999999999", "\x00",
              "\n", " ", "é", "１", "١", "1_0", "[[", "{a = ", "\\", "'''", '"""', "#"]


def random_text_mutation(text: str, rng: random.Random, junk: list[str] = _TEXT_JUNK) -> str:
    """One to four random edits of a text: a cut, an inserted token (one of `junk`), a replaced
    character. MAYBE_VALID: the result may still be a valid input."""
    data = list(text)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        i = rng.randrange(len(data)) if data else 0
        if choice < 0.3 and data:
            del data[i: i + rng.randint(1, 20)]
        elif choice < 0.6:
            data.insert(i, rng.choice(junk))
        elif data:
            data[i] = chr(rng.randrange(32, 0x3000))
    return "".join(data)


def random_byte_mutation(raw: bytes, rng: random.Random) -> bytes:
    """One to four random byte edits (flip, cut, insert). MAYBE_VALID."""
    data = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(data)) if data else 0
        choice = rng.random()
        if choice < 0.5 and data:
            data[i] ^= rng.randrange(1, 256)
        elif choice < 0.75 and data:
            del data[i: i + rng.randint(1, 64)]
        else:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(data)
