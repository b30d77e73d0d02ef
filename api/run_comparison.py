"""Several runs side by side, from Python: a table of their metrics, a trade-off plot and an
interactive report, as `joulesim analyze`, `joulesim plot --compare` and `joulesim report` make
them from output files. Runs are given as {label: RunResult} (the labels name them everywhere)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from joulesim.protocol.errors import JoulesimError
from joulesim.run_result import RunResult


def _checked(runs: Mapping[str, RunResult]) -> Mapping[str, RunResult]:
    if not isinstance(runs, Mapping) or not runs:
        raise JoulesimError("give the runs as a non-empty {label: RunResult} mapping, e.g. "
                            "{'easy': joulesim.simulate(...), 'fcfs': joulesim.simulate(...)}")
    for label, run in runs.items():
        if not isinstance(label, str) or not isinstance(run, RunResult):
            raise JoulesimError(f"run {label!r}: labels are strings and runs the RunResult that joulesim.simulate "
                                "returns")
    return runs


def _metric_rows(runs: Mapping[str, RunResult]) -> list[dict[str, Any]]:
    return [{"run": label, **run.metrics} for label, run in _checked(runs).items()]


def compare(runs: Mapping[str, RunResult]) -> pd.DataFrame:
    """One row per run (indexed by its label), its metrics as columns (RunResult.metrics)."""
    return pd.DataFrame(_metric_rows(runs)).set_index("run")


def compare_plot(runs: Mapping[str, RunResult], path: str | os.PathLike, x: str = "mean_waiting_time",
                 y: str = "makespan") -> str:
    """A PNG scatter of two metrics, a labelled point per run (needs the plot extra); the path."""
    from joulesim.analysis.compare_plot import plot_compare

    return plot_compare(_metric_rows(runs), x, y, os.fspath(path))


def compare_report(runs: Mapping[str, RunResult], path: str | os.PathLike, title: str | None = None) -> str:
    """One interactive HTML page of the runs (as `joulesim report` writes it for several output
    prefixes; needs the report extra), each named by its label; the path written."""
    from joulesim.analysis.html_report import write_report
    from joulesim.analysis.metrics import DEFAULT_TAU

    outputs: list[Any] = [run.outputs_labelled(label) for label, run in _checked(runs).items()]
    return write_report(outputs, os.fspath(path), DEFAULT_TAU, title)
