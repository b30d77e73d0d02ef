"""Sharing between concurrent parallel tasks: SimGrid's fair-bottleneck rule (issue 24, section 1).

Batsim runs SimGrid's ptask_L07 model, whose FairBottleneck solver gives each task on a
saturated resource an equal share of it in bytes/s (or flop/s), whatever the task's size.
Every expected figure below was worked out by hand from that rule and also given by SimGrid
3.32 itself (Debian's python3-simgrid, `--cfg=host/model:ptask_L07`, the same platform).
Latencies: each route pays L = 5 us + 3 us + 5 us once, before its task progresses.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_decider import ScriptedDecider
from test_ptask_network import LATENCY, StarCluster, simulate, two_pairs_then_kill

from joulesim.simulator.models.ptask_sharing import REMAINING_PRECISION, fair_bottleneck_periods

L = LATENCY


def transfer(nb_bytes: float) -> dict:
    return {"type": "parallel", "cpu": [0, 0], "com": [0, nb_bytes, 0, 0]}


def execution_times(jobs: dict) -> dict[str, float]:
    return {job: float(row["execution_time"]) for job, row in jobs.items()}


# ---------------------------------------------------------------- whole simulations
def test_two_tasks_on_a_backbone_get_equal_bytes_per_second(tmp_path):
    """The issue's case. X (3e9 B) is alone on the 100 MB/s backbone from L to 10 + L: 1e9 B.
    Y (1e9 B) joins at 10 + L; both get 5e7 B/s: Y needs 20 s, X moves 1e9 more meanwhile,
    then its last 1e9 B alone in 10 s. Batsim 4.2.1: X 40.000 s, Y 20.000 s.
    (Equal cursor rates, the former rule, gave X 36.667 s and Y 30 s.)"""
    _, jobs = simulate(tmp_path, [{"id": "X", "subtime": 0, "res": 2, "profile": "x"},
                                  {"id": "Y", "subtime": 10, "res": 2, "profile": "y"}],
                       {"x": transfer(3e9), "y": transfer(1e9)}, network=StarCluster(4, backbone_bw=1e8))
    assert execution_times(jobs) == {"X": pytest.approx(40 + L, abs=1e-9), "Y": pytest.approx(20 + L, abs=1e-9)}
    assert (jobs["X"]["execution_time"], jobs["Y"]["execution_time"]) == ("40.000013", "20.000013")


def test_a_task_capped_by_its_own_link_leaves_the_rest_of_the_backbone_to_the_others(tmp_path):
    """A (1e9 B) sits on two 20 MB/s host links; B (1e9 B) and C (2e9 B) on 1 GB/s ones; all
    three cross one 100 MB/s backbone. Round 1: shares of 1e8/3; A stops at its links' 2e7.
    Round 2: B and C split what is left: 4e7 B/s each (A's 2e7 counts again, as in SimGrid,
    which saturates the backbone at once). B ends after 25 s; C, with 1e9 B left, gets
    1e8 - 2e7 alone: 12.5 s more; A runs at 2e7 throughout: 50 s.
    (Equal cursor rates gave B 2.67e7 and C 5.33e7 B/s: B would end at 37.5 s.)"""
    network = StarCluster(6, backbone_bw=1e8)
    network.capacity[[0, 1]] = 2e7
    _, jobs = simulate(tmp_path, [{"id": "A", "subtime": 0, "res": 2, "profile": "one"},
                                  {"id": "B", "subtime": 0, "res": 2, "profile": "one"},
                                  {"id": "C", "subtime": 0, "res": 2, "profile": "two"}],
                       {"one": transfer(1e9), "two": transfer(2e9)}, nb_hosts=6, network=network)
    assert {job: row["allocated_resources"] for job, row in jobs.items()} == {"A": "0-1", "B": "2-3", "C": "4-5"}
    assert execution_times(jobs) == {"A": pytest.approx(50 + L, abs=1e-9), "B": pytest.approx(25 + L, abs=1e-9),
                                     "C": pytest.approx(37.5 + L, abs=1e-9)}


MIXED = {"mixed": {"type": "parallel", "cpu": [2e9, 2e9], "com": [0, 4e9, 0, 0]}, "net": transfer(2e9)}


def test_computation_and_communication_of_one_task_move_together(tmp_path):
    """M computes 2e9 flop per host and sends 4e9 B; N sends 2e9 B; one 1 GB/s backbone.
    Both get 5e8 B/s: M's cursor runs at 1/8 per s, so its CPUs compute at 2.5e8 flop/s
    (load 1/4); N ends after 4 s. M then has half of its cursor left and the backbone alone:
    rate min(1e9 / 4e9, 1e9 / 2e9) = 1/4 per s (load 1/2): 2 s more, 6 s in all.
    Energy (100 W idle, 200 W busy): M's two hosts draw 100 W for 6 + L s, plus 100 W x load."""
    _, jobs = simulate(tmp_path, [{"id": "M", "subtime": 0, "res": 2, "profile": "mixed"},
                                  {"id": "N", "subtime": 0, "res": 2, "profile": "net"}],
                       MIXED, energy=True, watts="100:200", network=StarCluster(4))
    assert execution_times(jobs) == {"M": pytest.approx(6 + L, abs=1e-9), "N": pytest.approx(4 + L, abs=1e-9)}
    expected_m = 2 * 100 * (6 + L) + 2 * 100 * (0.25 * 4 + 0.5 * 2)
    assert float(jobs["M"]["consumed_energy"]) == pytest.approx(expected_m, rel=1e-9)
    assert float(jobs["N"]["consumed_energy"]) == pytest.approx(2 * 100 * (4 + L), rel=1e-9)


def test_kill_progress_and_energy_under_contention(tmp_path):
    """As above, but the decider kills M at t = 3: its cursor ran at 1/8 per s from L, so its
    progress is (3 - L) / 8, and its hosts drew 100 W for 3 s plus 100 W x 1/4 while it ran.
    N, at 1/4 per s until 3, has 1 - (3 - L) / 4 left and then the backbone alone (1/2 per s).
    (Equal cursor rates gave M's progress as (3 - L) / 6.)"""
    decider = ScriptedDecider(two_pairs_then_kill("w0!M", 3, "w0!M"))
    _, jobs = simulate(tmp_path, [{"id": "M", "subtime": 0, "res": 2, "profile": "mixed"},
                                  {"id": "N", "subtime": 0, "res": 2, "profile": "net"}],
                       MIXED, decider=decider, energy=True, watts="100:200", network=StarCluster(4))
    [(_, killed)] = decider.events_of("JOB_KILLED")
    assert killed["data"]["job_progress"]["w0!M"]["progress"] == pytest.approx((3 - L) / 8, abs=1e-12)
    assert jobs["M"]["final_state"] == "COMPLETED_KILLED"
    assert float(jobs["M"]["consumed_energy"]) == pytest.approx(2 * 100 * 3 + 2 * 100 * 0.25 * (3 - L), rel=1e-9)
    n_end = 3 + (1 - (3 - L) / 4) / 0.5
    assert float(jobs["N"]["finish_time"]) == pytest.approx(n_end, abs=5e-7 + 1e-12)  # written with 6 decimals


# ---------------------------------------------------------------- the solver alone
def rates(task, resource, amount, capacity, own=None):
    task = np.array(task)
    own = np.zeros(task.max() + 1) if own is None else np.array(own, dtype=float)
    periods = fair_bottleneck_periods(task, np.array(resource), np.array(amount, dtype=float),
                                      np.array(capacity, dtype=float), own)
    return (1 / periods).tolist()


def test_three_levels_on_one_backbone_saturate_it_early_as_simgrid_does():
    """A backbone of 100 shared by X (own links of 10), Y (own links of 40) and Z (free).
    Round 1: shares of 33.3; X stops at 10. Round 2: Y and Z get 11.7 more, Y stops at its
    links' 40, and the backbone's remaining, less X's 10 counted again, is below 0: Z stops
    at 45 (SimGrid 3.32 gives Z 1e9 B in 22.222 s at these rates, x 1e7), not 50."""
    got = rates([0, 0, 0, 1, 1, 1, 2, 2, 2], [0, 1, 2, 0, 3, 4, 0, 5, 6], [1.0] * 9,
                [100.0, 10, 10, 40, 40, 1000, 1000])
    assert got == pytest.approx([10.0, 40.0, 45.0], rel=1e-12)


def test_two_executors_on_one_host_count_as_two_users_of_its_cpu():
    """Task 0 has two executors on CPU 0 (1e9 flop each), task 1 one (1e9 flop): three
    elements share 1 Gflop/s, a third each; both tasks end after 3 s (SimGrid 3.32: 3.0 and
    3.0). One element per task would give task 1 half of the CPU."""
    assert rates([0, 0, 1], [0, 0, 0], [1e9, 1e9, 1e9], [1e9]) == pytest.approx([1 / 3, 1 / 3], rel=1e-12)


def test_tasks_without_elements_and_elements_of_zero():
    a = np.array
    # Task 0 has no element and no own period: done at once. Task 1's element of 0 on
    # resource 0 plays no part (SimGrid counts only positive weights): it is alone on resource 1.
    periods = fair_bottleneck_periods(a([1, 1]), a([0, 1]), a([0.0, 2.0]), a([1.0, 1.0]), a([0.0, 0.0]))
    assert periods.tolist() == [0.0, 2.0]


# ---------------------------------------------------------------- against SimGrid's loop, and properties
def simgrid_do_solve(elements, capacity, bound):
    """FairBottleneck::do_solve (SimGrid 3.32) element by element, in plain Python: every
    resource is a constraint (none is turned into a bound), `bound[t]` is a variable bound
    (None: none). Returns the values, what fixed each task ('bound' or a resource) and, per
    resource, the increments of tasks fixed in earlier rounds that its remaining counted again."""
    nb_tasks = len(bound)
    value, mu, fixed_round = [0.0] * nb_tasks, [0.0] * nb_tasks, [None] * nb_tasks
    fixed_by: list = [None] * nb_tasks
    unfixed = [t for t in range(nb_tasks) if any(e[0] == t and e[2] > 0 for e in elements)]
    remaining, usage = list(capacity), [0.0] * len(capacity)
    listed = sorted({r for _, r, w in elements if w > 0})
    stale = [0.0] * len(capacity)
    round_number = 0
    while unfixed:
        round_number += 1
        for c in list(listed):
            nb = sum(1 for t, r, w in elements if r == c and w > 0 and t in unfixed)
            if nb == 0:
                listed.remove(c)
            else:
                usage[c] = remaining[c] / nb
        for t in list(unfixed):
            m = min(usage[r] / w for tt, r, w in elements if tt == t and w > 0)
            if bound[t] is not None:
                m = min(m, bound[t] - value[t])
            mu[t] = m
            value[t] += m
            # SimGrid tests value == bound; the solver under test allows 1e-12 (float noise).
            if bound[t] is not None and bound[t] - value[t] <= bound[t] * 1e-12:
                unfixed.remove(t)
                fixed_by[t], fixed_round[t] = "bound", round_number
        for c in list(listed):
            for t, r, w in elements:
                if r == c:
                    if fixed_round[t] is not None and fixed_round[t] < round_number:
                        stale[c] += w * mu[t]
                    remaining[c] -= w * mu[t]
                    if remaining[c] < REMAINING_PRECISION:
                        remaining[c] = 0.0
            if remaining[c] <= 0:
                listed.remove(c)
                for t, r, w in elements:
                    if r == c and w > 0 and t in unfixed:
                        unfixed.remove(t)
                        fixed_by[t], fixed_round[t] = c, round_number
    return value, fixed_by, stale


@st.composite
def sharing_problems(draw):
    """Up to 8 tasks on up to 6 resources of realistic capacities (1e8-1e10 bytes or flop/s),
    some tasks with an own bound, some with two elements on one resource (two executors)."""
    nb_resources = draw(st.integers(1, 6))
    nb_tasks = draw(st.integers(1, 8))
    capacity = draw(st.lists(st.floats(1e8, 1e10), min_size=nb_resources, max_size=nb_resources))
    elements = []
    for t in range(nb_tasks):
        used = draw(st.lists(st.integers(0, nb_resources - 1), min_size=1, max_size=nb_resources + 1))
        elements += [(t, r, draw(st.floats(1e6, 1e10))) for r in used[:1] + sorted(set(used[1:]) - {used[0]})]
        if len(used) > nb_resources:  # now and then a second executor on the first resource
            elements.append((t, used[0], draw(st.floats(1e6, 1e10))))
    own = draw(st.lists(st.one_of(st.just(0.0), st.floats(0.01, 100.0)), min_size=nb_tasks, max_size=nb_tasks))
    return elements, capacity, own


@settings(max_examples=300, deadline=None, derandomize=True)
@given(sharing_problems())
def test_rates_respect_capacities_and_every_task_has_a_saturated_bottleneck(problem):
    elements, capacity, own = problem
    task, resource, amount = (np.array([e[i] for e in elements]) for i in range(3))
    periods = fair_bottleneck_periods(task, resource, amount.astype(float), np.array(capacity), np.array(own))
    rate = np.where(periods > 0, 1 / periods, np.inf)
    # Same rates as SimGrid's own loop.
    bound = [1 / p if p > 0 else None for p in own]
    expected, fixed_by, stale = simgrid_do_solve(elements, capacity, bound)
    assert rate.tolist() == pytest.approx(expected, rel=1e-9)
    used = np.bincount(resource, weights=amount * rate[task], minlength=len(capacity))
    # No resource gives more than its capacity.
    assert (used <= np.array(capacity) * (1 + 1e-9)).all()
    for t in range(len(own)):
        if fixed_by[t] == "bound":
            assert rate[t] == pytest.approx(bound[t], rel=1e-9)
            continue
        # The bottleneck is one of the task's own resources, saturated: what its tasks use,
        # plus the increments SimGrid counts again, is its whole capacity (to its precision);
        # without such increments it is saturated by its tasks alone.
        bottleneck = fixed_by[t]
        assert any(e[0] == t and e[1] == bottleneck for e in elements)
        assert used[bottleneck] + stale[bottleneck] >= capacity[bottleneck] * (1 - 1e-9) - REMAINING_PRECISION
        if stale[bottleneck] == 0:
            assert used[bottleneck] >= capacity[bottleneck] * (1 - 1e-9) - REMAINING_PRECISION


@settings(max_examples=400, deadline=None, derandomize=True)
@given(sharing_problems(), st.integers(0, 3), st.booleans(), st.booleans())
def test_the_compiled_solver_gives_the_numpy_solver_to_the_last_bit(problem, shared_resources, reverse, a_zero):
    """fair_bottleneck_kernel (numba) and the numpy code: the same periods, bit for bit, on
    random systems (a few resources made tight so that many tasks meet on them)."""
    from joulesim.simulator.models import fair_bottleneck_kernel, ptask_sharing

    if not fair_bottleneck_kernel.AVAILABLE:
        pytest.skip("numba is not installed (the test extra brings it)")
    elements, capacity, own = problem
    capacity = [c / 100 if r < shared_resources else c for r, c in enumerate(capacity)]
    if reverse:  # elements not grouped by task: both sort them the same way
        elements = elements[::-1]
    if a_zero:  # an element of nothing plays no part
        elements = [(elements[0][0], elements[0][1], 0.0), *elements[1:]]
    task, resource, amount = (np.array([e[i] for e in elements]) for i in range(3))
    arguments = (task, resource, amount.astype(float), np.array(capacity), np.array(own))
    compiled = ptask_sharing.fair_bottleneck_periods(*arguments)
    ptask_sharing.USE_KERNEL = False
    try:
        reference = ptask_sharing.fair_bottleneck_periods(*arguments)
    finally:
        ptask_sharing.USE_KERNEL = True
    assert compiled.tobytes() == reference.tobytes()
