"""Numbers as Batsim 4.2.1 prints them in its outputs, so that the files are byte-identical.

Batsim writes most numbers with C++'s std::to_string (printf's `%f`: six decimals) and the
times of `out_machine_states.csv` and `out_pstate_changes.csv` with printf's `%g` (six
significant digits: `4e-10`, `306.1`, `182655`). Python's `%f` and `%g` give the same text
for finite numbers.
"""

import math


def fmt(value: float) -> str:
    """printf's `%f`, as std::to_string writes a double: six decimals."""
    if value != value:  # NaN: glibc writes its sign, which x86's 0/0 sets (e.g. a mean over no job)
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return "%f" % value


def fmt_time(value: float) -> str:
    """printf's `%g`: the times of the machine-state and pstate outputs."""
    return "%g" % value
