"""The checkpoint's state codec (simulator/checkpoint/state_codec.py): object graphs written as
data and read back the same, shared things shared; what it cannot hold refused by name; and files
that name anything but joulesim's own classes refused without running anything."""

from __future__ import annotations

import collections
import io
import itertools
import math
from typing import Any

import orjson
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from joulesim.simulator.checkpoint.state_codec import StateCodecError, StateDecoder, StateEncoder, external_objects
from joulesim.simulator.engine.calendar_entry import CalendarEntry
from joulesim.simulator.output.disk_reserve import DiskReserve
from joulesim.simulator.output.job_statistics import JobStatistics


def round_trip(thing: Any, externals: list[Any] = (), given_out: dict[int, str] | None = None,
               given_in: dict[str, Any] | None = None) -> Any:
    tree = StateEncoder(externals, given_out).encode(thing)
    text = orjson.dumps(tree)  # (what the file holds)
    return StateDecoder(externals, given_in).decode(orjson.loads(text))


class Holder:
    """A stand-in for the simulation's objects (the codec takes classes of joulesim's modules only:
    this test module is given a joulesim-like name below)."""

    def method(self) -> int:
        return 7


def test_containers_numbers_and_shared_things_come_back_the_same():
    shared = [1, 2]
    cyclic: list[Any] = ["me"]
    cyclic.append(cyclic)
    thing = {
        "shared": (shared, shared), "cyclic": cyclic, "floats": [math.inf, -math.inf, -0.0, 1e-300, 0.1 + 0.2],
        "ints": [2 ** 70 + 1, -(2 ** 64), 2 ** 63 - 1, -(2 ** 63)], 7: "int key", (1, "a"): "tuple key",
        "bytes": b"\x00\xff", "bytearray": bytearray(b"ab"), "deque": collections.deque([1, 2], maxlen=5),
        "counter": collections.Counter("abca"), "default": collections.defaultdict(list, {"a": [1]}),
        "range": range(3, 10, 2), "sets": [{3, 1}, frozenset({"x"})], "none": None, "bools": [True, False],
    }
    back = round_trip(thing)
    assert {k: v for k, v in back.items() if k != "cyclic"} == {k: v for k, v in thing.items() if k != "cyclic"}
    assert back["shared"][0] is back["shared"][1]
    assert back["cyclic"][1] is back["cyclic"]
    assert math.copysign(1.0, back["floats"][2]) == -1.0
    assert back["deque"].maxlen == 5 and type(back["counter"]) is collections.Counter
    assert back["default"]["new"] == [] and type(back["default"]) is collections.defaultdict
    nan = round_trip([math.nan])[0]
    assert nan != nan


def test_counters_text_buffers_arrays_and_the_calendar_come_back_where_they_were():
    import numpy

    counter = itertools.count(41)
    next(counter)
    text = io.StringIO(newline="")
    text.write("a,b\r\n")
    array = numpy.arange(6, dtype=numpy.float64).reshape(2, 3)
    environment = simpy.Environment(initial_time=5.0)
    environment._queue.append((7.5, 1, next(environment._eid), CalendarEntry(external_objects, "x")))
    back = round_trip([counter, text, array, numpy.float64(2.5), environment])
    assert next(back[0]) == 42
    back[1].write("c\n")
    assert back[1].getvalue() == "a,b\r\nc\n"
    assert (back[2] == array).all() and back[2].dtype == array.dtype and back[2].flags.writeable
    assert back[3] == 2.5 and type(back[3]) is numpy.float64
    assert back[4].now == 5.0 and back[4]._queue[0][0] == 7.5 and next(back[4]._eid) == 1
    assert back[4]._queue[0][3].callback is external_objects


def test_objects_of_joulesim_come_back_with_their_methods_and_slots():
    reserve = DiskReserve("out.trace", "write less")
    reserve.wrote(10)
    entry = CalendarEntry(DiskReserve.wrote, None)  # (slots)
    callback = reserve.wrote  # a bound method of a joulesim object
    items: list[int] = []
    back = round_trip({"reserve": reserve, "entry": entry, "callback": callback, "items": items, "append": items.append})
    assert type(back["reserve"]) is DiskReserve and back["reserve"].__dict__ == reserve.__dict__
    assert back["callback"].__self__ is back["reserve"] and back["callback"].__func__ is DiskReserve.wrote
    back["append"](3)
    assert back["items"] == [3]
    assert type(back["entry"]) is CalendarEntry


def test_objects_of_a_class_the_build_compiles_come_back_with_their_attributes():
    """JobStatistics is compiled where joulesim is built with a C compiler (setup.py): its
    attributes are then the class's own (`__mypyc_attrs__`), not an instance dict."""
    stats = JobStatistics()
    stats.record_finished("COMPLETED_SUCCESSFULLY", 1.0, 2.0, 5.5)
    stats.record_rejected()
    back = round_trip({"stats": stats})["stats"]
    assert type(back) is JobStatistics
    names = [name for name in dir(stats) if not name.startswith("__") and not callable(getattr(stats, name))]
    assert names and all(getattr(back, name) == getattr(stats, name) for name in names)
    assert back.nb_finished == 1 and back.makespan == 5.5


def test_the_inputs_objects_are_written_as_their_place_and_found_again_in_the_inputs_read_anew():
    inputs = {"jobs": [{"id": "a"}, {"id": "b"}], "host": JobStatistics()}
    again = {"jobs": [{"id": "a"}, {"id": "b"}], "host": JobStatistics()}
    state = {"job": inputs["jobs"][1], "host": inputs["host"], "mine": {"id": "b"}}
    back = round_trip(state, external_objects([inputs]))
    assert back["job"] is inputs["jobs"][1] and back["host"] is inputs["host"] and back["mine"] == {"id": "b"}
    back = StateDecoder(external_objects([again])).decode(orjson.loads(orjson.dumps(
        StateEncoder(external_objects([inputs])).encode(state))))
    assert back["job"] is again["jobs"][1] and back["host"] is again["host"] and back["mine"] is not again["jobs"][1]


def test_what_the_resuming_run_gives_is_written_by_name():
    link = object()
    back = round_trip({"link": link}, given_out={id(link): "link"}, given_in={"link": "the new link"})
    assert back == {"link": "the new link"}
    with pytest.raises(StateCodecError, match="does not give"):
        round_trip({"link": link}, given_out={id(link): "link"}, given_in={})


@pytest.mark.parametrize("thing, named", [
    (lambda: 1, "closure or a function outside joulesim"),
    ((x for x in ()), "a running actor"),
    (__import__("fractions").Fraction(1, 3), "fractions:Fraction"),
    (Holder(), "test_state_codec:Holder"),
    (Holder().method, "test_state_codec:Holder"),
    (open(__file__), "an open file that is not one of the run's outputs"),
    (print, "builtin_function_or_method"),
])
def test_what_a_checkpoint_cannot_hold_is_refused_by_name(thing, named):
    with pytest.raises(StateCodecError, match=named.replace("(", r"\(").replace(")", r"\)")) as caught:
        StateEncoder().encode({"where": [thing]}, "the state")
    assert "the state['where']" in str(caught.value)
    if isinstance(thing, io.IOBase):
        thing.close()


@pytest.mark.parametrize("node, says", [
    (["o", 0, "os:system", {}], "not a name a checkpoint may use"),
    (["o", 0, "subprocess:Popen", {"args": "true"}], "not a name a checkpoint may use"),
    (["fn", "os:system"], "not a name a checkpoint may use"),
    (["c", "builtins:eval"], "not a class"),
    (["nt", 0, "collections:namedtuple", []], "not a name"),
    (["o", 0, "joulesim.simulator.output.job_statistics:Nothing", {}], "not in this joulesim"),
    (["o", 0, "joulesim.nothing:Thing", {}], "not a module of this joulesim"),
    (["m", ["o", 0, "joulesim.simulator.output.job_statistics:JobStatistics", {}], "__class__"], "does not define"),
    (["bm", ["l", 0, []], "__setattr__"], "may not name"),
    (["bm", ["o", 0, "joulesim.simulator.output.job_statistics:JobStatistics", {}], "write"], "may not name"),
    (["o", 0, "joulesim.simulator.engine.calendar_entry:CalendarEntry", {"nope": 1}], "has no attribute"),
    (["l", 0, [["r", 0], ["r", 9]]], "not read yet"),
    (["l", 0, [["l", 0, []]]], "given twice"),
    (["x", 3], "which the inputs do not have"),
    (["np", 0, "|O", [1], ""], "Python objects"),
    (["zz"], "unknown kind"),
    (["d", 0, [1], []], "differ in number"),
    ({"a": 1}, "unexpected dict"),
    (["f", "e"], "malformed"),
])
def test_a_state_naming_anything_else_is_refused_without_running_it(node, says):
    with pytest.raises(StateCodecError, match=says):
        StateDecoder().decode(node)


_TREES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.floats(allow_nan=False), st.text(max_size=3),
              st.sampled_from(["r", "l", "d", "o", "x", "k", "m", "fn", "np", "env", "file", "sio", "cn"])),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=2), children, max_size=3),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(_TREES)
def test_any_tree_either_reads_back_or_is_refused_with_the_codec_s_error(tree):
    """A hostile or damaged state fails with StateCodecError (one line), never another exception."""
    try:
        StateDecoder().decode(tree)
    except StateCodecError:
        pass


_DATA = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(), st.binary()),
    lambda children: (st.lists(children) | st.tuples(children, children)
                      | st.dictionaries(st.one_of(st.text(), st.integers()), children)
                      | st.frozensets(st.integers()) | st.sets(st.text())),
    max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(_DATA)
def test_any_plain_data_round_trips(data):
    assert round_trip(data) == data


Holder.__module__ = "test_state_codec"  # (a name outside joulesim: refused)
