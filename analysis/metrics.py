"""The metrics table of `joulesim analyze`: one column of figures per run.

Computed from the jobs file (waiting times, bounded slowdown, utilization) with the machine
count from the schedule file; energy and machine switches come from the schedule file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from joulesim.analysis.run_outputs import RunOutputs

DEFAULT_TAU = 10.0  # seconds (Batsim thesis, eq. 2.2)
KILLED_STATES = ("COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str  # for tables and plot axes, with the unit
    fmt: Callable[[Any], str]
    optional: bool = False  # shown only when some run has it


def _num(digits: int, unit: str = "") -> Callable[[Any], str]:
    def format_value(value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        return f"{value:,.{digits}f}{unit}"
    return format_value


def _int(value: Any) -> str:
    return "-" if value is None else f"{int(value):,}"


def _percent(value: Any) -> str:
    return "-" if value is None or math.isnan(value) else f"{100 * value:.2f} %"


METRICS = [
    Metric("nb_jobs", "jobs", _int),
    Metric("nb_jobs_finished", "  finished", _int),
    Metric("nb_jobs_success", "  succeeded", _int),
    Metric("nb_jobs_killed", "  killed", _int),
    Metric("nb_jobs_rejected", "  rejected", _int),
    Metric("makespan", "makespan (s)", _num(1)),
    Metric("mean_waiting_time", "mean waiting time (s)", _num(1)),
    Metric("max_waiting_time", "max waiting time (s)", _num(1)),
    Metric("mean_bounded_slowdown", "mean bounded slowdown", _num(3)),
    Metric("max_bounded_slowdown", "max bounded slowdown", _num(3)),
    Metric("utilization", "utilization", _percent),
    Metric("nb_machines", "computing machines", _int),
    Metric("consumed_joules", "consumed energy (J)", _num(1), optional=True),
    Metric("energy_delay_product", "energy x makespan (J s)", _num(1), optional=True),
    Metric("nb_machine_switches", "machine switches", _int, optional=True),
]
METRIC_BY_KEY = {m.key: m for m in METRICS}
# Metrics usable as plot axes (numbers, one per run).
PLOTTABLE = [m.key for m in METRICS if m.key != "nb_machines"]


def metric_label(key: str, tau: float = DEFAULT_TAU) -> str:
    label = METRIC_BY_KEY[key].label.strip()
    if "bounded slowdown" in label:
        label += f" (tau = {tau:g} s)"
    if key == "utilization":
        label += " (fraction of machine time)"
    return label


def compute_metrics(run: RunOutputs, tau: float = DEFAULT_TAU) -> dict[str, Any]:
    """The metrics of one run, as a dict of plain Python numbers (None when not applicable)."""
    jobs = run.jobs
    nb_machines = run.nb_machines
    started = jobs["starting_time"].notna().to_numpy()
    finished = jobs[started]
    states = jobs["final_state"].astype(str)
    waiting = finished["waiting_time"].to_numpy(dtype=float)
    turnaround = finished["turnaround_time"].to_numpy(dtype=float)
    execution = finished["execution_time"].to_numpy(dtype=float)
    bounded = np.maximum(turnaround / np.maximum(execution, tau), 1.0) if len(finished) else np.array([])
    makespan = float(finished["finish_time"].max()) if len(finished) else 0.0

    hosts = run.allocated_host_counts()
    machine_seconds = float(np.sum(jobs["execution_time"].fillna(0.0).to_numpy(dtype=float) * hosts))
    capacity = nb_machines * makespan
    utilization = machine_seconds / capacity if capacity > 0 else math.nan

    def mean(values: np.ndarray) -> float:
        return float(values.mean()) if values.size else 0.0

    def maximum(values: np.ndarray) -> float:
        return float(values.max()) if values.size else 0.0

    schedule = run.schedule
    has_energy = run.consumed_energy is not None
    joules = schedule.get("consumed_joules")
    joules = None if joules is None or (isinstance(joules, float) and math.isnan(joules)) else float(joules)
    switches = schedule.get("nb_machine_switches")
    switches = None if switches is None or (isinstance(switches, float) and math.isnan(switches)) \
        else int(switches)
    metrics: dict[str, Any] = {
        "run": run.name,
        "nb_jobs": int(len(jobs)),
        "nb_jobs_finished": int(started.sum()),
        "nb_jobs_success": int((states[started] == "COMPLETED_SUCCESSFULLY").sum()),
        "nb_jobs_killed": int(states[started].isin(KILLED_STATES).sum()),
        "nb_jobs_rejected": int((~started).sum()),
        "makespan": makespan,
        "mean_waiting_time": mean(waiting),
        "max_waiting_time": maximum(waiting),
        "mean_bounded_slowdown": mean(bounded),
        "max_bounded_slowdown": maximum(bounded),
        "tau": float(tau),
        "utilization": utilization,
        "nb_machines": nb_machines,
        "consumed_joules": joules if (has_energy or joules) else None,
        # EDP, as the energy-aware scheduling papers on IRMaSim (seeds 000, 002) report it.
        "energy_delay_product": joules * makespan if (has_energy or joules) and joules is not None else None,
        "nb_machine_switches": switches,  # 0 is a count (the schedule says 0), not a missing value
    }
    cost = run.energy_cost  # only runs on platforms with prices have these two keys
    if cost is not None:
        kinds = cost["kind"].astype(str)
        total = cost[kinds == "total"]["cost_cents"]
        clusters = cost[kinds == "cluster"]
        metrics["energy_cost_cents"] = float(total.iloc[0]) if len(total) else float(clusters["cost_cents"].sum())
        metrics["energy_cost_by_cluster"] = {str(name): float(value) for name, value
                                             in zip(clusters["name"], clusters["cost_cents"])}
    return metrics


def metrics_of(prefixes: list[str], tau: float = DEFAULT_TAU) -> list[dict[str, Any]]:
    return [compute_metrics(RunOutputs(p), tau) for p in prefixes]


def format_table(rows: list[dict[str, Any]]) -> str:
    """Metric labels down the left, one right-aligned column per run (headed by its prefix)."""
    shown = [m for m in METRICS if not m.optional or any(r.get(m.key) is not None for r in rows)]
    tau = rows[0]["tau"] if rows else DEFAULT_TAU
    labels = []
    for m in shown:
        label = m.label
        if m.key == "mean_bounded_slowdown":
            label += f" (tau = {tau:g} s)"
        labels.append(label)
    cells = [[m.fmt(r.get(m.key)) for r in rows] for m in shown]
    if any("energy_cost_cents" in r for r in rows):  # platforms with prices
        labels.append("energy cost (US cents)")
        cells.append([_num(2)(r.get("energy_cost_cents")) for r in rows])
        names = list(dict.fromkeys(n for r in rows for n in r.get("energy_cost_by_cluster", {})))
        for name in names:
            labels.append(f"  cluster {name}")
            cells.append([_num(2)(r.get("energy_cost_by_cluster", {}).get(name)) for r in rows])
    headers = [r["run"] for r in rows]
    label_width = max(len(x) for x in labels + ["metric"])
    widths = [max([len(headers[i])] + [len(c[i]) for c in cells]) for i in range(len(rows))]
    lines = ["  ".join([f"{'':{label_width}}"] + [f"{h:>{w}}" for h, w in zip(headers, widths)]).rstrip()]
    for label, row_cells in zip(labels, cells):
        lines.append("  ".join([f"{label:{label_width}}"] + [f"{c:>{w}}" for c, w in zip(row_cells, widths)]))
    return "\n".join(lines)


def format_json(rows: list[dict[str, Any]]) -> str:
    def clean(value: Any) -> Any:
        return None if isinstance(value, float) and math.isnan(value) else value
    return json.dumps([{k: clean(v) for k, v in r.items()} for r in rows], indent=2)
