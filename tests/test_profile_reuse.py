"""Batsim's --enable-profile-reuse. Without it, Batsim 4.2.1 deletes a job once the message
reporting its end is sent and, with it, its profile (server.cpp, jobs_to_be_deleted;
jobs.cpp, Jobs::delete_job): a dynamic job registered afterwards cannot name that profile.
With it, profiles stay. The flag needs --enable-dynamic-jobs (batsim.cpp refuses it alone)."""

from __future__ import annotations

import pytest
from scripted_decider import ScriptedDecider, submitted

import joulesim
from joulesim.protocol.errors import JoulesimError

from conftest import jobs_by_id, run_in_process, write_platform, write_workload

PROFILES = {"p": {"type": "delay", "delay": 10}}


def reuse_after_end(register_again: bool = False):
    """Runs w0!1; when it ends, registers w0!2 with the same profile p (again, if asked), then
    closes registration."""
    def script(decider, message):
        for job in submitted(message):
            decider.execute_job(job["job_id"], "0")
        if any(e["type"] == "JOB_COMPLETED" and e["data"]["job_id"] == "w0!1" for e in message["events"]):
            if register_again:
                decider.register_profile("w0", "p", {"type": "delay", "delay": 3})
            decider.register_job("w0!2", {"res": 1, "profile": "p"})
            decider.notify_registration_finished()
    return ScriptedDecider(script)


def run(tmp_path, decider, **config):
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}], PROFILES)
    prefix = str(tmp_path / "out")
    run_in_process(decider, write_platform(tmp_path, 2), [workload], prefix, dynamic_jobs=True,
                   acknowledge_dynamic_jobs=True, **config)
    return jobs_by_id(prefix)


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_without_reuse_the_profile_of_an_ended_job_is_gone(tmp_path, grouping):
    with pytest.raises(JoulesimError, match="profile 'p' of workload 'w0' was removed when a job of it ended.*--enable-profile-reuse"):
        run(tmp_path, reuse_after_end(), event_grouping=grouping)


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_with_reuse_a_dynamic_job_names_it(tmp_path, grouping):
    decider = reuse_after_end()
    jobs = run(tmp_path, decider, profile_reuse=True, event_grouping=grouping)
    assert jobs["2"]["finish_time"] == "20.000000"
    assert decider.events_of("SIMULATION_BEGINS")[0][1]["data"]["config"]["profile-reuse-enabled"] is True


def test_a_removed_profile_may_be_registered_again(tmp_path):
    jobs = run(tmp_path, reuse_after_end(register_again=True))
    assert jobs["2"]["finish_time"] == "13.000000"  # the new p: 3 s


def test_profile_reuse_needs_dynamic_jobs(tmp_path):
    with pytest.raises(JoulesimError, match="--enable-profile-reuse .* needs --enable-dynamic-jobs"):
        joulesim.simulate("small4", "tiny", "fcfs", enable_profile_reuse=True)
