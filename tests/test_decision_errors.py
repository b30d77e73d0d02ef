"""Every invalid decision ends the run with a message naming it, and keeps the outputs so far."""

from __future__ import annotations

import pytest
from conftest import read_csv, run_in_process, write_platform, write_workload
from scripted_decider import ScriptedDecider

from joulesim.protocol.errors import DecisionError, JoulesimError, ProtocolError


def run_with_decisions(tmp_path, decide_at_10):
    """4 hosts; job 1 (2 hosts) runs 0-5; job 2 (2 hosts) submitted at 10; job 3 at 50."""
    platform = write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 2, "delay": 5},
        {"id": 2, "subtime": 10, "res": 2, "delay": 100},
        {"id": 3, "subtime": 50, "res": 1, "delay": 1},
    ])

    def script(d, message):
        if message["now"] == 0:
            d.execute_job("w0!1", "0-1")
        elif message["now"] == 10:
            decide_at_10(d)

    prefix = str(tmp_path / "out")
    run_in_process(ScriptedDecider(script), platform, [workload], prefix)


@pytest.mark.parametrize("decide, error, pattern", [
    (lambda d: d.execute_job("w0!99", "0-1"), DecisionError, r"events\[0\] \(EXECUTE_JOB at t=10\).*unknown job 'w0!99'"),
    (lambda d: d.execute_job("w0!3", "0"), DecisionError, r"job w0!3: it is not submitted yet \(it is submitted at t=50\)"),
    (lambda d: d.execute_job("w0!1", "0-1"), DecisionError, r"cannot execute job w0!1: it is already finished"),
    (lambda d: d.execute_job("w0!2", "0-2"), DecisionError, r"job w0!2 requests 2 host\(s\) but alloc '0-2' has 3"),
    (lambda d: d.execute_job("w0!2", "3-4"), DecisionError, r"alloc '3-4' names hosts outside 0-3"),
    (lambda d: (d.execute_job("w0!2", "0-1"), d.reject_job("w0!2")), DecisionError,
     r"events\[1\] \(REJECT_JOB at t=10\): cannot reject job w0!2: it is already running"),
    (lambda d: d.execute_job("w0!2", "0-1", mapping={0: 0, 1: 5}), DecisionError,
     r"mapping sends executor 1 to alloc index 5"),
    # (an unknown pstate with -E: test_energy_model.py)
    (lambda d: d.set_resource_state("0", 7), DecisionError, r"SET_RESOURCE_STATE needs energy accounting.*run with -E"),
    (lambda d: d.query_consumed_energy(), DecisionError, r"QUERY consumed_energy needs .*-E/--energy"),
    (lambda d: d.change_job_state("w0!2", "RUNNING"), DecisionError, r"can only be moved to a final state"),
])
def test_invalid_decision(tmp_path, decide, error, pattern):
    with pytest.raises(error, match=pattern):
        run_with_decisions(tmp_path, decide)
    # What was written before the error stays on disk: job 1 finished at t=5.
    rows = read_csv(str(tmp_path / "out_jobs.csv"))
    assert [(r["job_id"], r["finish_time"]) for r in rows] == [("1", "5.000000")]
    assert read_csv(str(tmp_path / "out_machine_states.csv"))[0]["time"] == "0"  # job 1's start


def test_busy_hosts_are_refused(tmp_path):
    def decide(d):
        d.execute_job("w0!2", "0-1")
        d.think(1)
        d.execute_job("w0!2", "1-2")  # the same job again: it runs already

    with pytest.raises(DecisionError, match=r"cannot execute job w0!2: it is already running"):
        run_with_decisions(tmp_path, decide)

    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 2, "delay": 5},
                                         {"id": 2, "subtime": 0, "res": 1, "delay": 5}])

    def both(d, message):
        if message["now"] == 0:
            d.execute_job("w0!1", "0-1")
            d.execute_job("w0!2", "1")

    with pytest.raises(DecisionError, match=r"host 1 is busy running job w0!1 \(started at t=0\)"):
        run_in_process(ScriptedDecider(both), platform, [workload], str(tmp_path / "busy"))


@pytest.mark.parametrize("reply, pattern", [
    ({"now": 12, "events": [{"timestamp": 13, "type": "REJECT_JOB", "data": {"job_id": "w0!2"}}]}, r"events\[0\]"),
    ({"now": 10, "events": [{"timestamp": 10, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2"}}]}, r"alloc"),
    ({"now": 10, "events": [{"timestamp": 10, "type": "FOO", "data": {}}]}, r"FOO"),
])
def test_replies_breaking_the_protocol(tmp_path, reply, pattern):
    """Timestamps after the reply's now, missing fields, unknown types."""
    class RawReply(ScriptedDecider):
        def handle(self, message):
            if message["now"] == 10:
                return reply
            return super().handle(message)

    platform = write_platform(tmp_path, 4)
    workload = write_workload(tmp_path, [{"id": 2, "subtime": 10, "res": 2, "delay": 1}])
    with pytest.raises(ProtocolError, match=pattern):
        run_in_process(RawReply(), platform, [workload], str(tmp_path / "out"))


def test_a_decider_that_never_schedules_is_reported_not_hung(tmp_path):
    platform = write_platform(tmp_path, 1)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5}])
    with pytest.raises(JoulesimError, match=r"left 1 submitted job\(s\) waiting \(w0!1\).*CALL_ME_LATER"):
        run_in_process(ScriptedDecider(), platform, [workload], str(tmp_path / "out"))
