"""Jobs in the order people read them: as submitted, with their ids as numbers when they are.

Batsim's `PREFIX_jobs.csv` lists jobs as they end and keeps every id a string (ids may be "a" or
"w0!7"); a table for a notebook reads better in submission order, with `job_id == 7` working.
"""

from __future__ import annotations

import pandas as pd

# The ids that stay the same once read as integers: no sign, no leading zero ("007" stays text).
_PLAIN_INTEGER = r"(?:0|[1-9][0-9]{0,17})"


def jobs_in_submission_order(jobs: pd.DataFrame) -> pd.DataFrame:
    """A copy of `jobs` sorted by submission time, workload and id (numerically when every id is
    a plain integer, which then makes `job_id` an int64 column), on a fresh 0..n-1 index."""
    ordered = jobs.copy()
    ids = ordered["job_id"].astype(str)
    if len(ids) and ids.str.fullmatch(_PLAIN_INTEGER).all():
        ordered["job_id"] = ids.astype("int64")
    return ordered.sort_values(["submission_time", "workload_name", "job_id"], kind="stable",
                               ignore_index=True)
