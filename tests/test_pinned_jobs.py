"""Option `pinned` of the queue deciders (deciders/common/pinned_jobs.py): a listed job starts on
its listed machines as soon as it is submitted, before the policy's pass, which then sees those
machines busy. What `joulesim slurm forecast` builds on."""

from __future__ import annotations

import json

import pytest

import joulesim
from joulesim.deciders import DeciderChoiceError
from joulesim.protocol.errors import DecisionError
from joulesim.simulator.platform.platform_loader import shipped_platform_path

PLATFORM = shipped_platform_path("small4")  # (installed or in the checkout: never beside the package)


def four_jobs() -> dict:
    """Two waiting jobs first in submission order (ids sort before the running ones), then two
    running jobs to pin: r0 on machines 2-3 for 100 s, r1 on machine 0 for 50 s. Without the
    pins, `a` (3 machines) would start at 0 on 0-2 and the running jobs would wait."""
    jobs = [("a", 3, 40), ("b", 1, 30), ("r0", 2, 100), ("r1", 1, 50)]
    return {"nb_res": 4,
            "jobs": [{"id": name, "subtime": 0, "res": res, "walltime": run, "profile": f"d{run}"}
                     for name, res, run in jobs],
            "profiles": {f"d{run}": {"type": "delay", "delay": run} for _, _, run in jobs}}


def run(tmp_path, decider: str, pins: dict, workload: dict | None = None):
    path = tmp_path / "pinned.json"
    path.write_text(json.dumps(pins))
    result = joulesim.simulate(PLATFORM, workload or four_jobs(), decider, options={"pinned": str(path)},
                               verbosity="quiet")
    jobs = result.jobs.assign(job_id=result.jobs["job_id"].astype(str)).set_index("job_id")
    return ({j: float(jobs.loc[j, "starting_time"]) for j in jobs.index},
            {j: str(jobs.loc[j, "allocated_resources"]) for j in jobs.index})


# Hand-derived: at 0 only machine 1 is free. `a` needs 3 machines: 2 are free at 50 (r1 ends),
# 4 at 100 (r0 ends), so it starts at 100. `b` (30 s) fits machine 1 now and ends before 100:
# EASY, conservative and SJF (shortest first) start it at 0; strict FCFS keeps it behind `a`.
@pytest.mark.parametrize("decider, start_a, start_b", [("easy", 100, 0), ("conservative", 100, 0),
                                                       ("sjf", 100, 0), ("fcfs", 100, 100)])
def test_pinned_jobs_start_at_once_on_their_machines_and_the_policy_schedules_around_them(
        tmp_path, decider, start_a, start_b):
    starts, allocs = run(tmp_path, decider, {"w0!r0": "2-3", "w0!r1": "0"})
    assert starts == {"a": start_a, "b": start_b, "r0": 0, "r1": 0}
    assert allocs["r0"] == "2-3" and allocs["r1"] == "0"
    assert allocs["b"] == ("1" if start_b == 0 else "3")


def test_a_pinned_job_on_a_busy_machine_is_a_decision_error(tmp_path):
    with pytest.raises(DecisionError, match=r"pinned job w0!r1: machines 3 are not free"):
        run(tmp_path, "easy", {"w0!r0": "2-3", "w0!r1": "3"})


def test_a_pinned_job_given_another_number_of_machines_is_a_decision_error(tmp_path):
    with pytest.raises(DecisionError, match=r"pinned job w0!r0: 1 machines pinned \(2\) but the job asks for 2"):
        run(tmp_path, "easy", {"w0!r0": "2", "w0!r1": "0"})


@pytest.mark.parametrize("content, message", [("[1]", "expected a JSON object"), ("{", "not JSON"),
                                               ('{"w0!r0": "2-"}', "not an interval set")])
def test_a_bad_pinned_file_is_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DeciderChoiceError, match=message):
        joulesim.simulate(PLATFORM, four_jobs(), "easy", options={"pinned": str(path)}, verbosity="quiet")


def test_deciders_that_do_not_pin_refuse_the_option(tmp_path):
    with pytest.raises(DeciderChoiceError, match="does not accept option"):
        run(tmp_path, "energybud", {"w0!r0": "2-3"})
