"""The kernel's sleeps in one array (simulator/engine/sleep_array.py) give the bits of its dict.

Beyond 64 started sleeps the kernel subtracts each step from them all in numpy; SimGrid's full update makes every sleep's end depend on every step
taken while it slept, so any difference in one subtraction or in the order of the ended ones
would move the clock. Checked here against the dict's rule (the kernel's loop) operation by
operation, and end to end: the same run kept in the dict, in the array, and moving between them, writes
the same files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import example, given, strategies as st

from joulesim.simulator.engine import simgrid_kernel
from joulesim.simulator.engine.sleep_array import SURF_PRECISION, SleepArray

from joulesim.deciders import load_decider
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.engine.simulation import Simulation
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.workload.workload_loader import load_workload


durations = st.floats(min_value=1e-10, max_value=1e7, allow_nan=False, allow_infinity=False)
operations = st.lists(st.one_of(
    st.tuples(st.just("add"), durations),
    st.tuples(st.just("cancel"), st.integers(min_value=0, max_value=10 ** 6)),
    # a step: the shortest sleep's remaining time, or a fraction of it (another action ends first)
    st.tuples(st.just("step"), st.sampled_from([1.0, 0.5, 0.999999999, 1e-6, 1e-12]))), max_size=300)


def dict_rule(sleeps: dict[int, float], delta: float) -> list[int]:
    """What Kernel._step does to the sleeps it keeps in a dict (in creation order)."""
    ended = []
    for key in sleeps:
        rest = sleeps[key] - delta
        if rest < SURF_PRECISION:
            rest = 0.0
            ended.append(key)
        sleeps[key] = rest
    for key in ended:
        del sleeps[key]
    return ended


@given(operations)
# a freed slot taken by a newer sleep that ends in the same step as an older one
@example([("add", 1.0), ("add", 5.0), ("cancel", 0), ("add", 5.0), ("step", 1.0)])
def test_the_array_updates_sleeps_as_the_kernel_s_dict_does(ops):
    array = SleepArray(capacity=4)  # (small: the arrays grow during the run)
    reference: dict[int, float] = {}
    next_key = 0
    for kind, value in ops:
        if kind == "add":
            array.add(next_key, value, f"actor{next_key}")
            reference[next_key] = value
            next_key += 1
        elif kind == "cancel" and reference:
            key = list(reference)[value % len(reference)]
            assert array.remove(key) == f"actor{key}"
            del reference[key]
        elif kind == "step":
            shortest = min(reference.values(), default=-1.0)
            assert array.shortest() == shortest
            if shortest < 0:
                continue
            delta = shortest * value
            ended = array.advance(delta)
            assert ended == dict_rule(reference, delta)
            for key in ended:
                assert array.remove(key, ended=True) == f"actor{key}"
        assert len(array) == len(reference)
        assert [(key, remaining) for key, remaining, _ in array.items()] == list(reference.items())


def wide_run(tmp_path: Path, name: str) -> tuple[dict[str, str], simgrid_kernel.Kernel]:
    """300 jobs of 1-2 hosts on 256 hosts, up to ~200 asleep at once; the output files and the
    run's kernel (what it counted)."""
    rng = random.Random(11)
    jobs, t = [], 0.0
    for i in range(300):
        t += rng.choice([0.0, 0.0, 0.3, 1.7])
        delay = rng.choice([50, 120, 300, 800])
        jobs.append({"id": i, "subtime": t, "res": rng.choice([1, 2]), "walltime": 2 * delay, "profile": f"d{delay}"})
    workload = tmp_path / "jobs.json"
    workload.write_text(json.dumps({"nb_res": 256, "jobs": jobs,
                                    "profiles": {f"d{d}": {"type": "delay", "delay": d} for d in (50, 120, 300, 800)}}))
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps({"master": {"name": "master_host"},
                                    "clusters": [{"id": "c", "prefix": "h", "count": 256, "speed": "1Gf"}]}))
    prefix = tmp_path / name
    sim = Simulation(SimulationConfig(platform=load_platform(str(platform)), workloads=[load_workload(str(workload), "w0")],
                                      export_prefix=str(prefix), event_grouping="batsim"),
                     DeciderLink(InProcessRequester(load_decider("easy", {}))))
    sim.run()
    files = {}
    for path in sorted(tmp_path.glob(f"{name}_*")):
        text = path.read_text()
        if path.name.endswith("_schedule.csv"):  # (its wall-clock columns differ between any two runs)
            header, row = text.splitlines()
            values = dict(zip(header.split(","), row.split(",")))
            del values["scheduling_time"], values["simulation_time"]
            text = repr(values)
        files[path.name.removeprefix(name)] = text
    return files, sim.actors.kernel


def test_a_run_writes_the_same_files_whether_its_sleeps_are_in_the_dict_or_the_array(tmp_path, monkeypatch):
    monkeypatch.setattr(simgrid_kernel, "WIDE", 10 ** 9)  # always the dict
    in_dict, dict_kernel = wide_run(tmp_path, "dict")
    monkeypatch.setattr(simgrid_kernel, "WIDE", -1)  # always the array, from the first step
    monkeypatch.setattr(simgrid_kernel, "NARROW", 0)
    in_array, array_kernel = wide_run(tmp_path, "array")
    monkeypatch.setattr(simgrid_kernel, "WIDE", 40)  # into the array and back
    monkeypatch.setattr(simgrid_kernel, "NARROW", 20)
    moving, moving_kernel = wide_run(tmp_path, "moving")
    assert in_dict["_jobs.csv"].count("\n") == 301
    assert in_array == in_dict
    assert moving == in_dict
    # (the thresholds took: a compiled kernel reads them from its module too)
    assert (dict_kernel.moves_to_array, array_kernel.moves_to_array, array_kernel.moves_from_array) == (0, 1, 0)
    assert moving_kernel.moves_to_array >= 1 and moving_kernel.moves_from_array >= 1


def test_the_kernel_moves_many_sleeps_to_the_array_and_back(tmp_path):
    # (the shipped thresholds: the run above has about 200 jobs asleep at its peak)
    _, kernel = wide_run(tmp_path, "shipped")
    assert kernel.moves_to_array >= 1 and kernel.moves_from_array >= 1


def test_steps_with_the_sleeps_in_the_array_take_the_plain_step(tmp_path, monkeypatch):
    # Without energy, a network runner, shared links or a solve listener, a step over the array
    # is the plain one, as over the dict: the general step serves only the moves between the two
    # (the Curie trace ran 6-8 % faster once its array steps stopped taking the general one).
    monkeypatch.setattr(simgrid_kernel, "WIDE", -1)  # the array from the first step
    monkeypatch.setattr(simgrid_kernel, "NARROW", 0)
    _, kernel = wide_run(tmp_path, "plain")
    steps, general = kernel.steps, kernel.general_steps
    assert steps > 1000 and general == 1, (steps, general)  # (the one that moves them)
