"""Step series of a report drawn at the view's resolution (level of detail for time series).

A large run's machine states and queue change a million times; a browser asked to draw every
corner takes seconds per frame on a figure a thousand pixels wide. So a series keeps every
change in a data source the page does not draw, and draws what the view needs: its corners when
the view holds few changes, else per bin of the view (BINS bins, about two per pixel)
- for a line, the value at the bin's start, its smallest and largest in the bin and its value at
  the bin's end (the "M4" aggregation: the line drawn is the exact one at that resolution);
- for a stacked area, the mean of each state over the bin (machine-time is kept).
A curve (piecewise linear between its points, e.g. cumulative energy) keeps per bin the first,
lowest, highest and last of its points there, at their times. The page opens on the series
computed here for the whole time axis; a zoom or a pan recomputes them in the browser
(SERIES_JS, the same rules) from every change.

A step series: `times` sorted, each value holding from its time until the next one, the last
one until `until`. `bins`: BINS unless given.
"""

from __future__ import annotations

import numpy as np

BINS = 2000
# Corners are drawn as they are when the view holds at most this many changes.
EXACT_CHANGES = 2 * BINS


def corners(times: np.ndarray, values: np.ndarray, until: float) -> tuple[np.ndarray, np.ndarray]:
    """The step series as a line through its corners (the last value held until `until`)."""
    if times.size and until > times[-1]:
        return np.repeat(np.append(times, until), 2)[1:-1], np.repeat(values, 2)
    return np.repeat(times, 2)[1:], np.repeat(values, 2)[:-1]


def line_envelope(times: np.ndarray, values: np.ndarray, start: float, end: float, until: float,
                  bins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The series over [start, end] as a line: its corners if few, else per bin its value at the
    bin's start, its smallest and largest values in the bin, its value at the bin's end."""
    if changes_in(times, start, end) <= EXACT_CHANGES or end <= start:
        return corners(times, values, until)
    edges = np.linspace(start, end, (bins or BINS) + 1)
    held = _held_at(times, values, edges)  # the value holding at each edge (NaN before the first)
    lows, highs = held[:-1].copy(), held[:-1].copy()
    inside_first = np.searchsorted(times, edges[:-1], side="right")
    inside_end = np.searchsorted(times, edges[1:], side="left")
    has = inside_end > inside_first
    if has.any():
        starts, ends = inside_first[has], inside_end[has]
        lows[has] = np.fmin(lows[has], _reduce(np.minimum, values, starts, ends))
        highs[has] = np.fmax(highs[has], _reduce(np.maximum, values, starts, ends))
    middle = (edges[:-1] + edges[1:]) / 2
    xs = np.column_stack([edges[:-1], middle, middle, edges[1:]]).ravel()
    last = _held_at(times, values, np.nextafter(edges[1:], -np.inf))
    ys = np.column_stack([held[:-1], lows, highs, last]).ravel()
    keep = ~np.isnan(ys)
    return xs[keep], ys[keep]


def curve_envelope(times: np.ndarray, values: np.ndarray, start: float, end: float,
                   bins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A curve over [start, end]: its points if few, else per bin (with points) its first,
    lowest, highest and last points, in time order; the points just outside the view too."""
    if changes_in(times, start, end) <= EXACT_CHANGES or end <= start:
        return times, values
    bins = bins or BINS
    first, stop = np.searchsorted(times, start, side="left"), np.searchsorted(times, end, side="right")
    index = np.arange(first, stop)
    which = np.minimum(((times[index] - start) / (end - start) * bins).astype(np.int64), bins - 1)
    starts = np.flatnonzero(np.diff(which, prepend=-1))  # where each bin's points start in `index`
    ends = np.append(starts[1:], index.size)
    picks = []
    for a, b in zip(starts, ends):  # (a few thousand bins)
        segment = index[a:b]
        chosen = {segment[0], segment[-1], segment[np.argmin(values[segment])], segment[np.argmax(values[segment])]}
        picks.extend(sorted(chosen))
    picks = [i for i in (first - 1,) if i >= 0] + picks + [i for i in (stop,) if i < times.size]
    return times[picks], values[picks]


def area_means(times: np.ndarray, columns: list[np.ndarray], start: float, end: float, until: float,
               bins: int | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """Stacked-area series over [start, end]: their corners if few changes, else each one's
    mean over each bin, as steps at the bins' edges."""
    if changes_in(times, start, end) <= EXACT_CHANGES or end <= start:
        xs = corners(times, columns[0], until)[0]
        return xs, [corners(times, column, until)[1] for column in columns]
    edges = np.linspace(start, end, (bins or BINS) + 1)
    xs = np.repeat(edges, 2)[1:-1]
    width = edges[1] - edges[0]
    means = []
    for column in columns:
        integral = _integral_at(times, column, edges, until)
        means.append(np.repeat(np.diff(integral) / width, 2))
    return xs, means


def changes_in(times: np.ndarray, start: float, end: float) -> int:
    return int(np.searchsorted(times, end, side="right") - np.searchsorted(times, start, side="left"))


def _held_at(times: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    index = np.searchsorted(times, at, side="right") - 1
    return np.where(index >= 0, values[np.maximum(index, 0)], np.nan)


def _reduce(function, values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """function.reduce over values[starts[i]:ends[i]] (each non-empty, in order, not overlapping)."""
    bounds = np.column_stack([starts, ends]).ravel()
    if bounds[-1] == values.size:  # reduceat needs indices inside the array
        padded = np.append(values, values[-1])
        return function.reduceat(padded, bounds)[::2]
    return function.reduceat(values, bounds)[::2]


def _integral_at(times: np.ndarray, values: np.ndarray, at: np.ndarray, until: float) -> np.ndarray:
    """The integral of the series from its first time to each of `at` (0 before it; the last
    value holds until `until`, nothing after)."""
    if times.size == 0:
        return np.zeros(at.size)
    ends = np.append(times[1:], max(until, times[-1]))
    cumulative = np.concatenate([[0.0], np.cumsum(values * (ends - times))])
    clipped = np.clip(at, times[0], ends[-1])
    index = np.clip(np.searchsorted(times, clipped, side="right") - 1, 0, times.size - 1)
    return cumulative[index] + values[index] * (clipped - times[index])


# The same in the browser (Bokeh CustomJS; args: range, series: a list of {every, shown, kind,
# until}, bins, exact). `every` holds the changes (time, and the value columns); `shown` gets the
# drawn line (x, y) or areas (x and one column per state).
SERIES_JS = """
const start = range.start, end = range.end;
const first_at = (t, x) => { let lo = 0, hi = t.length; while (lo < hi) { const m = (lo + hi) >> 1; if (t[m] < x) lo = m + 1; else hi = m; } return lo; };
const after = (t, x) => { let lo = 0, hi = t.length; while (lo < hi) { const m = (lo + hi) >> 1; if (t[m] <= x) lo = m + 1; else hi = m; } return lo; };
const held = (t, v, x) => { const i = after(t, x) - 1; return i >= 0 ? v[i] : NaN; };
for (const {every, shown, kind, until, names} of series) {
    const t = every.data.time;
    const changes = after(t, end) - first_at(t, start);
    const data = {};
    if ((changes <= exact || end <= start) && kind === "curve") {  // the points around the view
        const a = Math.max(0, first_at(t, start) - 1), b = Math.min(t.length, after(t, end) + 1);
        data.x = Array.from(t.slice(a, b));
        data[names[0]] = Array.from(every.data[names[0]].slice(a, b));
    } else if (changes <= exact || end <= start) {  // the corners of the changes around the view
        const a = Math.max(0, first_at(t, start) - 1), b = Math.min(t.length, after(t, end) + 1);
        const xs = [];
        for (let i = a; i < b; i++) { if (i > a) xs.push(t[i]); xs.push(t[i]); }
        const stop = b === t.length ? Math.max(until, t[t.length - 1]) : t[b];
        if (b > a) xs.push(stop);
        data.x = xs;
        for (const name of names) {
            const v = every.data[name], ys = [];
            for (let i = a; i < b; i++) { ys.push(v[i]); ys.push(v[i]); }
            data[name] = ys;
        }
    } else if (kind === "curve") {  // per bin with points: its first, lowest, highest, last points
        const v = every.data[names[0]], xs = [], ys = [];
        const a = first_at(t, start), b = after(t, end);
        const pick = (i) => { xs.push(t[i]); ys.push(v[i]); };
        if (a > 0) pick(a - 1);
        let i = a;
        while (i < b) {
            const bin = Math.min(Math.floor((t[i] - start) / (end - start) * bins), bins - 1);
            let j = i, low = i, high = i;
            while (j < b && Math.min(Math.floor((t[j] - start) / (end - start) * bins), bins - 1) === bin) {
                if (v[j] < v[low]) low = j;
                if (v[j] > v[high]) high = j;
                j++;
            }
            for (const k of [...new Set([i, low, high, j - 1])].sort((p, q) => p - q)) pick(k);
            i = j;
        }
        if (b < t.length) pick(b);
        data.x = xs;
        data[names[0]] = ys;
    } else if (kind === "line") {
        const v = every.data[names[0]], xs = [], ys = [];
        const width = (end - start) / bins;
        let i = first_at(t, start);
        while (i < t.length && t[i] <= start) i++;
        for (let k = 0; k < bins; k++) {
            const a = start + k * width, b = k === bins - 1 ? end : a + width;
            const begin = held(t, v, a);
            let low = begin, high = begin;
            while (i < t.length && t[i] < b) { const value = v[i]; if (!(value >= low)) low = value; if (!(value <= high)) high = value; i++; }
            const before = first_at(t, b) - 1, last = before >= 0 ? v[before] : NaN;  // (just before b)
            const middle = (a + b) / 2;
            for (const [x, y] of [[a, begin], [middle, low], [middle, high], [b, last]])
                if (!Number.isNaN(y)) { xs.push(x); ys.push(y); }
        }
        data.x = xs;
        data[names[0]] = ys;
    } else {  // stacked areas: each state's mean over each bin
        const width = (end - start) / bins, xs = [];
        for (let k = 0; k <= bins; k++) { if (k > 0 && k < bins) xs.push(start + k * width); xs.push(start + k * width); }
        data.x = xs;
        const stop = Math.max(until, t[t.length - 1]);
        for (const name of names) {
            const v = every.data[name], ys = [];
            let i = Math.max(0, first_at(t, start) - 1);
            for (let k = 0; k < bins; k++) {
                const b = start + (k + 1) * width;
                let sum = 0;
                let x = Math.max(start + k * width, t[0]);
                while (x < b && x < stop) {
                    while (i + 1 < t.length && t[i + 1] <= x) i++;
                    const next = Math.min(b, stop, i + 1 < t.length ? t[i + 1] : stop);
                    if (t[i] <= x) sum += v[i] * (next - x);
                    x = next;
                }
                ys.push(sum / width); ys.push(sum / width);
            }
            data[name] = ys;
        }
    }
    shown.data = data;
}
"""
