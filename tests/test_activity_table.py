"""The network runner's activity table (simulator/models/activity_table.py): its compiled steps
give the same bits as its numpy ones, its sharing order is the runner's visiting order, and
its slots and element pool survive reuse and growth.

The compiled path needs numba (the test extra brings it); without it those comparisons skip.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from joulesim import simulate
from joulesim.simulator.models import activity_table_kernel, ptask_sharing
from joulesim.simulator.models.activity_table import ActivityTable

needs_numba = pytest.mark.skipif(not activity_table_kernel.AVAILABLE, reason="numba is not installed (the test extra brings it)")


def numpy_path():
    """Context: the table's (and the solver's) numpy code instead of the compiled one."""
    class Switch:
        def __enter__(self):
            ptask_sharing.USE_KERNEL = False

        def __exit__(self, *exc):
            ptask_sharing.USE_KERNEL = True

    return Switch()


def test_an_exact_case_by_hand():
    """Two tasks on one link of 100 (resource 2 after two CPUs): A moves 300 bytes, B 100;
    equal shares of 50: periods 6 and 2. After 1 s, B has 1/2 left and ends at 2; A then has
    5/6 left, alone at 100: 2.5 s more."""
    table = ActivityTable()
    capacity = np.array([1.0, 1.0, 100.0, 1e9])
    a = table.add([2, 3], [300.0, 300.0], 0.0)
    b = table.add([2], [100.0], 0.0)
    table.key[a], table.key[b] = 1, 2
    table.join(a)
    table.join(b)
    assert table.resolve(0.0, capacity) == 2.0
    assert table.period[a] == 6.0 and table.period[b] == 2.0 and table.changed[a] and table.changed[b]
    table.advance(1.0)
    assert table.remaining[b] == 0.5
    table.advance(1.0)
    assert list(table.finished(2.0 + 1e-9)) == [b]
    assert table.remaining[b] == 0.0
    assert table.resolve(2.0, capacity) == 2.0 + (1 - 2 / 6) * 3.0
    assert table.period[a] == 3.0 and table.changed[a]
    assert list(table.sharing_slots()) == [a]


def test_the_sharing_order_follows_the_keys_not_the_joining_order():
    table = ActivityTable()
    slots = [table.add([0], [1.0], 0.0) for _ in range(4)]
    for slot, key in zip(slots, (30, 10, 40, 20)):
        table.key[slot] = key
        table.join(slot)
    assert list(table.sharing_slots()) == [slots[1], slots[3], slots[0], slots[2]]
    table.leave(slots[3])
    assert list(table.sharing_slots()) == [slots[1], slots[0], slots[2]]


def test_slots_and_elements_are_reused_and_grown_without_mixing_activities():
    """Far more activities than the initial 64 slots and 1,024 pooled elements, most of them
    ended on the way: each live one keeps its own elements."""
    table = ActivityTable()
    live: dict[int, list[int]] = {}
    for i in range(3000):
        resources = list(range(i % 7 + 1))
        slot = table.add(resources, [float(i)] * len(resources), 0.0)
        live[slot] = resources + [i]
        if i % 3:
            table.release(slot)
            del live[slot]
    for slot, expected in live.items():
        start, count = table.elem_start[slot], table.elem_count[slot]
        assert list(table.resource[start:start + count]) == expected[:-1]
        assert set(table.amount[start:start + count].tolist()) == {float(expected[-1])}


# Weighted towards what makes cursors move: activities joining, time passing, re-solves.
operations = st.lists(st.tuples(st.sampled_from(["add", "add", "join", "join", "advance", "advance", "resolve",
                                                 "resolve", "finish", "leave", "release", "step", "step",
                                                 "external"]),
                                st.integers(0, 10 ** 6)), min_size=25, max_size=80)


def replay(ops, seed: int, compiled: bool) -> list:
    """The same operations on a table; what each step gave, and the arrays at the end. The
    amounts and durations come from `seed`: generic floats, whose quotients and products
    round (hypothesis' own floats are often round numbers, which hide a changed operation)."""
    ptask_sharing.USE_KERNEL = compiled
    try:
        table = ActivityTable()
        capacity = np.array([10.0, 20.0, 5.0, 7.5, 100.0, 3.0])
        rng = np.random.default_rng(seed)
        held, sharing, seen, now, key = [], [], [], 0.0, 0
        for name, pick in ops:
            amount = float(rng.uniform(0.01, 50))
            if name == "add" or not held:
                size = int(rng.integers(0, 4))
                slot = table.add(list(rng.choice(6, size=size, replace=False)), list(rng.uniform(1, 100, size)),
                                 float(rng.choice([0.0, amount])))
                held.append(slot)
            elif name == "join":
                waiting = [s for s in held if s not in sharing]
                if waiting:
                    slot = waiting[pick % len(waiting)]
                    key += int(rng.integers(0, 3))  # equal keys happen (a job's activities)
                    table.key[slot] = key
                    table.join(slot)
                    sharing.append(slot)
            elif name == "advance":
                now += amount / 10
                table.advance(amount / 10)
                if sharing:  # as the runner: a re-solve after cursors moved to an event
                    seen.append(table.resolve(now, capacity))
            elif name == "resolve" and sharing:
                seen.append(table.resolve(now, capacity))
                seen.append(table.changed[table.sharing_slots()].tobytes())
            elif name == "finish":
                done = table.finished(now + amount / 10).tolist()
                seen.append(done)
                for slot in done:
                    sharing.remove(slot)
                    held.remove(slot)
                    table.release(slot)
            elif name == "step":  # as a stepped runner: the next step's length, every cursor moved by it
                delta = table.next_step()
                seen.append(delta)
                delta = amount / 10 if delta < 0 else min(delta, amount / 10)
                now += delta
                seen.append(table.step(delta, 1e-14))
                done = table.finished(-np.inf, 1e-14).tolist()
                seen.append(done)
                for slot in done:
                    sharing.remove(slot)
                    held.remove(slot)
                    table.release(slot)
            elif name == "external":  # a message's slot: its progress is kept elsewhere
                waiting = [s for s in held if s not in sharing]
                if waiting:
                    table.external[waiting[pick % len(waiting)]] = True
            elif name == "leave" and sharing:
                slot = sharing.pop(pick % len(sharing))
                table.leave(slot)
            elif name == "release":
                idle = [s for s in held if s not in sharing]
                if idle:
                    slot = idle[pick % len(idle)]
                    held.remove(slot)
                    table.release(slot)
            seen.append(table.sharing_slots().tobytes())
        return seen + [table.remaining.tobytes(), table.period.tobytes(), table.end.tobytes()]
    finally:
        ptask_sharing.USE_KERNEL = True


@needs_numba
@settings(max_examples=150, deadline=None)
@given(operations, st.integers(0, 2 ** 32 - 1))
def test_the_compiled_steps_give_the_numpy_steps_bits(ops, seed):
    assert replay(ops, seed, True) == replay(ops, seed, False)


@needs_numba
def test_a_whole_run_is_byte_identical_with_and_without_the_compiled_steps(tmp_path):
    """Storage jobs, parallel tasks and an SMPI replay sharing a platform, with energy: every
    output but the wall-clock figures of the schedule is the same file either way."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import bench_smpi_replay
        import bench_storage_jobs
    finally:
        sys.path.pop(0)
    platform = tmp_path / "p.xml"
    bench_storage_jobs.write_platform(str(platform))
    xml = platform.read_text().replace('speed="1Gf"/>', 'speed="1Gf"><prop id="wattage_per_state" value="90:190"/></host>')
    platform.write_text(xml)
    bench_storage_jobs.write_workload(str(tmp_path / "w.json"), 60, 3)
    bench_smpi_replay.write_traces(tmp_path, 16, 4)
    workload = json.loads((tmp_path / "w.json").read_text())
    workload["profiles"]["mpi"] = {"type": "smpi", "trace": "traces.txt"}
    workload["jobs"] += [{"id": 1000 + i, "subtime": 40.0 * i, "res": 16, "profile": "mpi"} for i in range(3)]
    (tmp_path / "w.json").write_text(json.dumps(workload))
    outputs = {}
    for compiled in (True, False):
        prefix = tmp_path / ("compiled" if compiled else "numpy") / "out"
        if compiled:
            simulate(str(platform), str(tmp_path / "w.json"), "easy", options={"storage_mapping": "pfs:128,bb:129"},
                     energy=True, enable_compute_sharing=True, export=str(prefix))
        else:
            with numpy_path():
                simulate(str(platform), str(tmp_path / "w.json"), "easy", options={"storage_mapping": "pfs:128,bb:129"},
                         energy=True, enable_compute_sharing=True, export=str(prefix))
        outputs[compiled] = {path.name: path.read_bytes() for path in prefix.parent.iterdir()
                             if not path.name.endswith("schedule.csv")}
    assert len(outputs[True]) >= 3
    assert outputs[True] == outputs[False]
    jobs = outputs[True]["out_jobs.csv"].decode()
    assert jobs.count("COMPLETED_SUCCESSFULLY") == 63
