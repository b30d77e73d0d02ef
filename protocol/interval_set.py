"""Batsim interval sets ("1-3 5 7") on top of procset, the library pybatsim uses.

Interval sets are parsed on every EXECUTE_JOB and JOB_COMPLETED, so the common case — a
string already in canonical form — takes a fast path that builds procset's internal form
directly; anything else goes through procset's own (slower, general) constructor.
"""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Final

from procset import ProcInt, ProcSet

_new_procset = object.__new__


# Batsim's interval-set syntax exactly: ids and low-high ranges of ASCII digits, separated by
# single spaces ("0-3 5 7"); the empty string is the empty set. Python's int() alone would also
# take "１２", "²", "1_0", "+1" and surrounding tabs or newlines, which no Batsim peer writes.
_SYNTAX: Final = re.compile(r"(?:[0-9]+(?:-[0-9]+)?(?: [0-9]+(?:-[0-9]+)?)*)?").fullmatch
_SYNTAX_TEXT = ("expected ids and closed ranges low-high of ASCII digits separated by single spaces, "
                "like '0-3 5 7' (low <= high)")
# Ids beyond this many digits cannot name a machine of any platform (and int() of a long digit
# string costs quadratic time).
_MAX_ID_DIGITS: Final = 18


def parse_runs(text: str, max_intervals: int | None = None) -> list[tuple[int, int]]:
    """The closed intervals of `text` as written, e.g. "0-3 5" -> [(0, 3), (5, 5)].

    Raises ValueError on a malformed string, an interval whose bounds are reversed, or (when
    `max_intervals` is given) more intervals than that: a set of distinct ids among n
    resources never needs more than n, so longer strings are refused before any work.
    """
    if not isinstance(text, str):
        raise ValueError(f"expected an interval set string like '0-3 5', got {text!r}")
    if not text:
        return []
    if max_intervals is not None and text.count(" ") >= max_intervals:
        raise ValueError(f"interval set {_head(text)} lists {text.count(' ') + 1:,} intervals, more than the "
                         f"{max_intervals:,} resources it may name: ids repeat; list each id once")
    if not _SYNTAX(text):
        raise ValueError(f"malformed interval set {_head(text)}: {_SYNTAX_TEXT}")
    runs = []
    for part in text.split(" "):
        low, dash, high = part.partition("-")
        if len(low) > _MAX_ID_DIGITS or len(high) > _MAX_ID_DIGITS:
            raise ValueError(f"interval set {_head(text)}: id {part[:30]!r} is far beyond any platform's size")
        a = int(low)
        b = int(high) if dash else a
        if b < a:
            raise ValueError(f"malformed interval set {_head(text)}: range {part!r} is reversed (write "
                             f"{b}-{a})")
        runs.append((a, b))
    return runs


def _head(text: str, limit: int = 60) -> str:
    """The start of a possibly huge string, for error messages."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


def is_canonical(runs: list[tuple[int, int]]) -> bool:
    """Sorted, disjoint and maximal (no two intervals touch)."""
    return all(runs[i][1] + 1 < runs[i + 1][0] for i in range(len(runs) - 1))


def _from_canonical_runs_fast(runs: list[tuple[int, int]]) -> ProcSet:
    result = _new_procset(ProcSet)  # skips __init__, which only parses constructor arguments
    new = tuple.__new__
    result._itvs = [new(ProcInt, run) for run in runs]  # procset's own internal form
    return result


def _from_canonical_runs_public(runs: list[tuple[int, int]]) -> ProcSet:
    return ProcSet(*runs)


def _pick_builder():
    """Use the fast path only if this procset version still has the same internals."""
    sample = [(0, 3), (5, 5), (7, 130)]
    try:
        fast = _from_canonical_runs_fast(sample)
        if fast == ProcSet(*sample) and str(fast) == "0-3 5 7-130" and len(fast) == 129:
            return _from_canonical_runs_fast
    except Exception:  # pragma: no cover - another procset version
        pass
    return _from_canonical_runs_public  # pragma: no cover


procset_from_canonical_runs = _pick_builder()
# The (inf, sup) pairs of a ProcSet, ascending: its internal list when the fast path above
# holds (read it, never change it).
procset_runs = attrgetter("_itvs") if procset_from_canonical_runs is _from_canonical_runs_fast \
    else ProcSet.intervals


def parse_interval_set(text: str, max_intervals: int | None = None) -> ProcSet:
    """Parse any valid form ("3 1-2", "1-3"); raises ValueError on a malformed string."""
    runs = parse_runs(text, max_intervals)
    if is_canonical(runs):
        return procset_from_canonical_runs(runs)
    return ProcSet(*runs)


def format_interval_set(resources: "ProcSet | str | list[int] | range") -> str:
    """Canonical form: disjoint, maximal, ascending intervals separated by single spaces."""
    if type(resources) is not ProcSet:
        if isinstance(resources, str):
            resources = parse_interval_set(resources)
        elif not isinstance(resources, ProcSet):
            resources = ProcSet(*resources)
    # A ProcSet's intervals are canonical already; joining them beats str(ProcSet) threefold.
    return format_runs(procset_runs(resources))


# canonical_runs' answers by text: the same allocations come back again and again (EASY's
# lowest ids on a cluster: "0-7", "0-127"), each met in a reply's check, EXECUTE_JOB and
# JOB_COMPLETED. Bounded: emptied when full (a wide platform's scattered allocations).
_KNOWN: Final[dict[str, tuple[tuple[tuple[int, int], ...], str, int]]] = {}
_KNOWN_LIMIT: Final = 4096


def known_interval_set(text: str) -> bool:
    """Whether `text` is a valid interval set met lately (canonical_runs parsed it)."""
    return text in _KNOWN


def canonical_runs(text: str, max_intervals: int | None = None) -> tuple[list[tuple[int, int]], str, int]:
    """The canonical intervals of an interval set, its canonical string and its size."""
    known = _KNOWN.get(text) if type(text) is str else None  # (anything else: parse_runs says what is wrong)
    if known is not None and (max_intervals is None or text.count(" ") < max_intervals):
        return list(known[0]), known[1], known[2]  # (a list of the caller's own)
    runs, canonical, size = _canonical_runs(text, max_intervals)  # (raises on a malformed text: not kept)
    if len(_KNOWN) >= _KNOWN_LIMIT:
        _KNOWN.clear()
    _KNOWN[text] = (tuple(runs), canonical, size)
    return runs, canonical, size


def _canonical_runs(text: str, max_intervals: int | None) -> tuple[list[tuple[int, int]], str, int]:
    runs = parse_runs(text, max_intervals)
    size = 0
    last = -2
    canonical = True
    ranges = 0  # intervals of two ids or more
    for a, b in runs:  # one pass: size, and whether the intervals are sorted, disjoint, maximal
        if a <= last + 1:
            canonical = False
        last = b
        size += b - a + 1
        if b > a:
            ranges += 1
    if not canonical:
        runs = [(itv.inf, itv.sup) for itv in ProcSet(*runs).intervals()]
        return runs, format_runs(runs), runs_size(runs)
    # Canonical intervals written canonically (every decider that formats a set does) are their
    # own canonical text: no "5-5" for "5" (each dash a range of two ids or more) and no
    # leading zero. Sorted and apart, only the first interval can start at id 0: any " 0" or
    # "-0" is a leading zero (or "0-0"), as is a digit after a first "0". Checked with substring
    # searches (C speed); writing the text again costs a pass over every interval.
    if (text.count("-") == ranges and " 0" not in text and "-0" not in text
            and not (text[:1] == "0" and text[1:2].isdigit())):
        return runs, text, size
    return runs, format_runs(runs), size


def runs_size(runs: list[tuple[int, int]]) -> int:
    """How many ids the closed intervals hold (disjoint ones, as canonical runs are)."""
    if len(runs) == 1:  # (the common case, on every job's start and end)
        a, b = runs[0]
        return b - a + 1
    return sum(b - a + 1 for a, b in runs)


def expand_runs(runs: list[tuple[int, int]]) -> list[int]:
    """Every id of the intervals, ascending."""
    ids: list[int] = []
    for a, b in runs:
        ids.extend(range(a, b + 1))
    return ids


def runs_of_sorted_ids(ids: list[int]) -> list[tuple[int, int]]:
    """The maximal runs of ascending, distinct ids: [0, 1, 2, 5] -> [(0, 2), (5, 5)]."""
    runs: list[tuple[int, int]] = []
    if not ids:
        return runs
    first = last = ids[0]
    for i in ids[1:]:
        if i != last + 1:
            runs.append((first, last))
            first = i
        last = i
    runs.append((first, last))
    return runs


def format_runs(runs: "list[tuple[int, int]]") -> str:
    """The text of canonical runs: [(0, 2), (5, 5)] -> "0-2 5"."""
    return " ".join([str(a) if a == b else f"{a}-{b}" for a, b in runs])
