"""`joulesim campaign report`: metric-vs-parameter and trade-off plots of a results table.

Metric vs parameter: for each parameter x that varies and each metric y, one line per decider
(label), y averaged over the instances that share (decider, x) (the other parameters: weeks,
seeds, repetitions...), with the min-max range shaded. Trade-off: one point per instance in
the plane of two metrics, coloured by decider. Failed instances are left out and counted in
the title.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pandas as pd

from joulesim.analysis.metrics import metric_label
from joulesim.analysis.plotting import pyplot, save
from joulesim.campaign.results_store import COST_COLUMNS, METRIC_COLUMNS, WINDOW_COLUMNS, read_table
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import JoulesimError

DEFAULT_METRICS = ["mean_waiting_time", "mean_bounded_slowdown", "makespan", "utilization", "consumed_joules",
                   "nb_machine_switches", "energy_cost_cents"]
# Parameters that are not x axes (ids, the decider is the line, repetitions are averaged).
_NOT_AXES = {"instance_id", "decider", "repetition"}


def _label(column: str) -> str:
    try:
        return metric_label(column)
    except KeyError:
        return column


def varying_parameters(frame: pd.DataFrame) -> list[str]:
    metrics_and_status = set(METRIC_COLUMNS + COST_COLUMNS + WINDOW_COLUMNS) | {"status", "error", "wall_time", "decider_calls"}
    return [c for c in frame.columns if c not in metrics_and_status and c not in _NOT_AXES
            and frame[c].nunique(dropna=True) > 1]


def table_path(results: str) -> str:
    """The file read_table reads for `results` (a campaign folder: its results.parquet, else its
    results.csv), to name it in errors."""
    if os.path.isdir(results):
        parquet = os.path.join(results, "results.parquet")
        return parquet if os.path.exists(parquet) else os.path.join(results, "results.csv")
    return results


_DAMAGED_FIX = "the table is damaged: rerun `joulesim campaign run` to rewrite it"


class ReportOptionError(JoulesimError):
    """A column named on the command line (--x, --y, --tradeoff) that the results table lacks: a
    command-line value, exit status 2 (docs/reference/reliability.md)."""

    exit_code = 2


def _check_columns(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    """Columns the user named (--x, --y, --tradeoff)."""
    for column in columns:
        if column not in frame.columns:
            raise ReportOptionError(f"the results table has no column {column!r} for {what}; its columns: "
                                    + _columns(frame))


def _check_table_columns(path: str, frame: pd.DataFrame, columns: list[str], what: str) -> None:
    """Columns every campaign's table has (the decider, the default trade-off's metrics): one
    missing is a damaged table, an input error naming the file (exit status 2)."""
    for column in columns:
        if column not in frame.columns:
            raise InputError(path, "header", f"has no column {column!r} ({what}); its columns: {_columns(frame)}",
                             _DAMAGED_FIX)


def _columns(frame: pd.DataFrame) -> str:
    names = [str(c) if len(str(c)) <= 40 else str(c)[:40] + "..." for c in frame.columns[:60]]
    return ", ".join(names) + (f", ... ({len(frame.columns)} columns)" if len(frame.columns) > 60 else "")


@dataclass
class ReportPlan:
    """What draw_report draws, checked before anything is drawn or written."""
    results: str
    ok: pd.DataFrame  # the succeeded instances
    xs: list[str]
    ys: list[str]
    pairs: list[tuple[str, str]]
    note: str


def plan_report(results: str, xs: list[str], ys: list[str], tradeoffs: list[str]) -> ReportPlan:
    """Read and check the results table and the columns asked for (or the defaults)."""
    frame = read_table(results)
    path = table_path(results)
    _check_table_columns(path, frame, ["decider"], "one line or colour per decider")
    ok = frame[frame["status"] == "ok"] if "status" in frame.columns else frame
    nb_failed = len(frame) - len(ok)
    xs = xs or varying_parameters(ok)
    ys = ys or [m for m in DEFAULT_METRICS if m in ok.columns and ok[m].notna().any()]
    _check_columns(ok, xs, "--x")
    _check_columns(ok, ys, "--y")
    if tradeoffs:
        pairs = [_pair(text) for text in tradeoffs]
        for pair in pairs:
            _check_columns(ok, list(pair), "--tradeoff")
    else:
        pairs = _default_tradeoffs(ok)
        for x, y in pairs:
            _check_table_columns(path, ok, [x, y], f"a metric of every campaign, drawn in the default trade-off {y} vs {x}")
    note = f" ({nb_failed} failed instances left out)" if nb_failed else ""
    return ReportPlan(results, ok, xs, ys, pairs, note)


def draw_report(results: str, out_dir: str, xs: list[str], ys: list[str], tradeoffs: list[str],
                plan: ReportPlan | None = None) -> list[str]:
    """Draw the plots (of `plan`, when already made by plan_report); returns the paths of the PNG
    files written."""
    plan = plan or plan_report(results, xs, ys, tradeoffs)
    ok, note = plan.ok, plan.note
    if ok.empty:
        raise JoulesimError(f"{plan.results}: no instance succeeded; nothing to draw")
    written = []
    for x in plan.xs:
        for y in plan.ys:
            written.append(_metric_vs_parameter(ok, x, y, os.path.join(out_dir, f"{y}_vs_{x}.png"), note))
    for x, y in plan.pairs:
        written.append(_tradeoff(ok, x, y, os.path.join(out_dir, f"tradeoff_{y}_vs_{x}.png"), note))
    if not written:
        raise JoulesimError("no parameter varies in this campaign and no trade-off was asked: give --x or --tradeoff")
    return written


def _pair(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise JoulesimError(f"--tradeoff {text!r}: give two metrics separated by a comma, e.g. "
                            "mean_waiting_time,consumed_joules")
    return parts[0], parts[1]


def _default_tradeoffs(frame: pd.DataFrame) -> list[tuple[str, str]]:
    if "consumed_joules" in frame.columns and frame["consumed_joules"].notna().any():
        return [("mean_waiting_time", "consumed_joules")]
    return [("mean_waiting_time", "makespan")]


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _metric_vs_parameter(frame: pd.DataFrame, x: str, y: str, path: str, note: str) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5), layout="constrained")
    data = frame[frame[y].notna()]
    numeric_x = _numeric(data[x])
    categories: list[Any] = sorted(data[x].dropna().unique(), key=str) if not numeric_x else []
    for decider, group in data.groupby("decider", sort=False):
        stats = group.groupby(x, dropna=True)[y].agg(["mean", "min", "max"])
        if stats.empty:
            continue
        positions = stats.index.to_numpy(dtype=float) if numeric_x else [categories.index(v) for v in stats.index]
        line = ax.plot(positions, stats["mean"], marker="o", label=str(decider))[0]
        if (stats["max"] > stats["min"]).any():
            ax.fill_between(positions, stats["min"], stats["max"], alpha=0.15, color=line.get_color())
    if not numeric_x:
        ax.set_xticks(range(len(categories)), [str(c) for c in categories])
    ax.set_xlabel(x)
    ax.set_ylabel(_label(y))
    ax.set_title(f"{_label(y).split(' (')[0]} vs {x}: mean per decider, min-max shaded{note}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def _tradeoff(frame: pd.DataFrame, x: str, y: str, path: str, note: str) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 6), layout="constrained")
    data = frame[frame[x].notna() & frame[y].notna()]
    for decider, group in data.groupby("decider", sort=False):
        ax.scatter(group[x], group[y], s=30, alpha=0.8, label=str(decider))
    ax.set_xlabel(_label(x))
    ax.set_ylabel(_label(y))
    ax.set_title(f"Trade-off: {_label(y).split(' (')[0]} vs {_label(x).split(' (')[0]}, one point per "
                 f"instance{note}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)
