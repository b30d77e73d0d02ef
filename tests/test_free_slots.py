"""Fragmentation over time (analysis/free_slots.py, the report's free-machines panel): the free
machines and the largest block of contiguous free machines after each instant, against a
machine-by-machine count; the report's instants (every change, or evenly spaced past a budget)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from joulesim.analysis import free_slots


def brute_force(start, finish, lows, highs, nb_machines, t):
    """Machine by machine: held by a range whose [start, finish) contains t."""
    held = [False] * nb_machines
    for s, f, lo, hi in zip(start, finish, lows, highs):
        if s <= t < f:
            for machine in range(int(lo), int(hi) + 1):
                held[machine] = True
    free = [not h for h in held]
    best = run = 0
    for is_free in free:
        run = run + 1 if is_free else 0
        best = max(best, run)
    return sum(free), best


schedules = st.integers(1, 12).flatmap(lambda machines: st.tuples(
    st.just(machines),
    st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(0, machines - 1), st.integers(0, 3)),
             max_size=25)))


@settings(max_examples=300, deadline=None)
@given(schedules)
def test_free_machines_and_the_largest_block_equal_a_machine_by_machine_count(schedule):
    """Random host ranges held over random intervals (overlaps allowed: the count is of machines
    held by any range), and ranges never started (NaN) ignored: the values after every instant
    of change, and between them, equal the brute force's."""
    machines, ranges = schedule
    start = np.array([float(s) for s, _, _, _ in ranges] + [np.nan])
    finish = np.array([float(s + d) for s, d, _, _ in ranges] + [np.nan])
    lows = np.array([lo for _, _, lo, _ in ranges] + [0])
    highs = np.array([min(lo + w, machines - 1) for _, _, lo, w in ranges] + [machines - 1])
    instants = np.unique(np.concatenate([[0.0, 0.5, 7.25, 40.0], start[:-1], finish[:-1]]))
    free, largest = free_slots.free_machines(start, finish, lows, highs, machines, instants)
    expected = [brute_force(start, finish, lows, highs, machines, t) for t in instants]
    assert list(zip(free.tolist(), largest.tolist())) == expected


def test_the_report_takes_every_change_within_its_budget_and_even_samples_past_it(monkeypatch):
    start, finish = np.array([0.0, 5.0, np.nan]), np.array([10.0, 7.0, np.nan])
    instants, exact = free_slots.report_instants(start, finish, 4, 10.0)
    assert exact and instants.tolist() == [0.0, 5.0, 7.0, 10.0]
    monkeypatch.setattr(free_slots, "EXACT_WORK", 15)
    monkeypatch.setattr(free_slots, "SAMPLES", 5)
    instants, exact = free_slots.report_instants(start, finish, 4, 10.0)
    assert not exact and instants.tolist() == [0.0, 2.5, 5.0, 7.5, 10.0]


@pytest.mark.parametrize("flags, length", [([], 0), ([False, False], 0), ([True], 1), ([True, False, True, True], 2),
                                           ([False, True, True, True, False, True], 3)])
def test_longest_run(flags, length):
    assert free_slots.longest_run(np.array(flags, dtype=bool)) == length
