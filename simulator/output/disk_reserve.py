"""Stop a run before an output file fills the disk it is written to.

Batsim's Pajé trace (PREFIX_schedule.trace, written by default as Batsim does) has a line per
machine at every job start and end: on the whole CEA-Curie trace (93,312 machines) it grows by
about 8 GB a minute and would reach tens of GB. A simulator must not fill the disk of the machine
it runs on, so the writer of such a file tells its reserve how much it wrote; every
`CHECK_EVERY` bytes the reserve looks at the free space of the file's disk and ends the run
with one line (what was written, what is left, how to avoid it) once less than `KEEP_FREE` is
left. The outputs written so far are kept, as after any other error.
"""

from __future__ import annotations

import os
import shutil

from joulesim.protocol.errors import JoulesimError

KEEP_FREE = 10 ** 9  # bytes left free on the disk
CHECK_EVERY = 64 << 20  # bytes written between two looks at the free space


class DiskReserve:
    def __init__(self, path: str, advice: str):
        """`path`: the file written; `advice`: how to run without filling the disk."""
        self.path = path
        self.advice = advice
        self.written = 0
        self._unchecked = 0

    def wrote(self, count: int) -> None:
        """`count` more bytes were written to the file."""
        self.written += count
        self._unchecked += count
        if self._unchecked >= CHECK_EVERY:
            self._unchecked = 0
            free = shutil.disk_usage(os.path.dirname(os.path.abspath(self.path))).free
            if free < KEEP_FREE:
                raise JoulesimError(
                    f"{self.path}: stopped after writing {_size(self.written)} to it, with {_size(free)} left free on "
                    f"its disk (joulesim keeps {_size(KEEP_FREE)} free); {self.advice}")


def _size(count: int) -> str:
    return f"{count / 1e9:.1f} GB" if count >= 10 ** 9 else f"{count / 1e6:.0f} MB"
