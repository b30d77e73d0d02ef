"""The shutdown deciders of seed 001 chapter 7: EASY + opportunistic shutdown, proportional
and inertial shutdown, and the LLH estimator.

Unit tests drive the deciders with hand-written protocol messages. End-to-end tests run
them on platforms/energy2.xml (2 hosts; switch-off 6.10 s, switch-on 151.52 s; idle 95 W,
sleep 9.75 W, switching off 101 W, switching on 125.17 W) with delay jobs whose walltime is
their duration, and compare with hand-computed times.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

import joulesim
from joulesim.deciders import load_decider
from joulesim.deciders.batch.easy import EasyBackfilling
from joulesim.deciders.common.machine_power import MachinePower
from joulesim.deciders.energy.easy_shutdown import EasyWithShutdown
from joulesim.deciders.energy.inertial_shutdown import SWITCH_COUNT_FUNCTIONS, SWITCH_OFF, SWITCH_ON, inertial_decision
from joulesim.deciders.energy.liquid_load_horizon import LoadProfile, liquid_load_horizon
from joulesim.protocol.errors import JoulesimError

from conftest import jobs_by_id, read_csv, run_in_process, write_platform, write_workload

ENERGY2 = str(Path(__file__).resolve().parents[1] / "platforms" / "energy2.xml")
OFF, ON = 6.1, 151.52  # energy2's switch durations


# --------------------------------------------------------------------------- messages
def host(i: int, state: str = "idle", sleep_pstates: str | None = "1:2:3") -> dict:
    properties = {"sleep_pstates": sleep_pstates} if sleep_pstates else {}
    return {"id": i, "name": f"h{i}", "state": state, "properties": properties, "zone_properties": {}}


def begins(*hosts: dict) -> dict:
    return {"timestamp": 0.0, "type": "SIMULATION_BEGINS",
            "data": {"nb_resources": len(hosts), "nb_compute_resources": len(hosts), "nb_storage_resources": 0,
                     "allow_compute_sharing": False, "allow_storage_sharing": False, "config": {},
                     "compute_resources": list(hosts), "storage_resources": [], "workloads": {"w0": "w.json"},
                     "profiles": {}}}


def submitted(now: float, name: str, res: int, walltime: float) -> dict:
    job_id = f"w0!{name}"
    return {"timestamp": now, "type": "JOB_SUBMITTED",
            "data": {"job_id": job_id, "job": {"id": job_id, "subtime": now, "res": res, "walltime": walltime,
                                               "profile": "p"}}}


def completed(now: float, name: str, alloc: str) -> dict:
    return {"timestamp": now, "type": "JOB_COMPLETED",
            "data": {"job_id": f"w0!{name}", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                     "alloc": alloc}}


def state_changed(now: float, resources: str, state: int) -> dict:
    return {"timestamp": now, "type": "RESOURCE_STATE_CHANGED", "data": {"resources": resources, "state": str(state)}}


def requested_call(now: float) -> dict:
    return {"timestamp": now, "type": "REQUESTED_CALL", "data": {}}


def no_more_jobs(now: float) -> dict:
    return {"timestamp": now, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}}


def send(decider, now: float, *events: dict) -> list[tuple]:
    """One message; the decisions as ("EXECUTE", job, alloc), ("SWITCH", machines, pstate), ("CALL", t)."""
    reply = decider.handle({"now": now, "events": list(events)})
    out = []
    for event in reply["events"]:
        data = event["data"]
        if event["type"] == "EXECUTE_JOB":
            out.append(("EXECUTE", data["job_id"].split("!")[1], data["alloc"]))
        elif event["type"] == "SET_RESOURCE_STATE":
            out.append(("SWITCH", data["resources"], int(data["state"])))
        elif event["type"] == "CALL_ME_LATER":
            out.append(("CALL", data["timestamp"]))
        else:
            out.append((event["type"], data))
    return out


# --------------------------------------------------------------------------- options
def test_easy_with_t_idle_is_served_by_the_shutdown_variant():
    assert type(load_decider("easy", {"t_idle": "300"})) is EasyWithShutdown
    assert type(load_decider("easy", {})) is EasyBackfilling
    assert load_decider("easy", {"t_idle": "inf"}).t_idle == math.inf


@pytest.mark.parametrize("name, options, bad, accepted", [
    ("easy", {"t_idle": "-1"}, "t_idle", "numbers in [0, inf] or 'inf'"),
    ("easy", {"t_idle": "soon"}, "t_idle", "numbers in [0, inf] or 'inf'"),
    ("easy", {"t_idle": "0", "compute_pstate": "x"}, "compute_pstate", "integers >= 0"),
    ("proportional", {"rho": "1.5"}, "rho", "numbers in [0, 1]"),
    ("inertial", {"period": "0"}, "period", "numbers in ]0, inf]"),
    ("inertial", {"v_ub": "-3"}, "v_ub", "numbers in [0, inf] or 'inf'"),
    ("inertial", {"f": "3n"}, "f", "'n+1', '2n'"),
    ("inertial", {"future_switches": "maybe"}, "future_switches", "true, false"),
])
def test_invalid_options_name_the_option_and_the_accepted_values(name, options, bad, accepted):
    with pytest.raises(JoulesimError) as info:
        load_decider(name, options)
    assert f"option {bad}={options[bad]!r} is invalid: accepted values are {accepted}" in str(info.value)


@pytest.mark.parametrize("name", ["proportional", "inertial"])
def test_unknown_options_are_refused(name):
    with pytest.raises(JoulesimError, match="bogus"):
        load_decider(name, {"bogus": "1"})


def test_pstate_options_are_checked_against_the_platform():
    decider = load_decider("easy", {"t_idle": "0", "sleep_pstate": "4"})
    with pytest.raises(JoulesimError, match=r"option sleep_pstate=4 is not a sleep pstate of host h0.*1, 5"):
        send(decider, 0.0, begins(host(0, sleep_pstates="1:2:3,5:6:7")))
    decider = load_decider("easy", {"t_idle": "0", "compute_pstate": "2"})
    with pytest.raises(JoulesimError, match="option compute_pstate=2 is a sleep or switching pstate of host h0"):
        send(decider, 0.0, begins(host(0)))
    decider = load_decider("easy", {"t_idle": "0"})
    with pytest.raises(JoulesimError, match="h0: property sleep_pstates='1:2' is not"):
        send(decider, 0.0, begins(host(0, sleep_pstates="1:2")))


# --------------------------------------------------------------------------- machine power
def test_machine_power_reads_pstates_and_states():
    power = MachinePower(sleep_pstate=5)
    power.setup([host(0, sleep_pstates="1:2:3, 5:6:7"), host(1, state="sleeping", sleep_pstates="5:6:7"),
                 host(2, sleep_pstates=None)], 3, 0.0)
    assert (power.on_mask, power.sleeping_mask, power.switchable_mask) == (0b101, 0b010, 0b011)
    assert power.sleep_masks == {5: 0b011} and power.compute_pstate == 0
    assert power.idle_since == {0: 0.0, 2: 0.0}
    default = MachinePower()
    default.setup([host(0, sleep_pstates="1:2:3, 5:6:7")], 1, 0.0)
    assert default.sleep_masks == {1: 0b1}


def test_machine_power_follows_switches_and_observes_their_durations():
    power = MachinePower(compute_pstate=0)
    power.setup([host(0), host(1)], 2, 0.0)
    power.computation_started(0b01)
    assert power.idle_mask == 0b10 and power.idle_since == {1: 0.0}
    with pytest.raises(ValueError):
        power.begin_switch_off(0b01, 1.0)  # computing
    assert power.begin_switch_off(0b10, 1.0) == [(0b10, 1)]
    assert power.state_changed(0b10, 7.1) == (0, 0b10)
    assert (power.sleeping_mask, power.switch_off_duration) == (0b10, pytest.approx(6.1))
    assert power.begin_switch_on(0b10, 10.0) == [(0b10, 0)]
    assert power.expected_on_time(1, 20.0) == 20.0  # no switch-on observed yet
    power.computation_ended(0b01, 30.0)
    assert power.state_changed(0b10, 161.52) == (0b10, 0)
    assert power.switch_on_duration == pytest.approx(151.52)
    assert power.idle_since == {0: 30.0, 1: 161.52} and power.on_mask == 0b11


# --------------------------------------------------------------------------- EASY + OS, by messages
def test_t_idle_0_switches_off_the_unused_machine_and_boots_one_for_a_late_job():
    decider = load_decider("easy", {"t_idle": "0"})
    assert send(decider, 0.0, begins(host(0), host(1))) == []  # t=0 jobs come next: no switch yet
    assert send(decider, 0.0, submitted(0.0, "A", 1, 100)) == [("EXECUTE", "A", "0"), ("SWITCH", "1", 1)]
    assert send(decider, OFF, state_changed(OFF, "1", 1)) == []
    assert send(decider, 50.0, submitted(50.0, "B", 1, 10)) == [("SWITCH", "1", 0)]
    # A's machine is switched off at once: B holds machine 1 only.
    assert send(decider, 100.0, completed(100.0, "A", "0")) == [("SWITCH", "0", 1)]
    assert send(decider, 50.0 + ON, state_changed(50.0 + ON, "1", 0)) == [("EXECUTE", "B", "1")]


def test_a_machine_switching_off_is_switched_on_once_off_for_the_job_that_needs_it():
    decider = load_decider("easy", {"t_idle": "0"})
    send(decider, 0.0, begins(host(0), host(1)))
    assert send(decider, 0.0, submitted(0.0, "A", 1, 100)) == [("EXECUTE", "A", "0"), ("SWITCH", "1", 1)]
    assert send(decider, 3.0, submitted(3.0, "B", 1, 10)) == []
    assert send(decider, OFF, state_changed(OFF, "1", 1)) == [("SWITCH", "1", 0)]
    assert send(decider, OFF + ON, state_changed(OFF + ON, "1", 0)) == [("EXECUTE", "B", "1")]


def test_idle_timers_ask_for_one_call_at_the_earliest_expiry():
    decider = load_decider("easy", {"t_idle": "300"})
    assert send(decider, 0.0, begins(host(0), host(1))) == [("CALL", 300.0)]
    assert send(decider, 0.0, submitted(0.0, "A", 2, 10)) == [("EXECUTE", "A", "0-1")]
    assert send(decider, 10.0, completed(10.0, "A", "0-1")) == []  # the call at 300 comes first
    assert send(decider, 300.0, requested_call(300.0)) == [("CALL", 310.0)]
    assert send(decider, 310.0, requested_call(310.0)) == [("SWITCH", "0-1", 1)]


def test_idle_machines_are_chosen_before_sleeping_ones():
    decider = load_decider("easy", {"t_idle": "inf"})
    send(decider, 0.0, begins(host(0, state="sleeping"), host(1), host(2)))
    assert send(decider, 0.0, submitted(0.0, "A", 1, 100)) == [("EXECUTE", "A", "1")]
    assert send(decider, 1.0, submitted(1.0, "B", 2, 100)) == [("SWITCH", "0", 0)]
    assert send(decider, 1.0 + ON, state_changed(1.0 + ON, "0", 0)) == [("EXECUTE", "B", "0 2")]


def test_easy_reservation_counts_off_machines_as_usable():
    # 3 machines, machine 0 asleep. C (3 machines) needs A's: it is the priority job, with
    # shadow time 100 (A's end) and no extra machine. D ends before 100: it is backfilled,
    # on the idle machine rather than the asleep one.
    decider = load_decider("easy", {"t_idle": "inf"})
    send(decider, 0.0, begins(host(0, state="sleeping"), host(1), host(2)))
    assert send(decider, 0.0, submitted(0.0, "A", 1, 100)) == [("EXECUTE", "A", "1")]
    assert send(decider, 0.0, submitted(0.0, "C", 3, 10)) == []
    assert send(decider, 1.0, submitted(1.0, "D", 1, 50)) == [("EXECUTE", "D", "2")]


def test_hosts_without_sleep_pstates_are_never_switched():
    decider = load_decider("easy", {"t_idle": "0"})
    send(decider, 0.0, begins(host(0, sleep_pstates=None), host(1, sleep_pstates=None)))
    assert send(decider, 0.0, submitted(0.0, "A", 1, 10)) == [("EXECUTE", "A", "0")]
    assert send(decider, 10.0, completed(10.0, "A", "0")) == []


def test_no_machine_is_switched_once_nothing_is_left_to_do():
    decider = load_decider("easy", {"t_idle": "0"})
    send(decider, 0.0, begins(host(0), host(1)))
    send(decider, 0.0, submitted(0.0, "A", 2, 10), no_more_jobs(0.0))
    assert send(decider, 10.0, completed(10.0, "A", "0-1")) == []


def test_without_switchable_hosts_easy_with_shutdown_schedules_as_easy(tmp_path):
    # The hand-computed EASY case of test_policy_schedules.py.
    jobs = [("A", 0, 3, 100), ("B", 1, 3, 10), ("C", 2, 4, 10), ("D", 3, 1, 150), ("E", 4, 1, 50)]
    workload = write_workload(tmp_path, [{"id": n, "subtime": t, "res": r, "walltime": w, "delay": w}
                                         for n, t, r, w in jobs])
    run_in_process(load_decider("easy", {"t_idle": "0"}), write_platform(tmp_path, 4), [workload],
                   str(tmp_path / "out"))
    got = {n: (float(r["starting_time"]), r["allocated_resources"]) for n, r in jobs_by_id(str(tmp_path / "out")).items()}
    assert got == {"A": (0, "0-2"), "D": (3, "3"), "B": (100, "0-2"), "C": (153, "0-3"), "E": (163, "0")}


# --------------------------------------------------------------------------- LLH
def test_llh_of_figure_7_1_is_4():
    # 5 machines, machine 5 off; 1 idle; job 1 frees 2 machines at t+1, job 2 one at t+3;
    # jobs 3 (3 x 3 s) and 4 (1 x 2 s) wait: 1 + 3*2 + 4*1 = 11 machine-seconds.
    assert liquid_load_horizon(3 * 3 + 1 * 2, 10.0, 1, [(11.0, 2), (13.0, 1)]) == 4.0


@pytest.mark.parametrize("load, free, releases, expected", [
    (0.0, 0, [], 0.0),  # nothing waits
    (10.0, 0, [], math.inf),  # every machine off
    (10.0, 0, [(math.inf, 2)], math.inf),  # only jobs without walltime
    (math.inf, 4, [], math.inf),  # a waiting job without walltime
    (10.0, 2, [], 5.0),
    (10.0, 1, [(0.0, 1)], 5.0),  # a release due now counts as free now
    # Releases in any order: nothing free till 2, 1 machine till 4 (2), 2 for the 8 left.
    (10.0, 0, [(4.0, 1), (2.0, 1)], 8.0),
    (2.0, 1, [(4.0, 3)], 2.0),  # the load fits before the first release
])
def test_llh_hand_cases(load, free, releases, expected):
    assert liquid_load_horizon(load, 0.0, free, releases) == expected


def test_llh_decreases_between_events_as_time_passes():
    busy = LoadProfile(10.0, 0, ((100.0, 1),))  # nothing free until 100: the horizon stays at 110
    assert (busy.horizon_at(0.0), busy.horizon_at(50.0)) == (110.0, 60.0)
    idle = LoadProfile(10.0, 1, ())  # an idle machine: its unused time is lost, the LLH stays
    assert (idle.horizon_at(0.0), idle.horizon_at(50.0)) == (10.0, 10.0)


def test_inertial_llh_sees_running_and_held_jobs_but_not_off_machines():
    decider = load_decider("inertial", {"period": "1000"})
    send(decider, 0.0, begins(host(0, state="sleeping"), host(1), host(2)))
    assert send(decider, 0.0, submitted(0.0, "A", 2, 1000), submitted(0.0, "B", 1, 10),
                submitted(0.0, "C", 2, 5)) == [("EXECUTE", "A", "1-2"), ("SWITCH", "0", 0)]
    # C waits (10 machine-seconds); B holds machine 0, booting for an unknown time yet: it is
    # expected to end at 0 + 10, A at 1000. Nothing is free till 10, then 1 machine: LLH 20.
    profile = decider.load_profile()
    assert (profile.load, profile.free_now, sorted(profile.releases)) == (10.0, 0, [(10.0, 1), (1000.0, 2)])
    assert profile.horizon_at(0.0) == 20.0
    assert send(decider, ON, state_changed(ON, "0", 0)) == [("EXECUTE", "B", "0")]
    assert sorted(decider.load_profile().releases) == [(ON + 10, 1), (1000.0, 2)]


# --------------------------------------------------------------------------- Algorithm 3
@pytest.mark.parametrize("previous, real, now, before, f, expected", [
    (SWITCH_ON, 3, 20.0, 10.0, "n+1", (SWITCH_ON, 4)),  # LLH rising: switch more on
    (SWITCH_ON, 3, 10.0, 10.0, "n+1", (SWITCH_OFF, 0)),  # not rising: toggle, no switch
    (SWITCH_OFF, 3, 10.0, 10.0, "2n", (SWITCH_OFF, 6)),  # not rising: switch more off
    (SWITCH_OFF, 0, 5.0, 10.0, "2n", (SWITCH_OFF, 1)),  # at least one
    (SWITCH_OFF, 3, 20.0, 10.0, "n+1", (SWITCH_ON, 0)),  # rising: toggle
    (SWITCH_OFF, 3, 500.0, 900.0, "n+1", (SWITCH_ON, 1)),  # above v_ub: forced on, count reset
    (SWITCH_ON, 3, 500.0, 900.0, "n+1", (SWITCH_ON, 4)),  # above v_ub: v_(t-T) taken as 0
])
def test_algorithm_3(previous, real, now, before, f, expected):
    assert inertial_decision(previous, real, now, before, 300.0, SWITCH_COUNT_FUNCTIONS[f]) == expected


# --------------------------------------------------------------------------- end to end
def simulate(tmp_path: Path, decider, jobs: list[tuple[str, float, int, float]]):
    """Run jobs (name, submission, machines, duration = walltime) on energy2 with energy on."""
    workload = write_workload(tmp_path, [{"id": n, "subtime": t, "res": r, "walltime": d, "delay": d}
                                         for n, t, r, d in jobs])
    prefix = str(tmp_path / "out")
    result = run_in_process(decider, ENERGY2, [workload], prefix, energy=True)
    starts = {n: (round(float(r["starting_time"]), 6), r["allocated_resources"]) for n, r in jobs_by_id(prefix).items()}
    # Batsim's pstate rows: -2 / -1 while switching off / on, then the pstate reached.
    switches = [(round(float(r["time"]), 6), r["machine_id"], int(r["new_pstate"]))
                for r in read_csv(f"{prefix}_pstate_changes.csv")][1:]  # [0]: initial pstates
    return starts, switches, result


def test_e2e_os_t_idle_0(tmp_path):
    starts, switches, result = simulate(tmp_path, load_decider("easy", {"t_idle": "0"}),
                                        [("A", 0, 1, 100), ("B", 50, 1, 10)])
    # Machine 1 is off at 6.1; B boots it at 50 and starts at 201.52; A's machine goes off at 100.
    assert starts == {"A": (0.0, "0"), "B": (201.52, "1")}
    assert switches == [(0.0, "1", -2), (6.1, "1", 1), (50.0, "1", -1), (100.0, "0", -2), (106.1, "0", 1),
                        (201.52, "1", 0)]
    # Energy: machine 0: 100 s idle-computing + switch-off + sleep till the end (211.52);
    # machine 1: switch-off, sleep 6.1..50, switch-on, 10 s of job.
    joules = (100 * 95 + OFF * 101 + (211.52 - 106.1) * 9.75
              + OFF * 101 + (50 - OFF) * 9.75 + ON * 125.17 + 10 * 95)
    assert float(result.schedule["consumed_joules"]) == pytest.approx(joules, abs=1e-3)


def test_e2e_os_waits_for_a_switch_off_to_end_before_switching_on(tmp_path):
    starts, switches, _ = simulate(tmp_path, load_decider("easy", {"t_idle": "0"}),
                                   [("A", 0, 1, 100), ("B", 3, 1, 10)])
    assert starts == {"A": (0.0, "0"), "B": (round(OFF + ON, 6), "1")}
    assert switches == [(0.0, "1", -2), (6.1, "1", 1), (6.1, "1", -1), (100.0, "0", -2), (106.1, "0", 1),
                        (157.62, "1", 0)]


def test_e2e_os_t_idle_300(tmp_path):
    starts, switches, result = simulate(tmp_path, load_decider("easy", {"t_idle": "300"}),
                                        [("A", 0, 2, 10), ("B", 200, 1, 50), ("C", 400, 2, 10)])
    # B takes the idle machine 0; machine 1, idle since 10, goes off at 310. C boots it at
    # 400 and holds machine 0 meanwhile (no switch-off of machine 0 at 250 + 300).
    assert starts == {"A": (0.0, "0-1"), "B": (200.0, "0"), "C": (551.52, "0-1")}
    assert switches == [(310.0, "1", -2), (316.1, "1", 1), (400.0, "1", -1), (551.52, "1", 0)]
    assert float(result.schedule["makespan"]) == 561.52  # no switch after the last job


def test_e2e_proportional_keeps_half_the_machines_off(tmp_path):
    starts, switches, _ = simulate(tmp_path, load_decider("proportional", {"rho": "0.5"}),
                                   [("A", 0, 1, 100), ("B", 10, 1, 10), ("C", 20, 2, 5)])
    # Machine 1 is reserved off: B waits for A's machine (EASY + OS would boot machine 1).
    # C needs both: the reservation is given back for it and machine 1 booted at 110.
    assert starts == {"A": (0.0, "0"), "B": (100.0, "0"), "C": (261.52, "0-1")}
    assert switches == [(0.0, "1", -2), (6.1, "1", 1), (110.0, "1", -1), (261.52, "1", 0)]


def test_e2e_proportional_rho_1_is_easy_with_opportunistic_shutdown(tmp_path):
    jobs = [("A", 0, 1, 100), ("B", 50, 1, 10)]
    (tmp_path / "os").mkdir()
    (tmp_path / "prop").mkdir()
    easy_os = simulate(tmp_path / "os", load_decider("easy", {"t_idle": "0"}), jobs)[:2]
    prop = simulate(tmp_path / "prop", load_decider("proportional", {"rho": "1", "t_idle": "0"}), jobs)[:2]
    assert prop == easy_os


INERTIAL_JOBS = [("A", 0, 1, 1000), ("B", 350, 1, 10)]


@pytest.mark.parametrize("v_ub, b_start, off_again, trace", [
    # LLH 0 till 350, then 660 falling to 510 at 500 (B waits for A's end at 1000).
    # T=100, f=n+1: toggle at 100; switch 1 off at 200 (none left at 300); the mean
    # rises at 400 (317.5): toggle; still rises at 500 (560): switch 1 on, B starts 651.52;
    # the mean is 0 again: toggle at 600, machine 1 (idle since 661.52) off at 700.
    (1e4, 651.52, 700.0, [(100, SWITCH_OFF, 0, 0.0), (200, SWITCH_OFF, 1, 0.0), (300, SWITCH_OFF, 0, 0.0),
                   (400, SWITCH_ON, 0, 317.5), (500, SWITCH_ON, 1, 560.0), (600, SWITCH_OFF, 0, 0.0),
                   (700, SWITCH_OFF, 1, 0.0), (800, SWITCH_OFF, 0, 0.0), (900, SWITCH_OFF, 0, 0.0)]),
    # v_ub=300: at 400 the mean (317.5) is above the bound: machines are switched on at once.
    (300, 551.52, 600.0, [(100, SWITCH_OFF, 0, 0.0), (200, SWITCH_OFF, 1, 0.0), (300, SWITCH_OFF, 0, 0.0),
                   (400, SWITCH_ON, 1, 317.5), (500, SWITCH_OFF, 0, 0.0), (600, SWITCH_OFF, 1, 0.0),
                   (700, SWITCH_OFF, 0, 0.0), (800, SWITCH_OFF, 0, 0.0), (900, SWITCH_OFF, 0, 0.0)]),
])
def test_e2e_inertial_follows_the_llh_trend(tmp_path, v_ub, b_start, off_again, trace):
    decider = load_decider("inertial", {"period": "100", "v_ub": str(v_ub)})
    starts, switches, _ = simulate(tmp_path, decider, INERTIAL_JOBS)
    assert starts == {"A": (0.0, "0"), "B": (b_start, "1")}
    assert switches == [(200.0, "1", -2), (206.1, "1", 1), (b_start - ON, "1", -1), (b_start, "1", 0),
                        (off_again, "1", -2), (round(off_again + OFF, 6), "1", 1)]
    assert [(t, kind, due, pytest.approx(mean)) for t, kind, due, mean in decider.decisions] == trace


def test_e2e_inertial_steals_machines_off_for_being_idle(tmp_path):
    decider = load_decider("inertial", {"period": "100", "t_idle": "50"})
    starts, switches, _ = simulate(tmp_path, decider, INERTIAL_JOBS)
    # Machine 1 goes off at 50 for being idle; the switch-off decision at 200 takes it into
    # the reservation with no new switch (counted as done: none left at 300), so B waits
    # for the decision to switch it on at 500 (EASY + OS alone would boot it at 350).
    assert starts == {"A": (0.0, "0"), "B": (651.52, "1")}
    assert switches[:4] == [(50.0, "1", -2), (56.1, "1", 1), (500.0, "1", -1), (651.52, "1", 0)]
    assert [d[:3] for d in list(decider.decisions)[:5]] == [
        (100, SWITCH_OFF, 0), (200, SWITCH_OFF, 1), (300, SWITCH_OFF, 0), (400, SWITCH_ON, 0), (500, SWITCH_ON, 1)]


def test_e2e_inertial_never_delays_the_priority_job(tmp_path):
    decider = load_decider("inertial", {"period": "100"})
    starts, switches, _ = simulate(tmp_path, decider, [("A", 0, 1, 1000), ("B", 50, 2, 10)])
    # B needs both machines at A's end (1000): machine 1 is never reserved off, though the
    # trend says switch off from 400 on (the LLH stays at 20: one idle machine).
    assert starts == {"A": (0.0, "0"), "B": (1000.0, "0-1")}
    assert switches == []
    assert [d[:3] for d in list(decider.decisions)[:4]] == [
        (100, SWITCH_ON, 0), (200, SWITCH_ON, 0), (300, SWITCH_OFF, 0), (400, SWITCH_OFF, 0)]


@pytest.mark.parametrize("future, off_at", [(True, 250.0), (False, 300.0)])
def test_e2e_inertial_future_switches(tmp_path, future, off_at):
    # Both machines compute at 200, when the first switch-off is due: with future switches
    # machine 0 is reserved and switched off when A ends (250); without, at the next period.
    decider = load_decider("inertial", {"period": "100", "future_switches": str(future).lower()})
    starts, switches, _ = simulate(tmp_path, decider, [("A", 0, 1, 250), ("C", 0, 1, 1000)])
    assert starts == {"A": (0.0, "0"), "C": (0.0, "1")}
    assert switches == [(off_at, "0", -2), (round(off_at + OFF, 6), "0", 1)]


def test_e2e_easy_with_shutdown_in_its_own_process(tmp_path):
    workload = write_workload(tmp_path, [{"id": "A", "subtime": 0, "res": 1, "walltime": 100, "delay": 100},
                                         {"id": "B", "subtime": 50, "res": 1, "walltime": 10, "delay": 10}])
    prefix = str(tmp_path / "out")
    run = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", ENERGY2, "-w", workload,
                          "-d", "easy", "-o", "t_idle=0", "-E", "-e", prefix],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert {n: float(r["starting_time"]) for n, r in jobs_by_id(prefix).items()} == {"A": 0.0, "B": 201.52}


@pytest.mark.parametrize("decider", ["easy", "energybud"])
def test_a_timeout_beyond_the_simulated_range_is_a_timeout_that_never_fires(decider):
    """t_idle = 1e30 s asks for a call no simulation reaches (2^33 s is the range): the decider
    library does not send it (the simulator refused it, blaming the decider), and the run is the
    one with t_idle = inf."""
    import joulesim

    never = joulesim.simulate("energy2", "tiny", decider, options={"t_idle": "inf"}, energy=True)
    beyond = joulesim.simulate("energy2", "tiny", decider, options={"t_idle": "1e30"}, energy=True)
    assert beyond.jobs.equals(never.jobs)
    assert beyond.metrics["consumed_joules"] == never.metrics["consumed_joules"]


def test_an_idle_timer_fires_on_the_call_made_for_it_when_batsim_prints_now_just_below_it():
    """Machine 0 is idle from 33.3 s; 33.3 + 209.8 is 243.10000000000002 as a double, and Batsim
    prints the call's `now` as 243.100000, just below: the decider must still switch the machine
    off then (protocol.decider.Decider.reached), not leave it idle until the next event at 1000 s.
    Batsim's message grouping and the per-time one (full-precision times) switch the same."""
    assert 33.3 + 209.8 > float("%f" % (33.3 + 209.8))  # (the case this test is built on)
    workload = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 200, "profile": "d"},
                                      {"id": 2, "subtime": 1000, "res": 1, "walltime": 200, "profile": "d"}],
                "profiles": {"d": {"type": "delay", "delay": 33.3}}}
    changes = {}
    for grouping in ("batsim", "per-time"):
        run = joulesim.simulate("homogeneous240", workload, "easy", options={"t_idle": 209.8}, energy=True, mmax=2,
                                event_grouping=grouping)
        changes[grouping] = [(round(t, 6), m, p) for t, m, p in run.pstate_changes.itertuples(index=False)]
    assert (243.1, "0", -2) in changes["batsim"]  # machine 0 switched off at its expiry
    assert changes["batsim"] == changes["per-time"]
