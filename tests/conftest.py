"""Shared test fixtures: write small inputs, run a simulation in-process, read outputs."""

from __future__ import annotations

import csv
import json
import os
import resource
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests import their helpers by module name

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SHARED_REFERENCE = SHARED_DATA.parent / "reference"


@pytest.fixture
def shared_data() -> Path:
    """../shared/data beside the checkout; tests that need it skip clearly when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent: the real traces live in ../shared/data beside the checkout")
    return SHARED_DATA


@pytest.fixture
def shared_reference() -> Path:
    """../shared/reference beside the checkout (facts measured with Batsim); skip when absent."""
    if not SHARED_REFERENCE.is_dir():
        pytest.skip(f"{SHARED_REFERENCE} is absent: Batsim's measured cases live in ../shared/reference "
                    "beside the checkout")
    return SHARED_REFERENCE


# Two clusters as Batsim's platforms often have them: compute nodes, and the master host in a
# cluster of its own, joined by an uplink. A 1-byte message from a node or the master to the
# master crosses a 1 GB/s link (1e-9 s) after the routes' latencies (LAT on each host link and
# backbone, UPLINK on the uplink).
BATSIM_CLUSTERS = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="root" routing="Full">
    <cluster id="compute" prefix="node" suffix="" radical="0-{last}" speed="1Gf" bw="{bw}" lat="{lat}"
        bb_bw="{bb_bw}" bb_lat="{bb_lat}"/>
    <cluster id="mgmt" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="1GBps" lat="{lat}"
        bb_bw="1GBps" bb_lat="{mgmt_bb_lat}"><prop id="role" value="master"/></cluster>
    <link id="uplink" bandwidth="10GBps" latency="{uplink}"/>
    <zoneRoute src="compute" dst="mgmt" gw_src="nodecompute_router" gw_dst="master_hostmgmt_router">
        <link_ctn id="uplink"/>
    </zoneRoute>
</zone>
</platform>
"""


def batsim_clusters_xml(nodes: int, lat: str = "0us", uplink: str = "0us", bw: str = "10GBps", bb_bw: str = "40GBps",
                        bb_lat: str | None = None, mgmt_bb_lat: str | None = None) -> str:
    """A compute cluster of `nodes` hosts and a master's cluster joined by an uplink, as
    Batsim's examples are built (latencies default to `lat`)."""
    return BATSIM_CLUSTERS.format(last=nodes - 1, lat=lat, uplink=uplink, bw=bw, bb_bw=bb_bw,
                                  bb_lat=lat if bb_lat is None else bb_lat,
                                  mgmt_bb_lat=lat if mgmt_bb_lat is None else mgmt_bb_lat)


def write_batsim_clusters(tmp_path: Path, nodes: int = 4, lat: str = "0us", uplink: str = "0us") -> str:
    path = tmp_path / f"clusters{nodes}_{lat}_{uplink}.xml"
    path.write_text(batsim_clusters_xml(nodes, lat, uplink))
    return str(path)


def write_platform(tmp_path: Path, speeds: list[str] | int, name: str = "platform.xml") -> str:
    """A platform of compute hosts h0..h{n-1} (speed strings like '1Gf') plus a master host."""
    if isinstance(speeds, int):
        speeds = ["1Gf"] * speeds
    hosts = "\n".join(f'    <host id="h{i}" speed="{s}"/>' for i, s in enumerate(speeds))
    path = tmp_path / name
    path.write_text(
        "<?xml version='1.0'?>\n<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
        f"{hosts}\n    <host id=\"master\" speed=\"1Gf\"><prop id=\"role\" value=\"master\"/></host>\n"
        "  </zone>\n</platform>\n")
    return str(path)


def build_simgrid_program(tmp_path_factory, source: str, name: str,
                          header: str = "/usr/include/simgrid/s4u.hpp") -> str:
    """`source` (C++) compiled against the installed libsimgrid: the path of the program. Skips,
    saying what to install, without g++ or libsimgrid-dev (.ci/run installs them)."""
    import subprocess

    compiler = shutil.which("g++")
    if compiler is None or not Path(header).exists():
        pytest.skip("SimGrid 3.32 is not installed here (Debian: apt-get install g++ libsimgrid-dev; .ci/run does it)")
    directory = tmp_path_factory.mktemp(name)
    (directory / "program.cpp").write_text(source)
    built = subprocess.run([compiler, "-O1", "-std=c++17", "-o", str(directory / "program"), str(directory / "program.cpp"),
                            "-lsimgrid"], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    return str(directory / "program")


def write_workload(tmp_path: Path, jobs: list[dict[str, Any]], profiles: dict[str, Any] | None = None,
                   name: str = "workload.json") -> str:
    """Jobs given as dicts; a job with 'delay' and no 'profile' gets a delay profile of its own."""
    profiles = dict(profiles or {})
    out_jobs = []
    for job in jobs:
        job = dict(job)
        if "profile" not in job:
            delay = job.pop("delay")
            job["profile"] = f"delay_{delay:g}"
            profiles[job["profile"]] = {"type": "delay", "delay": delay}
        out_jobs.append(job)
    path = tmp_path / name
    path.write_text(json.dumps({"jobs": out_jobs, "profiles": profiles}))
    return str(path)


def sigint_as_at_a_terminal() -> None:
    """A child's preexec_fn for tests that send it SIGINT, as a terminal's Ctrl-C does: a process
    started in the background by a shell, or under nohup, inherits SIGINT ignored, and Python then
    keeps ignoring it (rightly: a background job must not die of the terminal's Ctrl-C). A test
    suite launched that way would see its runs ignore the test's SIGINT; the child gets the
    handling a foreground command has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def write_json(tmp_path: Path, data: Any, name: str = "input.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def read_csv(path: str) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def jobs_by_id(prefix: str) -> dict[str, dict[str, str]]:
    return {row["job_id"]: row for row in read_csv(f"{prefix}_jobs.csv")}


def run_in_process(decider, platform: str, workloads: list[str], prefix: str, **config: Any):
    """Run one simulation with `decider` in this process; returns the SimulationResult.

    The tests that use it check the job models (times, progress, energy) with analytic values
    and scripts written for one message per simulated time, so they run with
    event_grouping="per-time" unless they ask otherwise; Batsim's grouping (the default of
    the simulator) has its own tests (test_batsim_message_grouping.py, test_simgrid_kernel.py)."""
    config.setdefault("event_grouping", "per-time")
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.external_events import load_external_events
    from joulesim.simulator.workload.workload_loader import load_workload

    platform_model = load_platform(platform)
    events_path = config.pop("events_path", None)
    events = load_external_events(events_path, platform_model.nb_compute) if events_path else []
    sim_config = SimulationConfig(
        platform=platform_model,
        workloads=[load_workload(w, f"w{i}") for i, w in enumerate(workloads)],
        external_events=events, has_events_file=events_path is not None,
        export_prefix=prefix, **config)
    return Simulation(sim_config, DeciderLink(InProcessRequester(decider))).run()


# Property-based tests: deterministic in CI (same examples every run), no per-example deadline
# (the machine's speed varies); `--hypothesis-profile dev` explores new examples.
try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("dev", deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
    # Examples per fuzzing property; JOULESIM_FUZZ_EXAMPLES=5000 HYPOTHESIS_PROFILE=dev explores further.
    FUZZ_EXAMPLES = int(os.environ.get("JOULESIM_FUZZ_EXAMPLES", "120"))
    fuzz_settings = settings(max_examples=FUZZ_EXAMPLES,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
except ImportError:  # pragma: no cover - hypothesis is in the test extras
    pass


def send(decider, now: float, *events: dict) -> list[tuple]:
    """Send one message; return the decisions as ("EXECUTE", name, alloc) / ("REJECT", name) / ..."""
    reply = decider.handle({"now": now, "events": list(events)})
    assert reply["now"] == now
    out = []
    for event in reply["events"]:
        assert event["timestamp"] == now
        data = event["data"]
        if event["type"] == "EXECUTE_JOB":
            out.append(("EXECUTE", data["job_id"].split("!")[1], data["alloc"]))
        elif event["type"] == "REJECT_JOB":
            out.append(("REJECT", data["job_id"].split("!")[1]))
        else:
            out.append((event["type"], data))
    return out


REPO_ROOT = Path(__file__).resolve().parents[1]


def load_experiment_script(name: str, script: str = "run.py"):
    """experiments/NAME/SCRIPT as the module `experiments.NAME.SCRIPT` (the experiments are a
    package of the repository, run from its root as `python -m experiments.NAME.run`)."""
    import importlib

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    return importlib.import_module(f"experiments.{name}.{Path(script).stem}")


def experiment_command(name: str, script: str = "run") -> list[str]:
    """The command line of an experiment script, to run with cwd=REPO_ROOT."""
    return [sys.executable, "-m", f"experiments.{name}.{script}"]


# -- reinforcement learning: a case whose optimum is known (issue 25) ---------------------------


def _irmasim_processor(static: float, dynamic: float) -> dict:
    """A 4-core IRMaSim processor of these static and dynamic powers (the three-node case's)."""
    return load_experiment_script("rl_energy", "diagnosis").irmasim_processor(static, dynamic)


@pytest.fixture(scope="module")
def three_nodes(tmp_path_factory) -> tuple[str, str]:
    """experiments/rl_energy/diagnosis.py's three-node case (its write_three_nodes says why its
    optimum is 860 J): the platform's and the workload's paths."""
    return load_experiment_script("rl_energy", "diagnosis").write_three_nodes(tmp_path_factory.mktemp("three_nodes"))


def zone_body(body: str, master: str) -> str:
    """A zone's content with the master added where SimGrid's DTD allows it: in a zone of its own
    before the others when the body holds zones or clusters (a zone holds hosts or zones, not
    both), else first among the hosts (before any route)."""
    if not master:
        return body
    if any(tag in body for tag in ("<cluster", "<zone", "<AS ", "<AS>")):
        if master.lstrip().startswith(("<zone", "<AS")):
            return f"{master}\n{body}"
        return f'<zone id="master_zone" routing="Full">{master}</zone>\n{body}'
    return f"{master}\n{body}"


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium driven by selenium (the report tests; they skip where it is missing)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1300,1500",
                     "--enable-unsafe-swiftshader"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Chromium reserves terabytes of address space: a cap left on this worker by a memory-bounded
    # test (the fuzzers' RLIMIT_AS) would make it crash at start.
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    try:
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    yield driver
    driver.quit()


def run_with_host_1_unavailable_from_2_to_20(tmp_path: Path):
    """Two hosts; job 1 (both hosts, 0..4) and job 2 (host 0, 6..10); external events make host 1
    unavailable from 2 to 20. Runs in process (per-time grouping) with outputs at
    tmp_path/out; returns the decider (its messages)."""
    from scripted_decider import ScriptedDecider, submitted
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "delay": 4},
                                         {"id": 2, "subtime": 6, "res": 1, "delay": 4}])
    events = tmp_path / "events.txt"
    events.write_text('{"type":"machine_unavailable","resources":"1","timestamp":2}\n'
                      '{"type":"machine_available","resources":"1","timestamp":20}\n')

    def script(d, message):
        for data in submitted(message):
            d.execute_job(data["job_id"], "0-1" if data["job"]["res"] == 2 else "0")

    decider = ScriptedDecider(script)
    run_in_process(decider, platform, [workload], str(tmp_path / "out"), events_path=str(events))
    return decider


# -- a real Slurm on localhost (adapters/slurm/local_cluster.py) -------------------------------


@pytest.fixture(scope="module")
def local_slurm(tmp_path_factory):
    """A Slurm of four one-CPU nodes (n1-n4) on this machine, one per test module that asks for
    it (tests/test_slurm_adapter.py's `cluster`, tests/test_slurm_forecast_on_slurm.py), started
    on its first use and stopped with its module. The modules skip themselves without Slurm
    (local_cluster.slurm_available)."""
    from joulesim.adapters.slurm.local_cluster import LocalSlurm

    with LocalSlurm(tmp_path_factory.mktemp("slurm"), nodes=4) as local:
        yield local
