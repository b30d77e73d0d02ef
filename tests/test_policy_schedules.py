"""Exact schedules computed by hand, simulated end to end with each shipped decider.

4 hosts; every job's delay equals its walltime, so estimates are exact:
    A t=0 res 3 wall 100 | B t=1 res 3 wall 10 | C t=2 res 4 wall 10
    D t=3 res 1 wall 150 | E t=4 res 1 wall 50
- FCFS: strict order, no backfilling.
- SJF: strict order of walltime (B, C, E, D), no backfilling.
- EASY: only the head (B) is protected; D backfills at 3 on the host B leaves spare, which
  then delays C until D ends at 153.
- Conservative: every queued job holds a reservation, so D may not delay C (reserved at
  110); E fits before B's reservation and starts at once.
"""

from __future__ import annotations

import pytest
from conftest import jobs_by_id, run_in_process, write_platform, write_workload

from joulesim.deciders import load_decider

JOBS = [("A", 0, 3, 100), ("B", 1, 3, 10), ("C", 2, 4, 10), ("D", 3, 1, 150), ("E", 4, 1, 50)]

EXPECTED = {  # job: (start, finish, hosts)
    "fcfs": {"A": (0, 100, "0-2"), "B": (100, 110, "0-2"), "C": (110, 120, "0-3"),
             "D": (120, 270, "0"), "E": (120, 170, "1")},
    "sjf": {"A": (0, 100, "0-2"), "B": (100, 110, "0-2"), "C": (110, 120, "0-3"),
            "E": (120, 170, "0"), "D": (120, 270, "1")},
    "easy": {"A": (0, 100, "0-2"), "D": (3, 153, "3"), "B": (100, 110, "0-2"),
             "C": (153, 163, "0-3"), "E": (163, 213, "0")},
    "conservative": {"A": (0, 100, "0-2"), "E": (4, 54, "3"), "B": (100, 110, "0-2"),
                     "C": (110, 120, "0-3"), "D": (120, 270, "0")},
}


@pytest.mark.parametrize("decider", sorted(EXPECTED))
def test_hand_computed_schedule(tmp_path, decider):
    platform = write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [
        {"id": name, "subtime": t, "res": res, "walltime": wall, "delay": wall} for name, t, res, wall in JOBS])
    run_in_process(load_decider(decider, {}), platform, [workload], str(tmp_path / "out"))
    jobs = jobs_by_id(str(tmp_path / "out"))
    got = {name: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
           for name, r in jobs.items()}
    assert got == EXPECTED[decider]


def test_rejecter_rejects_everything(tmp_path):
    platform = write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [
        {"id": name, "subtime": t, "res": res, "walltime": wall, "delay": wall} for name, t, res, wall in JOBS])
    result = run_in_process(load_decider("rejecter", {}), platform, [workload], str(tmp_path / "out"))
    assert {r["final_state"] for r in jobs_by_id(str(tmp_path / "out")).values()} == {"REJECTED"}
    assert (result.stats.nb_rejected, result.stats.makespan) == (5, 0.0)
