"""Metrics over a time window [t0, t1] of a run, as seed 001 §6.5.3 measures its weeks.

Objectives defined over a time period count only what happens inside the window (a job
running past t1 counts until t1; the energy is what the platform consumed in the window):

- window_utilization: machine-seconds of jobs computing in the window / (machines x length);
- window_energy: joules consumed in the window (needs energy accounting);
- window_jobs_started: jobs whose start is in [t0, t1).

The platform's energy is linear between two rows of `consumed_energy` (the power changes only
at the times of rows: job starts and ends, switch requests and their ends), so the energy at t
is interpolated exactly. One exception: when the machines of one SET_RESOURCE_STATE finish
switching at different times (different transition durations), Batsim's format has one row,
when the last arrives, and the energy in between is interpolated. After the last row (the end
of the simulation) it no longer grows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from joulesim.analysis.run_outputs import RunOutputs


def window_metrics(run: RunOutputs, start: float, end: float) -> dict[str, Any]:
    if not end > start:
        raise ValueError(f"the window [{start}, {end}] is empty")
    jobs = run.jobs
    started = jobs["starting_time"].notna().to_numpy()
    begin = jobs["starting_time"].to_numpy(dtype=float)[started]
    finish = jobs["finish_time"].to_numpy(dtype=float)[started]
    hosts = run.allocated_host_counts()[started]
    inside = np.clip(np.minimum(finish, end) - np.maximum(begin, start), 0.0, None)
    capacity = run.nb_machines * (end - start)
    metrics: dict[str, Any] = {
        "window_utilization": float(np.sum(inside * hosts)) / capacity if capacity > 0 else math.nan,
        "window_jobs_started": int(np.sum((begin >= start) & (begin < end))),
        "window_energy": None,
    }
    energy = run.consumed_energy
    if energy is not None:
        metrics["window_energy"] = energy_at(energy, end) - energy_at(energy, start)
    return metrics


def energy_at(consumed_energy: Any, t: float) -> float:
    """Joules consumed from 0 to t, from the rows (time, cumulative energy)."""
    times = consumed_energy["time"].to_numpy(dtype=float)
    energies = consumed_energy["energy"].to_numpy(dtype=float)
    if len(times) == 0 or t <= 0:
        return 0.0
    # From t=0 to the first row the power was constant too: nothing had changed it.
    return float(np.interp(t, np.concatenate(([0.0], times)), np.concatenate(([0.0], energies))))
