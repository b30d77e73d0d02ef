"""Hosts with several cores under ptask_L07 (SimGrid 3.32, as Batsim runs it): a host's CPU
offers cores x speed, each executor at most one core's speed (L07Action's cpu bound); the
energy plugin's load is the speed used / (cores x speed). Values by hand."""

from __future__ import annotations

import pytest
from scripted_decider import ScriptedDecider, submitted

from conftest import jobs_by_id, run_in_process, write_workload


def platform(tmp_path, cores: int) -> str:
    path = tmp_path / f"cores{cores}.xml"
    path.write_text(
        '<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Floyd">'
        f'<host id="h0" speed="1Gf" core="{cores}"><prop id="wattage_per_state" value="100:200"/></host>'
        '<host id="m" speed="1Gf"><prop id="role" value="master"/></host><router id="sw"/>'
        '<link id="l0" bandwidth="1GBps" latency="0"/><link id="lm" bandwidth="1GBps" latency="0"/>'
        '<route src="h0" dst="sw"><link_ctn id="l0"/></route><route src="m" dst="sw"><link_ctn id="lm"/></route>'
        '</zone></platform>')
    return str(path)


def run(tmp_path, cores, executors, flops):
    """One parallel job of `executors` executors, all mapped onto host 0, `flops` each."""
    profiles = {"p": {"type": "parallel", "cpu": [flops] * executors, "com": [0] * executors ** 2}}
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": executors, "profile": "p"}], profiles)

    def script(decider, message):
        for job in submitted(message):
            decider.execute_job(job["job_id"], "0", mapping={i: 0 for i in range(executors)})
    prefix = str(tmp_path / "out")
    run_in_process(ScriptedDecider(script), platform(tmp_path, cores), [workload], prefix, energy=True)
    job = jobs_by_id(prefix)["1"]
    return float(job["execution_time"]), float(job["consumed_energy"])


@pytest.mark.parametrize("cores, executors, seconds, joules", [
    (1, 1, 1.0, 200.0),  # one core, full load
    (1, 2, 2.0, 400.0),  # two executors share the one core
    (4, 1, 1.0, 125.0),  # one core of four: load 1/4, 100 + 100 x 0.25 W
    (4, 2, 1.0, 150.0),  # two cores of four, each executor at one core's speed
    (4, 4, 1.0, 200.0),  # every core
    (4, 8, 2.0, 400.0),  # eight executors on four cores: half a core's speed each
])
def test_cores_multiply_a_hosts_capacity_not_an_executors_speed(tmp_path, cores, executors, seconds, joules):
    time, energy = run(tmp_path, cores, executors, 1e9)
    assert time == pytest.approx(seconds, rel=1e-12)
    assert energy == pytest.approx(joules, rel=1e-9)
