"""The work the replicated kernel does per job stays under a bound (issue 45).

Speed is measured in benchmarks/, never here; these tests count what a slower simulator would
do more of, on any machine: the clock's steps (each a solve), the sub-rounds of ready actors,
the actors started (Batsim's: a submitter, the server, one REQ-REP actor per decider call,
one actor per job, one per switched machine...) and the times their code is resumed. The bounds
are about 1.5 times what the code did when they were set (2026-11-28; resumptions 2026-11-29),
so a change that doubles a count fails.
"""

from __future__ import annotations

import json
import random

import pytest

from joulesim.deciders import load_decider
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.engine.simulation import Simulation
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.workload.workload_loader import load_workload


def delay_jobs(tmp_path, count: int) -> str:
    """Delay jobs of 1-8 hosts, submitted in bursts (many share a second), durations in minutes."""
    rng = random.Random(5)
    t, jobs = 0, []
    for i in range(count):
        t += rng.choice([0, 0, 10, 60])
        delay = rng.choice([30, 60, 600, 1200])
        jobs.append({"id": i, "subtime": t, "res": rng.choice([1, 2, 4, 8]), "walltime": 2 * delay,
                     "profile": f"d{delay}"})
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"nb_res": 32, "jobs": jobs,
                                "profiles": {f"d{d}": {"type": "delay", "delay": d} for d in (30, 60, 600, 1200)}}))
    return str(path)


def kernel_work(tmp_path, platform: str, count: int, decider: str, options: dict[str, str] | None = None,
                **config) -> tuple[float, float, float, float]:
    """(steps, sub-rounds, actors started, resumptions) per job of an EASY run with Batsim's grouping."""
    sim = Simulation(SimulationConfig(platform=load_platform(platform), workloads=[load_workload(delay_jobs(tmp_path, count), "w0")],
                                      export_prefix=str(tmp_path / "out"), **config),
                     DeciderLink(InProcessRequester(load_decider(decider, options or {}))))
    sim.run()
    # Nothing is kept per job that ended: its actor is dropped once its sleep is over (20,000
    # finished actors kept 9 MB of a 20,000-job run's 87).
    assert not sim.actors._job_actor
    kernel = sim.actors.kernel
    return kernel.steps / count, kernel.sub_rounds / count, kernel.actors_started / count, kernel.resumptions / count


def test_the_kernel_s_work_per_delay_job_is_bounded(tmp_path):
    steps, sub_rounds, actors, resumptions = kernel_work(tmp_path, "cluster32", 2000, "easy")
    # measured: 6.2 steps, 20.9 sub-rounds, 2.38 actors, 16.8 resumptions per job (32.3 before the
    # kernel made the isend/irecv and wait of each put and get itself: Actor.script)
    assert steps <= 9.3 and sub_rounds <= 31.5 and actors <= 3.6 and resumptions <= 25, \
        (steps, sub_rounds, actors, resumptions)


@pytest.mark.parametrize("decider, options", [("easy", {"t_idle": "300"})])
def test_the_kernel_s_work_per_job_with_energy_and_shutdown_is_bounded(tmp_path, decider, options):
    steps, sub_rounds, actors, resumptions = kernel_work(tmp_path, "homogeneous240", 500, decider, options,
                                                         energy=True)
    # measured: 7.8 steps, 37.7 sub-rounds, 4.41 actors, 43.3 resumptions per job on the 240
    # machines (85.9 sub-rounds when jobs that end together read every machine one sub-round per
    # stale machine; about 69 resumptions before Actor.script)
    assert steps <= 11.7 and sub_rounds <= 56.5 and actors <= 6.6 and resumptions <= 65, \
        (steps, sub_rounds, actors, resumptions)
