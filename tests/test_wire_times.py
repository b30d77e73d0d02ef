"""Times on the wire as Batsim 4 treats them: a decider that prints times with fewer digits
than it was given (batsched answers 2904.153 to a call at 2904.1530000000002) is not
travelling back in time. Batsim applies a decision stamped before its clock at the clock, at
any age; a negative time, which no clock starting at 0 gives, is refused."""

from __future__ import annotations

import random

import pytest

import joulesim
from joulesim.deciders import load_decider
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import ProtocolError
from joulesim.protocol.validation import validate_decider_message, validate_simulator_message


class Rounding(Decider):
    """Wraps a decider and writes every time of its replies with 15 significant digits, as a
    C++ decider printing doubles with a fixed precision does: 16131.3489070001 for
    16131.348907000103. Half of them round down, before the time of the call."""

    def __init__(self, inner: Decider, digits: int = 15):
        super().__init__()
        self.inner = inner
        self.digits = digits
        self.earlier = 0  # replies whose now came out before the call's

    def handle(self, message):
        reply = self.inner.handle(message)
        shorten = lambda t: float(f"{t:.{self.digits}g}")  # noqa: E731
        self.earlier += shorten(reply["now"]) < message["now"]
        return {"now": shorten(reply["now"]),
                "events": [dict(e, timestamp=shorten(e["timestamp"])) for e in reply["events"]]}


def jobs_with_awkward_times(count: int = 300) -> dict:
    rng = random.Random(3)
    t, jobs = 0.0, []
    for i in range(count):
        t += rng.uniform(0.5, 30) + 1e-9 * rng.random()  # times whose shortest repr is long
        jobs.append({"id": i, "subtime": t, "res": rng.choice([1, 2, 4, 8]), "walltime": 500,
                     "profile": f"d{i}"})
    profiles = {f"d{i}": {"type": "delay", "delay": rng.uniform(1, 400) + 0.1 * rng.random()} for i in range(count)}
    return {"nb_res": 16, "jobs": jobs, "profiles": profiles}


def test_a_decider_rounding_the_times_it_was_given_runs_to_the_end_with_the_same_schedule():
    workload = jobs_with_awkward_times()
    # With full-precision times (per-time grouping): under Batsim's grouping the decider reads
    # times already printed with six decimals, and a stamp rounded up waits for its time, as in
    # Batsim (tests/test_batsim_message_grouping.py).
    exact = joulesim.simulate("cluster32", workload, load_decider("easy"), mmax=16, event_grouping="per-time")
    decider = Rounding(load_decider("easy"))
    rounded = joulesim.simulate("cluster32", workload, decider, mmax=16, event_grouping="per-time")
    assert len(rounded.jobs) == 300
    assert decider.earlier > 50  # the case this test is about happened many times
    columns = ["job_id", "starting_time", "finish_time", "allocated_resources"]
    assert rounded.jobs[columns].equals(exact.jobs[columns])


def test_the_batsched_case_a_reply_now_below_the_call_is_the_call(tmp_path):
    """The recorded exchange: the call at now=2904.1530000000002, batsched's reply at 2904.153
    with an EXECUTE_JOB stamped 2904.153. The job starts at the call's time. (Full-precision
    times: per-time grouping. Batsim itself would have sent 2904.153000.)"""
    call_time = 2904.1530000000002
    workload = {"nb_res": 4, "jobs": [{"id": 1, "subtime": call_time, "res": 4, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 10}}}

    class Batsched(Decider):
        def handle(self, message):
            reply = super().handle(message)
            if any(e["type"] == "JOB_SUBMITTED" for e in message["events"]):
                assert message["now"] == call_time
                return {"now": 2904.153, "events": [{"timestamp": 2904.153, "type": "EXECUTE_JOB",
                                                     "data": {"job_id": "w0!1", "alloc": "0-3"}}]}
            return reply

    result = joulesim.simulate("cluster32", workload, Batsched(), mmax=4, event_grouping="per-time")
    row = result.jobs.iloc[0]
    assert row["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert float(row["starting_time"]) == pytest.approx(call_time, abs=1e-6)
    assert float(row["waiting_time"]) == 0.0


def test_a_decision_stamped_well_before_the_clock_applies_at_the_clock_with_one_warning(capfd):
    workload = {"nb_res": 4, "jobs": [{"id": i, "subtime": 100 * i, "res": 1, "profile": "p"} for i in (1, 2)],
                "profiles": {"p": {"type": "delay", "delay": 10}}}

    class Late(Decider):
        def on_job_submitted(self, job):
            self.now -= 50  # stamps its decision 50 s in the past
            self.execute_job(job.id, "0")

    result = joulesim.simulate("cluster32", workload, Late(), mmax=4)
    assert list(result.jobs["starting_time"]) == [100.0, 200.0]
    err = capfd.readouterr().err
    assert err.count("stamped 50 s before the simulator's clock") == 1
    # ...and the end of the run says how many there were in all, and by how much at most.
    assert "2 decisions in all were stamped before the simulator's clock (by up to 50 s)" in err


def test_a_decision_stamped_at_any_age_before_the_clock_applies_at_the_clock():
    """Batsim 4.2.1 sets no bound (its send_message_at_time only ever waits for a later time):
    a decision stamped at t=0 in answer to a call at t=300 starts its job at 300."""
    workload = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 300, "res": 1, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 10}}}

    class Stale(Decider):
        def on_job_submitted(self, job):
            self.now = 0.0
            self.execute_job(job.id, "0")

    result = joulesim.simulate("cluster32", workload, Stale(), mmax=4)
    assert list(result.jobs["starting_time"]) == [300.0]


@pytest.mark.parametrize("reply, where", [
    ({"now": 5, "events": [{"timestamp": -1, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0"}}]},
     r"events\[0\] \(EXECUTE_JOB at t=-1\): timestamp -1 is negative: simulated time starts at 0"),
    ({"now": 5, "events": [{"timestamp": -1e-9, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}}]},
     r"events\[0\] \(REJECT_JOB at t=-1e-09\): timestamp -1e-09 is negative"),
    ({"now": -300, "events": []}, r"now must be a time >= 0 \(simulated time starts at 0\); got -300"),
])
def test_a_negative_time_in_a_reply_is_a_protocol_error(reply, where):
    with pytest.raises(ProtocolError, match=r"^decider reply: " + where):
        validate_decider_message(reply, 5)


def test_a_decider_stamping_a_negative_time_stops_the_run_naming_the_decision():
    workload = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 300, "res": 1, "profile": "p"}],
                "profiles": {"p": {"type": "delay", "delay": 10}}}

    class Negative(Decider):
        def on_job_submitted(self, job):
            self.execute_job(job.id, "0")

        def handle(self, message):  # stamps its decisions -1, e.g. a "not yet known" time sent as it is
            reply = super().handle(message)
            return {**reply, "events": [dict(e, timestamp=-1.0) for e in reply["events"]]}

    with pytest.raises(ProtocolError, match=r"EXECUTE_JOB at t=-1\): timestamp -1 is negative"):
        joulesim.simulate("cluster32", workload, Negative(), mmax=4)


def test_a_negative_time_from_the_simulator_is_refused_by_the_decider_side():
    message = {"now": 3, "events": [{"timestamp": -2, "type": "REQUESTED_CALL", "data": {}}]}
    with pytest.raises(ProtocolError, match=r"REQUESTED_CALL at t=-2\): timestamp -2 is negative"):
        validate_simulator_message(message)


class Recording(Decider):
    """Wraps a decider and keeps every message it is given."""

    def __init__(self, inner: Decider):
        super().__init__()
        self.inner = inner
        self.messages = []

    def handle(self, message):
        self.messages.append(message)
        return self.inner.handle(message)


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_every_time_sent_is_a_double_from_the_first_message_on(grouping):
    # Batsim writes 0.000000 for the first message's now and SIMULATION_BEGINS' timestamp: a
    # decider in a typed language reads a double, never the integer 0.
    decider = Recording(load_decider("easy"))
    joulesim.simulate("cluster32", jobs_with_awkward_times(20), decider, mmax=16, event_grouping=grouping)
    first = decider.messages[0]
    assert first["events"][0]["type"] == "SIMULATION_BEGINS"
    times = [(m["now"], [e["timestamp"] for e in m["events"]]) for m in decider.messages]
    assert all(type(now) is float and all(type(t) is float for t in stamps) for now, stamps in times), times[:2]
