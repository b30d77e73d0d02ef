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

from conftest import jobs_by_id, run_in_process, write_platform, write_workload


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


def test_the_waiting_queue_knows_its_smallest_walltime_through_appends_and_removals():
    """WaitingQueue.min_walltime against the minimum recomputed after every operation, with and
    without each waiting job left out (jobs without walltime, -1, do not count; removals anywhere,
    the smallest's last job included)."""
    from hypothesis import given, settings, strategies as st

    from joulesim.deciders.common.waiting_queue import WaitingQueue
    from joulesim.protocol.decider import SubmittedJob

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(st.booleans(), st.sampled_from([-1.0, 0.0, 5.0, 10.0, 60.0, 3600.0]),
                              st.integers(0, 30)), max_size=60))
    def check(operations):
        queue, waiting, number = WaitingQueue(), {}, 0
        for add, walltime, pick in operations:
            if add or not waiting:
                job = SubmittedJob(f"w0!{number}", 0.0, 1, walltime, "p")
                number += 1
                queue.append(job)
                waiting[job.id] = job
            else:
                job_id = sorted(waiting)[pick % len(waiting)]
                queue.remove(job_id)
                del waiting[job_id]
            expected = min((j.walltime for j in waiting.values() if j.walltime >= 0), default=float("inf"))
            assert queue.min_walltime() == expected
            for left_out in waiting.values():  # the blocked job's walltime aside (its own, not its value's)
                expected = min((j.walltime for j in waiting.values() if j.walltime >= 0 and j is not left_out),
                               default=float("inf"))
                assert queue.min_walltime(left_out) == expected

    check()
    # walltimes that come and go one at a time: the heap is rebuilt instead of growing with them
    queue = WaitingQueue()
    for number in range(1000):
        queue.append(SubmittedJob(f"w0!{number}", 0.0, 1, float(number), "p"))
        queue.remove(f"w0!{number}")
    queue.append(SubmittedJob("w0!a", 0.0, 1, 7.0, "p"))
    queue.append(SubmittedJob("w0!b", 0.0, 1, 5.0, "p"))
    assert queue.min_walltime() == 5.0 and queue.min_walltime(SubmittedJob("w0!b", 0.0, 1, 5.0, "p")) == 7.0
    assert len(queue._walltime_heap) <= 70


def easy_run(tmp_path, hosts: int, jobs: list[dict], profiles: dict) -> tuple[dict[str, dict[str, str]], int]:
    """EASY in this process, Batsim's grouping, on `hosts` machines: the jobs' rows by id, and
    how many waiting jobs its passes read from the queue (walking it, or reading the jobs that
    fit: WaitingQueue.jobs_read)."""
    decider = load_decider("easy", {})
    run_in_process(decider, write_platform(tmp_path, hosts), [write_workload(tmp_path, jobs, profiles)],
                   str(tmp_path / "out"), event_grouping="batsim")
    return jobs_by_id(str(tmp_path / "out")), decider.queue.jobs_read


def test_easy_does_not_scan_a_queue_where_nothing_can_be_backfilled(tmp_path):
    """3 hosts: a 2-host job runs for 10,000 s, a 3-host job waits for it (reservation at 10,000 s,
    no extra machine), then 300 one-host jobs arrive one a second, each longer than the time left
    before the reservation: none can be backfilled, and EASY must find that out without looking
    at the waiting jobs (scanning them at each of the 300 calls looked at 45,450 of them)."""
    jobs = [{"id": 0, "subtime": 0, "res": 2, "walltime": 10_000, "profile": "long"},
            {"id": 1, "subtime": 1, "res": 3, "walltime": 100, "profile": "short"}]
    jobs += [{"id": 2 + i, "subtime": 2 + i, "res": 1, "walltime": 20_000, "profile": "short"} for i in range(300)]
    rows, looked_at = easy_run(tmp_path, 3, jobs, {"long": {"type": "delay", "delay": 10_000},
                                                   "short": {"type": "delay", "delay": 100}})
    assert looked_at == 0
    assert len(rows) == 302  # every job ran


@pytest.mark.parametrize("hosts, blocked, behind, free, extra", [(6, 3, 2, 1, 3), (7, 6, 2, 2, 1)])
def test_easy_reads_only_the_waiting_jobs_that_can_start_when_few_machines_can_be_given(
        tmp_path, hosts, blocked, behind, free, extra):
    """A job of hosts - `free` machines runs for 10,000 s and a job of `blocked` machines waits for
    it (reservation at 10,000 s, `extra` machines beyond its needs then); 300 jobs of `behind`
    machines arrive behind it, then 100 one-host jobs of 10 s, one every 50 s, each started at
    once in the extra machines. None of the 300 can start: it does not fit the free machines
    (first case), or it fits but neither ends before the reservation nor fits the extra machines
    (second case). For each one-host job the backfilling pass reads only the jobs that ask for at
    most min(free, extra) machines, that job; reading every waiting job read the blocked job and
    the 300 others each time (30,200 jobs read), and reading those that fit the free machines
    read the 300 too in the second case."""
    jobs = [{"id": 0, "subtime": 0, "res": hosts - free, "walltime": 10_000, "profile": "long"},
            {"id": 1, "subtime": 1, "res": blocked, "walltime": 100, "profile": "tiny"}]
    jobs += [{"id": 2 + i, "subtime": 2 + i, "res": behind, "walltime": 20_000, "profile": "tiny"} for i in range(300)]
    jobs += [{"id": 302 + i, "subtime": 1000 + 50 * i, "res": 1, "walltime": 20_000, "profile": "tiny"}
             for i in range(100)]
    rows, read = easy_run(tmp_path, hosts, jobs, {"long": {"type": "delay", "delay": 10_000},
                                                  "tiny": {"type": "delay", "delay": 10}})
    assert read == 100  # each one-host job, once: the pass that reads it starts it
    assert len(rows) == 402
    for i in range(100):  # each started when it arrived
        assert float(rows[str(302 + i)]["waiting_time"]) == 0.0


def test_an_execute_job_reads_no_host_one_by_one_when_its_hosts_are_free(tmp_path, monkeypatch):
    """EXECUTE_JOB checks that its hosts are free with one search of Simulation.host_busy (a byte
    per host); only a host found busy there sends it to the slow look at each host, which
    explains a refusal. Over 2,000 jobs that reuse each host many times, no decision is refused,
    so the slow look is never taken: host_busy is cleared when each job leaves its hosts."""
    from joulesim.simulator.engine import decisions

    slow_looks = []
    explain = decisions.DecisionApplier._explain_unusable_hosts

    def counted(self, alloc, job_id, context):
        slow_looks.append(job_id)
        return explain(self, alloc, job_id, context)

    monkeypatch.setattr(decisions.DecisionApplier, "_explain_unusable_hosts", counted)
    sim = Simulation(SimulationConfig(platform=load_platform("cluster32"),
                                      workloads=[load_workload(delay_jobs(tmp_path, 2000), "w0")],
                                      export_prefix=str(tmp_path / "out")),
                     DeciderLink(InProcessRequester(load_decider("easy", {}))))
    sim.run()
    assert slow_looks == []
    assert sim.host_busy == bytes(32)  # every job ended: no host busy
    assert len((tmp_path / "out_jobs.csv").read_text().splitlines()) == 2001
