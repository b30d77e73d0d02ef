"""The queue policies' job lists: the waiting queue in submission order, and a running job's
allocation and estimated end."""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from dataclasses import dataclass
from itertools import islice
from typing import Iterator, cast

from procset import ProcSet

from joulesim.protocol.decider import SubmittedJob

__all__ = ["RunningJob", "WaitingQueue"]


@dataclass(slots=True)
class RunningJob:
    job: SubmittedJob
    alloc: ProcSet
    mask: int
    start: float
    estimated_end: float  # start + walltime; math.inf without walltime
    size: int = 0  # machines in mask (counted once: a bit count costs time in the platform's size)


class WaitingQueue:
    """Waiting jobs in submission order, with O(1) append and removal anywhere.

    Removal leaves a hole that iteration skips; `compact()` (called by QueuePolicy after
    each schedule) drops the holes when they outnumber the jobs. Removing jobs while
    iterating is allowed.
    """

    __slots__ = ("_items", "_index", "_head", "_res_count", "_walltime_count", "_walltime_heap", "_positions",
                 "jobs_read")

    def __init__(self) -> None:
        self._items: list[SubmittedJob | None] = []
        self._index: dict[str, int] = {}
        self._head = 0
        self._res_count: dict[int, int] = {}  # res -> number of waiting jobs asking for it
        # res -> the positions in _items of the jobs that asked for it, ascending; a removed job's
        # stays (its item is None) until compact() makes the lists again (see fitting_after)
        self._positions: dict[int, list[int]] = {}
        # walltime -> number of waiting jobs with it (those with one: walltime >= 0), and a heap
        # of these walltimes where one whose last job left stays until it reaches the top (a
        # removal costs nothing; most walltimes are distinct in real traces)
        self._walltime_count: dict[float, int] = {}
        self._walltime_heap: list[float] = []
        # The jobs that iter_from and fitting_after handed out: the work of the passes that walk
        # the queue (tests bound it; the build compiles the policies, past any wrapper of these).
        self.jobs_read = 0

    def append(self, job: SubmittedJob) -> None:
        res = job.res  # (each field read once: a job is a Python object, read by name)
        position = self._index[job.id] = len(self._items)
        self._items.append(job)
        positions = self._positions.get(res)
        if positions is None:
            self._positions[res] = [position]
        else:
            positions.append(position)
        counts = self._res_count
        counts[res] = counts.get(res, 0) + 1
        walltime = job.walltime
        if walltime >= 0:
            walltimes = self._walltime_count
            count = walltimes.get(walltime, 0)
            walltimes[walltime] = count + 1
            if not count:
                heap = self._walltime_heap
                if len(heap) > 2 * len(walltimes) + 64:  # mostly walltimes gone: start again
                    heap[:] = walltimes
                    heapq.heapify(heap)
                else:
                    heapq.heappush(heap, walltime)

    def remove(self, job_id: str) -> SubmittedJob:
        i = self._index.pop(job_id)
        items = self._items
        job = items[i]
        items[i] = None
        counts = self._res_count
        res = job.res  # type: ignore[union-attr]
        left = counts[res] - 1
        if left:
            counts[res] = left
        else:
            del counts[res]
        walltime = job.walltime  # type: ignore[union-attr]
        if walltime >= 0:
            walltimes = self._walltime_count
            left = walltimes[walltime] - 1
            if left:
                walltimes[walltime] = left
            else:
                del walltimes[walltime]
        if i == self._head:
            head = i + 1
            end = len(items)
            while head < end and items[head] is None:
                head += 1
            self._head = head
        return job  # type: ignore[return-value]

    def first(self) -> SubmittedJob | None:
        items = self._items
        return items[self._head] if self._head < len(items) else None

    def min_res(self) -> int:
        """The smallest number of machines a waiting job asks for (0 when the queue is empty)."""
        return min(self._res_count) if self._res_count else 0

    def min_walltime(self, leaving_out: SubmittedJob | None = None) -> float:
        """The smallest walltime of the waiting jobs that have one, `leaving_out` (a waiting
        job) aside; inf when none has."""
        heap, walltimes = self._walltime_heap, self._walltime_count
        while heap and heap[0] not in walltimes:  # walltimes whose jobs all left
            heapq.heappop(heap)
        if not heap:
            return math.inf
        smallest = heap[0]
        if leaving_out is None or smallest != leaving_out.walltime or walltimes[smallest] > 1:
            return smallest
        # The job left out holds the smallest alone: the next one, the smallest put back after.
        heapq.heappop(heap)
        while heap and (heap[0] == smallest or heap[0] not in walltimes):
            heapq.heappop(heap)
        following = heap[0] if heap else math.inf
        heapq.heappush(heap, smallest)
        return following

    def __iter__(self) -> Iterator[SubmittedJob]:
        items = self._items
        for i in range(self._head, len(items)):
            job = items[i]
            if job is not None:
                yield job

    def iter_from(self, job_id: str) -> Iterator[SubmittedJob]:
        """The waiting jobs from `job_id` (which must be waiting) on, in order."""
        items = self._items
        for i in range(self._index[job_id], len(items)):
            job = items[i]
            if job is not None:
                self.jobs_read += 1
                yield job

    def fitting_after(self, job_id: str, most: int) -> Iterator[SubmittedJob]:
        """The waiting jobs after `job_id` (which must be waiting) that ask for at most `most`
        machines, in order: what `iter_from` gives past `job_id`, less the jobs that ask for more.
        It reads only their positions (kept by res), where a walk reads every job of the queue:
        on a long queue with few machines free, EASY's backfilling pass looks for the few jobs
        that fit among thousands. `most` + 1 lists are looked up: for small `most`."""
        start = self._index[job_id] + 1
        positions = self._positions
        sources = []
        for res in range(most + 1):
            ascending = positions.get(res)
            if ascending:
                first = bisect_left(ascending, start)
                if first < len(ascending):
                    sources.append(islice(ascending, first, None))
        items = self._items
        for position in sources[0] if len(sources) == 1 else heapq.merge(*sources):
            job = items[position]
            if job is not None:  # (None: the job left the queue)
                self.jobs_read += 1
                yield job

    def __len__(self) -> int:
        return len(self._index)

    def __bool__(self) -> bool:
        return bool(self._index)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._index

    def ids(self) -> list[str]:
        return [job.id for job in self]

    def compact(self) -> None:
        holes = len(self._items) - len(self._index)
        if holes > 64 and holes > len(self._index):
            kept = [job for job in self._items[self._head:] if job is not None]
            # (a list of jobs is a list of jobs or holes: no copy; setup.py compiles this module,
            # which checks the declared type)
            self._items = cast("list[SubmittedJob | None]", kept)
            self._index = {job.id: i for i, job in enumerate(kept)}
            self._head = 0
            positions: dict[int, list[int]] = {}
            for i, job in enumerate(kept):
                positions.setdefault(job.res, []).append(i)
            self._positions = positions
