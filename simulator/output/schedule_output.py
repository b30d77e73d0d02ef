"""`out_schedule.csv`: one row of whole-run figures, with exactly Batsim 4.2.1's columns and
numbers.

As Batsim computes them: the means divide by every job, rejected ones included (a run without
jobs gets Batsim's `-nan`, 0/0); `nb_jobs_killed` counts every finished job that did not succeed
(failed ones too); `nb_computing_machines` counts the compute and storage machines; the time_*
columns are machine_states.py's. `batsim_version` names joulesim and its version, and the two
wall-clock columns (`scheduling_time`, `simulation_time`) are this run's.
"""

from __future__ import annotations

import math
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import TextIO

from joulesim.simulator.output.job_statistics import JobStatistics
from joulesim.simulator.output.machine_states import (
    COMPUTING,
    IDLE,
    SLEEPING,
    SWITCHING_OFF,
    SWITCHING_ON,
    UNAVAILABLE,
    MachineStates,
)
from joulesim.simulator.output.output_format import fmt

SCHEDULE_COLUMNS = [
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished", "nb_jobs_killed",
    "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches", "scheduling_time",
    "simulation_time", "success_rate", "time_computing", "time_idle", "time_sleeping",
    "time_switching_off", "time_switching_on", "time_unavailable",
]


@cache  # reading the installed metadata costs ~2 ms, and campaigns and RL episodes run thousands of simulations
def joulesim_version() -> str:
    try:
        return "joulesim-" + version("joulesim")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "joulesim-dev"


def _per_job(total: float, nb_jobs: int) -> float:
    """Batsim's mean: over every job; 0/0 is a NaN whose sign bit x86 sets (printed -nan)."""
    return total / nb_jobs if nb_jobs else -math.nan


def write_schedule(out: TextIO, stats: JobStatistics, machines: MachineStates, nb_machines: int,
                   scheduling_time: float, simulation_time: float, consumed_joules: float,
                   nb_machine_switches: int, nb_grouped_switches: int) -> dict[str, str]:
    """Write the schedule row; returns it as a dict (also used for the run summary).
    `nb_machines`: the compute and storage machines."""
    nb_jobs = stats.nb_jobs
    row = {
        "batsim_version": joulesim_version(),
        "consumed_joules": fmt(consumed_joules),
        "makespan": fmt(stats.makespan),
        "max_slowdown": fmt(stats.max_slowdown),
        "max_turnaround_time": fmt(stats.max_turnaround),
        "max_waiting_time": fmt(stats.max_waiting),
        "mean_slowdown": fmt(_per_job(stats.sum_slowdown, nb_jobs)),
        "mean_turnaround_time": fmt(_per_job(stats.sum_turnaround, nb_jobs)),
        "mean_waiting_time": fmt(_per_job(stats.sum_waiting, nb_jobs)),
        "nb_computing_machines": str(nb_machines),
        "nb_grouped_switches": str(nb_grouped_switches),
        "nb_jobs": str(nb_jobs),
        "nb_jobs_finished": str(stats.nb_finished),
        "nb_jobs_killed": str(stats.nb_finished - stats.nb_success),
        "nb_jobs_rejected": str(stats.nb_rejected),
        "nb_jobs_success": str(stats.nb_success),
        "nb_machine_switches": str(nb_machine_switches),
        # Wall-clock figures: the only columns that differ between identical runs.
        "scheduling_time": fmt(scheduling_time),
        "simulation_time": fmt(simulation_time),
        "success_rate": fmt(_per_job(stats.nb_success, nb_jobs)),
        "time_computing": fmt(machines.time_in(COMPUTING)),
        "time_idle": fmt(machines.time_in(IDLE)),
        "time_sleeping": fmt(machines.time_in(SLEEPING)),
        "time_switching_off": fmt(machines.time_in(SWITCHING_OFF)),
        "time_switching_on": fmt(machines.time_in(SWITCHING_ON)),
        "time_unavailable": fmt(machines.time_in(UNAVAILABLE)),
    }
    out.write(",".join(SCHEDULE_COLUMNS) + "\n" + ",".join([row[c] for c in SCHEDULE_COLUMNS]) + "\n")
    return row
