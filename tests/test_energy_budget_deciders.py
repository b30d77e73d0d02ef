"""energyBud, reducePC and the power-capped EASY (seed 001 chapter 6), by hand-computed cases.

Unit tests drive the deciders with hand-written protocol messages (`decider.handle`);
end-to-end tests run the simulator with energy accounting (-E). Unless stated otherwise the
estimates are P~idle = 100 W and P~computing = 200 W (options), so a computing machine adds
100 W to the estimate, and `delay` jobs leave their hosts at idle power in the simulator.
On `energy2` (2 hosts, seed 001 table 6.1) the real idle power is 95 W per host.
"""

from __future__ import annotations

import csv
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from joulesim.deciders import load_decider
from joulesim.deciders.energy.budgeted_easy import MachinePlan, RefusedShapes
from joulesim.deciders.energy.budgeted_easy_shutdown import (
    EnergyBudgetWithShutdown,
    PowerCappedEasyWithShutdown,
    ReducePCWithShutdown,
)
from joulesim.deciders.energy.energy_budget import EnergyBudget, ReducePC
from joulesim.deciders.energy.power_capped_easy import PowerCappedEasy
from joulesim.protocol.errors import JoulesimError

from conftest import jobs_by_id, read_csv, run_in_process, write_platform, write_workload
from conftest import send as send_message

BUDGETED = ["energybud", "reducepc", "powercap"]
ESTIMATES = {"p_idle": "100", "p_computing": "200"}
OFF, ON = 6.1, 151.52  # energy2: switch-off and switch-on seconds
W_OFF, W_ON, W_SLEEP = 101.0, 125.17, 9.75


# --------------------------------------------------------------------------- messages
def begins(n: int) -> dict:
    return {"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": n, "nb_compute_resources": n, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": False, "config": {},
        "compute_resources": [{"id": i, "name": f"h{i}", "state": "idle", "properties": {},
                               "zone_properties": {}} for i in range(n)],
        "storage_resources": [], "workloads": {"w0": "w.json"}, "profiles": {}}}


def submitted(now: float, name: str, res: int, walltime: float) -> dict:
    job_id = f"w0!{name}"
    return {"timestamp": now, "type": "JOB_SUBMITTED", "data": {
        "job_id": job_id, "job": {"id": job_id, "subtime": now, "res": res, "walltime": walltime, "profile": "p"}}}


def completed(now: float, name: str, alloc: str) -> dict:
    return {"timestamp": now, "type": "JOB_COMPLETED", "data": {
        "job_id": f"w0!{name}", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": alloc}}


def answer(now: float, joules: float) -> dict:
    return {"timestamp": now, "type": "ANSWER", "data": {"consumed_energy": joules}}


def requested_call(now: float) -> dict:
    return {"timestamp": now, "type": "REQUESTED_CALL", "data": {}}


def send(decider, now: float, *events: dict) -> list[tuple]:
    """One message; the decisions as ("EXECUTE", job, alloc), ("QUERY",), ("CALL_ME_LATER", t)."""
    out = []
    for decision in send_message(decider, now, *events):
        if decision[0] == "QUERY":
            assert decision[1] == {"requests": {"consumed_energy": {}}}
            decision = ("QUERY",)
        elif decision[0] == "CALL_ME_LATER":
            decision = ("CALL_ME_LATER", decision[1]["timestamp"])
        out.append(decision)
    return out


def started(name: str, options: dict[str, str], n: int):
    decider = load_decider(name, options)
    assert send(decider, 0.0, begins(n)) == []
    return decider


# --------------------------------------------------------------------------- platforms and runs
def energy_platform(tmp_path: Path, n: int, idle: float = 100.0, full: float = 200.0) -> str:
    """n hosts with one computation pstate (idle:full W) and energy2's sleep pstates."""
    speeds = "1Gf, 1e-9Mf, 0.16393442622950818f, 0.006599788806758184f"
    watts = f"{idle}:{full}, 9.75:9.75, 101.0:101.0, 125.17:125.17"
    hosts = "\n".join(
        f'    <host id="h{i}" pstate="0" speed="{speeds}"><prop id="wattage_per_state" value="{watts}"/>'
        f'<prop id="wattage_off" value="9.75"/><prop id="sleep_pstates" value="1:2:3"/></host>'
        for i in range(n))
    path = tmp_path / f"energy{n}.xml"
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
                    f"{hosts}\n    <host id=\"master\" speed=\"1Gf\"><prop id=\"role\" value=\"master\"/></host>\n"
                    "  </zone>\n</platform>\n")
    return str(path)


def delay_jobs(tmp_path: Path, jobs: list[tuple[str, float, int, float]], name: str = "workload.json") -> str:
    """(name, submission time, machines, walltime = delay)."""
    return write_workload(tmp_path, [{"id": j, "subtime": t, "res": res, "walltime": wall, "delay": wall}
                                     for j, t, res, wall in jobs], name=name)


def run(tmp_path: Path, name: str, options: dict[str, str], platform: str, workload: str, tag: str = ""):
    """Simulate with -E; (job -> (start, finish, alloc), total joules)."""
    prefix = str(tmp_path / f"{name}{tag}")
    result = run_in_process(load_decider(name, options), platform, [workload], prefix, energy=True)
    times = {j: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
             for j, r in jobs_by_id(prefix).items()}
    return times, float(result.schedule["consumed_joules"])


# --------------------------------------------------------------------------- options
def test_options_are_declared_and_unknown_ones_refused():
    budget = {"budget", "start", "end", "p_idle", "p_computing", "t_idle", "compute_pstate", "sleep_pstate"}
    assert set(EnergyBudget.OPTIONS) == set(ReducePC.OPTIONS) == budget | {"period"}
    assert set(PowerCappedEasy.OPTIONS) == budget  # no monitoring: no period
    for name in BUDGETED:
        with pytest.raises(JoulesimError, match="bogus"):
            load_decider(name, {"bogus": "1"})
    with pytest.raises(JoulesimError, match="period"):
        load_decider("powercap", {"period": "600"})


def test_defaults_are_those_of_table_6_1():
    decider = load_decider("energybud", {"budget": "864000", "start": "100", "end": "8740"})
    assert (decider.p_idle, decider.p_computing, decider.monitoring_period) == (100.0, 203.12, 600.0)
    assert decider.period.rate == 100.0  # B / (t_e - t_s)
    assert load_decider("reducepc", {}).period.unlimited


@pytest.mark.parametrize("name", BUDGETED)
@pytest.mark.parametrize("options, message", [
    ({"budget": "lots"}, "option budget='lots' is invalid: accepted values are numbers in [0, inf] or 'inf'"),
    ({"budget": "-5", "end": "10"}, "option budget='-5' is invalid"),
    ({"budget": "1000"}, "option end (t_e, the budget period's end in seconds, after start=0) is required"),
    ({"budget": "1000", "start": "50", "end": "50"}, "option end='50' is invalid: accepted values are numbers in ]50, inf]"),
    ({"start": "-1"}, "option start='-1' is invalid: accepted values are numbers in [0, inf]"),
    ({"p_computing": "90"}, "option p_computing='90' is invalid: accepted values are numbers in [100, inf]"),
    ({"p_idle": "x"}, "option p_idle='x' is invalid"),
    ({"t_idle": "-3"}, "option t_idle='-3' is invalid: accepted values are numbers in [0, inf] or 'inf'"),
])
def test_invalid_options_name_the_option_and_the_accepted_values(name, options, message):
    with pytest.raises(JoulesimError) as info:
        load_decider(name, options)
    assert message in str(info.value)


@pytest.mark.parametrize("period", ["0", "-600", "soon"])
def test_invalid_monitoring_period(period):
    with pytest.raises(JoulesimError, match=r"option period='.*' is invalid: accepted values are numbers in \]0, inf\]"):
        load_decider("energybud", {"period": period})


def test_shutdown_options_select_the_variant_with_opportunistic_shutdown():
    assert type(load_decider("energybud", {"t_idle": "0"})) is EnergyBudgetWithShutdown
    assert type(load_decider("reducepc", {"t_idle": "60"})) is ReducePCWithShutdown
    assert type(load_decider("powercap", {"t_idle": "inf"})) is PowerCappedEasyWithShutdown
    assert type(load_decider("energybud", {"budget": "5", "end": "9"})) is EnergyBudget


# --------------------------------------------------------------------------- unit: helpers
def test_machine_plan_counts_jobs_until_their_estimated_ends():
    plan = MachinePlan(10.0, [(50.0, 2), (30.0, 1), (50.0, 3), (5.0, 4), (math.inf, 1)])
    assert plan.computing_now == 7  # the job past its estimated end (5) counts as ended
    assert [plan.computing_at(t) for t in (10, 29, 30, 49, 50, 1e9)] == [7, 7, 6, 6, 1, 1]
    assert plan.last_end == math.inf


def test_refused_shapes_cover_wider_and_longer_jobs():
    refused = RefusedShapes()
    refused.add(4, 100.0)
    refused.add(2, 500.0)
    assert refused.covers(4, 100) and refused.covers(8, 3600) and refused.covers(2, math.inf)
    assert not refused.covers(3, 400) and not refused.covers(1, 1e9) and not refused.covers(8, 99)
    refused.add(1, 100.0)  # covers both previous shapes
    assert (refused.machines, refused.lengths) == ([1], [100.0])


# --------------------------------------------------------------------------- unit: energyBud
UNIT = {"budget": "300000", "end": "1000", "period": "100", **ESTIMATES}  # 300 W over [0, 1000]


def test_unlimited_budget_decides_exactly_as_easy():
    jobs = [("A", 0, 3, 100), ("B", 1, 3, 10), ("C", 2, 4, 10), ("D", 3, 1, 150), ("E", 4, 1, 50)]
    ends = {"A": (100, "0-2"), "D": (153, "3"), "B": (110, "0-2"), "C": (163, "0-3"), "E": (213, "0")}
    for name in BUDGETED:
        budgeted, easy = started(name, {}, 4), started("easy", {}, 4)
        messages = [(t, [submitted(t, j, res, wall)]) for j, t, res, wall in jobs]
        messages += sorted((t, [completed(t, j, alloc)]) for j, (t, alloc) in ends.items())
        for t, events in messages:
            assert send(budgeted, t, *events) == send(easy, t, *events)


def test_budget_delays_a_job_until_energy_is_saved_and_measured():
    # 2 machines, 300 W made available; idle estimate 200 W, A on both machines 400 W:
    # A needs C_ea >= 100 W x 100 s = 10000 J. EASY would start A at once.
    assert send(started("easy", {}, 2), 0, submitted(0, "A", 2, 100))[0] == ("EXECUTE", "A", "0-1")
    d = started("energybud", UNIT, 2)
    # A lacks energy; its reservation (stage 100, needing 10000 J) keeps B from backfilling.
    assert send(d, 0, submitted(0, "A", 2, 100), submitted(0, "B", 1, 50)) == [("QUERY",)]
    # First stage: the baseline. A still lacks energy: next stage.
    assert send(d, 0, answer(0, 0.0)) == [("CALL_ME_LATER", 100.0)]
    assert d.available == 0.0
    # Estimate at t=100: (300 - 200) W x 100 s. The stage then measures 190 W (2 x 95 W).
    assert send(d, 100, requested_call(100)) == [("QUERY",)]
    assert d.available == 10000.0
    assert send(d, 100, answer(100, 19000.0)) == [("EXECUTE", "A", "0-1")]
    assert d.available == 300 * 100 - 19000.0
    # A's estimate (300 - 400) W x 100 s; B (300 W: balance flat) starts when A ends.
    assert send(d, 200, completed(200, "A", "0-1")) == [("EXECUTE", "B", "0")]
    assert d.available == 11000.0 - 10000.0


def test_rule_2_covers_the_running_jobs_after_the_new_job_ends():
    # 250 W over [0, 10000]; 2 machines idle until 1000 save 50 W: C_ea = 50000 J.
    d = started("energybud", {"budget": "2500000", "end": "10000", **ESTIMATES}, 2)
    # L (300 W, 900 s) leaves 5000 J at 1900. S with it: 400 W for 100 s (C_ea 35000 J at
    # 1100), then L alone takes 40000 J more: -5000 J at 1900, so S waits. (Checking S's
    # own execution only, as the thesis words it, would start it and end in debt.)
    assert send(d, 1000, submitted(1000, "L", 1, 900), submitted(1000, "S", 1, 100)) == [
        ("EXECUTE", "L", "0"), ("QUERY",)]
    s = d.jobs["w0!S"]
    assert d.outlook.balance_at(1900) == 5000.0
    assert d.outlook.lowest([d.planned(s, 1000)]) == -5000.0
    # S's reservation: at L's end, when it needs the 5000 J left.
    reservation = d.reserve(s, 1)
    assert (reservation.time, reservation.need) == (1900.0, 5000.0)


def test_monitoring_stage_runs_the_algorithm_only_if_the_first_job_has_energy():
    # §6.4.3: at a monitoring stage the full algorithm runs only if the first job of the
    # queue has enough energy. 3 machines, 400 W; L on 1 machine keeps the estimate at 400 W.
    d = started("energybud", {"budget": "4000000", "end": "10000", **ESTIMATES}, 3)
    assert send(d, 0, submitted(0, "L", 1, 1000)) == [("EXECUTE", "L", "0")]
    # F (3 machines) waits for L; at 1000 it would need 20000 J (200 W over the rate for
    # 100 s) and has 0: reserved at stage 1200 with 20000 J, which B may not take.
    assert send(d, 500, submitted(500, "F", 3, 100), submitted(500, "B", 1, 50)) == [("QUERY",)]
    assert send(d, 500, answer(500, 150000.0)) == [("CALL_ME_LATER", 600.0)]
    assert send(d, 600, requested_call(600)) == [("QUERY",)]
    # Measured: 13000 J in 100 s, so C_ea = 400 x 100 - 13000 = 27000 J. F would need 30000 J
    # to start now (700 W estimated): the algorithm does not run, though B would now fit
    # (F reserved at 1000 with 20000 J, B taking 5000 J: 2000 J to spare).
    assert send(d, 600, answer(600, 163000.0)) == [("CALL_ME_LATER", 1200.0)]
    assert d.available == 27000.0
    # Any other event runs the algorithm: B is backfilled.
    assert send(d, 600, submitted(600, "Z", 3, 10)) == [("EXECUTE", "B", "1")]


def test_budget_period_bounds():
    # Period [100, 1000] at 300 W. Before t_s nothing is counted, a job ending before t_s
    # is free; after t_e, plain EASY. 2 machines: idle 200 W, both computing 400 W.
    d = started("energybud", {"budget": "270000", "start": "100", "end": "1000", **ESTIMATES}, 2)
    assert send(d, 0, submitted(0, "A", 2, 100)) == [("EXECUTE", "A", "0-1")]
    assert d.available == 0.0
    assert send(d, 100, completed(100, "A", "0-1")) == []
    # B needs 100 W x 100 s over the rate; C_ea at 150 is (300 - 200) W x 50 s.
    assert send(d, 150, submitted(150, "B", 2, 100)) == [("QUERY",)]
    assert d.available == 5000.0  # (300 - 200) W x 50 s
    # Baseline; 5000 J < 10000 J: wait for the next stage (t_s + 600).
    assert send(d, 150, answer(150, 28500.0)) == [("CALL_ME_LATER", 700.0)]
    assert send(d, 700, requested_call(700)) == [("QUERY",)]
    assert send(d, 700, answer(700, 28500.0 + 104500.0)) == [("EXECUTE", "B", "0-1")]
    assert d.available == 5000.0 + 300 * 550 - 104500.0
    # After t_e the budget no longer applies: C (400 W, more than the rate) starts at once.
    send(d, 800, completed(800, "B", "0-1"))
    assert send(d, 1000, submitted(1000, "C", 2, 5000)) == [("EXECUTE", "C", "0-1")]


# --------------------------------------------------------------------------- unit: reducePC and the cap
def test_reducepc_lowers_the_rate_where_energybud_subtracts_the_reserved_energy():
    # 3 machines, 500 W. A (400 W) from 0; at 500 C_ea = 100 W x 500 s = 50000 J. F (3
    # machines, 600 W) is reserved at A's end, 1000, needing 10000 J. S (1 machine, 100 s)
    # ends before 1000 and brings the estimate to 500 W.
    def at_500(name):
        d = started(name, {"budget": "5000000", "end": "10000", **ESTIMATES}, 3)
        assert send(d, 0, submitted(0, "A", 1, 1000)) == [("EXECUTE", "A", "0")]
        return d, send(d, 500, submitted(500, "F", 3, 100), submitted(500, "S", 1, 100))

    # energyBud: 50000 - 10000 J kept: S runs at the rate, it fits.
    d, decisions = at_500("energybud")
    assert decisions == [("EXECUTE", "S", "1")]
    # reducePC: the rate is 500 - 10000 / (1000 - 500) = 480 W until 1000; S needs 500 W.
    d, decisions = at_500("reducepc")
    assert decisions == [("QUERY",)]
    reservation = d.reserve(d.jobs["w0!F"], 2)
    assert (reservation.time, reservation.need, d.reduced_rate(reservation)) == (1000.0, 10000.0, 480.0)


def test_reducepc_lets_backfilled_jobs_use_the_energy_to_come():
    # 3 machines, 550 W, C_ea = 0 at t_s = 0. F (600 W) is reserved at A's end, 1000, with
    # (600 - 550) W x 100 s = 5000 J. S brings the estimate to 500 W until 100.
    options = {"budget": "5500000", "end": "10000", **ESTIMATES}
    jobs = [submitted(0, "A", 1, 1000), submitted(0, "F", 3, 100), submitted(0, "S", 1, 100)]
    # energyBud: C_ea - 5000 J < 0 from now on: S may not start.
    assert send(started("energybud", options, 3), 0, *jobs) == [("EXECUTE", "A", "0"), ("QUERY",)]
    # reducePC: 500 W fits under 550 - 5000 / 1000 = 545 W, and C_ea grows by 50 J/s, more
    # than the 5 J/s set aside for F.
    assert send(started("reducepc", options, 3), 0, *jobs) == [("EXECUTE", "A", "0"), ("EXECUTE", "S", "1")]


def test_power_cap_applies_where_a_job_enters_the_budget_period():
    # Cap 300 W over [100, 1000]; 2 machines: idle 200 W, +100 W per computing machine.
    d = started("powercap", {"budget": "270000", "start": "100", "end": "1000", **ESTIMATES}, 2)
    assert send(d, 0, submitted(0, "A", 2, 50)) == [("EXECUTE", "A", "0-1")]  # ends before t_s
    send(d, 50, completed(50, "A", "0-1"))
    # C (400 W from t_s on) waits for t_e; D (300 W) ends before t_s: backfilled. No wake-up
    # yet: D's end calls the decider before t_e.
    assert send(d, 60, submitted(60, "C", 2, 50), submitted(60, "D", 1, 30)) == [("EXECUTE", "D", "0")]
    assert send(d, 90, completed(90, "D", "0")) == [("CALL_ME_LATER", 1000.0)]
    assert send(d, 95, submitted(95, "E", 1, 400)) == [("EXECUTE", "E", "0")]  # 300 W: at the cap
    assert send(d, 495, completed(495, "E", "0")) == []  # the wake-up at t_e is already asked for
    assert send(d, 1000, requested_call(1000)) == [("EXECUTE", "C", "0-1")]


# --------------------------------------------------------------------------- end to end
def random_workload(tmp_path: Path, n_jobs: int, machines: int, seed: int, compute: bool = False) -> str:
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0.0
    for i in range(n_jobs):
        t += rng.choice([0, 0, 5, 30, 120])
        wall = rng.choice([60, 300, 600, 1800, 3600])
        run_time = rng.randint(wall // 4, wall)
        profile = f"p{run_time}"
        profiles[profile] = ({"type": "parallel_homogeneous", "cpu": run_time * 1e9, "com": 0} if compute
                             else {"type": "delay", "delay": run_time})
        jobs.append({"id": f"j{i}", "subtime": t, "res": rng.choice([1, 1, 2, 3, machines // 2, machines]),
                     "walltime": wall, "profile": profile})
    return write_workload(tmp_path, jobs, profiles, name=f"random{seed}.json")


@pytest.mark.parametrize("name", BUDGETED)
def test_e2e_unlimited_budget_schedules_as_easy(tmp_path, name):
    platform = write_platform(tmp_path, 8)
    workload = random_workload(tmp_path, 120, 8, seed=1)
    outputs = {}
    for decider in ("easy", name):
        prefix = str(tmp_path / decider)
        run_in_process(load_decider(decider, {}), platform, [workload], prefix)
        outputs[decider] = Path(f"{prefix}_jobs.csv").read_bytes()
    assert outputs["easy"] == outputs[name]
    assert len(read_csv(str(tmp_path / "easy_jobs.csv"))) == 120


@pytest.mark.parametrize("name", BUDGETED)
def test_e2e_unlimited_budget_with_shutdown_schedules_as_easy_with_shutdown(tmp_path, name):
    platform = energy_platform(tmp_path, 8, 95.0, 190.74)
    workload = random_workload(tmp_path, 60, 8, seed=4)
    shutdown = {"t_idle": "30"}
    assert run(tmp_path, name, shutdown, platform, workload) == run(tmp_path, "easy", shutdown, platform, workload)


@pytest.mark.parametrize("name", BUDGETED)
def test_e2e_budget_above_the_estimated_peak_schedules_as_easy(tmp_path, name):
    # Every machine computing is estimated at 8 x 203.12 W: a rate at least that never binds.
    platform = energy_platform(tmp_path, 8, 95.0, 190.74)
    workload = random_workload(tmp_path, 60, 8, seed=2, compute=True)
    options = {"budget": str(8 * 203.12 * 20000), "start": "1000", "end": "21000"}
    easy, easy_joules = run(tmp_path, "easy", {}, platform, workload)
    budgeted, joules = run(tmp_path, name, options, platform, workload)
    assert budgeted == easy and joules == easy_joules


def test_e2e_budget_delays_a_job_easy_starts_at_once(tmp_path):
    # energy2, 300 W over [0, 1000], stages every 100 s: the unit case above, simulated.
    # Delay jobs keep both hosts at 95 W: 19000 J measured at 100, so A starts then.
    workload = delay_jobs(tmp_path, [("A", 0, 2, 100), ("B", 0, 1, 50)])
    assert run(tmp_path, "easy", {}, "energy2", workload) == (
        {"A": (0.0, 100.0, "0-1"), "B": (100.0, 150.0, "0")}, 190 * 150.0)
    for name in ("energybud", "reducepc"):
        assert run(tmp_path, name, UNIT, "energy2", workload) == (
            {"A": (100.0, 200.0, "0-1"), "B": (200.0, 250.0, "0")}, 190 * 250.0)
    # The cap (300 W) never allows A (400 W) in the period: it starts at t_e; B at once.
    cap = {k: v for k, v in UNIT.items() if k != "period"}
    times, _ = run(tmp_path, "powercap", cap, "energy2", workload)
    assert times == {"B": (0.0, 50.0, "0"), "A": (1000.0, 1100.0, "0-1")}


def test_e2e_energybud_reducepc_and_power_cap_differ(tmp_path):
    # The unit case of reducePC, simulated on 3 hosts of 100 W idle: S is backfilled by
    # EASY and energyBud at 500; reducePC starts it after F, on the freed machines. The cap
    # (500 W) never allows F (600 W) in the period: F waits for t_e.
    platform = energy_platform(tmp_path, 3)
    workload = delay_jobs(tmp_path, [("A", 0, 1, 1000), ("F", 500, 3, 100), ("S", 500, 1, 100)])
    options = {"budget": "5000000", "end": "10000", **ESTIMATES}
    backfilled = {"A": (0.0, 1000.0, "0"), "S": (500.0, 600.0, "1"), "F": (1000.0, 1100.0, "0-2")}
    assert run(tmp_path, "easy", {}, platform, workload)[0] == backfilled
    assert run(tmp_path, "energybud", options, platform, workload)[0] == backfilled
    assert run(tmp_path, "reducepc", options, platform, workload)[0] == {
        "A": (0.0, 1000.0, "0"), "F": (1000.0, 1100.0, "0-2"), "S": (1100.0, 1200.0, "0")}
    assert run(tmp_path, "powercap", options, platform, workload)[0] == {
        "A": (0.0, 1000.0, "0"), "S": (500.0, 600.0, "1"), "F": (10000.0, 10100.0, "0-2")}


def test_e2e_opportunistic_shutdown_makes_measured_energy_available(tmp_path):
    # energy2, 250 W over [0, 10000], stages every 600 s. A (both hosts, 500 s) needs
    # (400 - 250) W x 500 s = 75000 J. Idle hosts measure 190 W: C_ea = 60 W x 600 s per
    # stage, enough at 1800. With t_idle=0 both hosts sleep from 0: the stage
    # at 600 measures 2 x (101 W x 6.1 s + 9.75 W x 593.9 s) = 12813.25 J, C_ea = 137186.75 J:
    # A is placed at 600 and starts once its hosts are on (151.52 s later).
    workload = delay_jobs(tmp_path, [("A", 0, 2, 500)])
    options = {"budget": "2500000", "end": "10000", **ESTIMATES}
    assert run(tmp_path, "energybud", options, "energy2", workload) == (
        {"A": (1800.0, 2300.0, "0-1")}, 190 * 2300.0)
    asleep = 2 * (W_OFF * OFF + W_SLEEP * (600 - OFF)) + 2 * W_ON * ON + 190 * 500
    for name in ("energybud", "reducepc"):
        times, joules = run(tmp_path, name, {**options, "t_idle": "0"}, "energy2", workload)
        assert times == {"A": (600 + ON, 1100 + ON, "0-1")}
        assert joules == pytest.approx(asleep, rel=1e-12)
    # The cap cannot use the energy the sleeping hosts save (§6.5.4): A waits for t_e.
    cap = {**options, "t_idle": "0"}
    assert run(tmp_path, "powercap", cap, "energy2", workload)[0] == {"A": (10000 + ON, 10500 + ON, "0-1")}


def energy_between(prefix: str, start: float, end: float) -> float:
    """Joules consumed in [start, end], from Batsim's consumed_energy output (power is
    constant between its rows)."""
    rows = [(float(r["time"]), float(r["energy"])) for r in csv.DictReader(open(f"{prefix}_consumed_energy.csv"))]

    def at(t: float) -> float:
        before = max((row for row in rows if row[0] <= t), default=(0.0, 0.0))
        after = min((row for row in rows if row[0] >= t), default=rows[-1])
        if after[0] == before[0]:
            return after[1]
        return before[1] + (after[1] - before[1]) * (t - before[0]) / (after[0] - before[0])

    return at(end) - at(start)


@pytest.mark.parametrize("name", BUDGETED)
@pytest.mark.parametrize("t_idle", [None, "0"])
def test_e2e_the_budget_is_respected_where_easy_exceeds_it(tmp_path, name, t_idle):
    # 16 Taurus-like hosts, computing jobs; 60 % of the energy of all hosts computing over
    # [2000, 12000], with table 6.1's estimates (default options).
    platform = energy_platform(tmp_path, 16, 95.0, 190.74)
    workload = random_workload(tmp_path, 150, 16, seed=3, compute=True)
    budget = 0.6 * 16 * 190.74 * 10000
    options = {"budget": str(budget), "start": "2000", "end": "12000"}
    if t_idle is not None:
        options["t_idle"] = t_idle
    run(tmp_path, "easy", {}, platform, workload)
    assert energy_between(str(tmp_path / "easy"), 2000, 12000) > 1.3 * budget
    times, _ = run(tmp_path, name, options, platform, workload)
    assert len(times) == 150
    assert energy_between(str(tmp_path / name), 2000, 12000) <= budget


def test_e2e_energybud_in_its_own_process(tmp_path):
    workload = delay_jobs(tmp_path, [("A", 0, 2, 100), ("B", 0, 1, 50)])
    prefix = str(tmp_path / "out")
    options = [arg for key, value in UNIT.items() for arg in ("-o", f"{key}={value}")]
    result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "energy2", "-w", workload,
                             "-d", "energybud", *options, "-E", "-e", prefix],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert {j: float(r["starting_time"]) for j, r in jobs_by_id(prefix).items()} == {"A": 100.0, "B": 200.0}


# --------------------------------------------------------------------------- budget in %
@pytest.mark.parametrize("name", BUDGETED)
@pytest.mark.parametrize("shutdown", [False, True])
def test_a_budget_in_percent_is_that_share_of_the_platform_full_load_energy(name, shutdown):
    import joulesim

    # 4 hosts at 190.74 W at full load (Taurus) over 1,000 s: 50% is 4 x 190.74 x 1,000 / 2 J.
    period = {"start": "1000", "end": "2000", **({"t_idle": "0"} if shutdown else {})}
    workload = {"jobs": [{"id": str(i), "subtime": 10 * i, "res": 1 + i % 4, "walltime": 900, "profile": "p"}
                         for i in range(40)],
                "profiles": {"p": {"type": "delay", "delay": 600}}}
    percent = joulesim.simulate("homogeneous240", workload, name, energy=True, mmax=4,
                                options={**period, "budget": "50%"})
    joules = joulesim.simulate("homogeneous240", workload, name, energy=True, mmax=4,
                               options={**period, "budget": repr(0.5 * (190.74 * 4) * 1000)})
    assert percent.jobs.equals(joules.jobs)
    unlimited = joulesim.simulate("homogeneous240", workload, name, energy=True, mmax=4, options=period)
    assert not percent.jobs.equals(unlimited.jobs)  # the budget held jobs back


def test_a_budget_in_percent_needs_wattages_and_a_number(tmp_path):
    import joulesim

    with pytest.raises(JoulesimError, match="host h0 has no wattage_per_state entry for pstate 0"):
        joulesim.simulate(write_platform(tmp_path, 2), "tiny", "energybud",
                          options={"budget": "80%", "end": "100"})
    with pytest.raises(JoulesimError, match="option budget"):
        load_decider("energybud", {"budget": "eighty%", "end": "100"})
    with pytest.raises(JoulesimError, match="option end"):
        load_decider("powercap", {"budget": "80%"})
