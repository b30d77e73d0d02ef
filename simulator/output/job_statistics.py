"""Running totals over finished and rejected jobs, for the schedule output and summaries.

The totals follow Batsim's: a job's run time is never zero (job_runtime.py), its slowdown is
turnaround / run time, and the makespan is the latest finish. The means here are over finished
jobs (the run summary's); `out_schedule.csv` divides the same sums by every job, rejected ones
included, as Batsim does (schedule_output.py).
"""

from __future__ import annotations

import math
from typing import Final

from joulesim.simulator.output.job_runtime import batsim_runtime_and_finish

BOUNDED_SLOWDOWN_TAU: Final = 10.0  # seconds, the usual bound (Batsim thesis, eq. 2.2)


class JobStatistics:
    def __init__(self) -> None:
        self.nb_jobs = 0
        self.nb_finished = 0
        self.nb_success = 0
        self.nb_killed = 0  # killed by KILL_JOB or at their walltime (not failed ones)
        self.nb_walltime_reached = 0  # (of those, the ones killed at their walltime)
        self.nb_rejected = 0
        self.makespan = 0.0
        self.sum_waiting = self.max_waiting = 0.0
        self.sum_turnaround = self.max_turnaround = 0.0
        self.sum_slowdown = self.max_slowdown = 0.0
        self.sum_bounded_slowdown = self.max_bounded_slowdown = 0.0

    def record_finished(self, state: str, subtime: float, start: float, finish: float) -> None:
        self.nb_jobs += 1
        self.nb_finished += 1
        if state == "COMPLETED_SUCCESSFULLY":
            self.nb_success += 1
        elif state == "COMPLETED_WALLTIME_REACHED":
            self.nb_killed += 1
            self.nb_walltime_reached += 1
        elif state == "COMPLETED_KILLED":
            self.nb_killed += 1
        execution = finish - start  # batsim_runtime_and_finish, inlined (this runs once per job)
        if execution == 0:
            execution, finish = batsim_runtime_and_finish(start, finish)
        waiting = start - subtime
        turnaround = finish - subtime
        slowdown = turnaround / execution
        bounded = turnaround / (execution if execution > BOUNDED_SLOWDOWN_TAU else BOUNDED_SLOWDOWN_TAU)
        if bounded < 1.0:
            bounded = 1.0
        # Comparisons rather than max(): this runs once per job.
        if finish > self.makespan:
            self.makespan = finish
        self.sum_waiting += waiting
        if waiting > self.max_waiting:
            self.max_waiting = waiting
        self.sum_turnaround += turnaround
        if turnaround > self.max_turnaround:
            self.max_turnaround = turnaround
        self.sum_slowdown += slowdown
        if slowdown > self.max_slowdown:
            self.max_slowdown = slowdown
        self.sum_bounded_slowdown += bounded
        if bounded > self.max_bounded_slowdown:
            self.max_bounded_slowdown = bounded

    def record_rejected(self) -> None:
        self.nb_jobs += 1
        self.nb_rejected += 1

    def _mean(self, total: float) -> float:
        return total / self.nb_finished if self.nb_finished else 0.0

    @property
    def mean_waiting(self) -> float:
        return self._mean(self.sum_waiting)

    @property
    def mean_turnaround(self) -> float:
        return self._mean(self.sum_turnaround)

    @property
    def mean_slowdown(self) -> float:
        return self._mean(self.sum_slowdown)

    @property
    def mean_bounded_slowdown(self) -> float:
        return self._mean(self.sum_bounded_slowdown)

    @property
    def success_rate(self) -> float:
        return self.nb_success / self.nb_jobs if self.nb_jobs else math.nan
