"""A campaign's results folder: one record per instance as it finishes, and the results table.

    RESULTS/instances/ID.json   each finished instance (written atomically: a killed runner
                                leaves whole records only), parameters included
    RESULTS/results.csv         one row per instance of the campaign file, every parameter
    RESULTS/results.parquet     and every metric a column (Parquet when pyarrow is installed)
    RESULTS/workloads/          converted trace weeks and generated workloads
    RESULTS/logs/ID.log         an external decider's output
    RESULTS/runs/ID/            each instance's Batsim output files, when asked (outputs = true)
"""

from __future__ import annotations

import io
import os
import tempfile
from typing import Any, Iterable

import numpy as np
import orjson
import pandas as pd

from joulesim.campaign.instances import Instance
from joulesim.inputs.output_file import write_whole

#: Metric columns, in table order (those of `RunResult.metrics`).
METRIC_COLUMNS = [
    "nb_jobs", "nb_jobs_finished", "nb_jobs_success", "nb_jobs_killed", "nb_jobs_rejected", "makespan",
    "mean_waiting_time", "max_waiting_time", "mean_bounded_slowdown", "max_bounded_slowdown", "utilization",
    "nb_machines", "consumed_joules", "nb_machine_switches",
]
#: Platforms whose hosts carry an electricity `price` (and energy on): the total energy cost.
COST_COLUMNS = ["energy_cost_cents"]
#: With `window = [t0, t1]` in [campaign]: metrics over that window (analysis/window_metrics.py).
WINDOW_COLUMNS = ["window_utilization", "window_energy", "window_jobs_started"]
STATUS_COLUMNS = ["status", "error", "wall_time", "decider_calls"]
#: An instance's status in its record and the table (instance_worker.py; "missing": not run yet).
STATUSES = ("ok", "failed", "timeout", "missing")


class ResultsStore:
    def __init__(self, directory: str):
        self.directory = directory
        self.instances_dir = os.path.join(directory, "instances")
        self.workloads_dir = os.path.join(directory, "workloads")
        self.logs_dir = os.path.join(directory, "logs")
        self.runs_dir = os.path.join(directory, "runs")

    def table_paths(self) -> list[str]:
        return [os.path.join(self.directory, "results.csv"), os.path.join(self.directory, "results.parquet")]

    def check_writable(self) -> None:
        """Refuse a results folder that cannot hold the results, before any work starts: a file,
        a place where nothing can be written (/proc, a read-only disk), or a results table or
        sub-folder of the wrong kind (which would fail only after the last instance)."""
        from joulesim.inputs.input_error import InputError

        fix = "give --out a folder you can write to (it is created if missing)"
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise InputError(self.directory, "results folder (--out)", "is a file, not a folder", fix)
        for folder in (self.instances_dir, self.workloads_dir, self.logs_dir, self.runs_dir):
            if os.path.exists(folder) and not os.path.isdir(folder):
                raise InputError(folder, "results folder", "is a file where the campaign keeps a folder",
                                 "remove or rename it, or give another --out")
        for table in self.table_paths():
            for path in (table, f"{table}.partial"):
                if os.path.isdir(path):
                    raise InputError(path, "results table", "is a folder where the campaign writes its table",
                                     "remove or rename it, or give another --out")
        try:
            os.makedirs(self.directory, exist_ok=True)
            with tempfile.TemporaryFile(dir=self.directory):
                pass
        except OSError as exc:
            raise InputError(self.directory, "results folder (--out)",
                             f"cannot be written ({exc.strerror or type(exc).__name__})", fix) from None

    def record_path(self, instance_id: str) -> str:
        return os.path.join(self.instances_dir, f"{instance_id}.json")

    def load(self, instance_id: str) -> dict[str, Any] | None:
        """The stored record of an instance, or None (never run, or a file left unreadable)."""
        try:
            with open(self.record_path(instance_id), "rb") as handle:
                record = orjson.loads(handle.read())
        except (OSError, orjson.JSONDecodeError):
            return None
        return record if isinstance(record, dict) and record.get("id") == instance_id else None

    def load_for_report(self, instance_id: str) -> dict[str, Any]:
        """The record of an instance the results table lists, for a report: unlike `load` (which
        lets the runner run an instance again), a record that is missing, unreadable or not this
        instance's is an InputError naming the file."""
        from joulesim.inputs.input_error import InputError

        path = self.record_path(instance_id)
        fix = f"remove {path} and run the campaign again to rewrite it"
        if not os.path.isdir(self.instances_dir):
            raise InputError(self.instances_dir, "records folder", "is missing, but the results table lists "
                             "instances: the campaign folder is incomplete", "run the campaign again to rewrite it")
        if not os.path.isfile(path):
            problem = "does not exist" if not os.path.exists(path) else "is not a regular file"
            raise InputError(path, f"record of instance {instance_id}", f"{problem}, but the results table lists it",
                             "run the campaign again to rewrite it")
        try:
            with open(path, "rb") as handle:
                record = orjson.loads(handle.read())
        except OSError as exc:
            raise InputError(path, f"record of instance {instance_id}", f"cannot be read: {exc.strerror or exc}",
                             fix) from None
        except orjson.JSONDecodeError as exc:
            raise InputError(path, f"record of instance {instance_id}", f"is not JSON: {exc}", fix) from None
        if not isinstance(record, dict):
            raise InputError(path, f"record of instance {instance_id}",
                             f"is a JSON {type(record).__name__}, not an object", fix)
        if record.get("id") != instance_id:
            raise InputError(path, f"record of instance {instance_id}", f"names instance {record.get('id')!r}", fix)
        return record

    def save(self, instance: Instance, record: dict[str, Any]) -> None:
        os.makedirs(self.instances_dir, exist_ok=True)
        record = {**record, "parameters": instance.parameters()}
        text = orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        write_whole(self.record_path(instance.id), "instance record", lambda path: _write_bytes(path, text),
                    "give the campaign another --out, or remove what is there")

    def table(self, instances: Iterable[Instance]) -> pd.DataFrame:
        """One row per instance (in the campaign's order); instances not run yet have status
        'missing'."""
        rows = []
        for instance in instances:
            record = self.load(instance.id) or {"status": "missing"}
            row: dict[str, Any] = {"instance_id": instance.id, **instance.parameters()}
            metrics = record.get("metrics") or {}
            for column in METRIC_COLUMNS + COST_COLUMNS + WINDOW_COLUMNS:
                row[column] = metrics.get(column)
            for column in STATUS_COLUMNS:
                row[column] = record.get(column)
            rows.append(row)
        frame = pd.DataFrame(rows)
        option_columns = sorted(c for c in frame.columns if c.startswith("option."))
        parameters = ["instance_id", "platform", "workload", "week", "seed", "decider", *option_columns,
                      "energy", "repetition"]
        # no weeks, seeds, prices or window: no such columns
        unused = {c for c in ["week", "seed"] + COST_COLUMNS + WINDOW_COLUMNS if frame[c].isna().all()}
        columns = parameters + METRIC_COLUMNS + COST_COLUMNS + WINDOW_COLUMNS + STATUS_COLUMNS
        return frame[[c for c in columns if c not in unused]]

    def write_table(self, frame: pd.DataFrame) -> list[str]:
        """results.csv, and results.parquet when pyarrow is installed; returns the paths written."""
        os.makedirs(self.directory, exist_ok=True)
        csv, parquet = self.table_paths()
        written = [csv]
        _atomic(written[0], lambda path: frame.to_csv(path, index=False))
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            return written
        # Mixed-type option columns (a number here, a string there) are stored as text.
        clean = frame.copy()
        for column in clean.columns:
            if clean[column].dtype == object:
                kinds = {type(v) for v in clean[column].dropna()}
                if len(kinds) > 1:
                    clean[column] = clean[column].map(lambda v: None if v is None or v != v else str(v))
        _atomic(parquet, lambda path: clean.to_parquet(path, index=False))
        return written + [parquet]


def _atomic(path: str, write: Any) -> None:
    write_whole(path, "results table", write, "give the campaign another --out, or remove what is there")


def _write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def read_table(path: str) -> pd.DataFrame:
    """A results table (a campaign folder, its results.csv or its results.parquet)."""
    from joulesim.inputs.input_error import InputError

    if os.path.isdir(path):
        parquet = os.path.join(path, "results.parquet")
        path = parquet if os.path.exists(parquet) else os.path.join(path, "results.csv")
    if not os.path.exists(path):
        raise InputError(path, "file", "does not exist",
                         "give a campaign results folder (the --out of `joulesim campaign run`) or its results.csv")
    fix = "rerun `joulesim campaign run` to rewrite it"
    if not os.path.isfile(path):
        raise InputError(path, "file", "is not a regular file", "give a campaign results folder or its results.csv")
    try:
        if path.endswith(".parquet"):
            return pd.read_parquet(path)
        with open(path, "rb") as handle:
            data = handle.read()
        # Only an empty cell is missing (pandas writes NaN so): a "nan" or "inf" is a damaged value.
        frame = pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""])
    except Exception as exc:  # pandas/pyarrow raise many kinds for a malformed file
        raise InputError(path, "file", f"is not a readable results table: {exc}", fix) from None
    # The table ends with a newline (pandas writes one after each row): a file that does not, or a
    # row without its status (a table of an older joulesim may have none), was cut short.
    if data and not data.endswith(b"\n"):
        last_line = data.count(b"\n") + 1
        raise InputError(path, f"line {last_line}", "ends in the middle of a line: the table looks cut short", fix)
    _check_metrics(path, frame, fix)
    if "status" in frame.columns:
        unknown = ~frame["status"].isin(STATUSES)
        if unknown.any():
            row = int(frame.index[unknown][0])
            value = frame["status"].iloc[row]
            problem = ("has no status: the table looks cut short" if pd.isna(value) else
                       f"status {value!r} is none of {', '.join(STATUSES)}: the table is damaged")
            raise InputError(path, f"data row {row + 1}, column status", problem, fix)
    return frame


def _check_metrics(path: str, frame: pd.DataFrame, fix: str) -> None:
    """Metrics are numbers, finite, and >= 0 but for a cost (prices may be negative); empty cells
    (failed or missing instances, energy off) are fine."""
    from joulesim.inputs.input_error import InputError

    for column in [c for c in METRIC_COLUMNS + COST_COLUMNS + WINDOW_COLUMNS if c in frame.columns]:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        given = frame[column].notna().to_numpy()
        bad = given & ~np.isfinite(values)
        if column not in COST_COLUMNS:
            bad |= given & np.isfinite(values) & (values < 0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(path, f"data row {row + 1}, column {column}",
                             f"{frame[column].iloc[row]!r} is not a finite number"
                             + ("" if column in COST_COLUMNS else " >= 0"), fix)
