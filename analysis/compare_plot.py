"""Trade-off scatter of several runs: two metrics of `joulesim analyze`, a labelled point per run."""

from __future__ import annotations

import math
from typing import Any

from joulesim.analysis.metrics import DEFAULT_TAU, PLOTTABLE, metric_label
from joulesim.analysis.plotting import pyplot, save
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
    for i, (r, xv, yv) in enumerate(zip(rows, xs, ys)):
        ax.scatter([xv], [yv], s=60, color=colors(i % 10), zorder=3)
        # Alternate label sides so that neighbouring points' labels do not sit on each other.
        offset = (8, 8) if i % 2 == 0 else (8, -14)
        ax.annotate(r["run"], (xv, yv), xytext=offset, textcoords="offset points", fontsize=9)
    ax.margins(0.15)
    ax.set_xlabel(metric_label(x, tau))
    ax.set_ylabel(metric_label(y, tau))
    ax.set_title(f"Trade-off between runs: {metric_label(y, tau).split(' (')[0]} vs "
                 f"{metric_label(x, tau).split(' (')[0]}")
    ax.grid(alpha=0.3)
    return save(fig, path)
