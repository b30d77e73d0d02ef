"""Each job a colour of a small colour-blind-safe palette, so that jobs that touch on the Gantt
never share one (the report's default colouring; one blue for every successful job blurred
neighbours into one block).

Two jobs are neighbours when their rectangles, as the Gantt draws them (job j on machines
[lo, hi] from its start to its end: [start, finish] x [lo - 0.5, hi + 0.5]), touch or meet at
a corner: one ends when the other starts on a shared or adjacent machine, or they run at
overlapping times on adjacent machines. Found with sorted sweeps over the rectangles' edges
(no pair of all rectangles is ever formed):
- time contacts: rectangles grouped by the time their right edge is at against those whose
  left edge is at the same time, matched on their machine ranges widened by one machine;
- machine contacts: rectangles grouped by their top machine against those whose bottom
  machine is the next one, matched on their closed time spans.
Within a group, the rectangles one side of an edge cannot overlap each other (no two jobs run
on one machine at once), so sorted by their low end their high ends rise too and the matches
of a span are one contiguous slice (found by two binary searches). A group where that fails
(compute sharing: two jobs on one machine at once) is matched by a window over the longest of
its spans instead, still exact. Rectangles that overlap (shared machines) are drawn over each
other, and are not neighbours for this colouring.

The colouring is greedy, the jobs with the most neighbours first (then by start, then by row
in the jobs file), each job taking the first palette colour no earlier neighbour has:
deterministic, and enough where jobs hold contiguous machines (the touching graph is then
close to planar). Where allocations are fragmented, jobs interleave host range by host range
and touch by dozens at once (CEA-Curie under EASY: a 33-core), which no 7 colours separate: a
job whose earlier neighbours hold every colour takes the one fewest of them hold, and the
count of such jobs is returned so the page can say so.
"""

from __future__ import annotations

import numpy as np

# Okabe & Ito's colour-blind-safe qualitative palette (Bokeh's Colorblind8) without its black,
# which would hide a job's hatching and its borders.
PALETTE = ("#0072B2", "#E69F00", "#F0E442", "#009E73", "#56B4E9", "#D55E00", "#CC79A7")


def neighbour_pairs(jobs_of: np.ndarray, start: np.ndarray, finish: np.ndarray, lows: np.ndarray,
                    highs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of distinct jobs (a, b), a < b, each once, whose rectangles touch. Rectangle i
    is job `jobs_of[i]` on machines [lows[i], highs[i]] over [start[i], finish[i]]."""
    # time contacts: a right edge at time t against a left edge at t, machine ranges touching
    left, right = _matches(finish, lows - 1, highs + 1, start, lows, highs)
    # machine contacts: a top machine m against a bottom machine m + 1, closed time spans meeting
    below, above = _matches(highs.astype(float), start, finish, (lows - 1).astype(float), start, finish)
    a = jobs_of[np.concatenate([left, below])].astype(np.int64)
    b = jobs_of[np.concatenate([right, above])].astype(np.int64)
    keep = a != b
    # each pair once: as one int64 (np.unique on rows of two sorts 7 times slower)
    span = int(max(a.max(initial=0), b.max(initial=0))) + 1
    pairs = np.unique(np.minimum(a, b)[keep] * span + np.maximum(a, b)[keep])
    return pairs // span, pairs % span


def _matches(key_p: np.ndarray, low_p: np.ndarray, high_p: np.ndarray, key_q: np.ndarray, low_q: np.ndarray,
             high_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j) with key_p[i] == key_q[j], low_q[j] <= high_p[i] and high_q[j] >= low_p[i]."""
    if key_p.size == 0 or key_q.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = np.lexsort((high_q, low_q, key_q))
    keys, lows, highs = key_q[order], low_q[order], high_q[order]
    # the queries in order too: binary searches of ascending values run 3 times faster (memory)
    p_order = np.lexsort((low_p, key_p))
    key_p, low_p, high_p = key_p[p_order], low_p[p_order], high_p[p_order]
    group_start = np.searchsorted(keys, key_p, side="left")
    group_end = np.searchsorted(keys, key_p, side="right")
    distinct_keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    by_low, by_high = _PairSearch(distinct_keys, keys, lows), _PairSearch(distinct_keys, keys, highs)
    # the q spans meeting [low_p, high_p] end at the last whose low end is at most high_p, and
    # (where the high ends rise with the low ends) start at the first whose high end reaches low_p
    last = np.clip(by_low.find(key_p, high_p, "right"), group_start, group_end)
    first = np.clip(by_high.find(key_p, low_p, "left"), group_start, group_end)
    # groups where they do not rise (jobs overlapping on a machine: compute sharing, or a job of
    # 1e-5 s whose end the 6 decimals of the jobs file put after the next one's start): from the
    # first whose low end is within the group's longest span of low_p, then filtered
    falls = np.flatnonzero((keys[1:] == keys[:-1]) & (highs[1:] < highs[:-1]))
    if falls.size:
        heads = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        longest = np.maximum.reduceat(highs - lows, heads)
        group_of = np.searchsorted(distinct_keys, key_p).clip(0, distinct_keys.size - 1)
        irregular = np.isin(key_p, keys[falls + 1]) & (group_start < group_end)
        window = np.clip(by_low.find(key_p, low_p - longest[group_of], "left"), group_start, group_end)
        first = np.where(irregular, window, first)
    count = np.maximum(last - first, 0)
    p_index = np.repeat(np.arange(key_p.size), count)
    q_sorted = np.repeat(first, count) + (np.arange(p_index.size) - np.repeat(np.cumsum(count) - count, count))
    if falls.size:
        hit = highs[q_sorted] >= low_p[p_index]
        p_index, q_sorted = p_index[hit], q_sorted[hit]
    return p_order[p_index], order[q_sorted]


class _PairSearch:
    """np.searchsorted on (key, value) pairs sorted lexicographically, which numpy lacks: each
    pair becomes one int64, its key's rank times the number of distinct values plus its value's
    rank (exact, unlike a sum of floats; 3 times faster than sorting both sides together)."""

    def __init__(self, distinct_keys: np.ndarray, keys: np.ndarray, values: np.ndarray):
        self._keys = distinct_keys
        self._values = np.unique(values)
        self._width = self._values.size + 1
        self._combined = np.searchsorted(distinct_keys, keys) * self._width + np.searchsorted(self._values, values)

    def find(self, query_keys: np.ndarray, query_values: np.ndarray, side: str) -> np.ndarray:
        """Where each query pair goes: before the pairs (k, w) with w >= v ("left") or w > v
        ("right"). A key not among the pairs' ranks between theirs: callers clip to its empty group."""
        query = (np.searchsorted(self._keys, query_keys) * self._width
                 + np.searchsorted(self._values, query_values, side=side))
        return np.searchsorted(self._combined, query, side="left")


def greedy_colours(nb_jobs: int, order: np.ndarray, a: np.ndarray, b: np.ndarray,
                   nb_colours: int = len(PALETTE)) -> tuple[np.ndarray, int]:
    """Each job's colour (0 to nb_colours - 1; jobs in no pair get one too) and how many jobs
    had to share a colour with a neighbour. Jobs are coloured in `order`."""
    rank = np.empty(nb_jobs, np.int64)
    rank[order] = np.arange(nb_jobs)
    # each pair stored at its later job, which takes its colour after the earlier one's
    later = np.where(rank[a] > rank[b], a, b)
    earlier = np.where(rank[a] > rank[b], b, a)
    by_later = np.argsort(later, kind="stable")
    starts = np.searchsorted(later[by_later], np.arange(nb_jobs + 1))
    earlier_of = earlier[by_later].tolist()
    starts = starts.tolist()
    colours = [0] * nb_jobs
    clashes = 0
    for job in order.tolist():
        lo, hi = starts[job], starts[job + 1]
        if lo == hi:
            continue  # (colour 0)
        held = [0] * nb_colours
        for other in earlier_of[lo:hi]:
            held[colours[other]] += 1
        if 0 in held:
            colours[job] = held.index(0)
        else:
            colours[job] = held.index(min(held))
            clashes += 1
    return np.asarray(colours, dtype=np.int8), clashes


def job_colours(nb_jobs: int, jobs_of: np.ndarray, start: np.ndarray, finish: np.ndarray, lows: np.ndarray,
                highs: np.ndarray, job_start: np.ndarray) -> tuple[np.ndarray, int]:
    """Each job's palette index (jobs that did not run: 0), and the number of jobs that share
    a colour with a neighbour (0 unless the palette ran out around one)."""
    a, b = neighbour_pairs(jobs_of, start, finish, lows, highs)
    started = np.where(np.isnan(job_start), np.inf, job_start)
    degree = np.bincount(a, minlength=nb_jobs) + np.bincount(b, minlength=nb_jobs)
    # the most connected first (Welsh and Powell), then by start: on the CEA-Curie run under EASY
    # 16,125 jobs met every colour among their neighbours this way, against 23,716 in start order
    order = np.lexsort((np.arange(nb_jobs), started, -degree))
    return greedy_colours(nb_jobs, order, a, b)
