"""joulesim.Simulation: run_until, state and fork (issue 50).

A fork's continuation must equal a fresh run that made the same decisions: every output equal
to the uninterrupted run's, byte for byte (the schedule's two wall-clock columns aside), with
energy, machine switches and network jobs, in both event groupings.
"""

from __future__ import annotations

import csv
import io
import os
import signal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import joulesim
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import DecisionError, JoulesimError

WALL_CLOCK = ("scheduling_time", "simulation_time")
MEASURED = os.path.join(os.path.dirname(__file__), "data", "batsim_measured", "links32_ptasks")

#: (platform, workload, decider, options, keywords): energy with switches; network jobs.
CASES = {
    "energy, switching": ("energy2", "default", "easy", {"t_idle": 600}, {"energy": True}),
    "network jobs, energy, switching": (os.path.join(MEASURED, "energy_links32.xml"),
                                        os.path.join(MEASURED, "links32_ptasks.json"), "easy", {"t_idle": 300},
                                        {"energy": True}),
    "per-time": ("cluster32", "default", "easy", {}, {"event_grouping": "per-time"}),
}


def outputs(result) -> dict[str, str]:
    """Every output's text, the schedule's wall-clock columns dropped."""
    texts = dict(result._result.texts)
    rows = list(csv.DictReader(io.StringIO(texts["schedule"])))
    texts["schedule"] = repr([{k: v for k, v in row.items() if k not in WALL_CLOCK} for row in rows])
    return texts


def fresh(case: str) -> dict[str, str]:
    platform, workload, decider, options, keywords = CASES[case]
    return outputs(joulesim.simulate(platform, workload, decider, options=options, **keywords))


def stepwise(case: str) -> joulesim.Simulation:
    platform, workload, decider, options, keywords = CASES[case]
    return joulesim.Simulation(platform, workload, decider, options=options, **keywords)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_run_paused_and_forked_ends_as_the_uninterrupted_run(case):
    expected = fresh(case)
    with stepwise(case) as sim:
        sim.run_until(20_000)
        assert 0 < sim.now <= 20_000 or sim.finished
        with sim.fork() as other:
            assert other.now == sim.now
            assert outputs(other.run()) == expected
        assert outputs(sim.run()) == expected


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(0, 200_000), min_size=1, max_size=4), st.integers(0, 3))
def test_forks_at_any_instants_end_as_the_uninterrupted_run(instants, fork_after):
    expected = fresh("energy, switching")
    sims = [stepwise("energy, switching")]
    try:
        for step, when in enumerate(sorted(instants)):
            sims[-1].run_until(when)
            if step == fork_after:
                sims.append(sims[-1].fork())
        for sim in sims:
            assert outputs(sim.run()) == expected
    finally:
        for sim in sims:
            sim.close()


def test_a_fork_shares_nothing_with_its_parent():
    with stepwise("per-time") as sim:
        sim.run_until(10_000)
        before = sim.state()
        with sim.fork() as other:
            other.run_until(40_000)
            assert other.state()["now"] > before["now"]
            other.run()
        assert sim.state() == before  # (the parent did not move with its fork)
        sim.run_until(40_000)
        assert sim.state()["ended"] != before["ended"]


def test_the_state_is_the_jobs_as_the_full_run_has_them_then():
    jobs = joulesim.simulate("cluster32", "default", "easy").jobs
    waited = jobs[jobs.waiting_time > 0].iloc[len(jobs[jobs.waiting_time > 0]) // 2]  # (a job waits then)
    with joulesim.Simulation("cluster32", "default", "easy") as sim:
        now = sim.run_until(waited.submission_time + waited.waiting_time / 2)
        state = sim.state()
    assert state["now"] == now and not state["finished"]
    ids = lambda frame: sorted(f"{w}!{i}" for w, i in zip(frame.workload_name, frame.job_id))  # noqa: E731
    submitted = jobs[jobs.submission_time <= now]
    assert sorted(state["ended"]) == ids(submitted[submitted.finish_time <= now])
    assert sorted(state["running"]) == ids(submitted[(submitted.starting_time <= now) & (submitted.finish_time > now)])
    assert sorted(state["waiting"]) == ids(submitted[submitted.starting_time > now])
    assert state["waiting"] and state["running"] and state["ended"]  # (an instant where each is seen)


def test_run_until_an_earlier_time_changes_nothing_and_the_end_is_reported():
    with joulesim.Simulation("cluster32", "tiny", "easy") as sim:
        assert sim.run_until(60) <= 60
        state = sim.state()
        assert sim.run_until(10) == sim.now and sim.state() == state
        sim.run_until(1e9)
        assert sim.finished and sim.state()["finished"]
        assert len(sim.run().jobs) == 4
        assert sim.run_until(2e9) == sim.now  # (over: nothing more)


class _FailsLater(Decider):
    """Executes nothing and asks for nothing: the run stops, stuck, once jobs come."""

    def on_simulation_begins(self, message):
        return []


def test_a_failing_run_raises_its_error_at_the_call_that_meets_it_and_after():
    with joulesim.Simulation("cluster32", "tiny", _FailsLater()) as sim:
        with pytest.raises(DecisionError, match="left 4 submitted job"):
            sim.run_until(1e6)
        with pytest.raises(DecisionError):
            sim.run()


@pytest.mark.parametrize("keywords, match", [
    ({"export": "/tmp/x"}, "keeps its outputs in memory"),
    ({"in_process": False}, "keeps its outputs in memory"),
    ({"no_such_keyword": 1}, "not a keyword of joulesim.simulate"),
    ({"decider": ["batsched", "-s", "{endpoint}"]}, "a fork cannot copy"),
])
def test_what_a_stepwise_simulation_cannot_take_is_refused_with_the_reason(keywords, match):
    with pytest.raises(JoulesimError, match=match):
        joulesim.Simulation("cluster32", "tiny", **keywords)


def test_a_bad_input_is_raised_at_construction_before_any_process():
    with pytest.raises(JoulesimError, match="no-such-platform"):
        joulesim.Simulation("no-such-platform.xml", "tiny")


def test_a_simulation_whose_process_was_killed_says_so_and_a_closed_one_too():
    sim = joulesim.Simulation("cluster32", "tiny", "easy")
    os.kill(sim._pid, signal.SIGKILL)
    with pytest.raises(JoulesimError, match="ended unexpectedly"):
        sim.run_until(100)
    sim.close()
    with pytest.raises(JoulesimError, match="closed"):
        sim.state()


def test_closing_ends_the_process_and_its_forks_end_with_their_own_close():
    sim = joulesim.Simulation("cluster32", "default", "easy")
    sim.run_until(1_000)
    other = sim.fork()
    pid = sim._pid
    sim.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # (reaped by close: gone)
    assert len(other.run().jobs) == 400  # (the fork lives on until its own close)
    other.close()


# ---------------------------------------------------------------- another decider takes over
#: Takeover cases: those of CASES without shutdown (a new decider is refused while machines are off).
TAKEOVER_CASES = {
    "energy": ("energy2", "default", "easy", {}, {"energy": True}),
    "network jobs, energy": CASES["network jobs, energy, switching"][:3] + ({}, {"energy": True}),
    "per-time": CASES["per-time"],
}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(0, 150_000), st.sampled_from(sorted(TAKEOVER_CASES)))
def test_a_fresh_easy_taking_over_a_fork_ends_as_the_uninterrupted_easy_run(when, case):
    """EASY's state is its queue and its running jobs' estimated ends: told the present (the
    running jobs with their starts, the waiting jobs), a new EASY decides as the old one would."""
    platform, workload, decider, options, keywords = TAKEOVER_CASES[case]
    expected = outputs(joulesim.simulate(platform, workload, decider, options=options, **keywords))
    with joulesim.Simulation(platform, workload, decider, options=options, **keywords) as sim:
        sim.run_until(when)
        for _ in range(20):  # (paused while the old decider's reply or events are on their way: a moment later)
            try:
                other = sim.fork(decider="easy")
                break
            except JoulesimError as exc:
                if "the simulation is over" in str(exc):  # (a short workload: nothing left to take over)
                    assert sim.finished
                    return
                assert "has not replied yet" in str(exc) or "on their way" in str(exc), exc
                sim.run_until(sim.now + 1e-6)
        with other:
            assert outputs(other.run()) == expected


def test_fcfs_taking_over_keeps_the_past_and_starts_the_rest_in_submission_order():
    with joulesim.Simulation("cluster32", "default", "easy") as sim:
        now = sim.run_until(40_000)
        with sim.fork(decider="fcfs") as other:
            switched = other.run().jobs
        kept = sim.run().jobs
    before = kept.starting_time <= now
    assert switched[before].equals(kept[before])  # what started before the switch is the same
    after = switched[switched.starting_time > now].sort_values(["submission_time", "job_id"])
    assert after.starting_time.is_monotonic_increasing  # FCFS: no job overtakes an earlier one
    assert not after.starting_time.equals(kept[kept.starting_time > now].sort_values(
        ["submission_time", "job_id"]).starting_time)  # (EASY did overtake: the switch changed something)


class _Forgetful(Decider):
    """Keeps no state and does not take running jobs over."""


def test_a_decider_that_cannot_take_running_jobs_over_says_so():
    with joulesim.Simulation("cluster32", "default", "easy") as sim:
        sim.run_until(20_000)
        assert sim.state()["running"]
        with sim.fork(decider=_Forgetful()) as other:
            with pytest.raises(JoulesimError, match="cannot take over a simulation whose jobs are running"):
                other.run()


def test_another_decider_is_refused_where_the_present_cannot_be_told():
    with joulesim.Simulation("energy2", "default", "easy", energy=True, options={"t_idle": 60}) as sim:
        sim.run_until(100_000)
        with pytest.raises(JoulesimError, match=r"cannot change at t=.*switched off or switching"):
            sim.fork(decider="fcfs")
        sim.fork().close()  # (the same decider: a plain fork is always possible)
    with pytest.raises(JoulesimError, match="options go with it"):
        joulesim.Simulation("cluster32", "tiny", "easy").fork(options={"x": 1})
