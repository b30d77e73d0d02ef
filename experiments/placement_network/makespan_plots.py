"""Figure 5.1 of the Batsim thesis: makespan of every run against F_comm, one facet per
placement variant, points and a linear trend (least squares); plus the mean makespan of
each variant relative to basic's, all variants on one axes, to see small differences."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

LABELS = {"basic": "basic", "best_effort_contiguous": "best effort\ncontiguous",
          "best_effort_local": "best effort\nlocal", "contiguous": "contiguous", "local": "local"}
COLOURS = {"basic": "#444444", "best_effort_contiguous": "#1f77b4", "best_effort_local": "#2ca02c",
           "contiguous": "#ff7f0e", "local": "#d62728"}
F_UNIT = 1e8  # F_comm axis in units of 1e8 bytes
M_UNIT = 1e6  # makespan axis in units of 1e6 s


def plot_facets(rows: list[dict], summary: dict, variants: list[str], path: Path, title: str) -> Path:
    variants = [v for v in variants if v in summary]
    fig, axes = plt.subplots(1, len(variants), figsize=(3.2 * len(variants) + 0.8, 4.4),
                             sharex=True, sharey=True, squeeze=False)
    axes = axes[0]
    f_max = max(r["f_comm"] for r in rows)
    line_x = np.linspace(0, f_max, 50)
    for ax, variant in zip(axes, variants):
        mine = [r for r in rows if r["variant"] == variant]
        x = np.array([r["f_comm"] for r in mine]) / F_UNIT
        y = np.array([r["makespan_s"] for r in mine]) / M_UNIT
        ax.scatter(x, y, s=9, alpha=0.45, color=COLOURS[variant], edgecolors="none", zorder=2)
        trend = summary[variant]
        if np.isfinite(trend["slope"]):
            ax.plot(line_x / F_UNIT, (trend["slope"] * line_x + trend["intercept"]) / M_UNIT,
                    color="black", linewidth=1.3, zorder=3)
            # Slope in the figure's own units: 10^6 s of makespan per 10^8 of F_comm.
            ax.text(0.04, 0.96, f"slope {trend['slope'] * F_UNIT / M_UNIT:.3g} (10⁶ s per 10⁸)\n"
                                f"R² {trend['r2']:.2f}",
                    transform=ax.transAxes, va="top", ha="left", fontsize=8.5,
                    bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1.5})
        ax.set_title(LABELS[variant], fontsize=10)
        ax.grid(True, alpha=0.3, zorder=0)
        ax.set_xlabel("F_comm (10⁸ B per host pair\nper s of trace run time)", fontsize=9)
    axes[0].set_ylabel("makespan (10⁶ s)")
    axes[0].set_ylim(bottom=0)
    fig.suptitle(f"Makespan vs communication factor, conservative backfilling: {title}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def plot_relative(summary: dict, variants: list[str], path: Path, title: str) -> Path | None:
    """Mean makespan (over seeds) of each variant / basic's, against F_comm."""
    if "basic" not in summary:
        return None
    base = summary["basic"]["per_f"]
    fig, ax = plt.subplots(figsize=(7.8, 4.6))
    for variant in variants:
        if variant not in summary:
            continue
        per_f = summary[variant]["per_f"]
        x = np.array([f for f in sorted(per_f) if f in base])
        y = np.array([per_f[f]["mean"] / base[f]["mean"] for f in x])
        ax.plot(x / F_UNIT, y, marker="o", markersize=3.5, linewidth=1.2, color=COLOURS[variant],
                label=LABELS[variant].replace("\n", " "))
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("F_comm (10⁸ B per host pair per s of trace run time)")
    ax.set_ylabel("mean makespan / mean makespan of basic")
    ax.set_title(f"Makespan relative to basic\n{title}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False, borderaxespad=0.0)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def plot_all(rows: list[dict], summary: dict, variants: list[str], out_dir: Path, title: str) -> list[Path]:
    figures = [plot_facets(rows, summary, variants, out_dir / "fig5_1_makespan_vs_fcomm.png", title)]
    relative = plot_relative(summary, variants, out_dir / "makespan_relative_to_basic.png", title)
    if relative is not None:
        figures.append(relative)
    return figures
