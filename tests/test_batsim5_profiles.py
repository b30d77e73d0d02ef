"""Batsim 5's profiles (its workload files' types, and batprotocol's RegisterProfileEvent) as the
Batsim 4 profiles they equal (protocol/batprotocol/profile_forms.py, batsim4_bridge.batsim4_profile):
each Batsim 5 form gives the schedule of its Batsim 4 form, a storage profile that spreads its
bytes shares them between its hosts as Batsim 5.0.0-rc2 does (task_execution.cpp), and a
strategy rc2 does not know is refused naming the field."""

from __future__ import annotations

import json

import pytest

import joulesim
from joulesim.protocol.batprotocol.batsim4_bridge import batsim4_profile
from joulesim.protocol.errors import DecisionError, JoulesimError

from conftest import jobs_by_id, run_in_process, write_workload
from test_storage_models import ROUTE_LATENCY, execute_all, finish, write_storage_platform


@pytest.mark.parametrize("batsim5, batsim4", [
    ({"type": "DelayProfile", "delay": 7}, {"type": "delay", "delay": 7}),
    ({"type": "ParallelTaskProfile", "cpu": [2e9, 1e9]}, {"type": "parallel", "cpu": [2e9, 1e9], "com": [0, 0, 0, 0]}),
    ({"type": "ParallelTaskProfile", "cpu": [2e9, 1e9], "com": [0, 1e8, 0, 0]},
     {"type": "parallel", "cpu": [2e9, 1e9], "com": [0, 1e8, 0, 0]}),
    ({"type": "ParallelTaskHomogeneousProfile", "cpu": 1e9, "com": 1e8},
     {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e8}),
    ({"type": "ParallelTaskHomogeneousProfile", "cpu": 1e9, "com": 1e8, "generation_strategy": "DefinedAmountsSpreadUniformly"},
     {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 1e8}),
])
def test_a_batsim_5_workload_profile_runs_as_its_batsim_4_form(tmp_path, batsim5, batsim4):
    runs = {}
    for name, profile in (("five", batsim5), ("four", batsim4)):
        workload = tmp_path / f"{name}.json"
        workload.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 2, "profile": "p"}],
                                        "profiles": {"p": profile}}))
        joulesim.simulate("cluster32", str(workload), "fcfs", export=tmp_path / name / "out")
        runs[name] = (tmp_path / name / "out_jobs.csv").read_bytes()
    assert runs["five"] == runs["four"]


@pytest.mark.parametrize("strategy, seconds", [("DefinedAmountsUsedForEachValue", 30), (None, 30),
                                               ("DefinedAmountsSpreadUniformly", 15)])
def test_a_storage_profile_spreading_its_bytes_shares_them_between_its_hosts(tmp_path, strategy, seconds):
    """Two hosts, io0's 100 MB/s link: each host reading 1e9 B and writing 5e8 B moves 3e9 B (30 s);
    spread uniformly, the two share those amounts: 1.5e9 B (15 s)."""
    profile = {"type": "ParallelTaskOnStorageHomogeneousProfile", "bytes_to_read": 1e9, "bytes_to_write": 5e8,
               "storage": "nfs"}
    if strategy is not None:
        profile["generation_strategy"] = strategy
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "io"}], {"io": profile})
    run_in_process(execute_all({"nfs": 2}), write_storage_platform(tmp_path), [workload], str(tmp_path / "out"))
    assert finish(jobs_by_id(str(tmp_path / "out")), "1") == pytest.approx(seconds + ROUTE_LATENCY, abs=1e-6)


@pytest.mark.parametrize("kind", ["ParallelTaskHomogeneousProfile", "ParallelTaskOnStorageHomogeneousProfile"])
def test_a_strategy_batsim_5_does_not_know_is_refused_naming_the_field(tmp_path, kind):
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                              {"p": {"type": kind, "cpu": 1, "com": 0, "bytes_to_read": 1, "generation_strategy": "Evenly"}})
    with pytest.raises(JoulesimError, match="profile 'p': field 'generation_strategy': is 'Evenly' \\(give "
                                            "DefinedAmountsUsedForEachValue or DefinedAmountsSpreadUniformly\\)"):
        joulesim.simulate("cluster32", workload, "fcfs")


@pytest.mark.parametrize("profile_type, body, expected", [
    ("DelayProfile", {}, {"type": "delay", "delay": 0.0}),
    ("ParallelTaskProfile", {"computation_vector": [1e9, 2e9]},
     {"type": "parallel", "cpu": [1e9, 2e9], "com": [0, 0, 0, 0]}),
    ("ParallelTaskHomogeneousProfile", {"computation_amount": 1e9, "generation_strategy": "DefinedAmountsSpreadUniformly"},
     {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0.0}),
    ("SequentialCompositionProfile", {"profile_ids": ["w0!a", "w1!b"]}, {"type": "composed", "repeat": 1, "seq": ["a", "b"]}),
    ("ParallelTaskOnStorageHomogeneousProfile", {"storage_name": "nfs", "bytes_to_read": 1e9,
                                                 "generation_strategy": "DefinedAmountsSpreadUniformly"},
     {"type": "parallel_homogeneous_pfs", "storage": "nfs", "bytes_to_read": 1e9, "bytes_to_write": 0.0,
      "generation_strategy": "DefinedAmountsSpreadUniformly"}),
    ("ParallelTaskOnStorageHomogeneousProfile", {"storage_name": "nfs"},
     {"type": "parallel_homogeneous_pfs", "storage": "nfs", "bytes_to_read": 0.0, "bytes_to_write": 0.0}),
    ("ParallelTaskDataStagingBetweenStoragesProfile", {"emitter_storage_name": "a", "receiver_storage_name": "b"},
     {"type": "data_staging", "nb_bytes": 0.0, "from": "a", "to": "b"}),
    ("TraceReplayProfile", {"filename": "t.txt"}, {"type": "smpi", "trace": "t.txt"}),
    ("TraceReplayProfile", {"filename": "t.txt", "trace_type": "FractionalComputation"},
     {"type": "usage_trace", "trace": "t.txt"}),
])
def test_a_registered_profile_reads_as_the_same_profile_in_a_workload_file(profile_type, body, expected):
    """RegisterProfileEvent's body (fields the EDC left out at their defaults) as the Batsim 4
    profile the same profile of a Batsim 5 workload file becomes."""
    assert batsim4_profile(profile_type, body, "event 0") == expected


def test_a_registered_profile_with_an_unknown_strategy_is_refused_naming_the_event():
    with pytest.raises(DecisionError, match="event 0: generation_strategy is 'Evenly'"):
        batsim4_profile("ParallelTaskHomogeneousProfile", {"generation_strategy": "Evenly"}, "event 0")
