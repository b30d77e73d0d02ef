"""Hostile protocol input: every malformed or impossible message is refused with a clear error.

Property-based tests (hypothesis) over the interval-set parser and both validators, and
regression tests for each class of input that used to be accepted silently or to crash.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_decider import ScriptedDecider

from joulesim.deciders import describe_deciders, load_decider
from joulesim.protocol.errors import DecisionError, JoulesimError, ProtocolError
from joulesim.protocol.interval_set import format_interval_set, parse_interval_set, parse_runs
from joulesim.protocol.time_range import MAX_SIMULATED_TIME
from joulesim.protocol.validation import validate_decider_message, validate_simulator_message

from conftest import read_csv, run_in_process, write_platform, write_workload

# ----------------------------------------------------------------- interval sets
# Batsim's syntax, written independently of the parser: ASCII ids or low-high, single spaces.
_BATSIM_SYNTAX = re.compile(r"\A(?:(?:[0-9]+|[0-9]+-[0-9]+)(?: (?:[0-9]+|[0-9]+-[0-9]+))*)?\Z", re.ASCII)
_TRICKY = ["0", "1", "9", "-", " ", "  ", "\t", "\n", "１", "²", "٣", "_", "+", "0x1", ",", "e", "\u00a0", "\u2009"]


@given(st.lists(st.integers(0, 10_000), max_size=60))
def test_any_set_round_trips_through_its_text(ids):
    text = format_interval_set(sorted(set(ids)))
    assert sorted(parse_interval_set(text)) == sorted(set(ids))


@given(st.lists(st.sampled_from(_TRICKY), max_size=12).map("".join))
def test_the_parser_accepts_exactly_batsim_syntax(text):
    """Whatever the text, the parser either refuses it with ValueError or it is Batsim syntax
    with every range ordered; and then the intervals are the text's own."""
    try:
        runs = parse_runs(text)
    except ValueError:
        well_formed = _BATSIM_SYNTAX.match(text) is not None
        if well_formed:  # refused only for a reversed range
            bounds = [tuple(int(x) for x in part.split("-")) for part in text.split(" ")]
            assert any(len(b) == 2 and b[0] > b[1] for b in bounds)
        return
    assert _BATSIM_SYNTAX.match(text)
    expected = [(int(p.split("-")[0]), int(p.split("-")[-1])) for p in text.split(" ")] if text else []
    assert runs == expected


# (gap after the previous interval's top: below 2 they overlap or touch; length - 1; a leading
# zero; "5-5" for "5")
_PIECE = st.tuples(st.integers(-3, 4), st.integers(0, 3), st.booleans(), st.booleans())


@given(st.lists(_PIECE, max_size=10))
def test_the_canonical_text_of_any_valid_set_is_its_ids_written_anew(pieces):
    """canonical_runs keeps a text that is canonical already and writes any other anew: sets
    given out of order, overlapping, touching, as "5-5" or with leading zeros all come back as
    the text of their sorted ids, with their intervals and size."""
    from joulesim.protocol.interval_set import canonical_runs

    parts, ids, high = [], set(), -2
    for gap, span, zero, dash in pieces:
        low = max(0, high + gap)
        high = low + span
        ids.update(range(low, high + 1))
        written = ("0" if zero else "") + str(low)
        parts.append(f"{written}-{high}" if span or dash else written)
    runs, text, size = canonical_runs(" ".join(parts))
    expected = format_interval_set(sorted(ids))
    assert text == expected and size == len(ids)
    assert [(a, b) for a, b in runs] == [(i.inf, i.sup) for i in parse_interval_set(expected).intervals()]


@given(st.lists(_PIECE, max_size=10))
def test_a_set_met_again_gets_the_same_answer_as_the_first_time(pieces):
    """canonical_runs keeps its answers by text (allocations repeat): a text met again gets the
    same intervals, text and size, in a list of its own (the caller may change it)."""
    from joulesim.protocol.interval_set import canonical_runs

    parts, high = [], -2
    for gap, span, zero, dash in pieces:
        low = max(0, high + gap)
        high = low + span
        written = ("0" if zero else "") + str(low)
        parts.append(f"{written}-{high}" if span or dash else written)
    text = " ".join(parts)
    first = canonical_runs(text)
    expected = (list(first[0]), first[1], first[2])
    first[0].append((10 ** 6, 10 ** 6))  # (the caller's list: the next answer must not show it)
    again = canonical_runs(text)
    assert again == expected and type(again[0]) is list and again[0] is not first[0]


def test_a_set_met_before_is_still_refused_beyond_the_intervals_allowed():
    from joulesim.protocol.interval_set import canonical_runs
    from joulesim.protocol.validation import validate_decider_message

    assert canonical_runs("0 2 4 6")[2] == 4  # (now known)
    with pytest.raises(ValueError, match="more than the 3 resources"):
        canonical_runs("0 2 4 6", 3)
    reply = {"now": 1.0, "events": [{"timestamp": 1.0, "type": "EXECUTE_JOB",
                                     "data": {"job_id": "w0!1", "alloc": "0 2 4 6"}}]}
    validate_decider_message(reply, 1.0, 8)  # (known, and within 8 resources)
    with pytest.raises(ProtocolError, match="more than the 3 resources"):
        validate_decider_message(reply, 1.0, 3)


@pytest.mark.parametrize("text, canonical", [("5-5", "5"), ("0-0 2", "0 2"), ("1 3-3 7-9", "1 3 7-9"), ("05", "5"),
                                             ("3-07", "3-7"), ("0 2-3 010", "0 2-3 10"), ("0-3 5 7-130", "0-3 5 7-130"),
                                             ("0", "0"), ("10-20", "10-20"), ("", ""), ("0-3 10", "0-3 10"),
                                             ("00-3", "0-3"), ("0 05", "0 5"), ("1-2 4-04", "1-2 4")])
def test_a_canonical_set_written_otherwise_gets_its_canonical_text(text, canonical):
    from joulesim.protocol.interval_set import canonical_runs

    assert canonical_runs(text)[1] == canonical


@pytest.mark.parametrize("alloc", ["１", "²", "٣", "0_1", "+1", "0\t1", "0\n", "0 ", " 0", "0  1", "0,1",
                                   "0-", "-1", "1-0", "0x1", "1e2", "0\u00a01", "9" * 19])
def test_an_alloc_outside_batsim_syntax_is_refused(alloc):
    reply = {"now": 5, "events": [{"timestamp": 5, "type": "EXECUTE_JOB",
                                   "data": {"job_id": "w0!1", "alloc": alloc}}]}
    with pytest.raises(ProtocolError, match=r"events\[0\] \(EXECUTE_JOB at t=5\): data.alloc must be an interval set"):
        validate_decider_message(reply, 5, nb_resources=4)


def test_a_huge_alloc_is_refused_before_any_work_by_the_platform_size():
    """10 MB of repeated ids: more intervals than resources is refused by counting spaces."""
    huge = "0 " * 5_000_000 + "0"
    reply = {"now": 0, "events": [{"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": huge}}]}
    with pytest.raises(ProtocolError, match=r"lists 5,000,001 intervals, more than the 4 resources.*ids repeat"):
        validate_decider_message(reply, 0, nb_resources=4)
    ranges = {"now": 0, "events": [{"timestamp": 0, "type": "SET_RESOURCE_STATE",
                                    "data": {"resources": "0-1 " * 2_000_000 + "0-1", "state": "1"}}]}
    with pytest.raises(ProtocolError, match=r"data.resources .* more than the 4 resources"):
        validate_decider_message(ranges, 0, nb_resources=4)


# ----------------------------------------------------------------- any JSON value
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)
_DECISION_TYPES = ["EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "SET_RESOURCE_STATE", "QUERY",
                   "REGISTER_PROFILE", "REGISTER_JOB", "NOTIFY", "SET_JOB_METADATA", "CHANGE_JOB_STATE"]
_EVENT_TYPES = ["SIMULATION_BEGINS", "JOB_SUBMITTED", "JOB_COMPLETED", "JOB_KILLED", "RESOURCE_STATE_CHANGED",
                "REQUESTED_CALL", "ANSWER", "NOTIFY", "SIMULATION_ENDS"]


def _message(types):
    event = st.fixed_dictionaries({"timestamp": st.one_of(st.just(5), _JSON), "type": st.sampled_from(types) | _JSON,
                                   "data": st.dictionaries(st.sampled_from(
                                       ["job_id", "alloc", "job_ids", "timestamp", "resources", "state", "job",
                                        "profile", "type", "metadata", "job_state", "mapping", "requests"]),
                                       _JSON, max_size=4) | _JSON})
    return st.one_of(_JSON, st.fixed_dictionaries({"now": st.one_of(st.just(5), _JSON),
                                                   "events": st.lists(event, max_size=3) | _JSON}))


@settings(max_examples=400)
@given(_message(_DECISION_TYPES))
def test_any_decider_reply_is_valid_or_a_protocol_error(reply):
    try:
        validate_decider_message(reply, 5, nb_resources=4)
    except ProtocolError as exc:
        assert str(exc).startswith("decider reply: ")


@settings(max_examples=400)
@given(_message(_EVENT_TYPES))
def test_any_simulator_message_is_valid_or_a_protocol_error(message):
    try:
        validate_simulator_message(message)
    except ProtocolError as exc:
        assert str(exc).startswith("simulator message: ")


# ----------------------------------------------------------------- times
@pytest.mark.parametrize("now", [1e20, MAX_SIMULATED_TIME, float("inf"), float("nan")])
def test_a_reply_now_beyond_the_exact_time_range_is_refused(now):
    with pytest.raises(ProtocolError, match=r"now must be a finite number below 2\^33 s"):
        validate_decider_message({"now": now, "events": []}, 5)


@pytest.mark.parametrize("when", [1e20, float("inf")])
def test_a_call_me_later_beyond_the_exact_time_range_is_refused(when):
    reply = {"now": 5, "events": [{"timestamp": 5, "type": "CALL_ME_LATER", "data": {"timestamp": when}}]}
    with pytest.raises(ProtocolError, match=r"data.timestamp must be a finite number below 2\^33 s"):
        validate_decider_message(reply, 5)


def test_the_simulated_clock_never_passes_the_exact_time_range(tmp_path):
    """Each time is in range (the workload loader checks subtime + delay), but the decider
    starts the job late: the run stops before the clock reaches the job's end."""
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 8e9, "res": 1, "delay": 5e8}])

    def script(d, message):
        if message["now"] == 8e9:
            d.call_me_later(8.5e9)
        elif message["now"] == 8.5e9:
            d.execute_job("w0!1", "0")

    with pytest.raises(JoulesimError, match=r"at t=8.5e\+09 the next event \(job ends\) is due at t=9e\+09: "
                                            r"simulated times must be finite and below 2\^33 s"):
        run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"))


# ----------------------------------------------------------------- decisions that cannot be honoured
def _run_scripted(tmp_path, decide, energy_platform=False, **config):
    """4 hosts; job 1 (1 host) runs 0-5; at t=10 (job 2 submitted) the script decides."""
    platform = "energy2" if energy_platform else write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5},
                                         {"id": 2, "subtime": 10, "res": 1, "delay": 5}])

    def script(d, message):
        if message["now"] == 0:
            d.execute_job("w0!1", "0")
        elif message["now"] == 10:
            decide(d)

    return run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"), **config)


def test_switching_no_machine_is_refused(tmp_path):
    def decide(d):
        d._emit("SET_RESOURCE_STATE", {"resources": "", "state": "0"})
    with pytest.raises(DecisionError, match=r"SET_RESOURCE_STATE at t=10\): resources is empty"):
        _run_scripted(tmp_path, decide, energy_platform=True, energy=True)


def test_switching_without_energy_is_refused_as_batsim_aborts(tmp_path):
    def decide(d):
        d._emit("SET_RESOURCE_STATE", {"resources": "0", "state": "0"})
    with pytest.raises(DecisionError, match=r"SET_RESOURCE_STATE at t=10\): SET_RESOURCE_STATE needs energy "
                                            r"accounting.*run with -E \(--energy\)"):
        _run_scripted(tmp_path, decide)


def test_an_empty_alloc_is_refused(tmp_path):
    def decide(d):
        d.execute_job("w0!2", "")
    with pytest.raises(DecisionError, match=r"job w0!2: alloc is empty"):
        _run_scripted(tmp_path, decide)


def test_metadata_of_a_finished_job_is_refused_and_earlier_metadata_is_written(tmp_path):
    def late(d):
        d.set_job_metadata("w0!1", "too late")
    with pytest.raises(DecisionError, match=r"SET_JOB_METADATA on job w0!1: it is already finished .* set a "
                                            r"job's metadata before it finishes"):
        _run_scripted(tmp_path, late)

    def in_time(d):
        d.set_job_metadata("w0!2", "tagged")
        d.execute_job("w0!2", "1")
    _run_scripted(tmp_path, in_time)
    rows = {r["job_id"]: r["metadata"] for r in read_csv(str(tmp_path / "out_jobs.csv"))}
    assert rows == {"1": "", "2": "tagged"}


@pytest.mark.parametrize("target", [4, "4", 0])
def test_a_storage_mapping_must_name_a_storage_resource(tmp_path, target):
    def decide(d):
        d._emit("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1", "storage_mapping": {"pfs": target}})
    with pytest.raises(DecisionError, match=r"storage_mapping sends 'pfs' to resource .*not a storage resource "
                                            r"of the platform \(storage resources: none"):
        _run_scripted(tmp_path, decide)


def test_a_mapping_index_of_many_digits_is_a_protocol_error(tmp_path):
    def decide(d):
        d._emit("EXECUTE_JOB", {"job_id": "w0!2", "alloc": "1", "mapping": {"0": "9" * 5000}})
    with pytest.raises(ProtocolError, match=r"data.mapping.0 must be"):
        _run_scripted(tmp_path, decide)


# ----------------------------------------------------------------- the decider library
def _begins(n=4):
    return {"timestamp": 0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": n, "nb_compute_resources": n, "nb_storage_resources": 0, "allow_compute_sharing": False,
        "allow_storage_sharing": True, "config": {}, "workloads": {}, "profiles": {},
        "compute_resources": [{"id": i, "name": f"h{i}", "state": "idle", "properties": {}, "zone_properties": {}}
                              for i in range(n)], "storage_resources": [],
        # One node of n cores (the node-model extension), for the deciders that need one;
        # the others ignore it.
        "hierarchy": {"model": "modelV1", "nodes": [{"name": "node0", "id": "node0", "processors": [
            {"name": "node0.processor0", "cores": list(range(n)), "clock_rate": 1, "dpflops_per_cycle": 1,
             "static_power": 1, "dynamic_power": 1, "min_power": 0.1,
             "b": -1e-5, "c": 1e4, "da": 1, "db": 1, "dc": 1e4, "dd": 1}]}]}}}


def _submitted(t=1, job_id="w0!1"):
    return {"timestamp": t, "type": "JOB_SUBMITTED",
            "data": {"job_id": job_id, "job": {"id": job_id, "subtime": t, "res": 1, "walltime": 10, "profile": "p",
                                                     "req_time": 5}}}


def _options_for(name: str, tmp_path) -> dict[str, str]:
    """Decider `rl` needs a model: an untrained one for the one-node platform of _begins()."""
    if name != "rl":
        return {}
    pytest.importorskip("torch", reason="the rl extra is not installed (pip install '.[rl]' in the checkout)")
    from joulesim.deciders.learned.pair_observation import FEATURES
    from joulesim.rl.model_file import save_agent
    from joulesim.rl.ppo import PPOAgent, PPOSettings

    path = tmp_path / "model.pt"
    save_agent(path, PPOAgent(2, len(FEATURES), PPOSettings()),
               {"num_nodes": 1, "num_jobs": 2, "wait_action": False, "features": list(FEATURES), "n_actions": 2,
                "n_features": len(FEATURES)})
    return {"model": str(path)}


@pytest.mark.parametrize("name", sorted(describe_deciders()))
def test_every_shipped_decider_refuses_a_job_submitted_twice(name, tmp_path):
    decider = load_decider(name, _options_for(name, tmp_path))
    decider.handle({"now": 0, "events": [_begins()]})
    with pytest.raises(ProtocolError, match=r"events\[1\] \(JOB_SUBMITTED at t=1\): job w0!1 was already submitted"):
        decider.handle({"now": 1, "events": [_submitted(), _submitted()]})


@pytest.mark.parametrize("events, pattern", [
    ([{"timestamp": 2, "type": "RESOURCE_STATE_CHANGED", "data": {"resources": "0-100000000000", "state": "1"}}],
     r"name ids beyond the 4 resources announced"),
    ([{"timestamp": 2, "type": "NOTIFY", "data": {"type": "event_machine_unavailable", "resources": "0 " * 9 + "0"}}],
     r"ids repeat"),
    ([{"timestamp": 2, "type": "JOB_COMPLETED", "data": {"job_id": "dyn!9", "job_state": "COMPLETED_SUCCESSFULLY",
                                                         "return_code": 0, "alloc": "7"}}],
     r"name ids beyond the 4 resources"),
    ([{"timestamp": 2, "type": "SIMULATION_ENDS", "data": {}}, {"timestamp": 2, "type": "REQUESTED_CALL", "data": {}}],
     r"events\[1\] \(REQUESTED_CALL at t=2\): an event after SIMULATION_ENDS"),
    ([_begins()], r"SIMULATION_BEGINS was already received"),
])
def test_the_decider_library_refuses_what_contradicts_the_session(events, pattern):
    decider = load_decider("easy")
    decider.handle({"now": 0, "events": [_begins()]})
    decider.handle({"now": 1, "events": [_submitted()]})
    with pytest.raises(ProtocolError, match=pattern):
        decider.handle({"now": 2, "events": events})


def test_the_decider_library_refuses_time_going_backwards_and_a_huge_platform():
    decider = load_decider("easy")
    decider.handle({"now": 5, "events": [_begins()]})
    with pytest.raises(ProtocolError, match=r"now 4 is before the previous message's now \(5\)"):
        decider.handle({"now": 4, "events": []})
    huge = _begins(0)
    huge["data"].update(nb_resources=10**12, nb_compute_resources=10**12)
    with pytest.raises(ProtocolError, match=r"nb_resources <= 16,777,216"):
        load_decider("easy").handle({"now": 0, "events": [huge]})
    holes = _begins(2)
    holes["data"]["compute_resources"][1]["id"] = 10**18
    with pytest.raises(ProtocolError, match=r"compute_resources must have distinct integer ids below nb_resources"):
        load_decider("easy").handle({"now": 0, "events": [holes]})


def test_a_job_completed_twice_is_refused():
    decider = load_decider("fcfs")
    decider.handle({"now": 0, "events": [_begins()]})
    decider.handle({"now": 1, "events": [_submitted()]})
    done = {"timestamp": 2, "type": "JOB_COMPLETED", "data": {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY",
                                                               "return_code": 0, "alloc": "0"}}
    decider.handle({"now": 2, "events": [done]})
    with pytest.raises(ProtocolError, match=r"job w0!1 had already completed"):
        decider.handle({"now": 3, "events": [{**done, "timestamp": 3}]})


# ----------------------------------------------------------------- registered profiles
@pytest.mark.parametrize("profiles, pattern", [
    ([("p", {"type": "composed", "seq": ["p"]})], r"REGISTER_PROFILE rejected: .*'p'"),
    ([("a", {"type": "delay", "delay": 1}), ("b", {"type": "composed", "seq": ["a", "missing"]})],
     r"REGISTER_PROFILE rejected: .*names profile 'missing', which does not exist"),
    ([("a", {"type": "delay", "delay": 1}), ("b", {"type": "composed", "repeat": 1000, "seq": ["a"]}),
      ("c", {"type": "composed", "repeat": 1000, "seq": ["b"]})],
     r"REGISTER_PROFILE rejected: .*100,000"),
])
def test_registered_composed_profiles_are_checked_against_the_ones_they_name(tmp_path, profiles, pattern):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5}])

    def script(d, message):
        if message["now"] == 0:
            for name, profile in profiles:
                d.register_profile("dyn", name, profile)

    with pytest.raises(DecisionError, match=pattern):
        run_in_process(ScriptedDecider(script), platform, [workload], str(tmp_path / "out"), dynamic_jobs=True)


def test_a_completed_job_leaves_the_decider_after_its_callback():
    """Decider.jobs holds only jobs still to act on (memory does not grow with the trace)."""
    seen = []

    class Watcher(type(load_decider("fcfs"))):
        def on_job_completed(self, job, state, return_code, alloc):
            seen.append((job.id, job.id in self.jobs))
            super().on_job_completed(job, state, return_code, alloc)

    decider = Watcher()
    decider.handle({"now": 0, "events": [_begins()]})
    decider.handle({"now": 1, "events": [_submitted()]})
    assert "w0!1" in decider.jobs
    decider.handle({"now": 2, "events": [{"timestamp": 2, "type": "JOB_COMPLETED", "data": {
        "job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0"}}]})
    assert seen == [("w0!1", True)] and decider.jobs == {}
    with pytest.raises(ProtocolError, match="was already submitted"):
        decider.handle({"now": 3, "events": [_submitted(3)]})
