"""Machines per state over time (from PREFIX_machine_states.csv), as stacked steps."""

from __future__ import annotations

import numpy as np

from joulesim.analysis.plotting import plain_time_axis, pyplot, save
from joulesim.analysis.run_outputs import RunOutputs

# Bottom to top of the stack, with a color each.
STATES = [
    ("nb_computing", "computing", "tab:blue"),
    ("nb_idle", "idle", "tab:green"),
    ("nb_switching_on", "switching on", "tab:orange"),
    ("nb_switching_off", "switching off", "tab:red"),
    ("nb_sleeping", "sleeping", "tab:gray"),
]


def plot_machine_states(run: RunOutputs, path: str) -> str:
    plt = pyplot()
    states = run.machine_states
    time = states["time"].to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(12, 5), layout="constrained")
    base = np.zeros(len(time))
    for column, label, color in STATES:
        values = states[column].to_numpy(dtype=float)
        if column not in ("nb_computing", "nb_idle") and not values.any():
            continue  # states the run never used (e.g. no energy) stay out of the legend
        ax.fill_between(time, base, base + values, step="post", color=color, alpha=0.75,
                        linewidth=0, label=label)
        base = base + values
    if len(time):
        ax.set_xlim(time[0], time[-1] if time[-1] > time[0] else time[0] + 1)
    ax.set_ylim(0, max(float(base.max()) if len(base) else 1.0, 1.0) * 1.02)
    ax.set_xlabel("time (s)")
    plain_time_axis(ax.xaxis)
    ax.set_ylabel("machines")
    ax.set_title(f"Machine states of {run.name} over time")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    return save(fig, path)
