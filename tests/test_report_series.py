"""Step series drawn at the view's resolution (analysis/report_series.py): hand cases, and
generated series against their definition. The browser's copy of the rules is checked against
these in test_html_report.py."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from joulesim.analysis import report_series as series


@pytest.fixture
def aggregated(monkeypatch):
    monkeypatch.setattr(series, "EXACT_CHANGES", 0)  # every view is aggregated


def test_corners_hold_each_value_until_the_next_and_the_last_until_the_end():
    xs, ys = series.corners(np.array([0.0, 1.0, 3.0]), np.array([2.0, 4.0, 0.0]), 5.0)
    assert xs.tolist() == [0.0, 1.0, 1.0, 3.0, 3.0, 5.0] and ys.tolist() == [2.0, 2.0, 4.0, 4.0, 0.0, 0.0]


def test_few_changes_are_drawn_as_they_are():
    times, values = np.array([0.0, 1.0, 3.0]), np.array([2.0, 4.0, 0.0])
    assert np.array_equal(series.line_envelope(times, values, 0.0, 5.0, 5.0, bins=2)[0],
                          series.corners(times, values, 5.0)[0])


def test_a_line_per_bin_its_first_lowest_highest_and_last_values(aggregated):
    xs, ys = series.line_envelope(np.array([0.0, 1.0, 2.0, 3.0]), np.array([5.0, 1.0, 7.0, 2.0]), 0.0, 4.0, 4.0, bins=2)
    assert xs.tolist() == [0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0]
    assert ys.tolist() == [5.0, 1.0, 5.0, 1.0, 7.0, 2.0, 7.0, 2.0]


def test_areas_per_bin_their_mean(aggregated):
    xs, (means,) = series.area_means(np.array([0.0, 1.0, 3.0]), [np.array([2.0, 4.0, 0.0])], 0.0, 4.0, 4.0, bins=2)
    assert xs.tolist() == [0.0, 2.0, 2.0, 4.0] and means.tolist() == [3.0, 3.0, 2.0, 2.0]


steps = st.lists(st.tuples(st.floats(0, 100), st.integers(0, 50)), min_size=1, max_size=60).map(
    lambda pairs: (np.sort(np.array([t for t, _ in pairs])), np.array([v for _, v in pairs], dtype=float)))


@contextmanager
def aggregating():
    """Every view aggregated (hypothesis tests cannot take the function-scoped fixture)."""
    saved, series.EXACT_CHANGES = series.EXACT_CHANGES, 0
    try:
        yield
    finally:
        series.EXACT_CHANGES = saved


def value_at(times, values, t):
    index = np.searchsorted(times, t, side="right") - 1
    return values[index] if index >= 0 else np.nan


@settings(max_examples=200, deadline=None)
@given(step=steps, bins=st.integers(1, 9))
def test_a_line_envelope_is_each_bin_s_first_lowest_highest_and_last_value(step, bins):
    times, values = step
    times[0] = 0.0  # (a value from the start: every bin has its four points)
    with aggregating():
        xs, ys = series.line_envelope(times, values, 0.0, 100.0, 110.0, bins=bins)
    edges = np.linspace(0.0, 100.0, bins + 1)
    assert ys.size == 4 * bins
    for k in range(bins):
        a, b = edges[k], edges[k + 1]
        seen = [value_at(times, values, a)] + [v for t, v in zip(times, values) if a < t < b]
        last = value_at(times, values, np.nextafter(b, -np.inf))
        assert ys[4 * k:4 * k + 4].tolist() == [seen[0], min(seen), max(seen), last]
        assert xs[4 * k] == a and xs[4 * k + 3] == b


@settings(max_examples=200, deadline=None)
@given(step=steps, bins=st.integers(1, 9))
def test_area_means_keep_the_machine_time(step, bins):
    times, values = step
    with aggregating():
        xs, (means,) = series.area_means(times, [values], 0.0, 100.0, 100.0, bins=bins)
    # the integral over [0, 100] by definition: each value from its time to the next
    ends = np.append(times[1:], 100.0)
    exact = sum(v * (min(e, 100.0) - max(t, 0.0)) for t, e, v in zip(times, ends, values) if min(e, 100.0) > max(t, 0.0))
    assert sum(means[::2]) * (100.0 / bins) == pytest.approx(exact, rel=1e-9, abs=1e-9)


def test_a_curve_per_bin_its_first_lowest_highest_and_last_points(aggregated):
    times = np.array([0.0, 0.5, 1.0, 1.5, 2.5, 3.0, 3.2, 3.6, 5.0])
    values = np.array([0.0, 4.0, 1.0, 2.0, 6.0, 5.0, 9.0, 7.0, 8.0])
    xs, ys = series.curve_envelope(times, values, 1.0, 4.0, bins=2)  # bins [1, 2.5), [2.5, 4]
    # the point before the view; bin 1: 1.0 (first, lowest), 1.5 (last, highest); bin 2: 2.5
    # (first), 3.0 (lowest), 3.2 (highest), 3.6 (last); the point after the view
    assert xs.tolist() == [0.5, 1.0, 1.5, 2.5, 3.0, 3.2, 3.6, 5.0]
    assert ys.tolist() == [4.0, 1.0, 2.0, 6.0, 5.0, 9.0, 7.0, 8.0]


@settings(max_examples=200, deadline=None)
@given(step=steps, bins=st.integers(1, 9))
def test_a_curve_envelope_keeps_each_bin_s_extremes_in_time_order(step, bins):
    times, values = step
    with aggregating():
        xs, ys = series.curve_envelope(times, values, 10.0, 90.0, bins=bins)
    assert np.all(np.diff(xs) >= 0)
    inside = (times >= 10.0) & (times <= 90.0)
    if inside.any():  # the view's lowest and highest points are drawn
        assert values[inside].min() in ys and values[inside].max() in ys
