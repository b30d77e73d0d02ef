"""x87 extended precision (C's `long double` on x86-64), exactly, in integers.

Batsim adds machines' joules in `long double` (Machines::total_consumed_energy, a job's
consumed_energy_on_machines) and prints them with `%Lf`, so the last digits of its energy
trace, of each job's energy and of consumed_joules depend on that format's rounding: a 64-bit
significand, rounded to nearest (ties to even) after each addition. Python has no such type
(numpy's longdouble is that format only on x86), so values are kept here as integer multiples
of 2**-1074, the finest step of a double: every double is one, and so is every sum of them
rounded to 64 significant bits. The results are the same bits on every machine.
"""

from __future__ import annotations

import math
import threading
from typing import Iterable

import numpy as np

SIGNIFICAND_BITS = 64
_SCALE = 1074  # a value v is the integer v * 2**1074
_SIX_DECIMALS = 10 ** 6


def scaled(value: float) -> int:
    """The double `value` as an integer multiple of 2**-1074 (exact)."""
    numerator, denominator = value.as_integer_ratio()
    return numerator << (_SCALE + 1 - denominator.bit_length())


def rounded(value: int) -> int:
    """`value` (a multiple of 2**-1074) rounded to 64 significant bits, ties to even."""
    magnitude = -value if value < 0 else value
    extra = magnitude.bit_length() - SIGNIFICAND_BITS
    if extra <= 0:
        return value
    kept = magnitude >> extra
    rest = magnitude - (kept << extra)
    half = 1 << (extra - 1)
    if rest > half or (rest == half and kept & 1):
        kept += 1
    magnitude = kept << extra
    return -magnitude if value < 0 else magnitude


def long_double_sum(values: Iterable[float]) -> int:
    """`long double total = 0; for (x : values) total += x;` as a multiple of 2**-1074.

    When every partial sum fits in 64 significant bits (no addition rounds), the result is the
    exact sum, which one pass of integer additions gives; otherwise each addition is rounded."""
    parts = [scaled(x) for x in values]
    total = sum(parts)
    lowest = 0
    negative = False
    for part in parts:
        if part:
            low = part & -part
            if not lowest or low < lowest:
                lowest = low
            if part < 0:
                negative = True
    # Non-negative parts: every partial sum is a multiple of `lowest` and at most `total`.
    if not negative and (not total or total.bit_length() - lowest.bit_length() + 1 <= SIGNIFICAND_BITS):
        return total
    total = 0
    for part in parts:
        total = rounded(total + part)
    return total


# numpy's longdouble is the x87 format on x86 (64-bit significand): there it adds an array in
# C, in order (not sum's pairwise order); elsewhere integers do it.
_X87 = np.finfo(np.longdouble).nmant == SIGNIFICAND_BITS - 1


def long_double_sum_array(values: np.ndarray) -> int:
    """long_double_sum of a float64 array, in its order."""
    count = len(values)
    if not count:
        return 0
    if not _X87:
        return long_double_sum(values.tolist())
    # The values in long double go to a kept buffer (one per thread): a new array each time cost
    # more than the sum itself on 80,000 machines (its pages are new each time).
    buffer = getattr(_SCRATCH, "sums", None)
    if buffer is None or len(buffer) < count:
        buffer = _SCRATCH.sums = np.empty(max(count, 1024), dtype=np.longdouble)
    terms = buffer[:count]
    terms[:] = values
    # subtract.reduce runs one sequential loop with the running sum in a register (add's reduce
    # is pairwise; add's accumulate stores every partial sum: 2.4 times slower on 80,640
    # machines). Rounding to nearest is symmetric, fl(-a - b) = -fl(a + b), so -v0 - v1 - ...
    # is exactly minus v0 + v1 + ..., each partial sum rounded as Batsim's loop rounds it.
    terms[0] = -terms[0]
    total = -np.subtract.reduce(terms)
    numerator, denominator = total.as_integer_ratio()
    return numerator << (_SCALE + 1 - denominator.bit_length())


_SCRATCH = threading.local()


def difference(a: int, b: int) -> int:
    """`a - b` in long double (both already long doubles, as multiples of 2**-1074)."""
    return rounded(a - b)


def quotient(a: int, b: int) -> float:
    """static_cast<double>(a / b) of long doubles `a` and `b` (b != 0): the quotient rounded to
    64 significant bits, then to a double (two roundings, as the C code does)."""
    negative = (a < 0) != (b < 0)
    a, b = abs(a), abs(b)
    if not a:
        return -0.0 if negative else 0.0
    # a / b = m * 2**-k with 2**63 <= m < 2**64, m rounded to nearest, ties to even
    k = SIGNIFICAND_BITS - (a.bit_length() - b.bit_length())
    numerator, denominator = (a << k, b) if k >= 0 else (a, b << -k)
    m, rest = divmod(numerator, denominator)
    while m >= 1 << SIGNIFICAND_BITS:  # one bit too many: one step less
        k -= 1
        numerator, denominator = (a << k, b) if k >= 0 else (a, b << -k)
        m, rest = divmod(numerator, denominator)
    while m < 1 << (SIGNIFICAND_BITS - 1):
        k += 1
        numerator, denominator = (a << k, b) if k >= 0 else (a, b << -k)
        m, rest = divmod(numerator, denominator)
    twice = rest << 1
    if twice > denominator or (twice == denominator and m & 1):
        m += 1
    try:
        value = m / (1 << k) if k >= 0 else float(m << -k)
    except OverflowError:  # beyond a double: the cast gives infinity
        value = math.inf
    return -value if negative else value


def to_float(value: int) -> float:
    """static_cast<double>: rounded to nearest, ties to even (Python's int / int is)."""
    return value / (1 << _SCALE)  # (int / int is correctly rounded however large)


def fixed(value: int) -> str:
    """printf's `%Lf` (six decimals, rounded to nearest) of the long double `value`."""
    negative = value < 0
    magnitude = -value if negative else value
    # magnitude * 10**6 / 2**1074, rounded to nearest, ties to even (glibc rounds exactly)
    micro, rest = divmod(magnitude * _SIX_DECIMALS, 1 << _SCALE)
    twice = rest << 1
    if twice > (1 << _SCALE) or (twice == (1 << _SCALE) and micro & 1):
        micro += 1
    units, decimals = divmod(micro, _SIX_DECIMALS)
    sign = "-" if negative else ""  # (glibc writes -0.000000 for a negative value that rounds to 0)
    return f"{sign}{units}.{decimals:06d}"


__all__ = ["long_double_sum", "long_double_sum_array", "difference", "fixed", "quotient", "rounded", "scaled", "to_float"]
