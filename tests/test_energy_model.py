"""Energy: power states, switching machines off and on, exact joules, and the energy outputs.

Hand-computed timelines on the shipped 2-host `energy2` platform (Taurus calibration of
seed 001 table 6.1): computation pstate 0 at 1 Gflop/s, 95 W idle, 190.74 W at full load;
sleep pstate 1 at 9.75 W; switch-off through pstate 2 (6.10 s at 101 W); switch-on through
pstate 3 (151.52 s at 125.17 W).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_decider import ScriptedDecider

from joulesim.deciders import load_decider
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import DecisionError

from conftest import jobs_by_id, read_csv, run_in_process, write_workload

OFF, ON = 6.1, 151.52  # transition seconds (1 flop at the virtual pstate's speed)
IDLE, FULL, SLEEP, W_OFF, W_ON = 95.0, 190.74, 9.75, 101.0, 125.17
TEN_SECONDS = {"type": "parallel_homogeneous", "cpu": 10e9, "com": 0}


def approx(value):
    return pytest.approx(value, rel=1e-12, abs=1e-9)


def two_jobs(tmp_path):
    """Job 1 (1 host, 10 s of computation) at t=0; job 2 (same) submitted at t=100."""
    return write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 1, "profile": "ten"},
        {"id": 2, "subtime": 100, "res": 1, "profile": "ten"},
    ], {"ten": TEN_SECONDS})


def sleep_and_boot(d, message):
    """Job 1 on host 0; host 1 off at 30, booted when job 2 arrives, job 2 on it once on."""
    types = [e["type"] for e in message["events"]]
    now = message["now"]
    if now == 0:
        d.execute_job("w0!1", "0")
        d.call_me_later(30)
        d.call_me_later(50)
    elif now == 30:
        d.set_resource_state("1", 1)
    elif now == 50 and "REQUESTED_CALL" in types:
        d.query_consumed_energy()
    elif now == 100 and "JOB_SUBMITTED" in types:
        d.set_resource_state("1", 0)
    elif "RESOURCE_STATE_CHANGED" in types and message["events"][0]["data"]["state"] == "0":
        d.execute_job("w0!2", "1")


def test_sleep_and_boot_timeline_and_joules(tmp_path):
    decider = ScriptedDecider(sleep_and_boot)
    prefix = str(tmp_path / "out")
    result = run_in_process(decider, "energy2", [two_jobs(tmp_path)], prefix, energy=True)

    changes = decider.events_of("RESOURCE_STATE_CHANGED")
    assert [(now, e["data"]) for now, e in changes] == [
        (approx(30 + OFF), {"resources": "1", "state": "1"}),
        (approx(100 + ON), {"resources": "1", "state": "0"}),
    ]
    jobs = jobs_by_id(prefix)
    assert float(jobs["2"]["starting_time"]) == approx(251.52)
    assert float(jobs["2"]["finish_time"]) == approx(261.52)  # full speed after the boot
    end = 100 + ON + 10

    # Joules of each phase, machine by machine.
    host0 = FULL * 10 + IDLE * (end - 10)
    host1 = IDLE * 30 + W_OFF * OFF + SLEEP * (100 - 30 - OFF) + W_ON * ON + FULL * 10
    assert float(result.schedule["consumed_joules"]) == approx(round(host0 + host1, 6))
    assert float(jobs["1"]["consumed_energy"]) == approx(FULL * 10)
    assert float(jobs["2"]["consumed_energy"]) == approx(FULL * 10)

    # QUERY at t=50 is answered at t=50 with the joules so far.
    answers = decider.events_of("ANSWER")
    assert len(answers) == 1 and answers[0][0] == 50
    expected_50 = FULL * 10 + IDLE * 40 + IDLE * 30 + W_OFF * OFF + SLEEP * (50 - 30 - OFF)
    assert answers[0][1]["data"]["consumed_energy"] == approx(expected_50)

    schedule = result.schedule
    assert schedule["nb_machine_switches"] == "2" and schedule["nb_grouped_switches"] == "2"
    assert float(schedule["time_switching_off"]) == approx(OFF)
    assert float(schedule["time_sleeping"]) == approx(100 - 30 - OFF)
    assert float(schedule["time_switching_on"]) == approx(ON)
    assert float(schedule["time_computing"]) == approx(20)
    # Batsim adds a machine's time in a state when it leaves it: host 1 idled from 0 to 30; host
    # 0's idling after job 1 (and host 1's after job 2) is never left, so never added.
    assert float(schedule["time_idle"]) == approx(30)

    states = [(r["time"], r["nb_sleeping"], r["nb_switching_on"], r["nb_switching_off"], r["nb_idle"],
               r["nb_computing"]) for r in read_csv(prefix + "_machine_states.csv")]
    # A row per job start and end, per SET_RESOURCE_STATE and per switch done, as Batsim writes
    # them (times with %g).
    assert states == [
        ("0", "0", "0", "0", "1", "1"),
        ("10", "0", "0", "0", "2", "0"),
        ("30", "0", "0", "1", "1", "0"),
        ("36.1", "1", "0", "0", "1", "0"),
        ("100", "0", "1", "0", "1", "0"),
        ("251.52", "0", "0", "0", "2", "0"),
        ("251.52", "0", "0", "0", "1", "1"),
        ("261.52", "0", "0", "0", "2", "0"),
    ]
    pstates = [(r["time"], r["machine_id"], r["new_pstate"]) for r in read_csv(prefix + "_pstate_changes.csv")]
    # As Batsim writes them: -2 (towards sleep) / -1 (towards computation) when requested,
    # the target pstate when the switch is over (not the virtual pstates' ids).
    assert pstates == [("0", "0-1", "0"), ("30", "1", "-2"), ("36.1", "1", "1"),
                       ("100", "1", "-1"), ("251.52", "1", "0")]

    energy_rows = read_csv(prefix + "_consumed_energy.csv")
    assert [(r["time"], r["event_type"]) for r in energy_rows] == [
        ("0.000000", "s"), ("10.000000", "e"), ("30.000000", "p"), ("36.100000", "p"), ("100.000000", "p"),
        ("251.520000", "p"), ("251.520000", "s"), ("261.520000", "e")]
    assert float(energy_rows[-1]["energy"]) == approx(round(host0 + host1, 6))
    # wattmin: the static power at the row (a request's row before the machines move, as in
    # Batsim; a switch's end after); epower: mean power since the previous row.
    assert float(energy_rows[2]["wattmin"]) == approx(IDLE + IDLE)
    assert float(energy_rows[3]["wattmin"]) == approx(IDLE + SLEEP)
    assert float(energy_rows[1]["epower"]) == approx(FULL + IDLE)
    assert energy_rows[6]["epower"] == "NA"  # no time elapsed since the previous row


def test_a_job_killed_at_its_walltime_on_several_hosts_pays_for_what_it_ran(tmp_path):
    # 100 s of work per host, walltime 40 s, on both hosts: 2 x 190.74 W x 40 s.
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 2, "profile": "long", "walltime": 40},
        {"id": 2, "subtime": 50, "res": 2, "delay": 20},
    ], {"long": {"type": "parallel_homogeneous", "cpu": 100e9, "com": 0}})
    prefix = str(tmp_path / "out")
    result = run_in_process(load_decider("fcfs"), "energy2", [workload], prefix, energy=True)
    jobs = jobs_by_id(prefix)
    assert jobs["1"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert float(jobs["1"]["consumed_energy"]) == approx(2 * FULL * 40)
    assert float(jobs["2"]["consumed_energy"]) == approx(2 * IDLE * 20)  # a delay job idles
    total = 2 * FULL * 40 + 2 * IDLE * 10 + 2 * IDLE * 20
    assert float(result.schedule["consumed_joules"]) == approx(total)


def test_a_killed_job_and_an_unequal_parallel_task(tmp_path):
    # Job 1: 'parallel' with 10 Gflop on host 0 and 5 Gflop on host 1: 10 s, host 1 half loaded.
    # Job 2: the same, killed by the decider at t=20 after 4 s.
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 2, "profile": "unequal"},
        {"id": 2, "subtime": 16, "res": 2, "profile": "unequal"},
    ], {"unequal": {"type": "parallel", "cpu": [10e9, 5e9], "com": [0, 0, 0, 0]}})

    def script(d, message):
        now = message["now"]
        for event in message["events"]:
            if event["type"] == "JOB_SUBMITTED":
                d.execute_job(event["data"]["job_id"], "0-1")
                if now == 16:
                    d.call_me_later(20)
            elif event["type"] == "REQUESTED_CALL":
                d.kill_jobs(["w0!2"])

    prefix = str(tmp_path / "out")
    run_in_process(ScriptedDecider(script), "energy2", [workload], prefix, energy=True)
    jobs = jobs_by_id(prefix)
    half = IDLE + (FULL - IDLE) * 0.5
    assert float(jobs["1"]["consumed_energy"]) == approx((FULL + half) * 10)
    assert jobs["2"]["final_state"] == "COMPLETED_KILLED"
    assert float(jobs["2"]["consumed_energy"]) == approx((FULL + half) * 4)


def test_computation_pstate_changes_are_instant_and_answered_at_once(tmp_path):
    # A platform with two computation pstates: 1 Gflop/s at 100-200 W and 0.5 Gflop/s at 50-80 W.
    path = tmp_path / "dvfs.xml"
    path.write_text("""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="h0" speed="1Gf, 0.5Gf" pstate="0"><prop id="wattage_per_state" value="100:200, 50:80"/></host>
  <host id="m" speed="1Gf"><prop id="role" value="master"/></host>
</zone></platform>""")
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "profile": "ten"}],
                              {"ten": TEN_SECONDS})

    def script(d, message):
        if message["now"] == 0 and "JOB_SUBMITTED" in [e["type"] for e in message["events"]]:
            d.set_resource_state("0", 1)
            d.execute_job("w0!1", "0")

    decider = ScriptedDecider(script)
    prefix = str(tmp_path / "out")
    result = run_in_process(decider, str(path), [workload], prefix, energy=True)
    assert [(now, e["data"]["state"]) for now, e in decider.events_of("RESOURCE_STATE_CHANGED")] == [(0, "1")]
    jobs = jobs_by_id(prefix)
    assert float(jobs["1"]["execution_time"]) == approx(20)  # half speed
    assert float(jobs["1"]["consumed_energy"]) == approx(80 * 20)
    assert float(result.schedule["consumed_joules"]) == approx(80 * 20)


@pytest.mark.parametrize("at, decide, pattern", [
    (40, lambda d: d.execute_job("w0!2", "1"), r"job w0!2: host 1 is sleeping: switch it on .* RESOURCE_STATE_CHANGED"),
    (31, lambda d: d.execute_job("w0!2", "1"), r"host 1 is switching off until t=36\.1"),
    (31, lambda d: d.set_resource_state("1", 0), r"host 1 is switching off until t=36\.1: wait for its RESOURCE_STATE_CHANGED"),
    (5, lambda d: d.set_resource_state("0", 1), r"cannot switch off host 0: it is computing job w0!1"),
    (40, lambda d: d.set_resource_state("1", 1), r"host 1 is already sleeping .* sleep -> sleep"),
    (40, lambda d: d.set_resource_state("1", 3), r"pstate 3 of host 1 is a virtual switching pstate"),
    (40, lambda d: d.set_resource_state("0-1", 9), r"host 0 \(host0\) has no pstate 9: its pstates are 0-3"),
    (40, lambda d: d.set_resource_state("1-2", 0), r"resources '1-2' name hosts outside 0-1"),
])
def test_invalid_energy_decisions(tmp_path, at, decide, pattern):
    """Host 0 runs job 1 (0-10 s, computing); host 1 is switched off at 30 (asleep at 36.1)."""
    workload = write_workload(tmp_path, [
        {"id": 1, "subtime": 0, "res": 1, "profile": "ten"},
        {"id": 2, "subtime": 1, "res": 1, "delay": 1},
    ], {"ten": TEN_SECONDS})

    def script(d, message):
        now = message["now"]
        if now == 0:
            d.execute_job("w0!1", "0")
            for t in sorted({5, 30, 31, 40}):
                d.call_me_later(t)
        elif now == 30:
            d.set_resource_state("1", 1)
        if now == at and "REQUESTED_CALL" in [e["type"] for e in message["events"]]:
            decide(d)

    prefix = str(tmp_path / "out")
    with pytest.raises(DecisionError, match=pattern):
        run_in_process(ScriptedDecider(script), "energy2", [workload], prefix, energy=True)
    # Outputs written so far are kept.
    assert read_csv(prefix + "_consumed_energy.csv")[0]["event_type"] == "s"
    assert read_csv(prefix + "_pstate_changes.csv")[0]["machine_id"] == "0-1"


def test_energy_needs_a_power_model(tmp_path):
    from conftest import write_platform
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 1}])
    with pytest.raises(InputError, match=r"host h0: has no wattage_per_state property, which energy accounting \(-E\) needs"):
        run_in_process(load_decider("fcfs"), platform, [workload], str(tmp_path / "out"), energy=True)


def test_machines_can_start_asleep(tmp_path):
    path = tmp_path / "asleep.xml"
    host = ('<host id="h{i}" speed="1Gf, 1e-9Mf, 0.16393442622950818f, 0.006599788806758184f" pstate="{p}">'
            '<prop id="wattage_per_state" value="95.0:190.74, 9.75:9.75, 101.0:101.0, 125.17:125.17"/>'
            '<prop id="sleep_pstates" value="1:2:3"/></host>')
    path.write_text("<?xml version='1.0'?><platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
                    + host.format(i=0, p=0) + host.format(i=1, p=1)
                    + '<host id="m" speed="1Gf"><prop id="role" value="master"/></host></zone></platform>')
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 10}])
    decider = load_decider("fcfs")
    prefix = str(tmp_path / "out")
    result = run_in_process(decider, str(path), [workload], prefix, energy=True)
    assert [r["state"] for r in decider.compute_resources] == ["idle", "sleeping"]
    assert float(result.schedule["consumed_joules"]) == approx(IDLE * 10 + SLEEP * 10)
    # Batsim's machine states start idle whatever the pstate: host 1 counts as idle, and as it
    # never changes, adds no time at all.
    assert float(result.schedule["time_sleeping"]) == 0
    first = read_csv(prefix + "_machine_states.csv")[0]
    assert (first["nb_sleeping"], first["nb_idle"], first["nb_computing"]) == ("0", "1", "1")


def test_a_long_run_does_not_drift(tmp_path):
    """20,000 computations of 0.11 s every 0.3 s on one host: the total against a closed form."""
    path = tmp_path / "one.xml"
    path.write_text("""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="h0" speed="1Gf"><prop id="wattage_per_state" value="95:190.74"/></host>
  <host id="m" speed="1Gf"><prop id="role" value="master"/></host>
</zone></platform>""")
    n = 20_000
    workload = write_workload(tmp_path, [{"id": i, "subtime": i * 0.3, "res": 1, "profile": "short"}
                                         for i in range(n)],
                              {"short": {"type": "parallel_homogeneous", "cpu": 1.1e8, "com": 0}})
    prefix = str(tmp_path / "out")
    run_in_process(load_decider("fcfs"), str(path), [workload], prefix, energy=True)
    rows = read_csv(prefix + "_consumed_energy.csv")
    end = (n - 1) * 0.3 + 0.11
    busy = math.fsum([1.1e8 / 1e9] * n)
    closed_form = IDLE * end + (FULL - IDLE) * busy
    assert float(rows[-1]["time"]) == pytest.approx(end, abs=1e-6)
    assert float(rows[-1]["energy"]) == pytest.approx(closed_form, rel=1e-14, abs=1e-6)


def test_the_energy_meter_stays_exact_over_a_million_changes():
    """The integrator itself, without output rounding: 500,000 jobs of 0.11 s every 0.3 s on a
    95 W / 190.74 W host. A plain float accumulator is off by ~1e-12 relative here."""
    from types import SimpleNamespace

    from joulesim.simulator.energy.energy_meter import EnergyMeter

    meter = EnergyMeter(None, [IDLE])
    n = 500_000
    dynamic = FULL - IDLE
    start = 0.0
    for i in range(n):
        start = i * 0.3
        job = SimpleNamespace()
        meter.job_started(start, job, [(0, 0)], dynamic)
        meter.job_ended(start + 0.11, job)
    end = start + 0.11
    busy = math.fsum(((i * 0.3 + 0.11) - i * 0.3) for i in range(n))
    closed_form = math.fsum([IDLE * end, dynamic * busy])
    assert meter.energy_at(end) == pytest.approx(closed_form, rel=2e-15)


def test_machine_time_totals_stay_exact_over_many_moves():
    """time_idle/time_computing are integrated by parts with compensated sums: 400,000 moves of
    64 machines (of 128) at times up to 3e7 s still give the closed form to the microsecond.
    As Batsim counts: the 64 others never change, so add nothing; the last idling is not added."""
    import io

    from joulesim.simulator.output.machine_states import COMPUTING, IDLE, MachineStates

    states = MachineStates(io.StringIO(), [None] * 128)
    n = 200_000
    for i in range(n):
        start = i * 150.3
        states.job_started(start, None, [(0, 63)])
        states.job_ended(start + 70.1, None, [(0, 63)])
    states.close((n - 1) * 150.3 + 70.1)
    busy = math.fsum(64 * ((i * 150.3 + 70.1) - i * 150.3) for i in range(n))
    idle = math.fsum(64 * (i * 150.3 - ((i - 1) * 150.3 + 70.1)) for i in range(1, n))
    assert states.time_in(COMPUTING) == pytest.approx(busy, abs=1e-6)
    assert states.time_in(IDLE) == pytest.approx(idle, abs=1e-6)


@settings(max_examples=300)
@given(st.lists(st.sampled_from([95.0, 9.75, 101.0, 125.17, 190.74, 0.1, 1e-3, 3.3e7, 0.0]), max_size=5000))
def test_the_static_total_from_counts_is_the_exactly_rounded_sum_of_the_hosts(watts):
    from collections import Counter
    from math import fsum

    from joulesim.simulator.energy.energy_meter import exact_total

    assert exact_total(Counter(watts)) == fsum(watts)


@settings(max_examples=300)
@given(st.dictionaries(st.floats(min_value=0.0, max_value=1e200, allow_subnormal=True), st.integers(1, 10**9),
                       max_size=60))
def test_the_static_total_is_exact_for_any_wattages_and_counts(counts):
    """Up to 60 distinct wattages (a grid of clusters, each with its idle, sleep and switching
    powers), any magnitudes, host counts up to a billion: the correctly rounded sum."""
    from collections import Counter
    from fractions import Fraction

    from joulesim.simulator.energy.energy_meter import exact_total

    assert exact_total(Counter(counts)) == float(sum(Fraction(w) * n for w, n in counts.items()))


def test_consumed_joules_counts_from_the_first_submission_to_the_last_job_end_as_batsim(tmp_path):
    """Batsim 4's schedule.csv: consumed_joules = energy at the last job end - energy at the
    first submission. Idle time before the first job and a switch-off requested after the
    last job are not in it; they stay in consumed_energy.csv."""
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 100, "res": 1, "profile": "ten"}],
                              {"ten": TEN_SECONDS})

    def switch_off_after(d, message):
        if any(e["type"] == "JOB_SUBMITTED" for e in message["events"]):
            d.execute_job("w0!1", "0")
        if any(e["type"] == "JOB_COMPLETED" for e in message["events"]):
            d.set_resource_state("0-1", 1)

    prefix = str(tmp_path / "out")
    result = run_in_process(ScriptedDecider(switch_off_after), "energy2", [workload], prefix, energy=True)
    # From 100 to 110: one host computing, one idle.
    assert float(result.schedule["consumed_joules"]) == approx(round(10 * (FULL + IDLE), 6))
    rows = read_csv(prefix + "_consumed_energy.csv")
    # The file still holds the whole run: idling from 0, the switch-off after the job.
    assert float(rows[-1]["energy"]) == approx(round(110 * 2 * IDLE + 10 * (FULL - IDLE) + OFF * 2 * W_OFF, 6))
