"""Workload and profile loading: shipped files, id rewriting, ordering, and every input error."""

import json
import os

import pytest

from joulesim.inputs.input_error import InputError
from joulesim.simulator.workload.profiles import (
    check_profile_references,
    leaf_executor_count,
    validate_profile,
)
from joulesim.simulator.workload.workload_loader import (
    list_shipped_workloads,
    load_workload,
    shipped_workload_path,
)

DELAY = {"type": "delay", "delay": 10}


def write(tmp_path, doc, name="w.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def workload(jobs, profiles=None, **top):
    doc = {"jobs": jobs, "profiles": {"p": DELAY} if profiles is None else profiles}
    doc.update(top)
    return doc


def job(**fields):
    base = {"id": 1, "subtime": 0, "res": 1, "profile": "p"}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def expect_error(path, *parts):
    with pytest.raises(InputError) as info:
        load_workload(path, "w0")
    message = str(info.value)
    assert path in message
    for part in parts:
        assert part in message, (part, message)
    return message


# --- shipped workloads -------------------------------------------------------------------


def test_shipped_workloads_listed():
    assert {"default", "tiny", "mixed"} <= set(list_shipped_workloads())


@pytest.mark.parametrize("name", ["default", "tiny", "mixed"])
def test_every_shipped_workload_loads(name):
    path = shipped_workload_path(name)
    assert os.path.exists(path)
    wl = load_workload(path, "w3")
    assert wl.name == "w3"
    assert wl.jobs
    assert all(j.id.startswith("w3!") for j in wl.jobs)
    keys = [(j.subtime, j.id) for j in wl.jobs]
    assert keys == sorted(keys)


def test_bare_shipped_name_when_no_such_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wl = load_workload("tiny", "w0")
    assert len(wl.jobs) == 4
    assert wl.nb_res == 4
    assert wl.path == shipped_workload_path("tiny")


def test_unknown_shipped_name():
    with pytest.raises(InputError) as info:
        shipped_workload_path("no_such_workload")
    assert "default" in str(info.value)


def test_missing_file_names_the_path(tmp_path):
    path = str(tmp_path / "absent.json")
    expect_error(path, "does not exist")


def test_default_workload_shape():
    wl = load_workload("default", "w0")
    assert wl.nb_res == 32
    assert len(wl.jobs) == 400
    assert all(1 <= j.res <= 32 for j in wl.jobs)
    for j in wl.jobs:
        runtime = wl.profiles[j.profile]["delay"]
        assert 60 <= runtime <= 7200
        assert runtime <= j.walltime <= 3 * runtime + 60
        assert j.walltime % 60 == 0
        assert wl.profiles[j.profile].get("ret", 0) == 0
    work = sum(j.res * wl.profiles[j.profile]["delay"] for j in wl.jobs)
    load = work / (32 * max(j.subtime for j in wl.jobs))
    assert 0.70 <= load <= 0.80


def test_mixed_uses_every_profile_type():
    wl = load_workload("mixed", "w0")
    types = {p["type"] for p in wl.profiles.values()}
    assert types == {"delay", "parallel", "parallel_homogeneous", "parallel_homogeneous_total", "composed"}
    assert wl.profiles["pipeline"]["repeat"] == 2
    by_local = {j.local_id: j for j in wl.jobs}
    assert by_local["ptask"].json["tags"] == ["mpi", "small"]
    assert by_local["sleep"].walltime == -1
    assert by_local["ptask"].walltime == 100


# --- job fields ---------------------------------------------------------------------------


def test_id_rewriting_and_extra_fields_kept(tmp_path):
    path = write(tmp_path, workload([
        job(id=7, user="alice", extra={"a": [1, 2]}),
        job(id="x", subtime=1.5, walltime=30),
    ], nb_res=4, comment="ignored"))
    wl = load_workload(path, "w1")
    assert wl.nb_res == 4
    first, second = wl.jobs
    assert (first.id, first.local_id, first.workload) == ("w1!7", "7", "w1")
    assert first.json == {"id": "w1!7", "subtime": 0, "res": 1, "profile": "p",
                          "user": "alice", "extra": {"a": [1, 2]}}
    assert first.walltime == -1
    assert second.id == "w1!x" and second.subtime == 1.5 and second.walltime == 30
    assert wl.profiles == {"p": DELAY}


def test_walltime_minus_one_means_none(tmp_path):
    wl = load_workload(write(tmp_path, workload([job(walltime=-1)])), "w0")
    assert wl.jobs[0].walltime == -1


def test_sort_order_compares_ids_as_strings(tmp_path):
    path = write(tmp_path, workload([
        job(id=2, subtime=5), job(id=10, subtime=5), job(id=3, subtime=1), job(id=1, subtime=5),
    ]))
    wl = load_workload(path, "w0")
    assert [j.id for j in wl.jobs] == ["w0!3", "w0!1", "w0!10", "w0!2"]


def test_res_zero_allowed_and_nb_res_optional(tmp_path):
    wl = load_workload(write(tmp_path, workload([job(res=0)])), "w0")
    assert wl.jobs[0].res == 0 and wl.nb_res is None


def test_parallel_res_matches_cpu_length(tmp_path):
    profiles = {"p": {"type": "parallel", "cpu": [1, 2], "com": [0, 1, 1, 0]},
                "c": {"type": "composed", "seq": ["d", "p"]}, "d": DELAY}
    wl = load_workload(write(tmp_path, workload([job(res=2), job(id=2, res=2, profile="c")], profiles)), "w0")
    assert len(wl.jobs) == 2


# --- invalid files: each error names the file, the place and the field ---------------------


def test_malformed_json(tmp_path):
    path = write(tmp_path, '{"jobs": [], "profiles": {},}')
    expect_error(path, "malformed JSON", "line 1")


@pytest.mark.parametrize("doc, parts", [
    ([], ["top level", "not an object"]),
    ({"profiles": {}}, ["top level", "'jobs'", "missing"]),
    ({"jobs": [], }, ["top level", "'profiles'", "missing"]),
    ({"jobs": {}, "profiles": {}}, ["top level", "'jobs'", "array"]),
    ({"jobs": [], "profiles": []}, ["top level", "'profiles'", "object"]),
    ({"jobs": [], "profiles": {}, "nb_res": 0}, ["field 'nb_res'", "integer >= 1"]),
    ({"jobs": [], "profiles": {}, "nb_res": 2.5}, ["field 'nb_res'"]),
    ({"jobs": [], "profiles": {}, "nb_res": True}, ["field 'nb_res'"]),
])
def test_bad_top_level(tmp_path, doc, parts):
    expect_error(write(tmp_path, doc), *parts)


@pytest.mark.parametrize("bad_job, parts", [
    ("nope", ["jobs[0]", "not an object"]),
    (job(id=...), ["jobs[0]", "field 'id'", "missing"]),
    (job(id=True), ["jobs[0]", "field 'id'", "an integer or a non-empty string"]),
    (job(id=1.5), ["jobs[0]", "field 'id'"]),
    (job(id=""), ["jobs[0]", "field 'id'"]),
    (job(id="a!b"), ["jobs[0]", "field 'id'", "'!'"]),
    (job(id=None), ["jobs[0]", "field 'id'"]),
    (job(subtime=...), ["jobs[0] (id '1')", "field 'subtime'", "missing"]),
    (job(subtime=-1), ["jobs[0] (id '1')", "field 'subtime'", "number >= 0"]),
    (job(subtime="0"), ["jobs[0] (id '1')", "field 'subtime'"]),
    (job(subtime=False), ["jobs[0] (id '1')", "field 'subtime'"]),
    (job(res=...), ["jobs[0] (id '1')", "field 'res'", "missing"]),
    (job(res=-1), ["jobs[0] (id '1')", "field 'res'", "res must be an integer >= 0"]),
    (job(res=1.5), ["jobs[0] (id '1')", "field 'res'", "res must be an integer >= 0"]),
    (job(res=True), ["jobs[0] (id '1')", "field 'res'"]),
    (job(profile=...), ["jobs[0] (id '1')", "field 'profile'", "missing"]),
    (job(profile="nope"), ["jobs[0] (id '1')", "field 'profile'", "'nope'", "does not exist"]),
    (job(profile=3), ["jobs[0] (id '1')", "field 'profile'"]),
    (job(walltime=0), ["jobs[0] (id '1')", "field 'walltime'", "> 0"]),
    (job(walltime=-5), ["jobs[0] (id '1')", "field 'walltime'"]),
    (job(walltime="10"), ["jobs[0] (id '1')", "field 'walltime'"]),
    (job(walltime=True), ["jobs[0] (id '1')", "field 'walltime'"]),
])
def test_bad_job(tmp_path, bad_job, parts):
    expect_error(write(tmp_path, workload([bad_job])), *parts)


def test_bad_job_position_reported(tmp_path):
    path = write(tmp_path, workload([job(id=1), job(id=2), job(id=3), job(id=7, res=-2)]))
    expect_error(path, "jobs[3] (id '7'): field 'res'", "res must be an integer >= 0")


def test_duplicate_ids_name_both_positions(tmp_path):
    path = write(tmp_path, workload([job(id=7), job(id=8), job(id="7")]))
    expect_error(path, "jobs[2] (id '7'): field 'id'", "duplicate", "jobs[0]")


def test_res_differs_from_parallel_executors(tmp_path):
    profiles = {"p": {"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0, 0]}}
    path = write(tmp_path, workload([job(res=3)], profiles))
    expect_error(path, "jobs[0] (id '1'): field 'res'", "needs exactly 2", "set res to 2")


def test_res_differs_from_composed_executors(tmp_path):
    profiles = {"p": {"type": "parallel", "cpu": [1, 2, 3], "com": [0] * 9},
                "c": {"type": "composed", "seq": ["p"], "repeat": 3}}
    path = write(tmp_path, workload([job(res=2, profile="c")], profiles))
    expect_error(path, "field 'res'", "profile 'c'", "3")


# --- profiles -----------------------------------------------------------------------------

BAD_PROFILES = [
    ("nope", ["profile 'q'", "not an object"]),
    ({"delay": 1}, ["profile 'q'", "field 'type'", "missing"]),
    ({"type": 3}, ["profile 'q'", "field 'type'", "delay"]),
    ({"type": "sleep"}, ["profile 'q'", "field 'type'", "unknown profile type", "parallel_homogeneous_total"]),
    ({"type": "delay"}, ["profile 'q'", "field 'delay'", "missing"]),
    ({"type": "delay", "delay": -1}, ["profile 'q'", "field 'delay'", ">= 0"]),
    ({"type": "delay", "delay": "5"}, ["profile 'q'", "field 'delay'"]),
    ({"type": "delay", "delay": True}, ["profile 'q'", "field 'delay'"]),
    ({"type": "delay", "delay": 1, "ret": "1"}, ["profile 'q'", "field 'ret'", "integer"]),
    ({"type": "delay", "delay": 1, "ret": 1.5}, ["profile 'q'", "field 'ret'"]),
    ({"type": "delay", "delay": 1, "ret": False}, ["profile 'q'", "field 'ret'"]),
    ({"type": "parallel", "com": []}, ["profile 'q'", "field 'cpu'", "missing"]),
    ({"type": "parallel", "cpu": [], "com": []}, ["profile 'q'", "field 'cpu'", "non-empty"]),
    ({"type": "parallel", "cpu": 5, "com": [0]}, ["profile 'q'", "field 'cpu'"]),
    ({"type": "parallel", "cpu": [1, -1], "com": [0] * 4}, ["profile 'q'", "field 'cpu'", "element 1"]),
    ({"type": "parallel", "cpu": [1, True], "com": [0] * 4}, ["profile 'q'", "field 'cpu'", "element 1"]),
    ({"type": "parallel", "cpu": [1, 2]}, ["profile 'q'", "field 'com'", "missing"]),
    ({"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0]}, ["profile 'q'", "field 'com'", "2*2 = 4"]),
    ({"type": "parallel", "cpu": [1, 2], "com": 0}, ["profile 'q'", "field 'com'"]),
    ({"type": "parallel", "cpu": [1, 2], "com": [0, 0, -3, 0]}, ["profile 'q'", "field 'com'", "element 2"]),
    ({"type": "parallel_homogeneous", "com": 1}, ["profile 'q'", "field 'cpu'", "missing"]),
    ({"type": "parallel_homogeneous", "cpu": 1}, ["profile 'q'", "field 'com'", "missing"]),
    ({"type": "parallel_homogeneous", "cpu": -1, "com": 1}, ["profile 'q'", "field 'cpu'"]),
    ({"type": "parallel_homogeneous", "cpu": 1, "com": [1]}, ["profile 'q'", "field 'com'"]),
    ({"type": "parallel_homogeneous_total", "cpu": 1, "com": -2}, ["profile 'q'", "field 'com'"]),
    ({"type": "parallel_homogeneous_total", "cpu": False, "com": 1}, ["profile 'q'", "field 'cpu'"]),
    ({"type": "composed"}, ["profile 'q'", "field 'seq'", "missing"]),
    ({"type": "composed", "seq": []}, ["profile 'q'", "field 'seq'", "non-empty"]),
    ({"type": "composed", "seq": "p"}, ["profile 'q'", "field 'seq'"]),
    ({"type": "composed", "seq": ["p", 3]}, ["profile 'q'", "field 'seq'", "element 1"]),
    ({"type": "composed", "seq": ["p"], "repeat": 0}, ["profile 'q'", "field 'repeat'", ">= 1"]),
    ({"type": "composed", "seq": ["p"], "repeat": 1.5}, ["profile 'q'", "field 'repeat'"]),
    ({"type": "composed", "seq": ["p"], "repeat": True}, ["profile 'q'", "field 'repeat'"]),
    ({"type": "composed", "seq": ["missing"]}, ["profile 'q'", "field 'seq'", "'missing'", "does not exist"]),
]


@pytest.mark.parametrize("bad, parts", BAD_PROFILES)
def test_bad_profile_in_file(tmp_path, bad, parts):
    expect_error(write(tmp_path, workload([job()], {"p": DELAY, "q": bad})), *parts)


@pytest.mark.parametrize("ptype", ["send", "recv"])
def test_out_of_scope_batsim_types(tmp_path, ptype):
    path = write(tmp_path, workload([job()], {"p": DELAY, "q": {"type": ptype}}))
    expect_error(path, "profile 'q'", "field 'type'",
                 f"profile type {ptype} is not supported by joulesim yet", "supported: delay")


def test_composed_cycle_is_named(tmp_path):
    profiles = {"p": DELAY,
                "a": {"type": "composed", "seq": ["p", "b"]},
                "b": {"type": "composed", "seq": ["c"]},
                "c": {"type": "composed", "seq": ["a"]}}
    message = expect_error(write(tmp_path, workload([job()], profiles)), "cycle")
    assert "a -> b -> c -> a" in message


def test_composed_self_cycle(tmp_path):
    profiles = {"p": DELAY, "s": {"type": "composed", "seq": ["s"]}}
    expect_error(write(tmp_path, workload([job()], profiles)), "profile 's'", "s -> s")


def test_composed_leaves_disagree(tmp_path):
    profiles = {"p": DELAY,
                "two": {"type": "parallel", "cpu": [1, 1], "com": [0] * 4},
                "three": {"type": "parallel", "cpu": [1, 1, 1], "com": [0] * 9},
                "c": {"type": "composed", "seq": ["two", "three"]}}
    expect_error(write(tmp_path, workload([job()], profiles)), "profile 'c'", "different numbers")


# --- profile helpers used directly (REGISTER_PROFILE) --------------------------------------


def test_validate_profile_keeps_content():
    profile = {"type": "composed", "seq": ["a"], "note": "kept"}
    assert validate_profile("c", profile, "profile 'c'", "msg") is profile
    assert profile == {"type": "composed", "seq": ["a"], "note": "kept"}
    with pytest.raises(InputError) as info:
        validate_profile("c", {"type": "delay", "delay": -1}, "REGISTER_PROFILE 'c'", "decider")
    assert str(info.value).startswith("decider: REGISTER_PROFILE 'c': field 'delay'")


def test_leaf_executor_count():
    profiles = {
        "d": DELAY,
        "h": {"type": "parallel_homogeneous", "cpu": 1, "com": 0},
        "p": {"type": "parallel", "cpu": [1, 2, 3], "com": [0] * 9},
        "c": {"type": "composed", "seq": ["d", "p", "h"]},
        "cc": {"type": "composed", "seq": ["c", "d"], "repeat": 2},
        "free": {"type": "composed", "seq": ["d", "h"]},
    }
    check_profile_references(profiles, "f")
    assert leaf_executor_count(profiles, "d") is None
    assert leaf_executor_count(profiles, "h") is None
    assert leaf_executor_count(profiles, "p") == 3
    assert leaf_executor_count(profiles, "c") == 3
    assert leaf_executor_count(profiles, "cc") == 3
    assert leaf_executor_count(profiles, "free") is None
