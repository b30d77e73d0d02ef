"""Figures 7.2 and 7.4 of the Batsim thesis: energy (normalised by EASY) against mean waiting
time and against the number of machine switches, one marker per instance."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

THOUSANDS = FuncFormatter(lambda value, _: f"{value:,.0f}")

# One colour family per algorithm, one marker per parameter value, as in the thesis's figures.
FAMILY_COLOURS = {"EASY": ["black"], "OS": ["#1f77b4", "#4fa3d9", "#9ecae1"],
                  "inertial": ["#d62728", "#ff7f0e", "#e6b422"]}
FAMILY_MARKERS = {"EASY": ["*"], "OS": ["o", "s", "D"], "inertial": ["^", "v", "P"]}


def _styles(rows: list[dict], instances: dict) -> dict[str, dict]:
    seen: dict[str, int] = {}
    styles = {}
    for r in rows:
        family = r["algorithm"]
        k = seen.get(family, 0)
        seen[family] = k + 1
        colours, markers = FAMILY_COLOURS[family], FAMILY_MARKERS[family]
        styles[r["instance"]] = {"color": colours[k % len(colours)], "marker": markers[k % len(markers)],
                                 "label": instances[r["instance"]].label,
                                 "s": 220 if family == "EASY" else 90}
    return styles


def _scatter(rows, styles, x_key, y_key, xlabel, ylabel, title, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for r in rows:
        st = styles[r["instance"]]
        ax.scatter(r[x_key], r[y_key], color=st["color"], marker=st["marker"], s=st["s"],
                   edgecolors="black", linewidths=0.5, label=st["label"], zorder=3)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":", zorder=1)
    ax.set_xlabel(xlabel)
    ax.xaxis.set_major_formatter(THOUSANDS)  # waiting times and switch counts reach 10^4-10^5
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(True, alpha=0.3, zorder=0)
    ax.margins(x=0.08, y=0.12)
    # Legend outside the axes so that it never hides a point.
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9, frameon=False,
              scatterpoints=1, borderaxespad=0.0)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def plot_all(rows: list[dict], instances: dict, out_dir: Path, title: str) -> list[Path]:
    styles = _styles(rows, instances)
    energy_label = "energy / energy of EASY"
    figures = [
        _scatter(rows, styles, "mean_waiting_time_s", "energy_norm", "mean waiting time (s)",
                 energy_label, f"Energy vs mean waiting time, {title}",
                 out_dir / "fig7_2_energy_vs_mean_waiting_time.png"),
        _scatter(rows, styles, "nb_machine_switches", "energy_norm", "machine switches (on + off, count)",
                 energy_label, f"Energy vs machine switches, {title}",
                 out_dir / "fig7_4_energy_vs_switches.png"),
        # The thesis's energies had computing hosts at idle power (see README.md): the same
        # figure 7.2 on that measure, to compare with its percentages.
        _scatter(rows, styles, "mean_waiting_time_s", "energy_idle_compute_norm", "mean waiting time (s)",
                 "energy / energy of EASY\n(computing hosts counted at idle power)",
                 f"As figure 7.2, thesis's energy measure, {title}",
                 out_dir / "fig7_2_idle_compute_energy_vs_mean_waiting_time.png"),
    ]
    return figures
