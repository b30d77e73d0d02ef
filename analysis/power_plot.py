"""Power and energy over time (from PREFIX_consumed_energy.csv, written when energy is on).

`energy` is the cumulative consumed energy (J) at each event; the power drawn between two
events is the energy difference over the time difference, plotted as steps.
"""

from __future__ import annotations

import numpy as np

from joulesim.analysis.plotting import plain_time_axis, pyplot, save
from joulesim.analysis.run_outputs import RunOutputs


def plot_power(run: RunOutputs, path: str) -> str | None:
    """Write the plot; None (nothing written) when the run has no consumed_energy file."""
    energy_frame = run.consumed_energy
    if energy_frame is None:
        return None
    plt = pyplot()
    time = energy_frame["time"].to_numpy(dtype=float)
    energy = energy_frame["energy"].to_numpy(dtype=float)
    dt = np.diff(time)
    de = np.diff(energy)
    keep = dt > 0
    # Average power on each [t_{i-1}, t_i] with a positive duration.
    t_start = time[:-1][keep]
    power = de[keep] / dt[keep]
    fig, (ax_power, ax_energy) = plt.subplots(2, 1, figsize=(12, 7), sharex=True, layout="constrained")
    if power.size:
        ax_power.stairs(power, np.append(t_start, time[1:][keep][-1:]), baseline=None,
                        color="tab:red", label="power (mean between events)")
    wattmin = energy_frame["wattmin"].to_numpy(dtype=float)
    if len(time) and np.isfinite(wattmin).any():
        ax_power.step(time, wattmin, where="post", color="tab:gray", linestyle="--", linewidth=0.8,
                      label="minimum power (wattmin)")
    ax_power.set_ylabel("power (W)")
    ax_power.set_title(f"Power and energy of {run.name} over time")
    ax_power.legend(loc="upper right", fontsize="small")
    ax_power.grid(alpha=0.3)
    ax_power.set_ylim(bottom=0)
    ax_energy.plot(time, energy / 1e6, color="tab:purple")
    ax_energy.set_ylabel("consumed energy (MJ)")
    ax_energy.set_xlabel("time (s)")
    plain_time_axis(ax_energy.xaxis)
    ax_energy.grid(alpha=0.3)
    ax_energy.set_ylim(bottom=0)
    return save(fig, path)
