"""I/O to storage hosts (Batsim's parallel_homogeneous_pfs and data_staging profiles), storage
labels resolved by EXECUTE_JOB's storage_mapping, and -r/--add-role-to-hosts.

The platform: compute hosts h0, h1 and storage hosts io0, io1 around one router; each host's
own link is 1 GB/s, each storage's 100 MB/s, every latency 1 us (so a route's is 2 us). Times
are checked against bytes / bandwidth by hand (reference: batsim-job-models.md).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from scripted_decider import ScriptedDecider, execute_then_kill, submitted

from joulesim import simulate
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.platform.platform_loader import load_platform

from conftest import jobs_by_id, run_in_process, write_workload

ROUTE_LATENCY = 2e-6


def write_storage_platform(tmp_path, roles: bool = True, storages: int = 2) -> str:
    role = '<prop id="role" value="storage"/>' if roles else ""
    hosts = "".join(f'<host id="h{i}" speed="1Gf"/>' for i in range(2))
    hosts += "".join(f'<host id="io{i}" speed="1Gf">{role}</host>' for i in range(storages))
    hosts += '<host id="master" speed="1Gf"><prop id="role" value="master"/></host>'
    links = "".join(f'<link id="l_h{i}" bandwidth="1GBps" latency="1us"/>' for i in range(2))
    links += "".join(f'<link id="l_io{i}" bandwidth="100MBps" latency="1us"/>' for i in range(storages))
    links += '<link id="l_master" bandwidth="1GBps" latency="1us"/>'
    names = [f"h{i}" for i in range(2)] + [f"io{i}" for i in range(storages)]
    routes = "".join(f'<route src="{n}" dst="sw"><link_ctn id="l_{n}"/></route>' for n in names)
    routes += '<route src="master" dst="sw"><link_ctn id="l_master"/></route>'
    path = tmp_path / "storage_platform.xml"
    path.write_text('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Floyd">'
                    f'{hosts}<router id="sw"/>{links}{routes}</zone></platform>')
    return str(path)


def execute_all(storage_mapping=None, alloc=None):
    """A decider that starts every job at once on `alloc` (default: host 0 up to its size)."""
    def script(decider, message):
        for job in submitted(message):
            decider.execute_job(job["job_id"], alloc or f"0-{job['job']['res'] - 1}",
                                storage_mapping=storage_mapping)
    return ScriptedDecider(script)


def run(tmp_path, jobs, profiles, decider, platform=None, **config):
    workload = write_workload(tmp_path, jobs, profiles)
    prefix = str(tmp_path / "out")
    result = run_in_process(decider, platform or write_storage_platform(tmp_path), [workload], prefix, **config)
    return result, jobs_by_id(prefix)


def finish(jobs, job_id):
    return float(jobs[job_id]["finish_time"])


# ---------------------------------------------------------------- storage hosts
def test_storage_hosts_are_listed_to_the_decider_after_the_compute_hosts(tmp_path):
    decider = execute_all()
    run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], {"d": {"type": "delay", "delay": 1}}, decider)
    begins = decider.events_of("SIMULATION_BEGINS")[0][1]["data"]
    assert begins["nb_compute_resources"] == 2 and begins["nb_storage_resources"] == 2
    assert [(r["id"], r["name"]) for r in begins["storage_resources"]] == [(2, "io0"), (3, "io1")]
    assert [r["name"] for r in begins["compute_resources"]] == ["h0", "h1"]


# ---------------------------------------------------------------- parallel_homogeneous_pfs
def test_pfs_reads_and_writes_share_the_storage_link(tmp_path):
    """Two hosts each read 1e9 B and write 5e8 B through io0's 100 MB/s link: 3e9 B / 1e8 B/s."""
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9, "bytes_to_write": 5e8, "storage": "nfs"}}
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "profile": "io"}], profiles, execute_all({"nfs": 2}))
    assert finish(jobs, "1") == pytest.approx(30 + ROUTE_LATENCY, abs=1e-6)


def test_pfs_with_a_single_storage_needs_no_mapping(tmp_path):
    platform = write_storage_platform(tmp_path, storages=1)
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_write": 2e9}}  # label "pfs" by default
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "io"}], profiles, execute_all(), platform)
    assert finish(jobs, "1") == pytest.approx(20 + ROUTE_LATENCY, abs=1e-6)


def test_two_jobs_on_one_storage_get_equal_shares(tmp_path):
    """A reads 2e9 B from t=0, B reads 1e9 B from t=0, both from io0: 50 MB/s each until B ends
    at 20 s, then A alone at 100 MB/s for its last 1e9 B: 30 s."""
    profiles = {"a": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 2e9},
                "b": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    jobs_in = [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}, {"id": 2, "subtime": 0, "res": 1, "profile": "b"}]

    def script(decider, message):
        for i, job in enumerate(submitted(message)):
            decider.execute_job(job["job_id"], str(i), storage_mapping={"pfs": 2})
    _, jobs = run(tmp_path, jobs_in, profiles, ScriptedDecider(script))
    assert finish(jobs, "2") == pytest.approx(20 + ROUTE_LATENCY, abs=1e-6)
    assert finish(jobs, "1") == pytest.approx(30 + ROUTE_LATENCY, abs=1e-6)


def test_pfs_inside_a_composed_profile_follows_the_computation(tmp_path):
    profiles = {"c": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 0},
                "io": {"type": "parallel_homogeneous_pfs", "bytes_to_write": 1e9, "storage": "scratch"},
                "job": {"type": "composed", "seq": ["c", "io"], "repeat": 2}}
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "job"}], profiles, execute_all({"scratch": 3}))
    assert finish(jobs, "1") == pytest.approx(2 * (5 + 10 + ROUTE_LATENCY), abs=1e-6)


def test_storage_ids_follow_the_compute_hosts_kept_by_mmax(tmp_path):
    """With --mmax 1 the storage hosts are resources 1 and 2 (Batsim numbers them after the
    compute hosts it keeps): resource 1 is io0 and its 100 MB/s link, not h1."""
    decider = execute_all({"pfs": 1})
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "io"}], profiles, decider, mmax=1)
    assert [r["id"] for r in decider.events_of("SIMULATION_BEGINS")[0][1]["data"]["storage_resources"]] == [1, 2]
    assert finish(jobs, "1") == pytest.approx(10 + ROUTE_LATENCY, abs=1e-6)


# ---------------------------------------------------------------- data_staging
def test_data_staging_moves_bytes_between_two_storages(tmp_path):
    """1e9 B from io0 to io1: the route crosses both 100 MB/s storage links: 10 s."""
    profiles = {"stage": {"type": "data_staging", "nb_bytes": 1e9, "from": "pfs", "to": "burst"}}
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "stage"}], profiles,
                  execute_all({"pfs": 2, "burst": 3}))
    assert finish(jobs, "1") == pytest.approx(10 + ROUTE_LATENCY, abs=1e-6)


def test_staging_and_pfs_contend_on_a_storage_link(tmp_path):
    """Staging io0 -> io1 (1e9 B) and a pfs read from io1 (1e9 B), both from t=0: io1's link
    carries both at 50 MB/s each: both end at 20 s."""
    profiles = {"stage": {"type": "data_staging", "nb_bytes": 1e9, "from": "a", "to": "b"},
                "read": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9, "storage": "b"}}
    jobs_in = [{"id": 1, "subtime": 0, "res": 1, "profile": "stage"}, {"id": 2, "subtime": 0, "res": 1, "profile": "read"}]

    def script(decider, message):
        for i, job in enumerate(submitted(message)):
            decider.execute_job(job["job_id"], str(i), storage_mapping={"a": 2, "b": 3})
    _, jobs = run(tmp_path, jobs_in, profiles, ScriptedDecider(script))
    assert finish(jobs, "1") == pytest.approx(20 + ROUTE_LATENCY, abs=1e-6)
    assert finish(jobs, "2") == pytest.approx(20 + ROUTE_LATENCY, abs=1e-6)


# ---------------------------------------------------------------- kills, walltimes, energy
def test_a_killed_pfs_job_reports_its_progress(tmp_path):
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    decider = execute_then_kill("0", 4 + ROUTE_LATENCY, storage_mapping={"pfs": 2})
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "io"}], profiles, decider)
    killed = decider.events_of("JOB_KILLED")[0][1]["data"]
    assert killed["job_progress"]["w0!1"] == {"profile_name": "io", "progress": pytest.approx(0.4, abs=1e-9)}
    assert jobs["1"]["final_state"] == "COMPLETED_KILLED"


def test_a_pfs_job_stops_at_its_walltime(tmp_path):
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "walltime": 3, "profile": "io"}], profiles, execute_all({"pfs": 2}))
    assert jobs["1"]["final_state"] == "COMPLETED_WALLTIME_REACHED" and finish(jobs, "1") == 3


def test_hosts_doing_io_draw_idle_power(tmp_path):
    """A pfs job computes nothing: its host draws its idle watts (100 W) for the 10 s."""
    xml = open(write_storage_platform(tmp_path)).read().replace(
        '<host id="h0" speed="1Gf"/>', '<host id="h0" speed="1Gf"><prop id="wattage_per_state" value="100:200"/></host>').replace(
        '<host id="h1" speed="1Gf"/>', '<host id="h1" speed="1Gf"><prop id="wattage_per_state" value="100:200"/></host>')
    path = tmp_path / "energy_storage.xml"
    path.write_text(xml)
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    _, jobs = run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "io"}], profiles, execute_all({"pfs": 2}),
                  str(path), energy=True)
    assert float(jobs["1"]["consumed_energy"]) == pytest.approx(100 * (10 + ROUTE_LATENCY), rel=1e-9)


# ---------------------------------------------------------------- bad decisions and inputs
@pytest.mark.parametrize("profile, mapping, platform_storages, message", [
    ({"type": "data_staging", "nb_bytes": 1, "from": "a", "to": "b"}, None, 2, "Batsim needs one for data_staging"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1}, None, 2, "platform has 2 storage hosts"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1, "storage": "x"}, {"y": 2}, 2, "storage label 'x', which storage_mapping does not map"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1}, {"pfs": 1}, 2, "is not a storage resource"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1}, None, 0, "platform has no storage host"),
])
def test_unresolvable_storages_are_refused_at_the_jobs_start(tmp_path, profile, mapping, platform_storages, message):
    platform = write_storage_platform(tmp_path, storages=platform_storages)
    with pytest.raises(JoulesimError, match=message):
        run(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}], {"p": profile}, execute_all(mapping), platform)


@pytest.mark.parametrize("profile, message", [
    ({"type": "parallel_homogeneous_pfs"}, "neither 'bytes_to_read' nor 'bytes_to_write'"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": -1}, "field 'bytes_to_read'"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_write": "1e9"}, "field 'bytes_to_write'"),
    ({"type": "parallel_homogeneous_pfs", "bytes_to_read": 1, "storage": 3}, "field 'storage'"),
    ({"type": "data_staging", "nb_bytes": -5, "from": "a", "to": "b"}, "field 'nb_bytes'"),
    ({"type": "data_staging", "nb_bytes": 5, "to": "b"}, "field 'from': is missing"),
    ({"type": "data_staging", "nb_bytes": 5, "from": "a", "to": ""}, "field 'to'"),
])
def test_bad_storage_profiles_are_refused_before_the_run(tmp_path, profile, message):
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}], {"p": profile})
    with pytest.raises(JoulesimError, match=message):
        simulate(write_storage_platform(tmp_path), workload, "fcfs")


def test_storage_profiles_need_a_network(tmp_path):
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                              {"p": {"type": "composed", "seq": ["io"]}, "io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1}})
    with pytest.raises(JoulesimError, match="profile 'io'.*describes no network"):
        simulate("small4", workload, "fcfs")


# ---------------------------------------------------------------- -r / --add-role-to-hosts
def test_add_role_to_hosts_makes_storage_hosts(tmp_path):
    platform = load_platform(write_storage_platform(tmp_path, roles=False), added_roles={"io0": "storage", "io1": "storage"})
    assert [h.name for h in platform.compute_hosts] == ["h0", "h1"]
    assert [(h.name, h.id) for h in platform.storage_hosts] == [("io0", 2), ("io1", 3)]
    without = load_platform(write_storage_platform(tmp_path, roles=False))
    assert len(without.compute_hosts) == 4 and not without.storage_hosts


@pytest.mark.parametrize("roles, message", [
    (["io0:storage:x"], "exactly one ':'"),
    (["io0"], "exactly one ':'"),
    ([":storage"], "empty host name"),
    (["io0,:storage"], "empty host name"),
    (["io0:disk"], "unknown role 'disk'"),
    (["nowhere:storage"], "no host named 'nowhere'"),
    (["master:compute_node"], "role='master' already.*role='master,compute_node'"),
])
def test_bad_roles_are_refused(tmp_path, roles, message):
    with pytest.raises(JoulesimError, match=message):
        simulate(write_storage_platform(tmp_path, roles=False), "tiny", "fcfs", add_role_to_hosts=roles)


def test_add_role_to_hosts_on_the_command_line(tmp_path):
    """`joulesim simulate -r io0,io1:storage` (and the same from Batsim's command line form)
    runs a pfs job, the decider in its own process."""
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9, "storage": "pfs"}}
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "io"}], profiles)
    platform = write_storage_platform(tmp_path, roles=False, storages=1)
    prefix = tmp_path / "cli"
    proc = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", platform, "-w", workload, "-d", "fcfs",
                           "-r", "io0:storage", "-e", str(prefix)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    jobs = jobs_by_id(str(prefix))
    assert finish(jobs, "1") == pytest.approx(10 + ROUTE_LATENCY, abs=1e-6)
    bad = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", platform, "-w", workload, "-d", "fcfs",
                          "-r", "io9:storage", "-e", str(tmp_path / "bad")], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "no host named 'io9'" in bad.stderr and "Traceback" not in bad.stderr


# ---------------------------------------------------------------- shipped deciders
def test_shipped_deciders_send_a_storage_mapping_option(tmp_path):
    """`-o storage_mapping=pfs:3` on EASY: its EXECUTE_JOBs map the label to io1 (resource 3)."""
    profiles = {"io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9}}
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "io"},
                                         {"id": 2, "subtime": 0, "res": 1, "profile": "io"}], profiles)
    result = simulate(write_storage_platform(tmp_path), workload, "easy", options={"storage_mapping": "pfs:3"})
    finish = dict(zip(result.jobs["job_id"], result.jobs["finish_time"]))
    assert finish == {1: pytest.approx(20 + ROUTE_LATENCY, abs=1e-6), 2: pytest.approx(20 + ROUTE_LATENCY, abs=1e-6)}
    with pytest.raises(JoulesimError, match="platform has 2 storage hosts"):  # without it: no guess among two
        simulate(write_storage_platform(tmp_path), workload, "easy")


@pytest.mark.parametrize("value", ["pfs", "pfs:", ":3", "pfs:-1", "pfs:x", "pfs:3,"])
def test_a_bad_storage_mapping_option_is_refused(tmp_path, value):
    with pytest.raises(JoulesimError, match="option storage_mapping=.* is invalid: accepted values are LABEL:ID pairs"):
        simulate(write_storage_platform(tmp_path), "tiny", "fcfs", options={"storage_mapping": value})
