"""Where `joulesim run` and `joulesim slurm` write when no `-e` is given: runs/001, runs/002, ...

Batsim's default prefix, `out`, makes each run replace the last one's files, which loses results
and mixes them up in a study (issue 47). Without `-e`, each run gets the next number instead:
its files are runs/NNN_jobs.csv, runs/NNN_schedule.csv... and `joulesim analyze runs/NNN` reads
them. `-e PREFIX` keeps Batsim's rule (the run replaces the files under PREFIX).
"""

from __future__ import annotations

import os
import re

RUNS_FOLDER = "runs"
# (three digits sort by name up to 999 runs; more digits are read and written as they come)
_NUMBERED = re.compile(r"(\d+)_")


def next_run_prefix(folder: str = RUNS_FOLDER) -> str:
    """The prefix after the highest-numbered run's in `folder` (created if missing): "runs/001"
    in a new folder. Two runs started at the same instant in one folder may pick one number:
    give each its own `-e` there (as campaigns do)."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):  # (a file named runs: the output check refuses it)
        names = []
    numbers = [int(m.group(1)) for name in names if (m := _NUMBERED.match(name))]
    return os.path.join(folder, f"{max(numbers, default=0) + 1:03d}")
