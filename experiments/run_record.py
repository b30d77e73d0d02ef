"""Where, when and how an experiment's committed results were measured: `run.json` beside them.

Each experiment README states the event grouping, the seeds, the machine and the time its figures
come from; those sentences are figures written from this record (see readme_results), so a rerun
on another machine or commit cannot leave them stating the old ones.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

RECORD_NAME = "run.json"
REPO_ROOT = Path(__file__).resolve().parents[1]


def _commit() -> str:
    """The checkout's commit, with "+changes" when its code differs from it (or "unknown"). Pages
    (*.md) and committed results do not count: they are what runs write, not what they run."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                                 capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    code_changed = any(not (line.endswith(".md") or "/results/" in line) for line in changed)
    return head + ("+changes" if code_changed else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> float | None:
    """The 1-minute load average when the run ended (how shared the machine was), if known."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def write_run_record(folder: Path, command: str, wall_s: float, **settings: Any) -> dict[str, Any]:
    """Write `folder/run.json`: the command, its wall time, the date, commit and machine, and the
    experiment's own `settings` (event grouping, seeds, ...). Returns the record."""
    record = {"command": command, "date": datetime.date.today().isoformat(), "commit": _commit(),
              "wall_s": round(wall_s, 1), "cpu": _cpu_model(), "cores": os.cpu_count(),
              "load_average_at_end": load_average(), "python": platform.python_version(),
              "os": f"{platform.system()} {platform.machine()}", **settings}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RECORD_NAME).write_text(json.dumps(record, indent=1) + "\n")
    return record


def read_run_record(folder: Path) -> dict[str, Any]:
    path = folder / RECORD_NAME
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        sys.exit(f"{path}: no run record: run the experiment first (its README says how)")


def duration_text(seconds: float) -> str:
    """"48 s", "4 min 27 s", "1 h 15 min": how the READMEs state a run's time."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def record_figures(record: dict[str, Any]) -> dict[str, str]:
    """The record as README figures: `run.date`, `run.commit`, `run.time`, `run.machine`."""
    load = record.get("load_average_at_end")
    machine = f"{record['cores']} cores of {record['cpu']}"
    if load is not None:
        machine += f", load average {load:.2f} at the end"
    return {"run.date": record["date"], "run.commit": record["commit"], "run.command": f"`{record['command']}`",
            "run.time": duration_text(record["wall_s"]), "run.machine": machine}
