"""Seed 003's fast path (joulesim.learn): exact against the full simulator, eqs. 1-3 by hand.

The fast path's start times must EQUAL those of joulesim's full simulator (decider `fcfs`, all
jobs at subtime 0) on 2,000 lists: 1,200 random small lists and 800 Lublin pairs in random
orders. The simulator writes times with six decimals, so runtimes are integers or multiples of
1/64 (exact in binary and in six decimals) except in one family of arbitrary doubles, compared
after the same rounding.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import joulesim
from joulesim.learn.job_pairs import (QUEUE_JOBS, STATE_JOBS, TRACE_PAIRS, lublin_pair, lublin_pairs,
                                      list_workload, pair_platform, pair_workload)
from joulesim.learn.list_schedule import permutations_avebsld, start_times
from joulesim.learn.permutation_scores import draw_permutations, job_scores, score_pair

RANDOM_LISTS = 400
LUBLIN_PAIRS = 20
ORDERS_PER_PAIR = 10  # 20 x 10 = 200 full runs


def simulated_starts(sizes, runtimes, n_procs: int) -> np.ndarray:
    """joulesim's `starting_time` of each job, in list order."""
    result = joulesim.simulate(pair_platform(n_procs), list_workload(sizes, runtimes, n_procs), "fcfs",
                               event_grouping="per-time")
    jobs = result.jobs
    assert (jobs["success"] == 1).all()
    return jobs.set_index(jobs["job_id"].astype(int))["starting_time"].sort_index().to_numpy()


def six_decimals(values: np.ndarray) -> np.ndarray:
    """What the simulator's outputs hold: times written with six decimals, read back."""
    return np.array([float(f"{value:.6f}") for value in values])


def random_list(rng: np.random.Generator, family: int) -> tuple[np.ndarray, np.ndarray, int]:
    n_procs = int(rng.choice([4, 5, 8, 16, 31, 64, 100, 128, 256])) if rng.random() < 0.5 else int(rng.integers(4, 257))
    count = int(rng.integers(2, 21))
    shape = rng.random()
    if shape < 0.3:  # Lublin-like: serial jobs and powers of two
        sizes = np.where(rng.random(count) < 0.3, 1, 2 ** rng.integers(0, int(math.log2(n_procs)) + 1, count))
    elif shape < 0.5:  # large jobs: long waits, whole-cluster jobs
        sizes = rng.integers(n_procs // 2, n_procs + 1, count)
    else:
        sizes = rng.integers(1, n_procs + 1, count)
    if family == 0:  # integers, log-uniform in 1..1e5
        runtimes = np.floor(np.exp(rng.uniform(0, math.log(1e5), count)))
    elif family == 1:  # a few distinct integers: many jobs end at the same time
        runtimes = rng.integers(1, 6, count).astype(float)
    elif family == 2:  # non-integers, multiples of 1/64
        runtimes = rng.integers(1, 64 * 10**4, count) / 64.0
    else:  # arbitrary doubles
        runtimes = rng.uniform(0.001, 1e4, count)
    return sizes.astype(np.int64), runtimes, n_procs


def test_start_times_equal_full_simulator_on_random_lists():
    rng = np.random.default_rng(20240603)
    for case in range(RANDOM_LISTS):
        family = case % 4
        sizes, runtimes, n_procs = random_list(rng, family)
        ours = start_times(sizes, runtimes, n_procs)
        theirs = simulated_starts(sizes, runtimes, n_procs)
        detail = f"case {case}: n_procs={n_procs} sizes={sizes.tolist()} runtimes={runtimes.tolist()}"
        if family < 3:  # exact in binary and in six decimals: the very same numbers
            np.testing.assert_array_equal(ours, theirs, err_msg=detail)
        else:
            np.testing.assert_array_equal(six_decimals(ours), theirs, err_msg=detail)


def test_lublin_pairs_equal_full_simulator_and_avebsld_matches_eq1():
    rng = np.random.default_rng(7)
    for pair in lublin_pairs(LUBLIN_PAIRS, seed=11):
        orders = draw_permutations(rng, ORDERS_PER_PAIR, QUEUE_JOBS)
        avebsld = permutations_avebsld(pair.state_sizes, pair.state_runtimes, pair.queue_sizes,
                                       pair.queue_runtimes, orders, 256)
        for order, fast_avebsld in zip(orders, avebsld):
            workload = pair_workload(pair, order)
            sizes = np.array([job["res"] for job in workload["jobs"]])
            runtimes = np.concatenate([pair.state_runtimes, pair.queue_runtimes[order]])
            theirs = simulated_starts(sizes, runtimes, 256)
            np.testing.assert_array_equal(start_times(sizes, runtimes, 256), theirs,
                                          err_msg=f"pair {pair.index}, order {order.tolist()}")
            # eq. 1 over Q's jobs, from the full simulator's start times (w = start: subtime 0)
            r, w = runtimes[STATE_JOBS:], theirs[STATE_JOBS:]
            expected = np.mean(np.maximum((w + r) / np.maximum(r, 10.0), 1.0))
            assert fast_avebsld == pytest.approx(expected, rel=1e-12)


def test_start_times_by_hand():
    # 4 processors: job 1 (3 procs) waits for job 0's end (10); job 2 fits beside it at once;
    # job 3 (3 procs) waits for jobs 2 (13) and 1 (15) to end; job 4 fits beside it; job 5
    # (2 procs) waits for job 3's end (16).
    starts = start_times([2, 3, 1, 3, 1, 2], [10, 5, 3, 1, 2, 1], 4)
    np.testing.assert_array_equal(starts, [0, 10, 10, 15, 15, 16])
    with pytest.raises(ValueError, match="size"):
        start_times([5], [1], 4)


# The hand-computed case: 4 processors, S = one job of 4 x 100 s (ends at 100), Q = a (2 x 5 s),
# b (2 x 20 s), c (4 x 10 s). Each permutation's Q jobs: start, bsld (tau = 10, so a's
# denominator is 10, not 5), then the sum of the three bsld:
#   a b c: a@100 10.5, b@100 6, c@120 13                 -> 29.5
#   a c b: a@100 10.5, c@105 11.5, b@115 (135/20) 6.75   -> 28.75
#   b a c: b@100 6, a@100 10.5, c@120 13                 -> 29.5
#   b c a: b@100 6, c@120 13, a@130 13.5                 -> 32.5
#   c a b: c@100 11, a@110 11.5, b@110 6.5               -> 29
#   c b a: c@100 11, b@110 6.5, a@110 11.5               -> 29
HAND_ORDERS = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
HAND_SUMS = np.array([29.5, 28.75, 29.5, 32.5, 29.0, 29.0])


def test_avebsld_eq1_by_hand():
    avebsld = permutations_avebsld([4], [100.0], [2, 2, 4], [5.0, 20.0, 10.0], HAND_ORDERS, 4, 10.0)
    np.testing.assert_allclose(avebsld, HAND_SUMS / 3, rtol=1e-15)
    # a job that waits 0 s and runs under tau has bounded slowdown 1, not r / tau
    assert permutations_avebsld([], [], [1], [5.0], np.array([[0]]), 4, 10.0)[0] == 1.0
    # S is not averaged: it only delays Q
    assert permutations_avebsld([4], [30.0], [1], [30.0], np.array([[0]]), 4, 10.0)[0] == 2.0


def test_scores_eq2_eq3_by_hand():
    avebsld = permutations_avebsld([4], [100.0], [2, 2, 4], [5.0, 20.0, 10.0], HAND_ORDERS, 4, 10.0)
    scores = job_scores(HAND_ORDERS[:, 0], avebsld, 3)
    np.testing.assert_allclose(scores, np.array([58.25, 62.0, 58.0]) / 178.25, rtol=1e-14)
    assert scores.sum() == pytest.approx(1.0)
    # a job first in no permutation has no score (NaN), not the best one (0)
    np.testing.assert_array_equal(job_scores(np.array([0, 0, 2]), np.array([1.0, 2.0, 3.0]), 3),
                                  [0.5, np.nan, 0.5])


def test_permutations_are_uniform_and_reproducible():
    orders = draw_permutations(np.random.default_rng(3), 60_000, 3)
    assert orders.dtype == np.int64 and orders.shape == (60_000, 3)
    counts = np.unique(orders, axis=0, return_counts=True)[1]
    assert len(counts) == 6 and counts.min() > 9_600 and counts.max() < 10_400  # 10,000 +- 4 sigma
    rng = np.random.default_rng(4)
    whole = draw_permutations(np.random.default_rng(4), 1000, 32)
    chunks = np.vstack([draw_permutations(rng, 300, 32), draw_permutations(rng, 700, 32)])
    np.testing.assert_array_equal(whole, chunks)
    assert (np.sort(whole, axis=1) == np.arange(32)).all()


def test_score_pair_reproducible_from_seed_and_chunk_free():
    pair = lublin_pair(3, seed=5)
    scores, counts = score_pair(pair, 5000, seed=9)
    again, counts_again = score_pair(pair, 5000, seed=9, chunk=700, threads=1)
    np.testing.assert_array_equal(scores, again)
    np.testing.assert_array_equal(counts, counts_again)
    assert counts.sum() == 5000 and scores.shape == (QUEUE_JOBS,)
    assert np.nansum(scores) == pytest.approx(1.0)
    other, _ = score_pair(pair, 5000, seed=10)
    assert not np.array_equal(scores, other)
    # the scores are eqs. 2-3 of the very permutations drawn from the seed
    orders = draw_permutations(np.random.default_rng(9), 5000, QUEUE_JOBS)
    avebsld = permutations_avebsld(pair.state_sizes, pair.state_runtimes, pair.queue_sizes,
                                   pair.queue_runtimes, orders, 256)
    np.testing.assert_array_equal(job_scores(orders[:, 0], avebsld, QUEUE_JOBS), scores)


def test_lublin_pairs_shape_and_independence_of_count():
    from joulesim.workload_tools.lublin import generate

    three, five = lublin_pairs(3, seed=21), lublin_pairs(5, seed=21)
    for k, pair in enumerate(three):
        assert pair.index == k
        for name in ("state_sizes", "state_runtimes", "state_submits", "queue_sizes", "queue_runtimes",
                     "queue_submits"):
            np.testing.assert_array_equal(getattr(pair, name), getattr(five[k], name))
            np.testing.assert_array_equal(getattr(pair, name), getattr(lublin_pair(k, 21), name))
    for pair in five + [lublin_pair(TRACE_PAIRS, seed=21)]:  # the last one is from the second trace
        assert len(pair.state_sizes) == STATE_JOBS and len(pair.queue_sizes) == QUEUE_JOBS
        sizes = np.concatenate([pair.state_sizes, pair.queue_sizes])
        submits = np.concatenate([pair.state_submits, pair.queue_submits])
        assert sizes.min() >= 1 and sizes.max() <= 256
        assert np.concatenate([pair.state_runtimes, pair.queue_runtimes]).min() >= 1
        assert submits[0] == 0 and (np.diff(submits) >= 0).all()
    # pair 1 is jobs 48..95 of the trace of the seed itself
    workload = generate(jobs=48 * TRACE_PAIRS, nb_res=256, seed=21)
    jobs = workload["jobs"][48:96]
    np.testing.assert_array_equal(np.concatenate([three[1].state_sizes, three[1].queue_sizes]),
                                  [job["res"] for job in jobs])
    np.testing.assert_array_equal(np.concatenate([three[1].state_runtimes, three[1].queue_runtimes]),
                                  [workload["profiles"][job["profile"]]["delay"] for job in jobs])
    np.testing.assert_array_equal(np.concatenate([three[1].state_submits, three[1].queue_submits]),
                                  [job["subtime"] - jobs[0]["subtime"] for job in jobs])
    assert not np.array_equal(lublin_pair(TRACE_PAIRS, 21).queue_runtimes, five[0].queue_runtimes)


def test_pair_workload_is_list_order_at_subtime_0():
    pair = lublin_pair(0, seed=2)
    order = np.arange(QUEUE_JOBS)[::-1]
    workload = pair_workload(pair, order)
    ids = [job["id"] for job in workload["jobs"]]
    assert ids == sorted(ids) == [f"{k:03d}" for k in range(48)]
    assert all(job["subtime"] == 0 for job in workload["jobs"])
    assert [job["res"] for job in workload["jobs"][16:]] == pair.queue_sizes[order].tolist()
    with pytest.raises(ValueError):
        pair_workload(pair, [0, 0] + list(range(2, QUEUE_JOBS)))


def test_pure_python_fallback_gives_the_same_numbers():
    script = textwrap.dedent("""
        import sys, warnings
        sys.modules["numba"] = None  # as if numba were not installed
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from joulesim.learn import list_schedule
        assert not list_schedule.HAVE_NUMBA and any("numba" in str(w.message) for w in caught)
        import numpy as np
        from joulesim.learn.permutation_scores import draw_permutations
        rng = np.random.default_rng(1)
        sizes, runtimes = rng.integers(1, 65, 40), rng.integers(1, 10**4, 40) / 8
        orders = draw_permutations(rng, 30, 24)
        import json
        print(json.dumps(list_schedule.start_times(sizes, runtimes, 64).tolist()))
        print(json.dumps(list_schedule.permutations_avebsld(sizes[:16], runtimes[:16], sizes[16:], runtimes[16:],
                                                 orders, 64, 10.0).tolist()))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONWARNINGS": "default"}).stdout.splitlines()
    rng = np.random.default_rng(1)
    sizes, runtimes = rng.integers(1, 65, 40), rng.integers(1, 10**4, 40) / 8
    orders = draw_permutations(rng, 30, 24)
    assert json.loads(out[0]) == start_times(sizes, runtimes, 64).tolist()
    assert json.loads(out[1]) == permutations_avebsld(sizes[:16], runtimes[:16], sizes[16:], runtimes[16:],
                                                orders, 64, 10.0).tolist()
