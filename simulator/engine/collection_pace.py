"""Fewer passes of Python's cycle collector while a run goes on (and none while its inputs are
built: joulesim/inputs/collector_pause.py).

A run makes and drops small containers (events, messages, decisions, rows) by the million, and
CPython starts a young-generation collection every 700 containers made and not yet freed: on
the 20,000-job benchmarks those passes were 2 to 5 % of a run's wall time (BENCHMARKS.md, "The
ZeroMQ round trip, and fewer collector passes"), finding almost nothing, since what a run drops
is freed by reference counting. The threshold of the young generation goes up for the run, then
back to what it was (the caller's, in a process that goes on: a campaign, a training, a
notebook). Memory does not grow with it: a pass then looks at up to YOUNG_THRESHOLD containers
instead of 700.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

YOUNG_THRESHOLD = 10_000


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    previous = gc.get_threshold()
    if previous[0] == 0 or previous[0] >= YOUNG_THRESHOLD:  # (off, or already as sparse: the caller's choice)
        yield
        return
    gc.set_threshold(YOUNG_THRESHOLD, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
