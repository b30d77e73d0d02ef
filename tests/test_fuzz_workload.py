"""Hostile, broken and random workload and external events files: each loads with exactly the
values it gives, or ends with an InputError naming the file and the job, profile, field or
line; never a traceback, a MemoryError, a RecursionError, a hang or a silent acceptance.

The property-based tests run JOULESIM_FUZZ_EXAMPLES examples each (default 120, derandomized by
the 'ci' profile of conftest.py); ``JOULESIM_FUZZ_EXAMPLES=5000 HYPOTHESIS_PROFILE=dev pytest
tests/test_fuzz_workload.py`` explores further.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import MAX_EXTRA_FIELD_DEPTH
from joulesim.protocol.time_range import MAX_SIMULATED_TIME
from joulesim.simulator.workload.external_events import load_external_events
from joulesim.simulator.workload.profiles import MAX_COMPOSED_DEPTH, MAX_TASKS_PER_JOB, validate_profile
from joulesim.simulator.workload.workload_loader import load_workload

from conftest import fuzz_settings

DELAY = {"type": "delay", "delay": 10}
BEYOND = "below 2^33 s"  # in every out-of-range time message (protocol/time_range.py)


def write(directory: Path, content: str | bytes | dict, name: str = "w.json") -> str:
    path = directory / name
    if isinstance(content, dict):
        content = json.dumps(content)
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return str(path)


def workload(jobs: list, profiles: dict | None = None, **top) -> dict:
    return {"jobs": jobs, "profiles": {"p": DELAY} if profiles is None else profiles, **top}


def job(**fields) -> dict:
    base = {"id": 1, "subtime": 0, "res": 1, "profile": "p"}
    base.update(fields)
    return base


def refused(path: str, *parts: str) -> str:
    """Load `path`; assert an InputError naming the file and every part; return its message."""
    with pytest.raises(InputError) as info:
        load_workload(path, "w0")
    message = str(info.value)
    assert message.startswith(path + ": "), message
    for part in parts:
        assert part in message, (part, message)
    return message


def events_refused(path: str, *parts: str) -> str:
    with pytest.raises(InputError) as info:
        load_external_events(path, 4)
    message = str(info.value)
    assert message.startswith(path + ": "), message
    for part in parts:
        assert part in message, (part, message)
    return message


# --- 2. times beyond the exactly simulated range -------------------------------------------


@pytest.mark.parametrize("fields, where", [
    ({"subtime": 1e20}, "field 'subtime'"),
    ({"subtime": MAX_SIMULATED_TIME}, "field 'subtime'"),
    ({"subtime": 2 ** 64 - 1}, "field 'subtime'"),
    ({"walltime": 1e20}, "field 'walltime'"),
    ({"walltime": 1e300}, "field 'walltime'"),
    ({"subtime": 5e9, "walltime": 5e9}, "field 'walltime'"),  # each in range, not the kill time
])
def test_job_times_beyond_the_range_are_refused(tmp_path, fields, where):
    message = refused(write(tmp_path, workload([job(**fields)])), "jobs[0] (id '1')", where, BEYOND)
    assert "rebase the times" in message


def test_a_subtime_of_1e20_no_longer_makes_durations_vanish(tmp_path):
    # The reported case: two jobs 1 s apart at 1e20 would both be submitted at 1e20 exactly.
    path = write(tmp_path, workload([job(id=1, subtime=1e20), job(id=2, subtime=1e20 + 1)]))
    refused(path, "jobs[0] (id '1'): field 'subtime'", "subtime is 1e+20", BEYOND)


def test_largest_exact_times_load(tmp_path):
    below = MAX_SIMULATED_TIME - 1
    path = write(tmp_path, workload([job(subtime=below - 1, walltime=0.5)], {"p": {"type": "delay", "delay": 0.25}}))
    loaded = load_workload(path, "w0").jobs[0]
    assert (loaded.subtime, loaded.walltime) == (below - 1, 0.5)


@pytest.mark.parametrize("profiles, where", [
    ({"p": {"type": "delay", "delay": 1e20}}, "profile 'p': field 'delay'"),
    ({"p": {"type": "delay", "delay": MAX_SIMULATED_TIME}}, "profile 'p': field 'delay'"),
    # each delay in range, but a job of the composed profile lasts 2^33 s
    ({"d": {"type": "delay", "delay": 2.0 ** 32}, "p": {"type": "composed", "seq": ["d"], "repeat": 2}},
     "profile 'p'"),
    ({"d": {"type": "delay", "delay": 2.0 ** 32}, "p": {"type": "composed", "seq": ["d", "d"]}}, "profile 'p'"),
])
def test_delays_beyond_the_range_are_refused(tmp_path, profiles, where):
    refused(write(tmp_path, workload([job()], profiles)), where, BEYOND)


def test_subtime_plus_delay_beyond_the_range_is_refused(tmp_path):
    profiles = {"p": {"type": "delay", "delay": 5e9}}
    refused(write(tmp_path, workload([job(subtime=5e9)], profiles)), "jobs[0] (id '1'): field 'subtime'",
            "profile 'p' lasts at least", BEYOND)


def test_registered_profile_delay_is_checked_too():
    # REGISTER_PROFILE goes through validate_profile: the decider gets the same refusal.
    with pytest.raises(InputError, match="field 'delay': delay is 1e\\+20"):
        validate_profile("big", {"type": "delay", "delay": 1e20}, "profile 'big'", "REGISTER_PROFILE")


# --- 3. numbers as JSON writes them, and nothing else --------------------------------------


@pytest.mark.parametrize("token, hint", [
    (b"NaN", "no NaN nor Infinity"),
    (b"Infinity", "no NaN nor Infinity"),
    (b"-Infinity", "no NaN nor Infinity"),
    (b"1e400", "fit a double"),
    (b"-1e400", "fit a double"),
    (b"1" + b"0" * 400, "fit a double"),  # 10**400 as an integer
])
def test_non_finite_and_huge_number_tokens_are_refused(tmp_path, token, hint):
    text = b'{"jobs": [{"id": 1, "subtime": ' + token + b', "res": 1, "profile": "p"}], "profiles": {}}'
    message = refused(write(tmp_path, text), "line 1 column 3", "malformed JSON", hint)
    assert "subtime" in message  # the text around the error shows the field


@pytest.mark.parametrize("value, shown", [
    ("12", "'12' (a string: write numbers without quotes)"),
    ("１２", "'１２' (a string: write numbers without quotes)"),
    ("1_000", "'1_000' (a string: write numbers without quotes)"),
    ("+5", "'+5' (a string"),
    ("NaN", "'NaN'"),
    (" 12 ", "' 12 '"),
    (True, "true (a boolean, not a number)"),
    (False, "false (a boolean, not a number)"),
    (None, "null"),
    ([1], "a list of 1 values"),
    ({"s": 1}, "an object"),
])
@pytest.mark.parametrize("key", ["subtime", "walltime"])
def test_numbers_given_as_anything_else_are_refused(tmp_path, key, value, shown):
    refused(write(tmp_path, workload([job(**{key: value})])), f"jobs[0] (id '1'): field '{key}'",
            f"invalid value {shown}")


@pytest.mark.parametrize("value", ["1", True, 1.5, None, 2 ** 31, 2 ** 63, 2 ** 64 - 1, 2 ** 64, 10 ** 30, -1])
def test_res_must_be_a_small_integer(tmp_path, value):
    # 2**64 and 10**30 reach the loader as floats (orjson), 2**63 as an int: all refused.
    refused(write(tmp_path, workload([job(res=value)])), "jobs[0] (id '1'): field 'res'", "integer >= 0")


def test_res_zero_and_the_largest_res_load(tmp_path):
    # res 0 is Batsim's (the decider rejects such a job); 2^31 - 1 is Batsim's largest res.
    path = write(tmp_path, workload([job(id=1, res=0), job(id=2, res=2 ** 31 - 1)]))
    assert [j.res for j in load_workload(path, "w0").jobs] == [0, 2 ** 31 - 1]


@pytest.mark.parametrize("value", [0, -3, 2 ** 31, 2 ** 63, True, 1.0, "4"])
def test_nb_res_must_be_a_positive_small_integer(tmp_path, value):
    refused(write(tmp_path, workload([job()], nb_res=value)), "top level: field 'nb_res'")


@pytest.mark.parametrize("profile, where", [
    ({"type": "delay", "delay": 1, "ret": 2 ** 31}, "field 'ret'"),
    ({"type": "delay", "delay": 1, "ret": True}, "field 'ret'"),
    ({"type": "delay", "delay": "1"}, "field 'delay'"),
    ({"type": "parallel_homogeneous", "cpu": True, "com": 0}, "field 'cpu'"),
    ({"type": "parallel_homogeneous", "cpu": "1e9", "com": 0}, "field 'cpu'"),
    ({"type": "parallel", "cpu": [1, None], "com": [0] * 4}, "field 'cpu'"),
])
def test_profile_numbers_must_be_json_numbers(tmp_path, profile, where):
    refused(write(tmp_path, workload([job()], {"p": profile})), "profile 'p'", where)


# --- 4. structure: references, repeats, nesting, ids ---------------------------------------


def test_a_huge_repeat_is_refused_without_allocating(tmp_path):
    profiles = {"d": {"type": "delay", "delay": 0}, "p": {"type": "composed", "seq": ["d"], "repeat": 10 ** 12}}
    refused(write(tmp_path, workload([job()], profiles)), "profile 'p': field 'repeat'", f"{MAX_TASKS_PER_JOB:,}")


def test_nested_repeats_multiply(tmp_path):
    # Each repeat is allowed on its own; a job of 'outer' would run 1,000 x 1,000 tasks.
    profiles = {"d": {"type": "delay", "delay": 0},
                "inner": {"type": "composed", "seq": ["d"], "repeat": 1000},
                "p": {"type": "composed", "seq": ["inner"], "repeat": 1000}}
    refused(write(tmp_path, workload([job()], profiles)), "profile 'p': field 'repeat'", "1,000,000 tasks")


def test_a_doubling_chain_is_refused_in_linear_time(tmp_path):
    # 60 profiles, each running the next twice: 2^60 tasks per job from a tiny file.
    profiles = {f"c{i}": {"type": "composed", "seq": [f"c{i + 1}", f"c{i + 1}"]} for i in range(60)}
    profiles["c60"] = {"type": "delay", "delay": 0}
    refused(write(tmp_path, workload([job(profile="c0")], profiles)), "field 'seq'", "tasks")


def test_a_deep_chain_of_composed_profiles_is_refused_without_recursion(tmp_path):
    profiles = {f"c{i}": {"type": "composed", "seq": [f"c{i + 1}"]} for i in range(5000)}
    profiles["c5000"] = DELAY
    refused(write(tmp_path, workload([job(profile="c0")], profiles)), "levels deep",
            f"more than {MAX_COMPOSED_DEPTH}")


def test_a_long_cycle_is_named_without_recursion(tmp_path):
    profiles = {f"c{i}": {"type": "composed", "seq": [f"c{(i + 1) % 3000}"]} for i in range(3000)}
    message = refused(write(tmp_path, workload([job(profile="c0")], profiles)), "cycle")
    assert "c0 -> c1 -> c2" in message


def test_profiles_shared_by_many_are_checked_in_linear_time(tmp_path):
    # 5,000 composed profiles each running one hub of 20,000 delays: checking each one's whole
    # unrolled sub-tree took 10^8 steps (minutes); each sub-profile is summarized once.
    profiles = {f"d{i}": {"type": "delay", "delay": 1} for i in range(20_000)}
    profiles["hub"] = {"type": "composed", "seq": [f"d{i}" for i in range(20_000)]}
    profiles.update({f"c{i}": {"type": "composed", "seq": ["hub"]} for i in range(5_000)})
    path = write(tmp_path, workload([job(profile="c0")], profiles))
    started = time.perf_counter()
    assert load_workload(path, "w0").jobs[0].profile == "c0"
    assert time.perf_counter() - started < 10  # linear: ~0.1 s


def test_deeply_nested_extra_fields_are_refused(tmp_path):
    # They go to the decider inside JOB_SUBMITTED, which orjson could not encode.
    deep: object = "x"
    for _ in range(MAX_EXTRA_FIELD_DEPTH + 1):
        deep = [deep]
    refused(write(tmp_path, workload([job(extra=deep)])), "jobs[0] (id '1'): field 'extra'", "levels deep")
    profiles = {"p": {**DELAY, "note": {"a": deep}}}
    refused(write(tmp_path, workload([job()], profiles)), "profile 'p': field 'note'", "levels deep")
    shallow = deep[0]  # exactly MAX_EXTRA_FIELD_DEPTH levels: forwarded as given
    assert load_workload(write(tmp_path, workload([job(extra=shallow)])), "w0").jobs[0].json["extra"] == shallow


def test_huge_names_are_cut_in_messages(tmp_path):
    name = "n" * 1_000_000
    message = refused(write(tmp_path, workload([job(id=name, profile=name)])), "(1,000,000 characters)")
    assert len(message) < 1000


@pytest.mark.parametrize("seq", [["nope"], ["p", "nope"]])
def test_composed_profiles_naming_undefined_profiles(tmp_path, seq):
    profiles = {"p": DELAY, "c": {"type": "composed", "seq": seq}}
    refused(write(tmp_path, workload([job()], profiles)), "profile 'c': field 'seq'", "'nope'", "does not exist")


def test_a_job_naming_an_undefined_profile(tmp_path):
    refused(write(tmp_path, workload([job(profile="ghost")])), "jobs[0] (id '1'): field 'profile'", "'ghost'")


@pytest.mark.parametrize("ids", [[1, 1], [1, "1"], ["a", "a"]])
def test_duplicate_job_ids(tmp_path, ids):
    refused(write(tmp_path, workload([job(id=i) for i in ids])), "jobs[1]", "duplicate id")


# --- 4. files that are not workloads --------------------------------------------------------


@pytest.mark.parametrize("content, parts", [
    (b"", ["file: is empty"]),
    (b" \n\t\n", ["file: is empty"]),
    (b'{"jobs": [], "profiles": {"\xff\xfe": 1}}', ["line 1 column 28", "invalid UTF-8", "UTF-8"]),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["invalid UTF-8"]),
    (b"\x00\x01\x02binary", ["malformed JSON"]),
    (b"[" * 5000 + b"]" * 5000, ["depth limit", "1,024 levels"]),
    (b'{"jobs": [], "profiles": {}} trailing', ["malformed JSON"]),
    (b"[]", ["top level", "not an object"]),
    (b"12", ["top level", "not an object"]),
])
def test_files_that_are_not_workloads(tmp_path, content, parts):
    refused(write(tmp_path, content), *parts)


def test_a_byte_order_mark_is_ignored(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbf" + json.dumps(workload([job()])).encode())
    assert len(load_workload(path, "w0").jobs) == 1


def test_a_directory_or_a_device_is_refused(tmp_path):
    refused(str(tmp_path), "file: is a directory")
    if os.path.exists("/dev/zero"):  # would be read forever
        refused("/dev/zero", "is a device")


# --- external events files ------------------------------------------------------------------

EVENT = '{"type": "machine_unavailable", "resources": "0", "timestamp": %s}'


@pytest.mark.parametrize("timestamp, parts", [
    ("1e20", ["line 2: field 'timestamp'", BEYOND]),
    ("8589934592", ["line 2: field 'timestamp'", BEYOND]),
    ("NaN", ["line 2 column", "no NaN nor Infinity"]),
    ("1e400", ["line 2 column", "fit a double"]),
    ('"5"', ["line 2: field 'timestamp'", "(a string: write numbers without quotes)"]),
    ("true", ["line 2: field 'timestamp'", "boolean"]),
])
def test_event_timestamps(tmp_path, timestamp, parts):
    path = write(tmp_path, EVENT % 1 + "\n" + EVENT % timestamp + "\n", "events.txt")
    events_refused(path, *parts)


@pytest.mark.parametrize("content, parts", [
    (b"\xff\xfe\n", ["line 1 column 1", "invalid UTF-8"]),
    (b"[" * 3000 + b"\n", ["line 1 column", "depth limit"]),
])
def test_events_files_that_are_not_events(tmp_path, content, parts):
    events_refused(write(tmp_path, content, "events.txt"), *parts)


@pytest.mark.parametrize("resources, parts", [
    ('["0", "1"]', ["a list of 2 values"]),
    ('"' + "0 " * 100 + '0"', ["101 intervals"]),
    ('"１"', ["malformed interval set"]),
    ('"0-99999999999999999999999"', ["field 'resources'"]),
])
def test_event_resources(tmp_path, resources, parts):
    text = '{"type": "machine_available", "timestamp": 1, "resources": %s}\n' % resources
    events_refused(write(tmp_path, text, "events.txt"), "line 1: field 'resources'", *parts)


def test_events_directory(tmp_path):
    events_refused(str(tmp_path), "file: is a directory")


# --- through the command line ----------------------------------------------------------------


def test_cli_reports_a_hostile_workload_without_traceback(tmp_path):
    path = write(tmp_path, workload([job(subtime=1e20)]))
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-w", path,
                             "-e", str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"joulesim: error: {path}: jobs[0] (id '1'): field 'subtime'")
    assert BEYOND in result.stderr


# --- properties -----------------------------------------------------------------------------

names = st.text(min_size=1, max_size=6)
times = st.one_of(st.integers(0, 2 ** 32 - 1), st.floats(0, 2.0 ** 32, exclude_max=True))


@st.composite
def valid_workloads(draw) -> dict:
    """Workloads of delay and parallel_homogeneous profiles (any res), times in range."""
    profiles = {}
    for name in draw(st.lists(names, min_size=1, max_size=4, unique=True)):
        if draw(st.booleans()):
            profiles[name] = {"type": "delay", "delay": draw(times)}
        else:
            profiles[name] = {"type": "parallel_homogeneous", "cpu": draw(st.floats(0, 1e12)),
                              "com": draw(st.integers(0, 10 ** 9))}
    ids = draw(st.lists(st.one_of(st.integers(-2 ** 63, 2 ** 64 - 1),
                                  names.filter(lambda s: "!" not in s)),
                        max_size=8, unique_by=str))
    jobs = []
    for job_id in ids:
        one = {"id": job_id, "subtime": draw(times), "res": draw(st.integers(0, 2 ** 31 - 1)),
               "profile": draw(st.sampled_from(sorted(profiles)))}
        walltime = draw(st.one_of(st.none(), st.just(-1), times.filter(lambda t: t > 0)))
        if walltime is not None:
            one["walltime"] = walltime
        jobs.append(one)
    doc = {"jobs": jobs, "profiles": profiles}
    if draw(st.booleans()):
        doc["nb_res"] = draw(st.integers(1, 2 ** 31 - 1))
    return doc


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz_workload")


@fuzz_settings
@given(doc=valid_workloads())
def test_valid_workloads_load_exactly(scratch, doc):
    loaded = load_workload(write(scratch, doc), "w0")
    assert loaded.profiles == doc["profiles"] and loaded.nb_res == doc.get("nb_res")
    by_id = {str(j["id"]): j for j in doc["jobs"]}
    assert sorted(j.local_id for j in loaded.jobs) == sorted(by_id)
    for got in loaded.jobs:
        given_job = by_id[got.local_id]
        assert got.id == f"w0!{got.local_id}"
        assert got.subtime == given_job["subtime"] and got.res == given_job["res"]
        assert got.walltime == given_job.get("walltime", -1) and got.profile == given_job["profile"]
    assert [(j.subtime, j.id) for j in loaded.jobs] == sorted((j.subtime, j.id) for j in loaded.jobs)


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from([1e20, MAX_SIMULATED_TIME, MAX_SIMULATED_TIME - 1, 2 ** 31, 2 ** 63, 2 ** 64, 10 ** 30, -1,
                     0, -0.0, 1e308, "12", "１２", "1_000", "+5", "", "p", "a!b", 10 ** 12]))
json_values = st.recursive(json_scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)), max_leaves=10)

JOB_KEYS = ["id", "subtime", "res", "profile", "walltime", "extra"]
PROFILE_KEYS = ["type", "delay", "cpu", "com", "seq", "repeat", "ret"]


def load_or_refuse(path: str) -> None:
    """The property: a clean InputError naming the file, or a workload whose values are usable."""
    try:
        loaded = load_workload(path, "w0")
    except InputError as exc:
        assert str(exc).startswith(path + ": ")
        return
    for got in loaded.jobs:
        assert 0 <= got.subtime < MAX_SIMULATED_TIME and got.profile in loaded.profiles
        assert got.walltime == -1 or 0 < got.walltime and got.subtime + got.walltime < MAX_SIMULATED_TIME
        assert type(got.res) is int and 0 <= got.res < 2 ** 31


@fuzz_settings
@given(doc=valid_workloads(), data=st.data())
def test_a_field_replaced_by_anything_loads_or_is_refused(scratch, doc, data):
    profiles = doc["profiles"]
    profiles["comp"] = {"type": "composed", "seq": sorted(profiles)[:2], "repeat": 2}
    value = data.draw(json_values)
    target = data.draw(st.sampled_from(["top", "job", "profile"] if doc["jobs"] else ["top", "profile"]))
    if target == "top":
        doc[data.draw(st.sampled_from(["jobs", "profiles", "nb_res"]))] = value
    elif target == "job":
        doc["jobs"][data.draw(st.integers(0, len(doc["jobs"]) - 1))][data.draw(st.sampled_from(JOB_KEYS))] = value
    else:
        profiles[data.draw(st.sampled_from(sorted(profiles)))][data.draw(st.sampled_from(PROFILE_KEYS))] = value
    load_or_refuse(write(scratch, json.dumps(doc, allow_nan=True)))


@fuzz_settings
@given(doc=valid_workloads(), data=st.data())
def test_corrupted_bytes_load_or_are_refused(scratch, doc, data):
    raw = bytearray(json.dumps(doc).encode())
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(raw)))
        action = data.draw(st.sampled_from(["insert", "replace", "delete"]))
        byte = data.draw(st.sampled_from(b'0123456789-+.eE"[]{},:\\ \xff\x00\xc3tnfNI_'))
        if action == "insert":
            raw.insert(position, byte)
        elif position < len(raw):
            if action == "replace":
                raw[position] = byte
            else:
                del raw[position]
    load_or_refuse(write(scratch, bytes(raw)))


@fuzz_settings
@given(content=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                         json_values.map(lambda v: json.dumps(v, allow_nan=True).encode())))
def test_garbage_is_refused(scratch, content):
    load_or_refuse(write(scratch, content))


@fuzz_settings
@given(lines=st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["machine_available", "machine_unavailable"]),
                           "resources": st.sampled_from(["0", "0-3", "1 3", "", "4", "0,1", "１", "9" * 30]),
                           "timestamp": st.one_of(times, json_scalars)}).map(json.dumps),
    json_values.map(lambda v: json.dumps(v, allow_nan=True)),
    st.text(max_size=40)), max_size=5))
def test_events_files_load_or_are_refused(scratch, lines):
    path = write(scratch, "\n".join(lines).encode("utf-8", "surrogatepass"), "events.txt")
    try:
        events = load_external_events(path, 4)
    except InputError as exc:
        assert str(exc).startswith(path + ": ")
        return
    for event in events:
        assert 0 <= event.timestamp < MAX_SIMULATED_TIME and event.resources and event.resources.max < 4
