"""Gantt chart of jobs on hosts over time, readable from a few jobs to 10,000+.

One PolyCollection holds a rectangle per contiguous host range of each job (not a patch per
job per host), so drawing stays fast; job ids are written only on small schedules.
"""

from __future__ import annotations

import numpy as np

from joulesim.analysis.plotting import plain_time_axis, pyplot, save
from joulesim.analysis.run_outputs import RunOutputs

LABEL_THRESHOLD = 60  # jobs: above this, rectangles carry no job id
KILLED_STATES = ("COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_FAILED")


def plot_gantt(run: RunOutputs, path: str, label_threshold: int = LABEL_THRESHOLD,
               groups: list[tuple[str, int, int]] | None = None) -> str:
    """`groups`: (name, first, last resource) per node of a node-model platform: the chart
    then has a row per core with the nodes separated and named, as IRMaSim users read it."""
    plt = pyplot()
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    jobs = run.jobs
    nb_machines = run.nb_machines
    rows, lows, highs = run.allocation_runs()
    start = jobs["starting_time"].to_numpy(dtype=float)[rows]
    finish = jobs["finish_time"].to_numpy(dtype=float)[rows]
    bottom = lows - 0.5  # host h spans [h - 0.5, h + 0.5]: ticks sit on host numbers
    top = highs + 0.5
    vertices = np.empty((rows.size, 4, 2))
    vertices[:, 0, 0] = vertices[:, 1, 0] = start
    vertices[:, 2, 0] = vertices[:, 3, 0] = finish
    vertices[:, 0, 1] = vertices[:, 3, 1] = bottom
    vertices[:, 1, 1] = vertices[:, 2, 1] = top

    cmap = plt.get_cmap("tab20")
    colors = cmap((rows % 20) / 19.0 if rows.size else np.array([]))
    nb_started = int(jobs["starting_time"].notna().sum())
    few = nb_started <= label_threshold
    fig, ax = plt.subplots(figsize=(12, 6), layout="constrained")
    ax.add_collection(PolyCollection(
        vertices, facecolors=colors, edgecolors="black" if few else "none",
        linewidths=0.6 if few else 0.0, antialiaseds=few))

    states = jobs["final_state"].astype(str).to_numpy()[rows]
    killed = np.isin(states, KILLED_STATES)
    if killed.any():  # hatch jobs that did not complete successfully
        ax.add_collection(PolyCollection(vertices[killed], facecolors="none", edgecolors="black",
                                         hatch="///", linewidths=0.3))
        ax.legend(handles=[Patch(facecolor="white", edgecolor="black", hatch="///",
                                 label="killed / failed / walltime reached")],
                  loc="upper right", fontsize="small")

    if few and rows.size:
        ids = jobs["job_id"].astype(str).to_numpy()
        seen: set[int] = set()
        for i, row in enumerate(rows.tolist()):
            if row in seen:  # one label per job, on its first host range
                continue
            seen.add(row)
            ax.text((start[i] + finish[i]) / 2, (bottom[i] + top[i]) / 2, ids[row],
                    ha="center", va="center", fontsize=7, clip_on=True)

    end = float(np.nanmax(finish)) if rows.size else 1.0
    ax.set_xlim(0, end if end > 0 else 1.0)
    ax.set_ylim(-0.5, max(nb_machines, int(highs.max()) + 1 if highs.size else 1) - 0.5)
    if nb_machines <= 32:
        ax.set_yticks(range(max(nb_machines, 1)))
    ax.set_xlabel("time (s)")
    plain_time_axis(ax.xaxis)
    ax.set_ylabel("hosts (machine id)")
    if groups:
        for _, first, _ in groups[1:]:
            ax.axhline(first - 0.5, color="black", linewidth=0.8)
        if len(groups) <= 64:
            ax.set_yticks([(first + last) / 2 for _, first, last in groups], [name for name, _, _ in groups],
                          fontsize=7 if len(groups) > 16 else None)
        ax.set_ylabel("cores, by node")
    rejected = len(jobs) - nb_started
    extra = f", {rejected} rejected" if rejected else ""
    what = f"{nb_machines} cores of {len(groups)} nodes" if groups else f"{nb_machines} hosts"
    ax.set_title(f"Gantt chart of {run.name}: {nb_started:,} jobs{extra} on {what}")
    ax.grid(axis="x", alpha=0.3)
    return save(fig, path)
