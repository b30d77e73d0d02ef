"""Parallel tasks (the runner's jobs) end when Batsim 4.2.1 ends them, with its event grouping.

Measured with a real Batsim 4.2.1 (built outside the repository) and joulesim's fcfs decider in
its own process, 2026-11-28; the figures below are Batsim's out_jobs.csv, as printed.

- ptask_L07's TCP-window bound: a task's rate is at most TCP-gamma / (2 x the largest latency x
  bytes of its flows) (L07Action::calculate_network_bound). On a Vivaldi zone, whose hosts have
  no links, it is the only limit on a transfer: without it a 2e8-byte job took 0.209 s, where
  Batsim takes 0.873 s.
- A job's end goes to the server from the job's actor on its first host: its message crosses the
  route to the master, whose latency delays the next decision (job 5 starts 50 us after job 4's
  end on the wan platform: its route to the master has a 50 us link).
"""

from __future__ import annotations

import json

import pytest

import joulesim
from joulesim.deciders import load_decider
from joulesim.protocol.decider import Decider

from conftest import read_csv

WAN = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="n0" speed="1Gf"/>
    <host id="n1" speed="1Gf"/>
    <host id="n2" speed="2Gf"/>
    <host id="master" speed="1Gf"/>
    <link id="l0" bandwidth="1GBps" latency="10ms"/>
    <link id="l1" bandwidth="125MBps" latency="3ms"/>
    <link id="l2" bandwidth="10GBps" latency="25ms" sharing_policy="FATPIPE"/>
    <link id="lm" bandwidth="1GBps" latency="50us"/>
    <route src="n0" dst="n1"><link_ctn id="l0"/></route>
    <route src="n1" dst="n2"><link_ctn id="l1"/><link_ctn id="l2"/></route>
    <route src="n0" dst="n2"><link_ctn id="l2"/></route>
    <route src="n0" dst="master"><link_ctn id="lm"/></route>
    <route src="n1" dst="master"><link_ctn id="lm"/></route>
    <route src="n2" dst="master"><link_ctn id="lm"/></route>
  </zone>
</platform>
"""
WAN_PROFILES = {"a": {"type": "parallel_homogeneous", "cpu": 1e8, "com": 1e8},
                "b": {"type": "parallel", "cpu": [1e8, 5e8, 2e8], "com": [0, 3e7, 1e8, 2e7, 0, 0, 4e6, 9e7, 0]},
                "c": {"type": "parallel", "cpu": [0, 0], "com": [0, 5e8, 0, 0]},
                "d": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 1e6}}
WAN_JOBS = [("a", 2, 0), ("b", 3, 9), ("c", 2, 18), ("d", 3, 27), ("a", 3, 36), ("b", 3, 36), ("a", 2, 45)]
# Batsim 4.2.1: (starting_time, execution_time, finish_time) of jobs 0-6
WAN_BATSIM = [("0.000000", "0.486837", "0.486837"), ("9.000000", "1.229630", "10.229630"),
              ("18.000000", "2.394186", "20.394186"), ("27.000000", "3.028000", "30.028000"),
              ("36.000000", "1.628000", "37.628000"), ("37.628050", "1.229630", "38.857680"),
              ("45.000000", "0.486837", "45.486837")]

VIVALDI_PROFILES = {"ph": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 5e7},
                    "ph2": {"type": "parallel_homogeneous", "cpu": 2e8, "com": 2e8},
                    "pt": {"type": "parallel", "cpu": [1e9, 5e8, 2e8], "com": [0, 3e7, 1e6, 2e7, 0, 0, 4e6, 9e6, 0]}}
VIVALDI_JOBS = [("ph", 2), ("ph2", 3), ("pt", 3), ("ph", 4), ("ph2", 2), ("pt", 3), ("ph", 1), ("ph2", 8)]
VIVALDI_BATSIM = [("0.000000", "1.005031", "1.005031"), ("7.000000", "0.873307", "7.873307"),
                  ("14.000000", "1.009062", "15.009062"), ("21.000000", "1.011500", "22.011500"),
                  ("28.000000", "0.484837", "28.484837"), ("35.000000", "1.009062", "36.009062"),
                  ("42.000000", "1.000000", "43.000000"), ("49.000000", "2.465223", "51.465223")]


def times(prefix) -> list[tuple[str, str, str]]:
    rows = sorted(read_csv(str(prefix) + "_jobs.csv"), key=lambda row: int(row["job_id"]))
    return [(row["starting_time"], row["execution_time"], row["finish_time"]) for row in rows]


def workload(tmp_path, profiles, jobs, nb_res) -> str:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": nb_res, "profiles": profiles, "jobs": [
        {"id": i, "subtime": subtime, "res": res, "walltime": 10000, "profile": profile}
        for i, (profile, res, subtime) in enumerate(jobs)]}))
    return str(path)


def test_a_wan_platform_s_tasks_end_as_batsim_s(tmp_path):
    platform = tmp_path / "wan.xml"
    platform.write_text(WAN)
    joulesim.simulate(str(platform), workload(tmp_path, WAN_PROFILES, WAN_JOBS, 3), "fcfs", master_host="master",
                      export=str(tmp_path / "out"))
    assert times(tmp_path / "out") == WAN_BATSIM


def test_a_vivaldi_zone_s_transfers_are_bound_by_the_tcp_window_as_in_batsim(tmp_path, shared_reference):
    platform = shared_reference / "batsim-energy-and-kills" / "inputs" / "vivaldi8.xml"
    jobs = [(profile, res, 7 * i) for i, (profile, res) in enumerate(VIVALDI_JOBS)]
    joulesim.simulate(str(platform), workload(tmp_path, VIVALDI_PROFILES, jobs, 8), "fcfs", master_host="master",
                      export=str(tmp_path / "out"))
    assert times(tmp_path / "out") == VIVALDI_BATSIM


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_a_task_with_nothing_on_a_link_pays_only_its_latency(tmp_path, grouping):
    """SimGrid gives a task of no CPU work whose transfers cross no link nothing to do (remains
    0): the TCP-window bound does not apply to it (Vivaldi: 1e9 bytes, 15.142 ms apart)."""
    platform = tmp_path / "v.xml"
    platform.write_text('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                        '<platform version="4.1"><zone id="AS0" routing="Vivaldi">'
                        '<host id="node0" speed="1Gf" coordinates="0.0 0.0 0.5"/>'
                        '<host id="node1" speed="1Gf" coordinates="14.0 2.0 0.5"/>'
                        '<host id="master" speed="1Gf" coordinates="0 0 0"/></zone></platform>\n')
    profiles = {"q": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]}}
    joulesim.simulate(str(platform), workload(tmp_path, profiles, [("q", 2, 0)], 2), "fcfs", master_host="master",
                      export=str(tmp_path / "out"), event_grouping=grouping)
    assert float(times(tmp_path / "out")[0][1]) == pytest.approx(0.015142135623730952, abs=1e-6)


class Recording(Decider):
    """fcfs, keeping the messages it is given."""

    def __init__(self):
        super().__init__()
        self.inner = load_decider("fcfs")
        self.messages = []

    def handle(self, message):
        self.messages.append(message)
        return self.inner.handle(message)


def test_a_task_stopped_at_its_walltime_reports_from_its_first_host_as_in_batsim(tmp_path):
    """Job 3 (3 Gflop on each of n0-n2) reaches its walltime of 2 s at t=29: Batsim's job actor,
    on n0, stops waiting for the task and reports across n0's 50 us route to the master, so the
    decider hears of it at 29.00005 (Batsim 4.2.1's message). Jobs that end before their walltime
    leave no wait behind (no clock step at it)."""
    platform = tmp_path / "wan.xml"
    platform.write_text(WAN)
    jobs = [(profile, res, subtime) for profile, res, subtime in WAN_JOBS]
    path = workload(tmp_path, WAN_PROFILES, jobs, 3)
    data = json.loads(open(path).read())
    for job in data["jobs"]:
        job["walltime"] = {"b": 1.5, "d": 2}.get(job["profile"], 10000)
    open(path, "w").write(json.dumps(data))
    decider = Recording()
    joulesim.simulate(str(platform), path, decider, master_host="master", export=str(tmp_path / "out"))
    assert times(tmp_path / "out") == WAN_BATSIM[:3] + [("27.000000", "2.000000", "29.000000")] + WAN_BATSIM[4:]
    ends = [m["now"] for m in decider.messages for e in m["events"]
            if e["type"] == "JOB_COMPLETED" and e["data"]["job_id"] == "w0!3"]
    assert ends == [pytest.approx(29.00005, abs=1e-9)]
