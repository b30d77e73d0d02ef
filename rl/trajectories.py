"""Trajectories: windows of consecutive jobs cut from a workload (seed 002, §3.3.1).

IRMaSim's training simulations schedule `trajectory_length` consecutive jobs of the workload
file, starting at a fixed or random position, with times shifted so that the window's first
job arrives at t=0. A length of 0 (or None) means "to the end of the workload".
"""

from __future__ import annotations

import dataclasses

import numpy as np

from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.workload.workload_model import Workload

__all__ = ["TrajectorySampler"]


class TrajectorySampler:
    def __init__(self, workload: Workload, length: int | None = None, origin: int | str = 0):
        jobs = workload.jobs
        if not jobs:
            raise JoulesimError(f"workload {workload.path}: it has no job to make trajectories of")
        total = len(jobs)
        self.workload = workload
        self.length = total if not length else int(length)
        if self.length > total:
            raise JoulesimError(f"workload {workload.path} has {total} jobs, fewer than the trajectory length "
                                f"{self.length}: shorten trajectory_length (at most {total}) or give a longer "
                                "workload")
        if origin != "random":
            if isinstance(origin, bool) or not isinstance(origin, int) or not 0 <= origin <= total - self.length:
                raise JoulesimError(f"trajectory origin {origin!r}: give 'random' or a job position in "
                                    f"[0, {total - self.length}] (workload {workload.path} has {total} jobs, "
                                    f"trajectories take {self.length})")
        self.origin = origin
        self._windows: dict[int, Workload] = {}  # by start position: episodes reuse them (read-only)

    def sample(self, rng: np.random.Generator) -> Workload:
        """One trajectory: a workload of `length` consecutive jobs, the first at t=0."""
        jobs = self.workload.jobs
        if self.origin == "random":
            start = int(rng.integers(0, len(jobs) - self.length + 1))
        else:
            start = int(self.origin)
        cached = self._windows.get(start)
        if cached is not None:
            return cached
        window = jobs[start:start + self.length]
        shift = window[0].subtime
        shifted = [dataclasses.replace(job, subtime=job.subtime - shift,
                                       json={**job.json, "subtime": job.subtime - shift})
                   for job in window]
        trajectory = self._windows[start] = dataclasses.replace(self.workload, jobs=shifted)
        return trajectory
