"""Machine sets as Python integers used as bitmasks (bit i = machine i): unions, intersections
and counts cost one integer operation, and a `ProcSet` is built once per allocation."""

from __future__ import annotations

from procset import ProcSet

from joulesim.protocol.interval_set import procset_from_canonical_runs as _procset_from_runs

__all__ = ["mask_to_procset", "procset_to_mask", "lowest_bits", "mask_runs"]


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
