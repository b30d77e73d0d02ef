"""Batsim 5's energy probes (CreateProbeEvent / ProbeDataEmittedEvent) on joulesim: what
Batsim 5.0.0-rc2 implements (periodic probes of the Power metric on hosts: each host's joules
since t=0, one value per host, their sum or their mean; the first trigger starts the measure,
data comes from the second), with exact joules on a hand-computed platform, both formats; every
probe Batsim 5 refuses is refused naming the probe and the field; and the per-host energy ledger
behind them sums to the platform's total whatever the run does."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_edc import PythonChannel, run_channel, run_fcfs_edc

from joulesim.protocol.errors import JoulesimError
from joulesim.run_result import RunResult
from joulesim.simulator.energy.energy_meter import EnergyMeter
from joulesim.simulator.workload.job_record import JobRecord

# Two hosts of 1 Gflop/s drawing 100 W idle and 200 W at full load.
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"><prop id="wattage_per_state" value="100:200"/>
      <prop id="wattage_off" value="10"/></host>
    <host id="h0" speed="1Gf"><prop id="wattage_per_state" value="100:200"/><prop id="wattage_off" value="10"/></host>
    <host id="h1" speed="1Gf"><prop id="wattage_per_state" value="100:200"/><prop id="wattage_off" value="10"/></host>
  </zone>
</platform>
"""
# One job on host 0, 2 s at full load (2 Gflop): host 0 draws 200 W over [0, 2], then 100 W.
WORKLOAD = {"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "busy2s"}],
            "profiles": {"busy2s": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}}}


def probe(probe_id: str, hosts: str = "0-1", aggregation: str = "NoResourcesAggregation", period_s: int = 1,
          periods: int | None = None, **changes) -> tuple[str, dict]:
    mode = ({"mode_type": "Infinite", "mode": {}} if periods is None
            else {"mode_type": "FinitePeriodNumber", "mode": {"nb_periods": periods}})
    body = {"probe_id": probe_id, "metrics": "Power", "resources_type": "HostResources",
            "resources": {"host_ids": hosts}, "data_accumulation_strategy_type": "ProbeDataAccumulation",
            "data_accumulation_strategy": {"reset_mode_type": "NoReset", "reset_mode": {}},
            "measurement_triggering_policy_type": "TemporalTriggerWrapper",
            "measurement_triggering_policy": {"temporal_trigger_type": "Periodic", "temporal_trigger": {
                "period": period_s, "time_unit": "Second", **mode}},
            "resources_aggregation_function_type": aggregation, "resources_aggregation_function": {},
            "temporal_aggregation_function_type": "NoTemporalAggregation", "temporal_aggregation_function": {},
            "emission_filtering_policy_type": "NoFiltering", "emission_filtering_policy": {}}
    body.update(changes)
    return "CreateProbeEvent", body


def run(tmp_path, decide, energy: bool = True, json_format: bool = False) -> tuple[PythonChannel, RunResult]:
    platform = tmp_path / "two_hosts.xml"
    platform.write_text(PLATFORM)
    channel = PythonChannel(decide, json_format=json_format)
    # (run_channel's time limit: a probe that never ends fails the test rather than hanging it)
    return channel, run_channel(channel, [], str(platform), export=str(tmp_path / "out"), workload=WORKLOAD,
                                energy=energy)


def start_job_then(*probes, stop_at: float | None = None, stop: str = ""):
    """An EDC that creates `probes` at the start, runs job 1 on host 0, and stops probe `stop`
    in its first message at or after `stop_at`."""
    def decide(message):
        kinds = [e["event_type"] for e in message["events"]]
        out = []
        if "SimulationBeginsEvent" in kinds:
            out += list(probes)
        if "JobSubmittedEvent" in kinds:
            out.append(("ExecuteJobEvent", {"job_id": "w0!1", "allocation": {
                "host_allocation": "0", "executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
                "executor_placement": {"strategy": "SpreadOverHostsFirst"}}}))
        if stop_at is not None and message["now"] >= stop_at:
            out.append(("StopProbeEvent", {"probe_id": stop}))
        return out
    return decide


def to_us(value):
    """Times and joules to the microsecond: Batsim's actors on the master host pass messages in
    1e-10 s (SimGrid's loopback link), so a probe due at 2 s reads 2.0000000001 s, and 3e-8 J
    less at 300 W."""
    if isinstance(value, list):
        return [to_us(v) for v in value]
    return round(value, 6)


def emitted(channel: PythonChannel) -> list[tuple[float, str, object]]:
    return [(to_us(m["now"]), e["event"]["probe_id"], to_us(e["event"]["data"]["data"])) for m in channel.seen
            for e in m["events"] if e["event_type"] == "ProbeDataEmittedEvent"]


@pytest.mark.parametrize("json_format", [False, True])
def test_probes_emit_each_host_s_joules_as_batsim_5_does(tmp_path, json_format):
    # Host 0: 200 W over [0, 2] then 100 W; host 1: 100 W throughout. Probes every second from
    # t=0: the trigger at 1 s starts them, data comes at 2, 3, 4...
    channel, result = run(tmp_path, start_job_then(
        probe("vec", periods=3), probe("sum", aggregation="Sum"), probe("mean", "0-1", "ArithmeticMean", periods=1),
        probe("one", "1", "Sum", period_s=2, periods=1),
        stop_at=3.0, stop="sum"), json_format=json_format)
    # "one" (host 1, every 2 s): started at 2 s, it emits once, at 4 s; "sum" was stopped at 3 s
    assert emitted(channel) == [
        (2.0, "mean", 300.0), (2.0, "sum", 600.0), (2.0, "vec", [400.0, 200.0]),  # (due together: by id)
        (3.0, "sum", 800.0), (3.0, "vec", [500.0, 300.0]),
        (4.0, "one", 400.0), (4.0, "vec", [600.0, 400.0])]
    first = next(e["event"] for m in channel.seen for e in m["events"] if e["event_type"] == "ProbeDataEmittedEvent")
    assert first == {"probe_id": "mean", "resources_type": "HostResources", "resources": {"host_ids": "0-1"},
                     "metrics": "Power", "data_type": "AggregatedProbeData", "data": {"data": pytest.approx(300.0)},
                     "manually_triggered": False, "nb_emitted": 0, "nb_triggered": 0}
    assert result.jobs["consumed_energy"].tolist() == [400.0]


def test_a_probe_stopped_or_unknown_is_quiet_and_a_finite_one_lets_the_run_end(tmp_path):
    # (stopping a probe that does not exist: Batsim 5 warns and goes on)
    channel, _ = run(tmp_path, start_job_then(probe("p", periods=2), stop_at=0.0, stop="nothing"))
    assert [(now, data) for now, _, data in emitted(channel)] == [(2.0, [400.0, 200.0]), (3.0, [500.0, 300.0])]
    assert to_us(channel.seen[-1]["now"]) == 3.0 and channel.seen[-1]["events"][-1]["event_type"] == "SimulationEndsEvent"



def test_probe_ids_and_call_ids_are_apart_as_in_batsim_5(tmp_path):
    """A call and a probe may share an id: stopping the call leaves the probe running."""
    jobs = start_job_then(probe("x", periods=2), ("CallMeLaterEvent", {
        "call_me_later_id": "x", "when_type": "Periodic",
        "when": {"period": 1, "time_unit": "Second", "mode_type": "Infinite", "mode": {}}}))

    def decide(message):
        kinds = [e["event_type"] for e in message["events"]]
        return jobs(message) + ([("StopCallMeLaterEvent", {"call_me_later_id": "x"})]
                                if "RequestedCallEvent" in kinds else [])

    channel, _ = run(tmp_path, decide)
    assert [(now, probe_id) for now, probe_id, _ in emitted(channel)] == [(2.0, "x"), (3.0, "x")]
    calls = [to_us(m["now"]) for m in channel.seen for e in m["events"] if e["event_type"] == "RequestedCallEvent"]
    assert calls == [1.0]


REFUSED = [
    ({"metrics": "NetworkLoad"}, "metrics NetworkLoad: Batsim 5 implements the Power metric only"),
    ({"resources_type": "LinkResources", "resources": {"link_ids": ["l0"]}}, "resources must be HostResources"),
    ({"resources": {"host_ids": "0-2"}}, "resources.host_ids '0-2' names hosts that are not compute hosts (their ids are 0-1)"),
    ({"resources": {"host_ids": ""}}, "resources.host_ids is empty"),
    ({"resources": {"host_ids": "1-0"}}, "resources.host_ids:"),
    ({"data_accumulation_strategy_type": "NoProbeDataAccumulation", "data_accumulation_strategy": {}},
     "data_accumulation_strategy must be ProbeDataAccumulation"),
    ({"data_accumulation_strategy": {"reset_mode_type": "ProbeAccumulationReset", "reset_mode": {"new_value": 0.0}}},
     "reset_mode must be NoReset"),
    ({"resources_aggregation_function_type": "QuantileFunction", "resources_aggregation_function": {"threshold": 0.5}},
     "resources_aggregation_function must be one of NoResourcesAggregation, Sum, ArithmeticMean"),
    ({"measurement_triggering_policy": {"temporal_trigger_type": "OneShot", "temporal_trigger": {"time": 5}}},
     "Batsim 5 does not implement one-shot probes"),
    ({"measurement_triggering_policy": {"temporal_trigger_type": "Periodic", "temporal_trigger": {
        "period": 1, "offset": 3}}}, "a periodic probe with offset 3"),
    ({"measurement_triggering_policy": {"temporal_trigger_type": "Periodic", "temporal_trigger": {
        "period": 1, "mode_type": "FinitePeriodNumber", "mode": {"nb_periods": 0}}}}, "needs nb_periods >= 1"),
    ({"emission_filtering_policy_type": "NONE"}, "give an emission_filtering_policy"),
]


@pytest.mark.parametrize("changes, expected", REFUSED)
def test_a_probe_batsim_5_refuses_is_refused_naming_the_probe_and_the_field(tmp_path, changes, expected):
    with pytest.raises(JoulesimError) as caught:
        run(tmp_path, start_job_then(probe("p1", **changes)))
    message = str(caught.value)
    assert message.startswith("python-edc: event 0 (CreateProbeEvent, t=0): probe 'p1': ") and expected in message


@pytest.mark.parametrize("events, energy, expected", [
    ([probe("p")], False, "probe 'p': energy probes read the hosts' consumed energy: run the simulation with -E/--energy"),
    ([probe("p"), probe("p")], True, "event 1 (CreateProbeEvent, t=0): probe 'p': this probe id is already in use"),
    ([("TriggerProbeEvent", {"probe_id": "p"})], True, "Batsim 5 does not implement TriggerProbeEvent"),
    ([("ResetProbeEvent", {"probe_id": "p", "new_value": 0.0})], True, "Batsim 5 does not implement ResetProbeEvent"),
])
def test_probes_without_energy_twice_or_triggered_by_hand_are_refused(tmp_path, events, energy, expected):
    with pytest.raises(JoulesimError, match="python-edc: ") as caught:
        run(tmp_path, start_job_then(*events), energy=energy)
    assert expected in str(caught.value)
    assert (tmp_path / "out_jobs.csv").exists()  # (the outputs so far are kept)


# ------------------------------------------------------------------ the per-host ledger
HOSTS = 6
_runs = st.integers(0, HOSTS - 1).flatmap(lambda a: st.tuples(st.just(a), st.integers(a, HOSTS - 1)))
_steps = st.lists(st.tuples(
    st.sampled_from(["start", "dynamic", "static", "end", "wait"]), st.floats(0, 100), st.floats(0, 500), _runs),
    min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(_steps)
def test_the_hosts_joules_add_up_to_the_platform_s_whatever_happens(steps):
    """Jobs start on any hosts, change their dynamic watts, end; hosts change their static watts
    (pstates); time passes: at every step the hosts' joules sum to the meter's total."""
    meter = EnergyMeter(None, [100.0] * HOSTS)
    ledger = meter.track_hosts()
    now, running = 0.0, []
    for kind, watts, elapsed, (a, b) in steps:
        if kind == "start":
            record = JobRecord.__new__(JobRecord)
            record.alloc = [(a, b)]
            meter.job_started(now, record, [(a, b)], watts)
            running.append(record)
        elif kind == "dynamic" and running:
            meter.set_dynamic_power(now, running[0], watts)
        elif kind == "static":
            meter.set_static_watts(now, list(range(a, b + 1)), [watts] * (b - a + 1), [None] * HOSTS, row=False)
        elif kind == "end" and running:
            meter.job_ended(now, running.pop())
        now += elapsed
        hosts = ledger.joules(range(HOSTS), now)
        # (the meter's total is compensated; the ledger adds a few products per host: relative 1e-12)
        assert math.isclose(sum(hosts), meter.energy_at(now), rel_tol=1e-12, abs_tol=1e-6)
        assert all(value >= -1e-6 for value in hosts)


def test_a_host_s_joules_are_its_static_watts_plus_its_share_of_its_jobs_dynamic_watts():
    meter = EnergyMeter(None, [100.0, 100.0, 50.0])
    ledger = meter.track_hosts()
    record = JobRecord.__new__(JobRecord)
    record.alloc = [(0, 1)]
    meter.job_started(0.0, record, [(0, 1)], 60.0)  # 30 W more on each of hosts 0 and 1
    meter.set_static_watts(2.0, [2], [10.0], [None] * 3, row=False)  # host 2 goes to sleep at 2 s
    meter.set_dynamic_power(4.0, record, 20.0)  # 10 W each from 4 s
    meter.job_ended(5.0, record)
    assert ledger.joules([0, 1, 2], 6.0) == [130 * 4 + 110 * 1 + 100 * 1] * 2 + [50 * 2 + 10 * 4]


# ------------------------------------------------------------------ end to end, the EDC in its own process
@pytest.mark.parametrize("json_format", [False, True])
def test_the_python_process_edc_s_energy_probe_reads_the_energy_the_run_writes(tmp_path, json_format):
    """examples/deciders/fcfs_edc.py with an energy probe every 5 s, over ZeroMQ from its own
    process, on a platform whose jobs draw dynamic power: each reading (all hosts' joules since
    t=0) is the energy of out_consumed_energy.csv at that time (piecewise linear between its
    rows: the power only changes at them)."""
    out = run_fcfs_edc(tmp_path, {"format_json": json_format, "energy_probe_period": 5},
                       "-p", "energy2", "-w", "mixed", "-E", "-e", str(tmp_path / "out"))
    readings = [tuple(map(float, line.split()[1:])) for line in out.splitlines() if line.startswith("probe ")]
    energy = pd.read_csv(tmp_path / "out_consumed_energy.csv")
    makespan = energy["time"].max()
    # (Batsim 5: the trigger at 5 s starts the measure; readings every 5 s from 10 s, until the
    # EDC stops the probe once the last job has ended)
    assert [to_us(time) for time, _ in readings] == [5.0 * k for k in range(2, int(makespan // 5) + 1)] and readings
    for time, joules in readings:
        assert joules == pytest.approx(float(np.interp(time, energy["time"], energy["energy"])), rel=1e-9, abs=1e-5)
