"""Numbers as Batsim 4.2.1 prints them in its outputs, so that the files are byte-identical.

Batsim writes most numbers with C++'s std::to_string (printf's `%f`: six decimals). Python's
`%f` gives the same text for finite numbers.
"""

import math


def fmt(value: float) -> str:
    """printf's `%f`, as std::to_string writes a double: six decimals."""
    if value != value:  # NaN: glibc writes its sign, which x86's 0/0 sets (e.g. a mean over no job)
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return "%f" % value

