"""Batsim's usage_trace profile: per-rank traces of `RANK m_usage USAGE FLOPS` lines, each line
one parallel task of max(round(usage x cores), 1) executors of FLOPS on the rank's host.

Reference (batsim-job-models.md, measured with Batsim 4.2.1): `0 m_usage 0.5 1e9` lasts 1 s on
1 Gflop/s cores, whatever the usage. Values by hand; energy from SimGrid's plugin: idle +
(max - idle) x busy cores / cores.
"""

from __future__ import annotations

import pytest
from scripted_decider import execute_then_kill

import joulesim
from joulesim.deciders import load_decider
from joulesim.protocol.errors import JoulesimError

from conftest import jobs_by_id, run_in_process, write_workload


def platform(tmp_path, cores: int = 4, hosts: int = 2) -> str:
    path = tmp_path / "usage_platform.xml"
    body = "".join(f'<host id="h{i}" speed="1Gf" core="{cores}"><prop id="wattage_per_state" value="100:200"/></host>'
                   for i in range(hosts))
    path.write_text(f'<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">{body}'
                    '<host id="m" speed="1Gf"><prop id="role" value="master"/></host></zone></platform>')
    return str(path)


def traces(tmp_path, ranks: list[str], folder: str = "traces") -> str:
    """Write one file per rank and the listing; returns the `trace` field (relative)."""
    directory = tmp_path / folder
    directory.mkdir(exist_ok=True)
    for rank, text in enumerate(ranks):
        (directory / f"rank{rank}.txt").write_text(text)
    (directory / "listing.txt").write_text("".join(f"rank{rank}.txt\n" for rank in range(len(ranks))))
    return f"{folder}/listing.txt"


def run(tmp_path, trace_field, res=1, walltime=None, decider=None, **config):
    job = {"id": 1, "subtime": 0, "res": res, "profile": "u"}
    if walltime is not None:
        job["walltime"] = walltime
    workload = write_workload(tmp_path, [job], {"u": {"type": "usage_trace", "trace": trace_field}})
    prefix = str(tmp_path / "out")
    run_in_process(decider or load_decider("fcfs"), platform(tmp_path), [workload], prefix, energy=True, **config)
    return jobs_by_id(prefix)["1"]


def test_lines_last_flops_over_one_cores_speed_and_load_usage_of_the_cores(tmp_path):
    """0.5 usage of 4 cores = 2 busy cores for 1 s (150 W), then all 4 for 2 s (200 W), then
    0.1 -> round(0.4) = 0 -> at least 1 core for 1 s (125 W)."""
    field = traces(tmp_path, ["0 m_usage 0.5 1e9\n0 m_usage 1 2e9\n# a comment\n\n0 m_usage 0.1 1e9\n"])
    job = run(tmp_path, field)
    assert float(job["execution_time"]) == pytest.approx(4.0, rel=1e-12)
    assert float(job["consumed_energy"]) == pytest.approx(150 + 2 * 200 + 125, rel=1e-9)


def test_half_cores_round_away_from_zero_as_c_does(tmp_path):
    """0.625 x 4 cores = 2.5 -> 3 busy cores (C's round; Python's would give 2): 175 W for 1 s."""
    job = run(tmp_path, traces(tmp_path, ["0 m_usage 0.625 1e9\n"]))
    assert float(job["consumed_energy"]) == pytest.approx(175, rel=1e-9)


def test_ranks_run_in_parallel_round_robin_on_the_jobs_hosts(tmp_path):
    """Three ranks on a 2-host job: ranks 0 and 2 share h0 (2 + 2 executors on 4 cores: no
    slowdown), rank 1 on h1. The job ends with its longest rank (3 s)."""
    field = traces(tmp_path, ["0 m_usage 0.5 1e9\n", "1 m_usage 0.25 3e9\n", "2 m_usage 0.5 2e9\n"])
    job = run(tmp_path, field, res=2)
    assert float(job["execution_time"]) == pytest.approx(3.0, rel=1e-12)
    # h0: 4 busy cores for 1 s (200 W), then 2 for 1 s (150 W), then idle for 1 s (100 W);
    # h1: 1 core for 3 s (125 W).
    assert float(job["consumed_energy"]) == pytest.approx(200 + 150 + 100 + 3 * 125, rel=1e-9)


def test_more_busy_cores_than_the_host_has_slow_every_line_down(tmp_path):
    """Two ranks of full usage on one 4-core host: 8 executors share 4 cores: 2 s, not 1."""
    field = traces(tmp_path, ["0 m_usage 1 1e9\n", "1 m_usage 1 1e9\n"])
    assert float(run(tmp_path, field)["execution_time"]) == pytest.approx(2.0, rel=1e-12)


def test_a_killed_job_reports_the_share_of_its_lines_done(tmp_path):
    field = traces(tmp_path, ["0 m_usage 1 1e9\n0 m_usage 1 1e9\n0 m_usage 1 1e9\n0 m_usage 1 1e9\n"])
    decider = execute_then_kill("0", 2.5)
    job = run(tmp_path, field, decider=decider)
    assert job["final_state"] == "COMPLETED_KILLED"
    progress = decider.events_of("JOB_KILLED")[0][1]["data"]["job_progress"]["w0!1"]
    assert progress == {"profile_name": "u", "progress": pytest.approx(2.5 / 4, rel=1e-12)}


def test_walltime_stops_a_usage_trace_job(tmp_path):
    field = traces(tmp_path, ["0 m_usage 1 5e9\n"])
    job = run(tmp_path, field, walltime=2)
    assert job["final_state"] == "COMPLETED_WALLTIME_REACHED" and float(job["execution_time"]) == 2


def test_a_last_line_without_newline_is_dropped_as_simgrid_does(tmp_path):
    field = traces(tmp_path, ["0 m_usage 1 1e9\n0 m_usage 1 5e9"])
    assert float(run(tmp_path, field)["execution_time"]) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("rank_text, message", [
    ("0 m_usage 1.5 1e9\n", "USAGE 1.5 is more than 1"),
    ("0 m_usage -0.1 1e9\n", "USAGE '-0.1' is not a finite number >= 0"),
    ("0 m_usage 0.5 nan\n", "FLOPS 'nan' is not a finite number >= 0"),
    ("0 m_usage 0.5\n", "too few fields"),
    ("0 compute 1e9 1\n", "unknown action 'compute'"),
    ("7 m_usage 0.5 1e9\n", "the rank field '7' is not a rank of this job"),
])
def test_bad_trace_lines_name_the_file_and_line(tmp_path, rank_text, message):
    field = traces(tmp_path, [rank_text])
    with pytest.raises(JoulesimError, match=message) as raised:
        run(tmp_path, field)
    assert "rank0.txt" in str(raised.value) and "line 1" in str(raised.value)


def test_missing_trace_files_are_named_before_the_run(tmp_path):
    with pytest.raises(JoulesimError, match="listing.txt.*no such file"):
        run(tmp_path, "nowhere/listing.txt")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "listing.txt").write_text("rank0.txt\nmissing.txt\n")
    (tmp_path / "t" / "rank0.txt").write_text("0 m_usage 1 1e9\n")
    with pytest.raises(JoulesimError, match="missing.txt.*the trace of rank 1.*no such file"):
        run(tmp_path, "t/listing.txt")


@pytest.mark.parametrize("profile, message", [
    ({"type": "usage_trace"}, "field 'trace': is missing"),
    ({"type": "usage_trace", "trace": 3}, "field 'trace': invalid value"),
])
def test_bad_usage_trace_profiles(tmp_path, profile, message):
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "u"}], {"u": profile})
    with pytest.raises(JoulesimError, match=message):
        joulesim.simulate(platform(tmp_path), workload, "fcfs")


def test_usage_trace_inside_a_composed_profile_is_refused_with_the_reason(tmp_path):
    field = traces(tmp_path, ["0 m_usage 1 1e9\n"])
    profiles = {"u": {"type": "usage_trace", "trace": field}, "c": {"type": "composed", "seq": ["u"]}}
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "c"}], profiles)
    with pytest.raises(JoulesimError, match="trace profiles as a job's own profile only"):
        joulesim.simulate(platform(tmp_path), workload, "fcfs")
