"""The free machines as a sorted list of runs, for finding the lowest ones on wide platforms.

QueuePolicy keeps its free machines as a bitmask (one integer operation per union or count),
but the n lowest free machines are slow to find in a mask: each operation on it costs time in
its width (microseconds on 93,312 machines), and on a busy platform the free ones lie high
above the low, busy machines. Kept beside the mask as runs (first, last), they are read from the
bottom: an allocation costs the runs it takes, a job's end a binary search per run it gives back.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterable


class FreeRuns:
    """Maximal runs of free machines, ascending: `starts[i]`..`ends[i]` (closed)."""

    __slots__ = ("starts", "ends")

    def __init__(self, runs: Iterable[tuple[int, int]] = ()):
        """`runs`: maximal, disjoint runs in ascending order (machine_masks.mask_runs gives them)."""
        self.starts: list[int] = []
        self.ends: list[int] = []
        for first, last in runs:
            self.starts.append(first)
            self.ends.append(last)

    def runs(self) -> list[tuple[int, int]]:
        return list(zip(self.starts, self.ends))

    def take_lowest(self, n: int) -> list[tuple[int, int]]:
        """Take the n lowest free machines (all of them when fewer are free); their runs."""
        starts, ends = self.starts, self.ends
        taken: list[tuple[int, int]] = []
        whole = 0  # runs taken whole, from the bottom
        for first, last in zip(starts, ends):
            if n <= 0:
                break
            length = last - first + 1
            if length > n:  # the run is cut: its top stays free
                taken.append((first, first + n - 1))
                starts[whole] = first + n
                break
            taken.append((first, last))
            n -= length
            whole += 1
        del starts[:whole]
        del ends[:whole]
        return taken

    def give_back(self, runs: Iterable[tuple[int, int]]) -> None:
        """Make free again machines that were not free, in runs (first, last), merging the runs
        that touch."""
        starts, ends = self.starts, self.ends
        for first, last in runs:
            i = bisect_left(starts, first)
            joins_below = i > 0 and ends[i - 1] == first - 1
            joins_above = i < len(starts) and starts[i] == last + 1
            if joins_below:
                if joins_above:
                    ends[i - 1] = ends[i]
                    del starts[i]
                    del ends[i]
                else:
                    ends[i - 1] = last
            elif joins_above:
                starts[i] = first
            else:
                starts.insert(i, first)
                ends.insert(i, last)
