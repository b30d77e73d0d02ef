"""Machine sets as Python integers used as bitmasks (bit i = machine i): unions, intersections
and counts cost one integer operation, and a `ProcSet` is built once per allocation."""

from __future__ import annotations

from procset import ProcSet

from joulesim.protocol.interval_set import procset_from_canonical_runs as _procset_from_runs

__all__ = ["mask_to_procset", "procset_to_mask", "lowest_bits", "lowest_bits_and_runs", "mask_runs"]


def mask_runs(mask: int) -> list[tuple[int, int]]:
    """The maximal runs of set bits of `mask`, as closed intervals (first, last), ascending."""
    if mask <= 0:
        return []
    bits = bin(mask)[:1:-1]  # little-endian string of the bits: bits[i] is machine i
    runs = []
    find = bits.find
    end = len(bits)
    pos = find("1")
    while pos != -1:
        stop = find("0", pos)
        if stop == -1:
            runs.append((pos, end - 1))
            break
        runs.append((pos, stop - 1))
        pos = find("1", stop)
    return runs


def mask_to_procset(mask: int) -> ProcSet:
    """The ProcSet of the machines whose bit is set in `mask`."""
    return _procset_from_runs(mask_runs(mask))


def procset_to_mask(resources: ProcSet) -> int:
    """The bitmask of a ProcSet (bit i set when machine i is in it)."""
    mask = 0
    for itv in resources.intervals():
        mask |= ((1 << (itv.sup - itv.inf + 1)) - 1) << itv.inf
    return mask


def lowest_bits(mask: int, n: int) -> int:
    """The n lowest set bits of `mask` (all of them when it has fewer than n)."""
    if n <= 0:
        return 0
    if n <= 8:  # a few bit tricks beat the string scan for small jobs
        result = 0
        while n and mask:
            low = mask & -mask
            result |= low
            mask ^= low
            n -= 1
        return result
    result = 0
    for first, last in mask_runs(mask):
        size = last - first + 1
        if size >= n:
            return result | (((1 << n) - 1) << first)
        result |= ((1 << size) - 1) << first
        n -= size
    return result


def lowest_bits_and_runs(mask: int, n: int) -> tuple[int, list[tuple[int, int]]]:
    """`lowest_bits(mask, n)` and its runs.

    Each operation on a Python integer costs time in its size: on a platform of 93,312 machines
    one costs microseconds. So the runs are looked for in the lowest bits only: a window of
    4,096 bits, doubled until it holds n set bits (or all of them). In it, the first few runs are
    found with integer operations (an allocation is usually one to three runs), each of which
    costs the window's size again; a job that needs more runs than that (a fragmented platform
    gives a large job hundreds) reads the rest of the window in chunks of 2,048 bits, each an
    integer of its own."""
    if n <= 0 or not mask:
        return 0, []
    width = _FIRST_WINDOW
    window = mask
    size = mask.bit_length()
    while width < size:
        window = mask & _low_ones(width)
        if window.bit_count() >= n:
            break
        width *= 2
        window = mask
    runs: list[tuple[int, int]] = []
    rest = window
    # (beyond the first window, each operation on it costs more than reading it in chunks: the
    # first run only, the one most allocations need)
    for _ in range(_FEW_RUNS if width == _FIRST_WINDOW else 1):
        first = (rest & -rest).bit_length() - 1
        shifted = rest >> first
        length = ((shifted + 1) & ~shifted).bit_length() - 1  # trailing ones: the run's length
        if length >= n:
            runs.append((first, first + n - 1))
            return window & _low_ones(first + n), runs
        runs.append((first, first + length - 1))
        n -= length
        rest ^= ((1 << length) - 1) << first
        if not rest:
            return window, runs
    # The rest of the window, a chunk of _CHUNK bits at a time: each chunk's runs are found with
    # operations on its own small integer, and a run that reaches a chunk's top goes on into the next.
    data = rest.to_bytes((rest.bit_length() + 7) // 8, "little")
    chunk_bytes = _CHUNK // 8
    open_first = -1  # the first machine of a run that reached the previous chunk's top
    start = (runs[-1][1] + 1) // _CHUNK * chunk_bytes  # (no machine left below the last run)
    for offset in range(start, len(data), chunk_bytes):
        chunk = int.from_bytes(data[offset:offset + chunk_bytes], "little")
        base = offset * 8
        if open_first >= 0 and not chunk & 1:  # the open run ended at the previous chunk's top
            length = base - open_first
            if length >= n:
                runs.append((open_first, open_first + n - 1))
                return window & _low_ones(open_first + n), runs
            runs.append((open_first, base - 1))
            n -= length
            open_first = -1
        while chunk:
            low = (chunk & -chunk).bit_length() - 1
            shifted = chunk >> low
            run = ((shifted + 1) & ~shifted).bit_length() - 1  # trailing ones: the run's length here
            if low + run == _CHUNK:  # up to the chunk's top: it may go on in the next
                if open_first < 0:
                    open_first = base + low
                break
            first = base + low if open_first < 0 else open_first  # (an open run goes on from bit 0)
            open_first = -1
            length = base + low + run - first
            if length >= n:
                runs.append((first, first + n - 1))
                return window & _low_ones(first + n), runs
            runs.append((first, first + length - 1))
            n -= length
            chunk ^= ((1 << run) - 1) << low
    if open_first >= 0:  # a run up to the window's top
        length = len(data) * 8 - open_first
        if length >= n:
            runs.append((open_first, open_first + n - 1))
            return window & _low_ones(open_first + n), runs
        runs.append((open_first, open_first + length - 1))
    return window, runs


def _low_ones(width: int) -> int:
    """The mask of bits 0..width-1 (the windows' are kept: they are made again and again)."""
    ones = _LOW_ONES.get(width)
    if ones is None:
        ones = (1 << width) - 1
        if width in _WINDOWS:
            _LOW_ONES[width] = ones
    return ones


#: Bits of the first window lowest_bits_and_runs looks in: a platform of 4,096 machines or fewer
#: is one window, whose operations cost about as much as a few of Python's other calls.
_FIRST_WINDOW = 4096
#: Runs found with integer operations before the rest of the window is read as text.
_FEW_RUNS = 4
#: Bits of the chunks the rest of a window is read in, beyond the first few runs.
_CHUNK = 2048
_WINDOWS = frozenset(_FIRST_WINDOW << k for k in range(12))
_LOW_ONES: dict[int, int] = {}
