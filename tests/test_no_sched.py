"""Batsim's --no-sched ("batexec", job_submitter.cpp: batexec_job_launcher_process): no decider;
every job of every workload starts at t=0 on hosts 0..res-1, whatever its submission time, so
jobs overlap on the first hosts and share them. (Batsim's --help says the jobs run "one after
the other"; its code starts them all at once, which is what joulesim does.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

import joulesim
from joulesim.protocol.errors import JoulesimError

from conftest import jobs_by_id, write_workload
from test_compute_sharing import one_host_platform

PROFILES = {"c": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}, "d": {"type": "delay", "delay": 5}}
JOBS = [{"id": 1, "subtime": 0, "res": 1, "profile": "c"}, {"id": 2, "subtime": 50, "res": 1, "profile": "c"},
        {"id": 3, "subtime": 70, "res": 2, "profile": "d"}]


def test_every_job_starts_at_zero_on_the_first_hosts_and_shares_them(tmp_path):
    result = joulesim.simulate(one_host_platform(tmp_path, True), write_workload(tmp_path, JOBS, PROFILES), no_sched=True)
    jobs = result.jobs.set_index("job_id")
    assert list(jobs["starting_time"]) == [0, 0, 0]
    # Jobs 1 and 2 compute 1e9 flop each on h0 at once: 0.5 Gflop/s each, 2 s; job 3 waits 5 s on h0-h1.
    assert jobs.loc[1, "finish_time"] == pytest.approx(2) and jobs.loc[2, "finish_time"] == pytest.approx(2)
    assert jobs.loc[3, "finish_time"] == pytest.approx(5) and jobs.loc[3, "allocated_resources"] == "0-1"
    assert jobs.loc[2, "waiting_time"] == pytest.approx(-50)  # started before its submission time
    assert result.decider_calls == 0


@pytest.mark.parametrize("extra, message", [
    ({"decider": "easy"}, "no_sched=True runs without a decider"),
    ({"enable_dynamic_jobs": True}, "drop --enable-dynamic-jobs"),
])
def test_no_sched_refuses_what_needs_a_decider(tmp_path, extra, message):
    with pytest.raises(JoulesimError, match=message):
        joulesim.simulate(one_host_platform(tmp_path, True), write_workload(tmp_path, JOBS, PROFILES), no_sched=True, **extra)


def test_a_job_larger_than_the_platform_is_refused(tmp_path):
    jobs = [{"id": 1, "subtime": 0, "res": 3, "profile": "d"}]
    with pytest.raises(JoulesimError, match="hosts 0-2, but the platform has 2 compute hosts"):
        joulesim.simulate(one_host_platform(tmp_path, True), write_workload(tmp_path, jobs, PROFILES), no_sched=True)


def test_simulate_no_sched_needs_no_decider_process(tmp_path):
    """`joulesim simulate --no-sched` connects to no endpoint (none serves here) and finishes."""
    done = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "simulate", "--no-sched", "-p",
                           one_host_platform(tmp_path, True), "-w", write_workload(tmp_path, JOBS, PROFILES),
                           "-e", str(tmp_path / "out"), "--timeout", "5"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert jobs_by_id(str(tmp_path / "out"))["3"]["finish_time"] == "5.000000"


def test_storages_without_a_decider_are_guessed_or_refused(tmp_path):
    from test_storage_models import write_storage_platform

    io = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "io"}], io)
    one = joulesim.simulate(write_storage_platform(tmp_path, storages=1), workload, no_sched=True)
    assert one.jobs.iloc[0]["finish_time"] == pytest.approx(10, abs=1e-5)  # the only storage, 100 MB/s
    with pytest.raises(JoulesimError, match="platform has 2 storage hosts.*no decider maps storages"):
        joulesim.simulate(write_storage_platform(tmp_path, storages=2), workload, no_sched=True)
