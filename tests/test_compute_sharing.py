"""Batsim's --enable-compute-sharing (several jobs on one host, sharing its CPU under the
fair-bottleneck rule) and --disable-storage-sharing (a storage host serves one job at a time).

Reference case (batsim-job-models.md, measured with Batsim 4.2.1): on one 1 Gflop/s host, A
(1e10 flop) alone from t=0, B (3e9 flop) joins at t=5: both get 0.5 Gflop/s until B ends at
t=11 (6 s), then A alone: A ends at t=13.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from scripted_decider import ScriptedDecider, submitted

import joulesim
from joulesim.protocol.errors import JoulesimError

from conftest import jobs_by_id, read_csv, run_in_process, write_workload
from test_storage_models import write_storage_platform

JOBS = [{"id": "A", "subtime": 0, "res": 1, "profile": "a"}, {"id": "B", "subtime": 5, "res": 1, "profile": "b"}]
PROFILES = {"a": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0},
            "b": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 0}}


def one_host_platform(tmp_path, network: bool) -> str:
    """h0 (1 Gflop/s, 100 W idle, 200 W full) and a master; with or without links."""
    links = ('<router id="sw"/><link id="l0" bandwidth="1GBps" latency="0"/><link id="lm" bandwidth="1GBps" latency="0"/>'
             '<route src="h0" dst="sw"><link_ctn id="l0"/></route><route src="m" dst="sw"><link_ctn id="lm"/></route>'
             if network else "")
    path = tmp_path / f"one_host_{network}.xml"
    path.write_text('<?xml version="1.0"?><platform version="4.1">'
                    f'<zone id="z" routing="{"Floyd" if network else "Full"}">'
                    '<host id="h0" speed="1Gf"><prop id="wattage_per_state" value="100:200"/></host>'
                    '<host id="h1" speed="1Gf"><prop id="wattage_per_state" value="100:200"/></host>'
                    f'<host id="m" speed="1Gf"><prop id="role" value="master"/></host>{links}</zone></platform>')
    return str(path)


def everything_on_host_0():
    def script(decider, message):
        for job in submitted(message):
            decider.execute_job(job["job_id"], "0")
    return ScriptedDecider(script)


@pytest.mark.parametrize("network", [True, False])
def test_two_jobs_share_one_host(tmp_path, network):
    decider = everything_on_host_0()
    prefix = str(tmp_path / "out")
    run_in_process(decider, one_host_platform(tmp_path, network), [write_workload(tmp_path, JOBS, PROFILES)], prefix,
                   energy=True, compute_sharing=True)
    jobs = jobs_by_id(prefix)
    assert float(jobs["B"]["finish_time"]) == pytest.approx(11, rel=1e-12)
    assert float(jobs["A"]["finish_time"]) == pytest.approx(13, rel=1e-12)
    # A: 200 W for 5 s, then half the static and half the dynamic power for 6 s, then 200 W for
    # 2 s; B: 100 W for 6 s. Together, what h0 drew while busy: 13 s x 200 W.
    assert float(jobs["A"]["consumed_energy"]) == pytest.approx(5 * 200 + 6 * 100 + 2 * 200, rel=1e-9)
    assert float(jobs["B"]["consumed_energy"]) == pytest.approx(6 * 100, rel=1e-9)
    begins = decider.events_of("SIMULATION_BEGINS")[0][1]["data"]
    assert begins["allow_compute_sharing"] is True and begins["allow_storage_sharing"] is True
    # h0 computes from 0 to 13 without a break; h1 stays idle.
    states = read_csv(f"{prefix}_machine_states.csv")
    computing = [(float(row["time"]), int(row["nb_computing"])) for row in states]
    assert computing[0] == (0, 1) and computing[-1] == (13, 0)
    assert all(n == 1 for t, n in computing if 0 <= t < 13)


def test_without_the_flag_a_busy_host_is_refused(tmp_path):
    with pytest.raises(JoulesimError, match="host 0 is busy running job w0!A.*--enable-compute-sharing"):
        run_in_process(everything_on_host_0(), one_host_platform(tmp_path, True),
                       [write_workload(tmp_path, JOBS, PROFILES)], str(tmp_path / "out"))


def test_delay_jobs_share_a_host_without_slowing_down(tmp_path):
    jobs = [{"id": i, "subtime": 0, "res": 1, "profile": "d"} for i in range(3)]
    prefix = str(tmp_path / "out")
    run_in_process(everything_on_host_0(), one_host_platform(tmp_path, False),
                   [write_workload(tmp_path, jobs, {"d": {"type": "delay", "delay": 7}})], prefix, compute_sharing=True)
    assert {row["finish_time"] for row in jobs_by_id(prefix).values()} == {"7.000000"}


# ---------------------------------------------------------------- storage sharing
def pfs_pair(tmp_path, storage_sharing: bool):
    """Two pfs jobs on io0 (resource 2), on hosts 0 and 1, both at t=0."""
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    jobs = [{"id": 1, "subtime": 0, "res": 1, "profile": "io"}, {"id": 2, "subtime": 0, "res": 1, "profile": "io"}]

    def script(decider, message):
        for i, job in enumerate(submitted(message)):
            decider.execute_job(job["job_id"], str(i), storage_mapping={"pfs": 2})
    prefix = str(tmp_path / "out")
    run_in_process(ScriptedDecider(script), write_storage_platform(tmp_path), [write_workload(tmp_path, jobs, profiles)],
                   prefix, storage_sharing=storage_sharing)
    return jobs_by_id(prefix)


def test_storage_sharing_is_allowed_by_default(tmp_path):
    jobs = pfs_pair(tmp_path, True)
    assert float(jobs["1"]["finish_time"]) == pytest.approx(20, abs=1e-5)  # 50 MB/s each


def test_disable_storage_sharing_refuses_a_second_job_on_a_busy_storage(tmp_path):
    with pytest.raises(JoulesimError, match="storage 'pfs' is resource 2, which job w0!1 is using.*--disable-storage-sharing"):
        pfs_pair(tmp_path, False)


# ---------------------------------------------------------------- command line and API
SHARER = textwrap.dedent('''
    from joulesim.protocol.decider import Decider

    class Sharer(Decider):
        """Every job on host 0 at once."""

        def on_job_submitted(self, job):
            self.execute_job(job.id, "0")
''')


def test_enable_compute_sharing_on_the_command_line(tmp_path):
    (tmp_path / "sharer.py").write_text(SHARER)
    workload = write_workload(tmp_path, JOBS, PROFILES)
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def run(*flags):
        return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-d", "sharer:Sharer", "-p",
                               one_host_platform(tmp_path, False), "-w", workload, "-e", str(tmp_path / "cli"), *flags],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    done = run("--enable-compute-sharing")
    assert done.returncode == 0, done.stderr
    assert jobs_by_id(str(tmp_path / "cli"))["A"]["finish_time"] == "13.000000"
    refused = run()
    assert refused.returncode != 0 and "host 0 is busy running job w0!A" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_enable_compute_sharing_in_the_python_api(tmp_path):
    (tmp_path / "sharer.py").write_text(SHARER)
    sys.path.insert(0, str(tmp_path))
    try:
        from sharer import Sharer
        result = joulesim.simulate(one_host_platform(tmp_path, True), write_workload(tmp_path, JOBS, PROFILES), Sharer,
                                   enable_compute_sharing=True)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("sharer", None)
    finish = dict(zip(result.jobs["job_id"], result.jobs["finish_time"]))
    assert finish == {"A": pytest.approx(13), "B": pytest.approx(11)}
