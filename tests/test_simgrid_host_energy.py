"""Batsim's energy figures to the last digit: SimGrid's per-host joules (updated at the energy
plugin's moments, at the pstate saved at the last update and the load of now), summed in x87
long double and printed with %Lf. Analytic cases with exact values; the long double arithmetic
against the CPU's own where numpy has it (x86's 80-bit format)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from joulesim.simulator.energy.long_double import (difference, fixed, long_double_sum, long_double_sum_array, quotient,
                                                   scaled, to_float)
from joulesim.simulator.energy.simgrid_host_energy import SimgridHostEnergy

X87 = np.finfo(np.longdouble).nmant == 63


# ---------------------------------------------------------------------- long double
def test_a_sum_keeps_64_bits_where_a_double_keeps_53():
    # 2**60 + 1 + 1: a double loses both ones; long double keeps them (61 bits)
    assert fixed(long_double_sum([2.0 ** 60, 1.0, 1.0])) == "1152921504606846978.000000"
    assert 2.0 ** 60 + 1.0 + 1.0 == 2.0 ** 60
    # 2**64 + 1 + 1: each one is half an ulp of the 64-bit sum, rounded to even (down) each time
    assert fixed(long_double_sum([2.0 ** 64, 1.0, 1.0])) == "18446744073709551616.000000"
    # ... but 1 + 1 first is a whole ulp
    assert fixed(long_double_sum([1.0, 1.0, 2.0 ** 64])) == "18446744073709551618.000000"


def test_printing_rounds_the_exact_binary_value():
    assert fixed(scaled(0.1)) == "0.100000"
    assert fixed(scaled(2.5e-7)) == "0.000000"  # 2.5e-7 is a little below 0.00000025
    assert fixed(scaled(1e-6 * 0.5000001)) == "0.000001"
    assert fixed(difference(scaled(1.0), scaled(1.0000000001))) == "-0.000000"  # glibc keeps the sign
    assert fixed(long_double_sum([])) == "0.000000"


def test_the_mean_power_is_rounded_twice():
    # energy 3 J over 1e-9 s, both long doubles: 3e9 W
    assert quotient(scaled(3.0), scaled(1.0)) == 3.0
    assert quotient(long_double_sum([1.0, 2.0 ** -40]), scaled(3.0)) == (1 + 2 ** -40) / 3
    assert quotient(scaled(-1.0), scaled(4.0)) == -0.25
    # (3 + 3 x 2**-53 + 2**-62) / 3 = 1 + 2**-53 + 2**-62 / 3: to 64 bits it rounds up to
    # 1 + 2**-53 + 2**-63, which a double rounds up to 1 + 2**-52; truncated to 64 bits it would be
    # 1 + 2**-53, a tie a double rounds to 1.
    assert quotient(long_double_sum([3.0, 3 * 2.0 ** -53, 2.0 ** -62]), scaled(3.0)) == 1 + 2.0 ** -52


doubles = st.floats(min_value=0.0, max_value=1e12, allow_nan=False, allow_infinity=False)


@pytest.mark.skipif(not X87, reason="numpy's longdouble is not x87's 80-bit format on this machine "
                                    "(the integer arithmetic is checked by the analytic cases above)")
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(doubles, st.floats(min_value=0.0, max_value=1e-6)), max_size=40),
       st.lists(doubles, min_size=1, max_size=10))
@example(values=[1.0], others=[5e-324])  # a quotient beyond a double: the cast gives infinity
def test_long_double_arithmetic_is_the_cpus(values, others):
    cpu = np.longdouble(0)
    for value in values:
        cpu += np.longdouble(value)
    mine = long_double_sum(values)
    assert fixed(mine) == np.format_float_positional(cpu, precision=6, unique=False, fractional=True)
    assert to_float(mine) == float(cpu)
    cpu_other = np.longdouble(0)
    for value in others:
        cpu_other += np.longdouble(value)
    other = long_double_sum(others)
    assert fixed(difference(mine, other)) == np.format_float_positional(cpu - cpu_other, precision=6,
                                                                        unique=False, fractional=True)
    if float(cpu_other) > 0:
        assert quotient(mine, other) == float(cpu / cpu_other)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from([2.0 ** 64, 2.0 ** 60, 1.0, 3.0, 0.5, 1e-3, 123456789.123, 0.0]),
                         max_size=3000), min_size=1, max_size=4))
def test_an_array_is_added_in_long_double_in_order_whatever_was_added_before(arrays):
    """long_double_sum_array keeps its partial sums in a buffer from one call to the next: each
    sum, of a longer or a shorter array than the last, is its own values' in order."""
    for values in arrays:
        assert long_double_sum_array(np.array(values, dtype=float)) == long_double_sum(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([2.0 ** 64, 2.0 ** 60, 1.0, 3.0, 0.5, 1e-3, 123456789.123]), min_size=1, max_size=24),
       st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=1, max_size=6))
def test_a_jobs_joules_are_its_machines_added_in_long_double_in_ascending_order(joules, pieces):
    """read(runs): the machines of the runs added one after the other from the lowest, each sum
    rounded to 64 bits (values where the order changes the result: 2**64 + 1 + 1 and 1 + 1 +
    2**64 differ)."""
    ranges = [(100.0, 120.0, 200.0)]
    energy = SimgridHostEnergy([ranges] * len(joules), [0] * len(joules), [1] * len(joules))
    energy.joules[:] = joules
    energy.caught_up = 0.0
    runs, machine = [], 0
    for gap, length in pieces:  # (disjoint, ascending runs, as a job's allocation)
        first = machine + gap + (1 if runs else 0)
        last = min(first + length, len(joules) - 1)
        if first > last:
            break
        runs.append((first, last))
        machine = last + 1
    if not runs:
        return
    in_order = [joules[m] for first, last in runs for m in range(first, last + 1)]
    assert energy.read(runs, 0.0) == long_double_sum(in_order)


# ---------------------------------------------------------------------- the plugin
def plugin(cores: int = 1) -> SimgridHostEnergy:
    """Two machines; pstates: 0 computation (100 W idle, 120 epsilon, 200 max), 1 sleep (10 W),
    2 a switching pstate (50 W idle, 150 max)."""
    ranges = [(100.0, 120.0, 200.0), (10.0, 10.0, 10.0), (50.0, 50.0, 150.0)]
    return SimgridHostEnergy([ranges, ranges], [0, 0], [cores, cores])


def test_joules_are_brought_up_to_date_only_when_updated():
    energy = plugin()
    energy.update(0, 10.0)
    assert list(energy.joules) == [1000.0, 0.0]  # machine 1 not updated yet
    assert to_float(energy.read_all(10.0)) == 2000.0
    assert list(energy.joules) == [1000.0, 1000.0]


def test_an_interval_is_charged_at_the_pstate_saved_at_its_start():
    energy = plugin()
    energy.set_current(0, 1)  # set without an update (the server sets it before the actor's simcall) ...
    energy.update(0, 5.0)  # ... the interval so far is still at pstate 0
    assert energy.joules[0] == 500.0
    energy.update(0, 15.0)  # then at pstate 1
    assert energy.joules[0] == 600.0
    energy.set_pstate(0, 20.0, 0)  # set_pstate updates first with the old one: 5 s at 10 W
    energy.update(0, 30.0)
    assert energy.joules[0] == 650.0 + 1000.0


def test_an_execution_loads_its_host_fully_at_the_epsilon_plus_slope_power():
    energy = plugin()
    energy.set_pstate(0, 0.0, 2)
    energy.execution_started(0)
    energy.update(0, 2.0)  # 2 s at 50 + 1 x (150 - 50)
    assert energy.joules[0] == 300.0
    energy.execution_ended(0)
    energy.set_pstate(0, 2.0, 0)
    energy.execution_started(0)
    energy.update(0, 3.0)  # computation pstate, loaded: epsilon 120 + slope 80
    assert energy.joules[0] == 500.0
    halves = plugin(cores=2)
    halves.execution_started(0)
    halves.update(0, 1.0)  # one flop stream on two cores: load 1/2
    assert halves.joules[0] == 160.0


def test_the_load_is_the_one_of_the_update_not_of_the_interval():
    """SimGrid charges the whole interval since the last update at the load of now: an
    execution that starts without an update makes the idle time before it loaded."""
    energy = plugin()
    energy.execution_started(0)  # (Exec::on_start would have updated; here nothing did)
    energy.update(0, 4.0)
    assert energy.joules[0] == 4 * 200.0


def test_wattmin_is_the_epsilon_of_each_machines_current_pstate():
    energy = plugin()
    assert fixed(energy.wattmin()) == "240.000000"
    energy.set_current(1, 1)
    assert fixed(energy.wattmin()) == "130.000000"


class MachineByMachine(SimgridHostEnergy):
    """The plugin's definition of a bulk read: every machine not up to date is updated, one by
    one (what the bulk update computes over arrays, keeping the watts between reads)."""

    def catch_up(self, now: float) -> None:
        if self.caught_up == now:
            return
        self.caught_up = now
        for machine in range(len(self.joules)):
            if self._last[machine] < now:
                self.update(machine, now)


watts_ranges = st.lists(st.tuples(st.sampled_from([10.0, 95.5, 100.0]), st.sampled_from([50.0, 120.25]),
                                  st.sampled_from([150.0, 200.0, 333.3])), min_size=3, max_size=3)
MACHINES = 256  # (enough that a few moved machines are computed again one by one, many all at once)
machine = st.integers(0, MACHINES - 1)
operations = st.lists(st.one_of(
    st.tuples(st.just("advance"), st.sampled_from([0.0, 1e-9, 0.1, 3.0, 1234.5678])),
    st.tuples(st.sampled_from(["set_pstate", "set_current"]), machine, st.integers(0, 2)),
    st.tuples(st.sampled_from(["update", "exec_start", "exec_end"]), machine),
    st.tuples(st.just("dynamic"), machine, st.sampled_from([0, 0, 2, MACHINES]), st.sampled_from([-30.5, 0.1, 7.0])),
    st.tuples(st.just("catch_up"))), min_size=20, max_size=80)


@settings(max_examples=120, deadline=None)
@given(st.lists(watts_ranges, min_size=4, max_size=4), st.lists(st.integers(1, 4), min_size=4, max_size=4),
       operations)
def test_the_bulk_update_gives_each_machines_own_update_to_the_bit(kinds, kinds_cores, steps):
    """Between bulk reads the plugin keeps every machine's watts and computes again only those
    whose saved pstate, executions or dynamic share moved: any sequence of pstate changes,
    executions, dynamic power (one machine or several) and reads gives the joules (bits) and
    saved pstates that updating each machine one by one gives."""
    wattages = [kinds[m % 4] for m in range(MACHINES)]
    cores = [kinds_cores[m % 4] for m in range(MACHINES)]
    bulk, reference = (kind(wattages, [0] * MACHINES, cores) for kind in (SimgridHostEnergy, MachineByMachine))
    for energy in (bulk, reference):
        energy.dynamic = [0.0] * MACHINES
        energy.dynamic_array = np.zeros(MACHINES)
        energy.dynamic_active = (lambda shares: lambda: any(share > 0 for share in shares))(energy.dynamic)
    now = 0.0
    for step in steps:
        kind = step[0]
        if kind == "advance":
            now += step[1]
            continue
        for energy in (bulk, reference):
            if kind == "set_pstate":
                energy.set_pstate(step[1], now, step[2])
            elif kind == "set_current":
                energy.set_current(step[1], step[2])
            elif kind == "update":
                energy.update(step[1], now)
            elif kind == "exec_start":
                energy.execution_started(step[1])
            elif kind == "exec_end" and energy.executing[step[1]]:
                energy.execution_ended(step[1])
            elif kind == "dynamic":
                first, last = step[1], min(MACHINES - 1, step[1] + step[2])
                for host in range(first, last + 1):  # (the ledger's list, then the plugin's array)
                    energy.dynamic[host] += step[3]
                energy.add_dynamic(first, last, step[3])
            elif kind == "catch_up":
                energy.catch_up(now)
        if kind == "catch_up":
            assert bulk.joules.tobytes() == reference.joules.tobytes()
            assert bulk._saved.tolist() == reference._saved.tolist()
    assert bulk.read_all(now + 1.0) == reference.read_all(now + 1.0)


def test_executions_are_counted_through_the_plugin():
    """The kept watts follow executions only if every change goes through the plugin."""
    energy = plugin()
    with pytest.raises(ValueError):
        energy.executing[0] += 1


# ---------------------------------------------------------------------- end to end
SWITCHY = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="n0" speed="1Gf, 1e-9Mf, 0.25f, 0.5f" core="CORES">
      <prop id="wattage_per_state" value="WATTS"/>
      <prop id="sleep_pstates" value="1:2:3"/>
    </host>
    <host id="master_host" speed="1Gf"/>
  </zone>
</platform>
"""


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("watts, epsilon_off, epsilon_on", [("100:200, 10:10, 50:150, 60:80", 50, 60),
                                                            ("100:200, 10:10, 50:70:150, 60:64:80", 70, 64)])
def test_a_switching_machine_computes_its_flop_at_the_virtual_pstate(tmp_path, grouping, cores, watts, epsilon_off,
                                                                     epsilon_on):
    """Off at t=10 (1 flop at 0.25 flop/s: 4 s in pstate 2, 50 W idle, 150 W loaded), asleep at
    10 W until t=20, on (1 flop at 0.5 flop/s: 2 s in pstate 3, 60-80 W), idle at 100 W until the
    last job ends at t=30 + 5. A switch loads its host's one core of `cores`: SimGrid's epsilon +
    (max - epsilon) / cores W, where epsilon is the idle watts unless given (idle:epsilon:max)."""
    from scripted_decider import ScriptedDecider

    from conftest import run_in_process, write_workload

    platform = tmp_path / "switchy.xml"
    platform.write_text(SWITCHY.replace("CORES", str(cores)).replace("WATTS", watts))
    workload = write_workload(tmp_path, [{"id": 1, "subtime": 0, "res": 1, "delay": 5},
                                         {"id": 2, "subtime": 30, "res": 1, "delay": 5}])

    def script(d, message):
        for event in message["events"]:
            kind = event["type"]
            if kind == "JOB_SUBMITTED":
                d.execute_job(event["data"]["job_id"], "0")
            elif kind == "JOB_COMPLETED" and event["data"]["job_id"] == "w0!1":
                d.call_me_later(10)
            elif kind == "REQUESTED_CALL" and message["now"] == 10:
                d.set_resource_state("0", "1")
                d.call_me_later(20)
            elif kind == "REQUESTED_CALL":
                d.set_resource_state("0", "0")

    result = run_in_process(ScriptedDecider(script), str(platform), [workload], str(tmp_path / "out"), energy=True,
                            event_grouping=grouping)
    off, on = epsilon_off + (150 - epsilon_off) / cores, epsilon_on + (80 - epsilon_on) / cores
    expected = 100 * 10 + off * 4 + 10 * 6 + on * 2 + 100 * 13
    assert float(result.schedule["consumed_joules"]) == pytest.approx(expected, abs=2e-6)


def full_zone(hosts: int, network: str = "") -> str:
    """A Full zone of `hosts` 1-Gflop hosts n0, n1... drawing 100 W idle and 200 W computing,
    a master host, and `network` (links and routes)."""
    machines = "".join(f'<host id="n{i}" speed="1Gf"><prop id="wattage_per_state" value="100:200"/></host>'
                       for i in range(hosts))
    return ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            f'<platform version="4.1"><zone id="AS0" routing="Full">{machines}'
            f'<host id="master_host" speed="1Gf"/>{network}</zone></platform>\n')


TWO_HOSTS = full_zone(2)


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_each_job_is_charged_the_dynamic_power_on_its_own_machines(tmp_path, grouping):
    """Job a computes 10 s on n0 from t=0, job b 10 s on n0 and n1 from t=20: a computing
    machine draws 200 W, an idle one 100 W. Each job's energy is its machines': 2,000 J and
    4,000 J; the run's is 2 x 100 W x 30 s + 100 W x 10 s + 2 x 100 W x 10 s. (Job b's second
    machine is brought up to date by the bulk update of every machine, the first one by its
    actor's end.)"""
    from scripted_decider import ScriptedDecider

    from conftest import read_csv, run_in_process, write_workload

    def script(d, message):
        for event in message["events"]:
            if event["type"] == "JOB_SUBMITTED":
                job = event["data"]["job_id"]
                d.execute_job(job, "0" if job == "w0!a" else "0-1")

    platform = tmp_path / "two.xml"
    platform.write_text(TWO_HOSTS)
    compute = {"c": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}}
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 0, "res": 1, "profile": "c"},
                                         {"id": "b", "subtime": 20, "res": 2, "profile": "c"}], compute)
    result = run_in_process(ScriptedDecider(script), str(platform), [workload], str(tmp_path / "out"), energy=True,
                            event_grouping=grouping)
    jobs = sorted(read_csv(str(tmp_path / "out_jobs.csv")), key=lambda row: row["job_id"])
    assert [row["allocated_resources"] for row in jobs] == ["0", "0-1"]
    assert [float(row["consumed_energy"]) for row in jobs] == pytest.approx([2000.0, 4000.0], rel=1e-9)
    assert float(result.schedule["consumed_joules"]) == pytest.approx(9000.0, rel=1e-9)



LATENCY_LINK = full_zone(2, '<link id="l" bandwidth="100MBps" latency="1s"/><link id="m" bandwidth="1GBps" latency="0"/>'
                              '<route src="n0" dst="n1"><link_ctn id="l"/></route>'
                              '<route src="n0" dst="master_host"><link_ctn id="m"/></route>'
                              '<route src="n1" dst="master_host"><link_ctn id="m"/></route>')


@pytest.mark.parametrize("grouping, joules", [("batsim", 800.0), ("per-time", 600.0)])
def test_a_parallel_task_is_charged_at_its_load_when_its_hosts_are_updated(tmp_path, grouping, joules):
    """A task of 1 Gflop on n0 and n1 and 100 kB from n0 to n1 over a link of 1 s latency: it
    waits the latency (no CPU load), then computes 1 s at full load, from t=1 to t=2. A host draws
    idle + load x (max - idle): 100 W, then 200 W. SimGrid's energy plugin charges an interval at
    the load of its end, when the host is updated: n0 and n1 are read at the job's start (t=0)
    and updated when its task ends, at load 1: 2 x 2 s x 200 W. The exact integral (per-time) is
    2 x (1 s x 100 W + 1 s x 200 W)."""
    from conftest import read_csv, write_workload

    import joulesim

    platform = tmp_path / "latency.xml"
    platform.write_text(LATENCY_LINK)
    profiles = {"a": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 1e5, 0, 0]}}
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 0, "res": 2, "profile": "a"}], profiles)
    joulesim.simulate(str(platform), workload, "fcfs", energy=True, event_grouping=grouping,
                      export=str(tmp_path / "out"))
    job = read_csv(str(tmp_path / "out_jobs.csv"))[0]
    assert float(job["execution_time"]) == pytest.approx(2.0, abs=1e-6)
    assert float(job["consumed_energy"]) == pytest.approx(joules, rel=1e-6)


SHARED_LINK = full_zone(4, '<link id="l" bandwidth="100MBps" latency="0"/><link id="m" bandwidth="1GBps" latency="0"/>'
                             '<route src="n0" dst="n1"><link_ctn id="l"/></route>'
                             '<route src="n2" dst="n3"><link_ctn id="l"/></route>'
                             + "".join(f'<route src="n{i}" dst="master_host"><link_ctn id="m"/></route>' for i in range(4)))


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_a_task_that_ends_is_charged_at_its_own_load(tmp_path, grouping):
    """Tasks a (n0-n1: 4 Gflop each, 400 MB over link l) and b (n2-n3: 0.1 Gflop each, 100 MB
    over l) start at t=0 and share l: a runs at 1/8 of its task per second (CPU load 0.5), b at
    1/2 (load 0.05) until b ends at t=2; alone, a runs at 1/4 (load 1) and ends at t=5. A host
    draws idle + load x (max - idle). b's hosts are updated as its task ends, which still counts
    it: 2 x 2 s x 105 W; a's: 2 x (2 s x 150 W + 3 s x 200 W)."""
    from conftest import read_csv, write_workload

    import joulesim

    platform = tmp_path / "shared.xml"
    platform.write_text(SHARED_LINK)
    profiles = {"a": {"type": "parallel", "cpu": [4e9, 4e9], "com": [0, 4e8, 0, 0]},
                "b": {"type": "parallel", "cpu": [1e8, 1e8], "com": [0, 1e8, 0, 0]}}
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 0, "res": 2, "profile": "a"},
                                         {"id": "b", "subtime": 0, "res": 2, "profile": "b"}], profiles)
    joulesim.simulate(str(platform), workload, "fcfs", energy=True, event_grouping=grouping,
                      export=str(tmp_path / "out"))
    jobs = {row["job_id"]: row for row in read_csv(str(tmp_path / "out_jobs.csv"))}
    assert (jobs["a"]["allocated_resources"], jobs["b"]["allocated_resources"]) == ("0-1", "2-3")
    assert float(jobs["a"]["finish_time"]) == pytest.approx(5.0, abs=1e-6)
    assert float(jobs["b"]["finish_time"]) == pytest.approx(2.0, abs=1e-6)
    assert float(jobs["a"]["consumed_energy"]) == pytest.approx(1800.0, rel=1e-6)
    assert float(jobs["b"]["consumed_energy"]) == pytest.approx(420.0, rel=1e-6)


LATENCY_AND_DELAY = full_zone(3, '<link id="l" bandwidth="100MBps" latency="1s"/>'
                                   '<route src="n0" dst="n1"><link_ctn id="l"/></route>')


@pytest.mark.parametrize("grouping", ["batsim", "per-time"])
def test_a_task_past_its_latency_loads_its_hosts_from_the_next_solve(tmp_path, grouping):
    """The task above on n0-n1, and a 1 s delay job on n2 whose end, at t=1, reads every machine
    just as the task's latency is over: in SimGrid the task's variable is enabled then but keeps
    the value 0 until the next solve, so n0 and n1 are charged [0, 1] at idle power (not at the
    rate the runner has already given it): 2 x (1 s x 100 W + 1 s x 200 W), as the exact integral."""
    from conftest import read_csv, write_workload

    import joulesim

    platform = tmp_path / "latency_delay.xml"
    platform.write_text(LATENCY_AND_DELAY)
    profiles = {"a": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 1e5, 0, 0]}}
    workload = write_workload(tmp_path, [{"id": "a", "subtime": 0, "res": 2, "profile": "a"},
                                         {"id": "d", "subtime": 0, "res": 1, "delay": 1}], profiles)
    joulesim.simulate(str(platform), workload, "fcfs", energy=True, event_grouping=grouping,
                      export=str(tmp_path / "out"))
    jobs = {row["job_id"]: row for row in read_csv(str(tmp_path / "out_jobs.csv"))}
    assert (jobs["a"]["allocated_resources"], jobs["d"]["allocated_resources"]) == ("0-1", "2")
    assert (float(jobs["a"]["finish_time"]), float(jobs["d"]["finish_time"])) == (2.0, 1.0)
    assert float(jobs["a"]["consumed_energy"]) == pytest.approx(600.0, rel=1e-9)
