"""Trade-off scatter of several runs: two metrics of `joulesim analyze`, a labelled point per run."""

from __future__ import annotations

import math
from typing import Any

from joulesim.analysis.metrics import DEFAULT_TAU, PLOTTABLE, metric_label
from joulesim.analysis.plotting import plain_time_axis, pyplot, save
from joulesim.protocol.errors import JoulesimError


def plot_compare(rows: list[dict[str, Any]], x: str, y: str, path: str, tau: float = DEFAULT_TAU) -> str:
    for key in (x, y):
        if key not in PLOTTABLE:
            raise JoulesimError(f"unknown metric {key!r}; choose among {', '.join(PLOTTABLE)}")
    missing = [r["run"] for r in rows for key in (x, y)
               if r.get(key) is None or (isinstance(r[key], float) and math.isnan(r[key]))]
    if missing:
        raise JoulesimError(f"runs {', '.join(dict.fromkeys(missing))} have no value for "
                            f"{x if any(r.get(x) is None for r in rows) else y} "
                            "(energy figures need runs with energy on)")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 6), layout="constrained")
    xs = [float(r[x]) for r in rows]
    ys = [float(r[y]) for r in rows]
    colors = plt.get_cmap("tab10")
    span_x = (max(xs) - min(xs)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0
    placed: list[tuple[float, float]] = []
    for i, (r, xv, yv) in enumerate(zip(rows, xs, ys)):
        ax.scatter([xv], [yv], s=60, color=colors(i % 10), zorder=3)
        # Labels of points close to earlier ones go on alternate sides, stacked downwards.
        near = sum(1 for px, py in placed
                   if abs(px - xv) / span_x < 0.12 and abs(py - yv) / span_y < 0.08)
        placed.append((xv, yv))
        # Near an earlier point: below right, stacked; the label takes its point's color.
        offset = (8, 6) if not near else (8, -6 - 12 * (near - 1))
        ax.annotate(r["run"], (xv, yv), xytext=offset, textcoords="offset points", fontsize=9,
                    ha="left", va="bottom" if not near else "top", color=colors(i % 10))
    ax.margins(0.15)
    ax.set_xlabel(metric_label(x, tau))
    ax.set_ylabel(metric_label(y, tau))
    ax.set_title(f"Trade-off between runs: {metric_label(y, tau).split(' (')[0]} vs "
                 f"{metric_label(x, tau).split(' (')[0]}")
    if x in ("makespan", "mean_waiting_time", "max_waiting_time", "consumed_joules"):
        plain_time_axis(ax.xaxis)
    if y in ("makespan", "mean_waiting_time", "max_waiting_time", "consumed_joules"):
        plain_time_axis(ax.yaxis)
    ax.grid(alpha=0.3)
    return save(fig, path)
