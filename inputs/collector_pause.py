"""No pass of Python's cycle collector while a run's inputs are built.

A workload's jobs and their records are made by the hundred thousand, and all stay for the run:
each young pass then frees nothing, and the oldest generation's passes walk everything made so
far. Loading a million jobs and making their records took 3.7 + 3.2 s with the passes, 2.6 +
0.6 s without them (BENCHMARKS.md, "Growth with the number of jobs").
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No pass of the cycle collector inside the block (a collector the caller turned off stays
    off); what was made there then counts as old."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            # What was made goes to the oldest generation, the young count back to zero (what
            # freeze then unfreeze do): else the first allocation after this would start a young
            # pass over all of it, then a middle one. (Not when the caller froze objects: those
            # would be thawed.)
            gc.freeze()
            gc.unfreeze()
        gc.enable()
