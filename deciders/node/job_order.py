"""Orders of pending jobs, as IRMaSim's workload managers keep them.

IRMaSim keeps its pending jobs in a `SortedList` keyed by the policy's job key; jobs with
equal keys stay in submission order (a `SortedList` inserts after equal keys, and merges a
batch stably). Here every job carries its submission number `seq`, and jobs are ordered by
(key, seq): the same order.

- `JOB_SELECTIONS`: the keys of IRMaSim's Heuristic ("Policy") manager (seed 002, table 4.1).
- `HeadQueue`: pending jobs by (key, seq) when only the head matters (strict head of queue).
- `PendingByNeed`: pending jobs by cores needed, each group by (key, seq), walked in the
  global (key, seq) order while skipping the groups too large for any node (PCBE's greedy pass
  visits every pending job; only those that fit somewhere can start, so the walk visits the
  others only when they are the next of their group).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from typing import Callable, Iterator

from joulesim.deciders.node.node_jobs import NodeJob

__all__ = ["JOB_SELECTIONS", "JOB_SELECTION_NEEDS", "job_selection_key", "HeadQueue", "PendingByNeed"]

#: Job selection name -> key (lowest first).
_KEYS: dict[str, Callable[[NodeJob], float]] = {
    "random": lambda job: job.rand,  # a uniform draw per job at submission
    "first": lambda job: job.subtime,
    "shortest": lambda job: job.req_time,  # type: ignore[return-value,operator]
    "longest": lambda job: -job.req_time,  # type: ignore[return-value,operator]
    "smallest": lambda job: job.ntasks,
    "low_mem": lambda job: job.mem,
    "low_mem_ops": lambda job: job.mem_vol,  # type: ignore[return-value]
}
JOB_SELECTIONS = tuple(_KEYS)
#: The job fields (see JobReader) a job selection reads beyond the job's size and times.
JOB_SELECTION_NEEDS: dict[str, str] = {"shortest": "req_time", "longest": "req_time", "low_mem_ops": "mem_vol"}


def job_selection_key(name: str) -> Callable[[NodeJob], float]:
    return _KEYS[name]


class HeadQueue:
    """Pending jobs by (key, seq); the head is the next job to start."""

    __slots__ = ("_heap",)

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, NodeJob]] = []

    def push(self, job: NodeJob, key: float) -> None:
        heapq.heappush(self._heap, (key, job.seq, job))

    def head(self) -> NodeJob | None:
        return self._heap[0][2] if self._heap else None

    def pop(self) -> NodeJob:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)

    def ids(self) -> list[str]:
        return [entry[2].id for entry in sorted(self._heap)]


Entry = tuple[float, int, str]  # (key, seq, job id): seq makes it unique


class PendingByNeed:
    """Pending jobs grouped by the idle cores they need on one node, each group sorted by (key, seq)."""

    __slots__ = ("groups", "_count")

    def __init__(self) -> None:
        self.groups: dict[int, list[Entry]] = {}
        self._count = 0

    def add(self, entry: Entry, need: int) -> None:
        insort(self.groups.setdefault(need, []), entry)
        self._count += 1

    def remove(self, entry: Entry, need: int) -> None:
        group = self.groups[need]
        index = bisect_left(group, entry)
        if index == len(group) or group[index] != entry:
            raise KeyError(entry)
        del group[index]
        if not group:
            del self.groups[need]
        self._count -= 1

    def __len__(self) -> int:
        return self._count

    @staticmethod
    def walk(pools: list["PendingByNeed"], max_need: Callable[[], int]) -> Iterator[tuple[Entry, int]]:
        """(entry, need) of every job of `pools` in (key, seq) order, skipping those needing
        more than `max_need()`, which may only decrease during the walk (it is asked again
        before each job). The pools must not change during the walk."""
        limit = max_need()
        heap = [(group[0], need, 0, group) for pool in pools for need, group in pool.groups.items()
                if need <= limit]
        heapq.heapify(heap)
        while heap:
            entry, need, index, group = heap[0]
            if need > max_need():
                heapq.heappop(heap)  # this group can no longer start anything during the walk
                continue
            yield entry, need
            if index + 1 < len(group):
                heapq.heapreplace(heap, (group[index + 1], need, index + 1, group))
            else:
                heapq.heappop(heap)
