"""Parallel tasks over a network: the flow-level model, with exact durations and energies.

The topology here is a small stand-in with the engine's interface (resources with
capacities, routes with latencies), so that these tests check the sharing model alone; the
platform files that describe clusters are tested in test_network_topology.py.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scripted_decider import ScriptedDecider

import joulesim
from joulesim.protocol.decider import Decider

from joulesim.deciders import load_decider
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.engine.simulation import Simulation
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.models.ptask_sharing import fair_bottleneck_periods
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.workload.workload_loader import load_workload

from conftest import jobs_by_id, write_platform, write_workload

LATENCY = 5e-6 + 3e-6 + 5e-6  # host link, backbone, host link


class StarCluster:
    """Reference §11's cluster: each host has a private link (1 GB/s, 5 us); all routes
    between two hosts go through one backbone (`backbone_bw`, 3 us)."""

    def __init__(self, nb_hosts: int, link_bw: float = 1e9, backbone_bw: float = 1e9):
        self.nb_resources = nb_hosts + 1
        self.capacity = np.array([link_bw] * nb_hosts + [backbone_bw], dtype=float)
        self.fatpipe = np.zeros(self.nb_resources, dtype=bool)
        self.names = [f"link{i}" for i in range(nb_hosts)] + ["backbone"]

    def route(self, src: int, dst: int) -> tuple[tuple[int, ...], float]:
        return (src, self.nb_resources - 1, dst), LATENCY

    def self_route(self, host: int) -> tuple[tuple[int, ...], float]:
        return (), 0.0  # this stand-in's hosts reach themselves for free (none of its cases does)


def simulate(tmp_path, jobs, profiles, decider=None, nb_hosts=4, network=None, energy=False, watts=None):
    if watts:
        path = tmp_path / "energy.xml"
        host = '<host id="h{i}" speed="1Gf"><prop id="wattage_per_state" value="{w}"/></host>'
        path.write_text("<?xml version='1.0'?><platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
                        + "".join(host.format(i=i, w=watts) for i in range(nb_hosts))
                        + '<host id="m" speed="1Gf"><prop id="role" value="master"/></host></zone></platform>')
        platform = load_platform(str(path))
    else:
        platform = load_platform(write_platform(tmp_path, nb_hosts))
    platform.network = network or StarCluster(nb_hosts)
    # The model's analytic values, on a test double of a network (no route to the master host
    # for Batsim's messages): one message per simulated time.
    config = SimulationConfig(platform=platform, workloads=[load_workload(write_workload(tmp_path, jobs, profiles), "w0")],
                              export_prefix=str(tmp_path / "out"), energy=energy, event_grouping="per-time")
    result = Simulation(config, DeciderLink(InProcessRequester(decider or load_decider("fcfs")))).run()
    return result, jobs_by_id(str(tmp_path / "out"))


def approx(value):
    return pytest.approx(value, rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------- reference §11
@pytest.mark.parametrize("profile, res, expected", [
    ({"type": "parallel_homogeneous", "cpu": 10e9, "com": 0}, 1, 10.0),
    ({"type": "parallel", "cpu": [0, 0], "com": [0, 10e9, 0, 0]}, 2, 10.000013),
    ({"type": "parallel", "cpu": [5e9, 5e9], "com": [0, 2e9, 0, 0]}, 2, 5.000013),  # cpu-bound
    ({"type": "parallel", "cpu": [2e9, 2e9], "com": [0, 4e9, 0, 0]}, 2, 4.000013),  # network-bound
])
def test_reference_section_11_numbers(tmp_path, profile, res, expected):
    _, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": res, "profile": "p"}], {"p": profile})
    assert float(jobs["1"]["execution_time"]) == pytest.approx(expected, abs=1e-9)
    assert jobs["1"]["execution_time"] == f"{expected:.6f}"


def test_two_tasks_on_one_link_get_half_of_it_each(tmp_path):
    # Jobs 1 (hosts 0-1) and 2 (hosts 2-3) each send 1e9 bytes through the backbone.
    transfer = {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]}
    _, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "t"},
                                  {"id": 2, "subtime": 0, "res": 2, "profile": "t"}], {"t": transfer})
    for job in ("1", "2"):
        assert float(jobs[job]["finish_time"]) == pytest.approx(2 + LATENCY, abs=1e-12)


def test_a_cpu_bound_task_is_not_slowed_by_a_network_bound_neighbour(tmp_path):
    # Job 1: 5 s of computation, 1e9 bytes (it needs 0.2 GB/s of the backbone).
    # Job 2: 2e9 bytes, nothing to compute: it gets the other 0.8 GB/s, so 2.5 s.
    profiles = {"cpu": {"type": "parallel", "cpu": [5e9, 5e9], "com": [0, 1e9, 0, 0]},
                "net": {"type": "parallel", "cpu": [0, 0], "com": [0, 2e9, 0, 0]}}
    _, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "cpu"},
                                  {"id": 2, "subtime": 0, "res": 2, "profile": "net"}], profiles)
    assert float(jobs["1"]["finish_time"]) == pytest.approx(5 + LATENCY, abs=1e-12)
    assert float(jobs["2"]["finish_time"]) == pytest.approx(2.5 + LATENCY, abs=1e-12)


def test_rates_are_resolved_when_a_task_ends(tmp_path):
    # Transfers of 1e9 and 4e9 bytes share the 1 GB/s backbone: 0.5 GB/s each (equal bytes
    # per second, SimGrid's fair bottleneck). The small one ends at 2 s + latency, when the
    # big one has sent 1e9 bytes; alone, it sends the other 3e9 in 3 s.
    profiles = {"small": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]},
                "big": {"type": "parallel", "cpu": [0, 0], "com": [0, 4e9, 0, 0]}}
    _, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "small"},
                                  {"id": 2, "subtime": 0, "res": 2, "profile": "big"}], profiles,
                       network=StarCluster(4, link_bw=1e12))
    assert float(jobs["1"]["finish_time"]) == pytest.approx(2 + LATENCY, abs=1e-9)
    assert float(jobs["2"]["finish_time"]) == pytest.approx(5 + LATENCY, abs=1e-9)


def test_a_later_arrival_slows_a_running_transfer(tmp_path):
    # Job 1 sends 2e9 bytes from t=0, alone at 1 GB/s after its latency L.
    # Job 2 (1e9 bytes) is submitted at 1 s and joins at 1 + L, when job 1 has sent 1e9.
    # Together, 0.5 GB/s each: both have 1e9 bytes left and end 2 s later, at 3 + L.
    profiles = {"two": {"type": "parallel", "cpu": [0, 0], "com": [0, 2e9, 0, 0]},
                "one": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]}}
    _, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "two"},
                                  {"id": 2, "subtime": 1, "res": 2, "profile": "one"}], profiles,
                       network=StarCluster(4, link_bw=1e12))
    assert float(jobs["1"]["finish_time"]) == pytest.approx(3 + LATENCY, abs=1e-9)
    assert float(jobs["2"]["finish_time"]) == pytest.approx(3 + LATENCY, abs=1e-9)


def two_pairs_then_kill(first: str, call_at: float, victim: str):
    """A decider script: `first` on hosts 0-1, the other job on 2-3, a call at `call_at`, at
    which it kills `victim`."""

    def script(d, message):
        for event in message["events"]:
            if event["type"] == "JOB_SUBMITTED":
                is_first = event["data"]["job_id"] == first
                d.execute_job(event["data"]["job_id"], "0-1" if is_first else "2-3")
                if is_first:
                    d.call_me_later(call_at)
            elif event["type"] == "REQUESTED_CALL":
                d.kill_jobs([victim])

    return script


def test_walltime_and_kill_progress_for_network_jobs(tmp_path):
    transfer = {"type": "parallel", "cpu": [0, 0], "com": [0, 10e9, 0, 0]}
    script = two_pairs_then_kill("w0!1", 4, "w0!2")

    # Both transfers share the 1 GB/s backbone (period 20 s each) until job 1 reaches its
    # walltime at 3 s; job 2 then runs alone (period 10 s) until the decider kills it at 4 s.
    decider = ScriptedDecider(script)
    _, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "t", "walltime": 3},
                                  {"id": 2, "subtime": 0, "res": 2, "profile": "t"}], {"t": transfer},
                       decider=decider)
    assert jobs["1"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert float(jobs["1"]["finish_time"]) == pytest.approx(3)
    assert jobs["2"]["final_state"] == "COMPLETED_KILLED"
    assert float(jobs["2"]["finish_time"]) == pytest.approx(4)
    [(_, killed)] = decider.events_of("JOB_KILLED")
    progress = killed["data"]["job_progress"]["w0!2"]
    assert progress["profile_name"] == "t"
    assert progress["progress"] == pytest.approx((3 - LATENCY) / 20 + 1 / 10, abs=1e-12)


def test_energy_follows_the_cursor_cpu_share(tmp_path):
    # Network-bound: 2e9 flops per host but 4 s of transfer: each host is half loaded while
    # the task progresses, and idle during the latency.
    profile = {"type": "parallel", "cpu": [2e9, 2e9], "com": [0, 4e9, 0, 0]}
    result, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "p"}], {"p": profile},
                            nb_hosts=2, energy=True, watts="100:200")
    duration = 4 + LATENCY
    expected_job = 2 * 100 * duration + 2 * (200 - 100) * 0.5 * 4
    assert float(jobs["1"]["consumed_energy"]) == pytest.approx(expected_job, rel=1e-9)
    assert float(result.schedule["consumed_joules"]) == pytest.approx(expected_job, rel=1e-9)


def test_composed_profiles_run_their_tasks_in_sequence(tmp_path):
    profiles = {"c": {"type": "composed", "repeat": 2, "seq": ["calc", "wait"]},
                "calc": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
                "wait": {"type": "delay", "delay": 3}}
    _, jobs = simulate(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "c"}], profiles)
    assert float(jobs["1"]["execution_time"]) == pytest.approx(2 * (1 + 3))


# ---------------------------------------------------------------- the solver alone
def test_solver_with_bounds():
    a = np.array
    # t0 alone on its CPU: 10e9 flops at 1e9 -> 10 s.
    assert fair_bottleneck_periods(a([0]), a([0]), a([10e9]), a([1e9]), a([0.0])).tolist() == [10.0]
    # t0 on L0; t1 on L0 and L1; t2 on L1; L0 = 1, L1 = 3: t0 = t1 = 1/2, t2 gets 3 - 1/2.
    periods = fair_bottleneck_periods(a([0, 1, 1, 2]), a([0, 0, 1, 1]), a([1.0, 1.0, 1.0, 1.0]), a([1.0, 3.0]),
                                      a([0.0, 0.0, 0.0]))
    assert periods.tolist() == pytest.approx([2.0, 2.0, 0.4])
    # An own period (FATPIPE, delay) bounds a task: t0 cannot go faster than 5 s.
    periods = fair_bottleneck_periods(a([0, 1]), a([0, 0]), a([1.0, 1.0]), a([1.0]), a([5.0, 0.0]))
    assert periods.tolist() == pytest.approx([5.0, 1 / 0.8])
    # More sharing cases, and a check against SimGrid's own loop: test_ptask_fair_bottleneck.py.


TWO_CLUSTERS = """<?xml version='1.0'?>
<platform version="4.1">
  <zone id="top" routing="Full">
    <cluster id="c0" prefix="c0-h" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"
             bb_bw="1GBps" bb_lat="0" router_id="c0-router"/>
    <cluster id="c1" prefix="c1-h" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"
             bb_bw="1GBps" bb_lat="0" router_id="c1-router"/>
    <zone id="m" routing="Full"><host id="master" speed="1Gf"><prop id="role" value="master"/></host></zone>
    <link id="main" bandwidth="0.25GBps" latency="2us"/>
    <link id="to_master" bandwidth="1GBps" latency="0"/>
    <zoneRoute src="c0" dst="c1" gw_src="c0-router" gw_dst="c1-router"><link_ctn id="main"/></zoneRoute>
    <zoneRoute src="m" dst="c0" gw_src="master" gw_dst="c0-router"><link_ctn id="to_master"/></zoneRoute>
    <zoneRoute src="m" dst="c1" gw_src="master" gw_dst="c1-router"><link_ctn id="to_master"/></zoneRoute>
  </zone>
</platform>
"""


@pytest.mark.parametrize("alloc, expected", [
    ("0-1", 1e9 / 1e9 + 2e-6),  # inside c0: host links and c0's switch, 1 GB/s; 1 us + 1 us
    ("1-2", 1e9 / 0.25e9 + 4e-6),  # across: the 0.25 GB/s main link; 1 + 2 + 1 us
])
def test_a_job_across_clusters_runs_at_the_pace_of_the_link_between_them(tmp_path, alloc, expected):
    path = tmp_path / "two_clusters.xml"
    path.write_text(TWO_CLUSTERS)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "send"}],
                              {"send": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]}})

    def script(d, message):
        if any(e["type"] == "JOB_SUBMITTED" for e in message["events"]):
            d.execute_job("w0!1", alloc)

    config = SimulationConfig(platform=load_platform(str(path)), workloads=[load_workload(workload, "w0")],
                              export_prefix=str(tmp_path / "out"))
    Simulation(config, DeciderLink(InProcessRequester(ScriptedDecider(script)))).run()
    jobs = jobs_by_id(str(tmp_path / "out"))
    assert float(jobs["1"]["execution_time"]) == pytest.approx(expected, abs=1e-12)


def test_long_tasks_with_many_rate_changes_complete(tmp_path):
    """Periods of 1e7 s leave ~1e-9 s of float 'work' after many re-solves: the completion
    must still happen at the predicted time (this once looped forever)."""
    jobs = [{"id": i, "subtime": i * 1000.0, "res": 2, "profile": f"t{i}"} for i in range(6)]
    profiles = {f"t{i}": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e16 * (1 + i / 7), 0, 0]}
                for i in range(6)}
    _, out = simulate(tmp_path, jobs, profiles, nb_hosts=12)
    assert len(out) == 6 and all(row["final_state"] == "COMPLETED_SUCCESSFULLY" for row in out.values())
    # All six share the 1 GB/s backbone: together they move sum(volumes) bytes, so the last
    # one ends when all bytes went through, at about sum / 1e9 seconds.
    total = sum(1e16 * (1 + i / 7) for i in range(6))
    assert max(float(row["finish_time"]) for row in out.values()) == pytest.approx(total / 1e9, rel=1e-6)


@pytest.mark.parametrize("placement, alloc, duration", [
    ("basic", "1-2", 1e9 / 0.25e9 + 4e-6),  # lowest free ids: across the clusters
    ("local", "2-3", 1e9 / 1e9 + 2e-6),  # one cluster: the fast links only
])
def test_placement_changes_a_network_job_through_the_cli(tmp_path, placement, alloc, duration):
    """End to end: `joulesim run`, the decider in its own process, on the two-cluster platform."""
    (tmp_path / "two_clusters.xml").write_text(TWO_CLUSTERS)
    workload = write_workload(tmp_path, [
        {"id": "hold", "subtime": 0, "res": 1, "delay": 100},  # takes host 0
        {"id": "send", "subtime": 0, "res": 2, "profile": "send"},
    ], {"send": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]}})
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "two_clusters.xml", "-w", workload,
                             "-d", "conservative", "--option", f"placement={placement}", "--option", "cluster_size=2",
                             "-e", "out"], cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    job = jobs_by_id(str(tmp_path / "out"))["send"]
    assert job["allocated_resources"] == alloc
    assert job["execution_time"] == f"{duration:.6f}"


# ---------------------------------------------------------------- transfers within a host
ONE_ZONE = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master_host" speed="1Gf"/>{hosts}
    <link id="l" bandwidth="1GBps" latency="0"/><link id="lo" bandwidth="100MBps" latency="1ms"/>{routes}{loopback}
  </zone>
</platform>
"""


class TwoExecutorsOnOneHost(Decider):
    """Runs job j on hosts 2j and 2j + 1, both of its executors on the first."""

    def on_job_submitted(self, job):
        first = 2 * int(job.id.split("!")[1])
        self.execute_job(job.id, f"{first}-{first + 1}", mapping={0: 0, 1: 0})


@pytest.mark.parametrize("loopback, expected", [
    # SimGrid 3.32, ptask_L07 (tests/test_platform_simgrid.py routes the same way): h0's declared
    # loopback, 1e8 B / 100 MB/s + 1 ms; h2 crosses the model's loopback, 1e8 B / 10 GB/s
    ('<route src="h0" dst="h0"><link_ctn id="lo"/></route>', {"0": 1.001, "1": 0.01}),
    ("", {"0": 0.01, "1": 0.01}),  # no declared loopback: both through SimGrid's, a FATPIPE (no sharing)
])
def test_two_executors_on_one_host_move_their_bytes_through_its_loopback(tmp_path, loopback, expected):
    names = ["master_host", "h0", "h1", "h2", "h3"]
    routes = "".join(f'<route src="{a}" dst="{b}"><link_ctn id="l"/></route>'
                     for i, a in enumerate(names) for b in names[i + 1:])
    (tmp_path / "one_zone.xml").write_text(ONE_ZONE.format(
        hosts="".join(f'<host id="{name}" speed="1Gf"/>' for name in names[1:]), routes=routes, loopback=loopback))
    workload = {"nb_res": 4, "profiles": {"p": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e8, 0, 0]}},
                "jobs": [{"id": 0, "subtime": 0, "res": 2, "profile": "p"}, {"id": 1, "subtime": 0, "res": 2, "profile": "p"}]}
    result = joulesim.simulate(str(tmp_path / "one_zone.xml"), workload, TwoExecutorsOnOneHost())
    durations = dict(zip(result.jobs["job_id"].astype(str), result.jobs["execution_time"]))
    assert durations == {job: pytest.approx(seconds, rel=1e-9) for job, seconds in expected.items()}
