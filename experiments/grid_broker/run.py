"""Seed 004, figure 3: the broker's algorithms S and P on the ten clusters of table 2, as one
joulesim campaign over the stream density (jobs/day, equal steps from 500) and P's H_diff
(5-minute steps): the increase of the mean waiting time (P - S) and the energy-cost ratio S / P.

    python -m experiments.grid_broker.run               # the paper's grid: 2,592 instances, hours (below)
    python -m experiments.grid_broker.run --quick       # 3 densities x 3 H_diff, a quarter day (seconds)
    python -m experiments.grid_broker.run --no-readme   # leave README.md alone
    python -m experiments.grid_broker.run --records-only  # commit what a stopped campaign finished
    python -m experiments.grid_broker.run --readme-only   # README.md from the committed results/

The paper's grid takes hours on two cores (the README says how long it took, from the
records). Its records are committed (results/fig3_instances.jsonl): a run restores them first,
so a campaign stopped mid-way, whose finished instances were committed with --records-only,
resumes where it stopped. README.md's figures are written from those records and from
results/run.json (where and how they were measured), never typed by hand.

It writes OUT/platform.json (make_platform.py), OUT/fig3.toml (the campaign file) and runs it
into OUT/fig3_results/ (resumable: an interrupted run continues where it stopped; the same
campaign runs by hand with `joulesim campaign run OUT/fig3.toml --out OUT/fig3_results`),
then OUT/fig3.csv (one row per density and H_diff), OUT/fig3.png (the two heat maps) and the
comparison with the paper between the markers of README.md. OUT is out/grid_broker.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from experiments.grid_broker import make_platform
from experiments.grid_energy import run as grid_energy
from experiments import campaign_records
from experiments.campaign_records import records_table, report_restored, save_records
from experiments.readme_results import replace_results, write_readme
from experiments.run_record import duration_text, read_run_record, record_figures, write_run_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "grid_broker"  # /out/ is git-ignored
RESULTS = HERE / "results"  # the campaign's committed records (experiments/campaign_records.py)

# The paper's grid: densities from 500 jobs/day in equal steps (its points 620 and 3,140 are
# 500 + 1 x 120 and 500 + 22 x 120), H_diff in 5-minute steps (its 8,700 and 9,000 are 29 and
# 30 x 300 s). It names densities up to 5,000 in the figure and 10,000 in its conclusion.
DENSITY_START, DENSITY_STEP, DENSITY_STOP = 500, 120, 10_100
H_DIFF_STEP, H_DIFF_STOP = 300, 9_000
DAYS = 1.0
SEED = 0
# The sensitivity to the absolute size: the same script on a coarser grid, these base sizes.
SENSITIVITY_BASES, SENSITIVITY_STEPS = (32, 48), (480, 900)
HOST_SPEED = 1e9  # flop/s of every node (make_platform.py: "1Gf"): jobs load their nodes fully
# Walltime = duration: the paper's h is the exact queued work (grid-stream's default is twice the
# duration, so that a generated job completes under Batsim's rule; with 1 each job ends at its
# walltime, as killed, having run its whole duration, as in grid_energy).
WALLTIME_FACTOR = 1.0


def densities(quick: bool, stop: int = DENSITY_STOP, step: int = DENSITY_STEP) -> list[int]:
    return [500, 620, 3140] if quick else list(range(DENSITY_START, stop + 1, step))


def h_diffs(quick: bool, step: int = H_DIFF_STEP) -> list[int]:
    return [0, 4500, 9000] if quick else list(range(0, H_DIFF_STOP + 1, step))


# ---------------------------------------------------------------- the campaign file
def study_text(platform_file: str, density_list: list[int], h_list: list[int], days: float, t_idle: float,
               nb_hosts: int) -> str:
    """The campaign: one grid-stream workload per density (uniform over the day: the paper's
    broker stream, night_weight = 1), the same stream for S and for every H_diff of P."""
    lines = ["# Seed 004 figure 3 (written by experiments/grid_broker/run.py)", "[campaign]",
             'name = "grid_broker_fig3"', "energy = true", "timeout = 3600", "",
             "[[platforms]]", f'path = "{platform_file}"', 'name = "table2"', ""]
    for density in density_list:
        lines += ["[[workloads]]", 'generator = "grid-stream"', f'name = "d{density}"', f"seeds = [{SEED}]",
                  f"parameters = {{jobs_per_day = {density}, days = {days}, nb_res = {nb_hosts}, "
                  f"night_weight = 1.0, compute_speed = {HOST_SPEED:.0f}.0, walltime_factor = {WALLTIME_FACTOR}}}", ""]
    lines += ["[[deciders]]", 'name = "S"', 'decider = "broker"', f'options = {{algorithm = "S", t_idle = {t_idle!r}}}',
              "", "[[deciders]]", 'name = "P"', 'decider = "broker"',
              f'options = {{algorithm = "P", t_idle = {t_idle!r}}}',
              "grid = {h_diff = [" + ", ".join(str(h) for h in h_list) + "]}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- figure 3 from the results
def figure3(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (density, H_diff): S's and P's mean waiting time and energy cost, the wait
    increase P - S (s) and the cost ratio S / P."""
    bad = results[results["status"] != "ok"]
    if len(bad):
        raise SystemExit(f"{len(bad)} instance(s) did not finish ({', '.join(bad['instance_id'][:5])}...): "
                         "rerun the script (finished instances are kept)")
    frame = results.assign(density=results["workload"].str.slice(1).astype(int))
    s = frame[frame["decider"] == "S"].set_index("density")
    p = frame[frame["decider"] == "P"].copy()
    p["h_diff"] = p["option.h_diff"].astype(float).astype(int)
    out = pd.DataFrame({
        "density": p["density"], "h_diff": p["h_diff"],
        "jobs": p["nb_jobs"].to_numpy(),
        "wait_s": p["density"].map(s["mean_waiting_time"]).to_numpy(),
        "wait_p": p["mean_waiting_time"].to_numpy(),
        "cost_s_cents": p["density"].map(s["energy_cost_cents"]).to_numpy(),
        "cost_p_cents": p["energy_cost_cents"].to_numpy()})
    out["wait_increase"] = out["wait_p"] - out["wait_s"]
    out["cost_ratio"] = out["cost_s_cents"] / out["cost_p_cents"]
    out["saving_pct"] = 100.0 * (1.0 - out["cost_p_cents"] / out["cost_s_cents"])
    return out.sort_values(["density", "h_diff"]).reset_index(drop=True)


def _cell(fig: pd.DataFrame, column: str, rows: pd.Series | None = None) -> SimpleNamespace:
    """The cell where `column` is largest (density and H_diff as integers: a row is all floats)."""
    part = fig if rows is None else fig[rows]
    row = part.loc[part[column].idxmax()].to_dict()
    return SimpleNamespace(**{**row, "density": int(row["density"]), "h_diff": int(row["h_diff"])})


def comparison(fig: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The paper's statements on figure 3 (§4 and the conclusion), each with ours."""
    d_max = fig["density"].max()
    h_values = sorted(fig["h_diff"].unique())
    rows: list[tuple[str, str, str]] = []
    positive = (fig["wait_increase"] > 0).mean()
    rows.append(("P's mean wait is always higher than S's", "always",
                 f"in {100 * positive:.0f} % of the {len(fig):,} cells (min {fig['wait_increase'].min():+,.0f} s)"))
    top = _cell(fig, "wait_increase")
    rows.append(("largest wait increase (anywhere)", "2,659 s at density 3,140, H_diff 9,000",
                 f"{top.wait_increase:,.0f} s at density {top.density:,}, H_diff {top.h_diff:,}"))
    region1 = fig["density"].between(2000, 5000) & fig["h_diff"].between(7000, 9000)
    if region1.any():
        r1 = _cell(fig, "wait_increase", region1)
        rows.append(("region 1 (density 2,000-5,000, H_diff 7,000-9,000): the largest increases",
                     "up to 2,659 s", f"up to {r1.wait_increase:,.0f} s (density {r1.density:,}, H_diff {r1.h_diff:,}); "
                     f"mean {fig.loc[region1, 'wait_increase'].mean():,.0f} s"))
    h4000 = min(h_values, key=lambda h: (abs(h - 4000), h))
    mid = fig["h_diff"] == h4000
    r2 = _cell(fig, "wait_increase", mid)
    beyond = mid & (fig["density"] >= 2000)
    text = f"{r2.wait_increase:,.0f} s (density {r2.density:,})"
    if beyond.any():
        r2b = _cell(fig, "wait_increase", beyond)
        text += f"; over densities >= 2,000: {r2b.wait_increase:,.0f} s (density {r2b.density:,})"
    rows.append((f"region 2 (middle values): largest increase at H_diff 4,000 (ours: {h4000:,})", "about 800 s", text))
    high = fig["density"] >= fig["density"].quantile(0.75)
    low_h = fig["h_diff"] <= h_values[min(4, len(h_values) - 1)]
    r3 = fig[high & low_h]
    rows.append((f"region 3 (highest densities, smallest H_diff; ours: density >= {int(fig.loc[high, 'density'].min()):,}, "
                 f"H_diff <= {int(fig.loc[low_h, 'h_diff'].max()):,})", "increase under 300 s",
                 f"max {r3['wait_increase'].max():,.0f} s, mean {r3['wait_increase'].mean():,.0f} s"))
    for density, h_diff, column, paper, unit in ((3140, 9000, "wait_increase", "2,659 s", " s"),
                                                 (620, 8700, "cost_ratio", "1.87", "")):
        at = fig[(fig["density"] == density) & (fig["h_diff"] == h_diff)]
        if len(at):
            value = at[column].iloc[0]
            rows.append((f"{column.replace('_', ' ')} at the paper's point: density {density:,}, H_diff {h_diff:,}",
                         paper, f"{value:,.0f}{unit}" if unit else f"{value:.2f}"))
    best = _cell(fig, "cost_ratio")
    rows.append(("largest cost ratio S / P", "1.87 at density 620, H_diff 8,700",
                 f"{best.cost_ratio:.2f} at density {int(best.density):,}, H_diff {int(best.h_diff):,}"))
    lowest = fig[(fig["density"] == fig["density"].min()) & (fig["h_diff"] >= 1000)]
    rows.append((f"density {fig['density'].min():,}, H_diff >= 1,000: the largest savings", "ratio up to 1.87",
                 f"ratio {lowest['cost_ratio'].min():.2f}-{lowest['cost_ratio'].max():.2f} "
                 f"(the largest of every density: {fig.groupby('density')['cost_ratio'].max().idxmax():,})"))
    above = fig[fig["h_diff"] >= 2000].groupby("density")["cost_ratio"]
    spread = (above.max() - above.min()).max()
    below = fig[fig["h_diff"] < 2000].groupby("density")["cost_ratio"]
    rows.append(("beyond H_diff 2,000 the cost no longer changes",
                 "flat", f"ratio spread over H_diff >= 2,000: at most {spread:.3f} per density "
                         f"(below 2,000: up to {(below.max() - below.min()).max():.3f})"))
    for label, lo, hi, paper in (("about 2,000-4,000 jobs/day", 2000, 4000, "15-20 % saving"),
                                 (f"10,000 jobs/day and more (ours: up to {d_max:,})", 10_000, None, "at most 3 %")):
        band = fig[(fig["density"] >= lo) & ((fig["density"] <= hi) if hi else True) & (fig["h_diff"] >= 2000)]
        if len(band):
            rows.append((f"saving (1 - P / S cost), {label}, H_diff >= 2,000", paper,
                         f"{band['saving_pct'].min():.1f}-{band['saving_pct'].max():.1f} % "
                         f"(mean {band['saving_pct'].mean():.1f} %)"))
    trade = tradeoff(fig)
    knee = trade[trade["saving_pct"] >= 0.9 * trade["saving_pct"].max()].iloc[0]
    at4000 = trade.loc[(trade["h_diff"] - 4000).abs().idxmin()]
    rows.append(("the best trade-off between cost and wait", "H_diff 2,000-4,000",
                 f"the mean saving over all densities reaches 90 % of its largest ({trade['saving_pct'].max():.1f} %) "
                 f"at H_diff {int(knee.h_diff):,} (mean wait +{knee.wait_increase:,.0f} s); at {int(at4000.h_diff):,}: "
                 f"{at4000.saving_pct:.1f} % for +{at4000.wait_increase:,.0f} s; beyond, only the wait grows"))
    return rows


def tradeoff(fig: pd.DataFrame) -> pd.DataFrame:
    """Per H_diff, over all densities: mean saving and mean wait increase (the paper: 2,000-4,000 s
    is the best trade-off)."""
    return fig.groupby("h_diff", as_index=False).agg(saving_pct=("saving_pct", "mean"),
                                                     wait_increase=("wait_increase", "mean"),
                                                     max_wait_increase=("wait_increase", "max"))


def plot(fig: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, column, title, cmap in ((axes[0], "wait_increase", "mean wait increase P - S (s)", "magma"),
                                    (axes[1], "cost_ratio", "energy-cost ratio S / P", "viridis")):
        grid = fig.pivot(index="density", columns="h_diff", values=column)
        mesh = ax.pcolormesh(grid.columns, grid.index, grid.to_numpy(), shading="nearest", cmap=cmap)
        point = (9000, 3140) if column == "wait_increase" else (8700, 620)  # the paper's maxima
        ax.plot(*point, marker="x", color="cyan", markersize=10, mew=2, label=f"paper's maximum {point}")
        ax.legend(loc="upper left", fontsize=8)
        ax.set_xlabel("H_diff (s)")
        ax.set_ylabel("density (jobs/day)")
        ax.set_title(title)
        figure.colorbar(mesh, ax=ax)
    figure.suptitle("Figure 3: broker P against S, ten clusters of table 2")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def markdown(fig: pd.DataFrame, days: float, nb_instances: int, quick: bool, base: int, nb_hosts: int,
             seconds: float | None = None) -> str:
    """The results block: the comparison with the paper and the trade-off per H_diff
    (`seconds`: the simulations' summed time, when known)."""
    dens = sorted(fig["density"].unique())
    hs = sorted(fig["h_diff"].unique())
    lines = [f"Measured by `run.py{' --quick' if quick else ''}` (relative size 1 = {base} nodes, {nb_hosts:,} in all): densities {dens[0]:,}-{dens[-1]:,} jobs/day "
             f"({len(dens)} values), H_diff {hs[0]:,}-{hs[-1]:,} s ({len(hs)} values), {days:g} day(s) of a uniform "
             f"stream (seed {SEED}) per density, {nb_instances:,} simulations"
             + (f" ({duration_text(seconds)} of simulation, summed over instances)." if seconds else "."), "",
             "| the paper says | paper | joulesim |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in comparison(fig)]
    lines += ["", "Per H_diff, over all densities (the trade-off):", "",
              "| H_diff (s) | mean saving | mean wait increase | max wait increase |", "|---:|---:|---:|---:|"]
    table = tradeoff(fig)
    picks = [h for h in hs if h in (0, 600, 1200, 2100, 3000, 3900, 6000, 9000)] if len(hs) > 8 else hs
    for r in table[table["h_diff"].isin(picks)].itertuples():
        lines.append(f"| {r.h_diff:,} | {r.saving_pct:.1f} % | {r.wait_increase:,.0f} s | {r.max_wait_increase:,.0f} s |")
    return "\n".join(lines)


# ---------------------------------------------------------------- README.md from the results
def _band(fig: pd.DataFrame, lo: int, hi: int | None) -> pd.DataFrame:
    """The cells of densities lo..hi (hi None: no upper end) with H_diff >= 2,000, where the paper
    says the cost no longer changes."""
    rows = (fig["density"] >= lo) & (fig["h_diff"] >= 2000)
    if hi is not None:
        rows &= fig["density"] <= hi
    return fig[rows]


def sensitivity_rows(results: Path, fig: pd.DataFrame) -> list[str]:
    """The sensitivity table to the absolute size: the default grid's row, then one per committed
    coarser campaign of SENSITIVITY_BASES, then the paper's."""
    rows = []
    files = {base: results / records_file(campaign_name(False, base, *SENSITIVITY_STEPS)).name
             for base in SENSITIVITY_BASES}
    for base, frame in [(make_platform.BASE_SIZE, fig)] + [
            (base, figure3(records_table(path))) for base, path in files.items() if path.exists()]:
        nodes = sum(c["count"] for c in make_platform.platform(base)["clusters"])
        top, best = _cell(frame, "wait_increase"), _cell(frame, "cost_ratio")
        lowest = frame[(frame["density"] == frame["density"].min()) & (frame["h_diff"] >= 1000)]["cost_ratio"]
        mid = _band(frame, 2000, 4000)["saving_pct"]
        high = frame[(frame["density"] == frame["density"].max()) & (frame["h_diff"] >= 2000)]["saving_pct"]
        name = f"{base} (the default, full grid)" if base == make_platform.BASE_SIZE else str(base)
        rows.append(f"| {name} | {nodes:,} | {top.wait_increase:,.0f} s ({top.density:,}, {top.h_diff:,}) | "
                    f"{best.cost_ratio:.2f} ({best.density:,}, {best.h_diff:,}) | {lowest.max():.2f} | "
                    f"{mid.min():.1f}-{mid.max():.1f} %, mean {mid.mean():.1f} % | {high.min():.1f}-{high.max():.1f} % |")
    return rows


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's results block and every figure its prose quotes, from the committed records
    (results/fig3_instances.jsonl, and the sensitivity campaigns') and results/run.json."""
    record = read_run_record(results)
    table = records_table(results / records_file(campaign_name(False, make_platform.BASE_SIZE, DENSITY_STEP,
                                                                 H_DIFF_STEP)).name)
    fig = figure3(table)
    doc = make_platform.platform()
    nb_hosts = sum(c["count"] for c in doc["clusters"])
    block = markdown(fig, record["days"], len(table), False, make_platform.BASE_SIZE, nb_hosts,
                     instance_seconds(table))
    top, best = _cell(fig, "wait_increase"), _cell(fig, "cost_ratio")
    trade = tradeoff(fig).set_index("h_diff")
    lowest_density = int(fig["density"].min())
    lowest = fig[(fig["density"] == lowest_density) & (fig["h_diff"] >= 1000)]["cost_ratio"]
    high = fig["density"] >= fig["density"].quantile(0.75)
    low_h = fig["h_diff"] <= sorted(fig["h_diff"].unique())[4]
    # Where the mean saving (H_diff >= 2,000) falls under 3 % and stays there.
    saving = _band(fig, 0, None).groupby("density")["saving_pct"].mean()
    above = saving[saving >= 3.0]
    under3 = saving.index[saving.index > above.index.max()].min() if len(above) else saving.index.min()
    # The cheapest cluster (price x peak watts): P's first choice; it fills at about its nodes x a
    # day / the mean job area.
    cheapest = min(doc["clusters"], key=lambda c: make_platform.TABLE_2[_cluster_row(c)][4]
                   * make_platform.node_power_factor(make_platform.TABLE_2[_cluster_row(c)][3]))
    row = make_platform.TABLE_2[_cluster_row(cheapest)]
    mean_area = grid_energy.mean_width() * grid_energy.MEAN_DURATION
    # Cells where P waits less than S beyond H_diff 300, below and above 2,000 jobs/day (region
    # 1's lower edge); cells where P costs more than S; what P saves already at H_diff 0-300.
    less = fig[(fig["wait_increase"] < 0) & (fig["h_diff"] > 300)]
    less_low, less_high = less[less["density"] < 2000], less[less["density"] >= 2000]
    costlier = fig[fig["saving_pct"] < 0]
    small_h = fig[fig["h_diff"] <= 300]

    def at(density: int, h_diff: int, column: str) -> float:
        return float(fig[(fig["density"] == density) & (fig["h_diff"] == h_diff)][column].iloc[0])

    def band_mean(lo: int, hi: int | None) -> str:
        return f"{_band(fig, lo, hi)['saving_pct'].mean():.1f} %"

    figures = {
        **record_figures(record),
        "cells": f"{len(fig):,}", "positive": f"{100 * (fig['wait_increase'] > 0).mean():.0f} %",
        "top.increase": f"{top.wait_increase:,.0f} s", "top.density": f"{top.density:,}",
        "best.ratio": f"{best.cost_ratio:.2f}", "best.density": f"{best.density:,}",
        "lowest.density": f"{lowest_density:,}", "lowest.ratio": f"{lowest.max():.2f}",
        "lowest.saving": f"{100 * (1 - 1 / lowest.max()):.0f} %",
        "paper_point.wait": f"{at(3140, 9000, 'wait_increase'):,.0f} s",
        "paper_point.ratio": f"{at(620, 8700, 'cost_ratio'):.2f}",
        "region3.max": f"{fig[high & low_h]['wait_increase'].max():,.0f} s",
        "under3.density": f"{under3:,}",
        "band.500": band_mean(500, 620), "band.740": band_mean(740, 980), "band.2000": band_mean(2000, 3000),
        "band.3000": band_mean(3000, 4000), "band.6000": band_mean(6000, None),
        "cheapest.name": f"`{cheapest['id']}`", "cheapest.nodes": f"{cheapest['count']}",
        "cheapest.watts": f"{520 * make_platform.node_power_factor(row[3]):.1f}", "cheapest.price": f"{row[4]:g}",
        "cheapest.full": f"{cheapest['count'] * 86400 / mean_area:,.0f}", "mean_area": f"{mean_area:,.0f}",
        "less.densities": (", ".join(f"{d:,}" for d in sorted(less["density"].unique())) or "none"),
        "less.cells": f"{len(less):,}",
        "less.low.max": f"{-less_low['wait_increase'].min():,.0f} s" if len(less_low) else "none",
        "less.high.max": f"{-less_high['wait_increase'].min():,.1f} s" if len(less_high) else "none",
        "costlier.cells": f"{len(costlier):,}",
        "costlier.max": f"{-costlier['saving_pct'].min():.1f} %" if len(costlier) else "none",
        "costlier.median": f"{costlier['density'].median():,.0f}" if len(costlier) else "none",
        "small_h.saving": f"{small_h['saving_pct'].max():.0f} %",
        "sensitivity": "\n".join(sensitivity_rows(results, fig)),
    }
    figures.update(platform_figures(doc))
    figures.update({"grid.densities": str(len(densities(False))), "grid.h_diffs": str(len(h_diffs(False))),
                    "grid.k3140": str((3140 - DENSITY_START) // DENSITY_STEP),
                    "grid.instances": f"{len(densities(False)) * (1 + len(h_diffs(False))):,}"})
    for h in (2100, 3900, 9000):
        figures[f"trade.wait.{h}"] = f"+{trade.loc[h, 'wait_increase']:,.0f} s"
        figures[f"trade.saving.{h}"] = f"{trade.loc[h, 'saving_pct']:.1f} %"
    return block, figures


def platform_figures(doc: dict) -> dict[str, str]:
    """make_platform.py's platform as README figures: the table of its clusters and its size."""
    rows = ["| cluster (host prefix) | UTC | relative size | nodes | Mflop/W (relative) | node peak W | cents/kWh |",
            "|---|---|---|---|---|---|---|"]
    for cluster in doc["clusters"]:
        name, offset, size, efficiency, price = make_platform.TABLE_2[_cluster_row(cluster)]
        rows.append(f"| {cluster['id']} | {offset:+d} | {size} | {cluster['count']} | {efficiency} | "
                    f"{cluster['wattage_per_state'][0][1]:.1f} | {price:g} |".replace("| +0 |", "| 0 |"))
    return {"platform.table": "\n".join(rows), "nodes": f"{sum(c['count'] for c in doc['clusters']):,}"}


def _cluster_row(cluster: dict) -> int:
    """The row of table 2 a platform cluster comes from (its name starts with the row number)."""
    return int(str(cluster["prefix"]).split("_", 1)[0])


# ---------------------------------------------------------------- committed records
def records_file(name: str) -> Path:
    return RESULTS / f"{name}_instances.jsonl"


def campaign_name(quick: bool, base: int, density_step: int, h_diff_step: int) -> str:
    """The campaign's name, which names its output folder and its records file."""
    name = "fig3" + ("_quick" if quick else "") + (f"_base{base}" if base != make_platform.BASE_SIZE else "")
    if not quick and (density_step, h_diff_step) != (DENSITY_STEP, H_DIFF_STEP):
        name += f"_step{density_step}x{h_diff_step}"
    return name


def instance_seconds(table: pd.DataFrame) -> float:
    """The campaign's simulations' time, summed (each instance in its own worker process): what
    it costs in core-seconds, whatever the sessions it was spread over."""
    return float(table["wall_time"].sum())


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--quick", action="store_true", help="3 densities x 3 H_diff, a quarter of a day")
    parser.add_argument("--days", type=float, default=None, help=f"days of stream per density (default {DAYS:g})")
    parser.add_argument("--density-stop", type=int, default=DENSITY_STOP,
                        help=f"the largest density (default {DENSITY_STOP:,})")
    parser.add_argument("--density-step", type=int, default=DENSITY_STEP,
                        help=f"the density step (default {DENSITY_STEP})")
    parser.add_argument("--h-diff-step", type=int, default=H_DIFF_STEP, help=f"the H_diff step (default {H_DIFF_STEP} s)")
    parser.add_argument("--base-size", type=int, default=None,
                        help="nodes of a cluster of relative size 1 (default: make_platform.py's)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: the cores)")
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the committed results")
    campaign_records.add_arguments(parser, "results/NAME_instances.jsonl")
    parser.add_argument("--readme", type=Path, default=HERE / "README.md")
    args = parser.parse_args(argv)
    if args.readme_only:
        write_readme(args.readme, *readme_figures(RESULTS))
        print(f"{args.readme} written from {RESULTS}")
        return 0
    if min(args.density_step, args.h_diff_step, args.base_size or 1) < 1:
        parser.error("steps and the base size must be positive")
    from joulesim.campaign.results_store import read_table
    from joulesim.campaign.runner import run_campaign

    days = args.days if args.days is not None else (0.25 if args.quick else DAYS)
    args.out.mkdir(parents=True, exist_ok=True)
    base = args.base_size or make_platform.BASE_SIZE
    name = campaign_name(args.quick, base, args.density_step, args.h_diff_step)
    results_dir = args.out / f"{name}_results"
    records = campaign_records.chosen_records(args, records_file(name))
    if args.records_only:
        return campaign_records.write_records_only(parser, results_dir, records)
    doc = make_platform.platform(base)
    platform_file = "platform.json" if base == make_platform.BASE_SIZE else f"platform_base{base}.json"
    (args.out / platform_file).write_text(json.dumps(doc, indent=1) + "\n")
    nb_hosts = sum(c["count"] for c in doc["clusters"])
    study = args.out / f"{name}.toml"
    study.write_text(study_text(platform_file, densities(args.quick, args.density_stop, args.density_step),
                                h_diffs(args.quick, args.h_diff_step), days, round(grid_energy.T_BE, 1), nb_hosts))
    if records is not None:
        report_restored(records, results_dir)
    print(f"campaign {study} -> {results_dir} (also: joulesim campaign run {study} --out {results_dir})", flush=True)
    began = time.perf_counter()
    summary = run_campaign(str(study), str(results_dir), workers=args.workers, progress=None)
    if records is not None:
        save_records(results_dir, records)
    table = read_table(str(results_dir))
    fig = figure3(table)
    fig.to_csv(args.out / f"{name}.csv", index=False)
    try:
        plot(fig, args.out / f"{name}.png")
    except ImportError:
        print("no figure: matplotlib is missing (pip install '.[plot]' in the joulesim checkout)")
    print(markdown(fig, days, summary.nb_instances, args.quick, base, nb_hosts))
    # The committed figures: the paper's grid (and the sensitivity campaigns, a table of its README)
    # with the default stream, from the committed records, where a run of every instance ended.
    committed = (records is not None and records.parent == RESULTS and args.days is None
                 and args.density_stop == DENSITY_STOP
                 and (name == campaign_name(False, make_platform.BASE_SIZE, DENSITY_STEP, H_DIFF_STEP)
                      or (base in SENSITIVITY_BASES and (args.density_step, args.h_diff_step) == SENSITIVITY_STEPS)))
    if committed and base == make_platform.BASE_SIZE:
        write_run_record(RESULTS, "python -m experiments.grid_broker.run", time.perf_counter() - began,
                         event_grouping="batsim", seeds=[SEED], days=days, workers=args.workers or os.cpu_count(),
                         instances=summary.nb_instances, instances_run_by_this_command=summary.nb_run,
                         instance_seconds=round(instance_seconds(records_table(records)), 1))
    if args.no_readme:
        pass
    elif committed and (RESULTS / "run.json").exists():
        write_readme(args.readme, *readme_figures(RESULTS))
    elif args.quick or args.readme != HERE / "README.md":
        replace_results(args.readme, markdown(fig, days, summary.nb_instances, args.quick, base, nb_hosts))
    else:
        print(f"README.md left as it is: it quotes the committed campaigns only (see {RESULTS})")
    print(f"{summary.nb_run} instance(s) run in {summary.wall_time:.1f} s; outputs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
