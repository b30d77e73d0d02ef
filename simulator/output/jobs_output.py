"""`out_jobs.csv`: one row per job, written when the job finishes or is rejected."""

from __future__ import annotations

import csv
import re
from typing import TextIO

from joulesim.simulator.output.output_format import fmt

JOBS_COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
]

# The columns above, for a row whose text fields need no CSV quoting (metadata empty).
_PLAIN_ROW = "%s,%s,%s,%.6f,%d,%.6f,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%.6f,\n"


class JobsOutput:
    def __init__(self, out: TextIO):
        self._out = out
        self._writer = csv.writer(out, lineterminator="\n")
        self._writer.writerow(JOBS_COLUMNS)

    def write_finished(self, local_id: str, workload: str, profile: str, subtime: float, res: int,
                       walltime: float, state: str, start: float, finish: float, alloc: str,
                       energy: float, metadata: str) -> None:
        execution = finish - start
        turnaround = finish - subtime
        stretch = turnaround / execution if execution > 0 else 1.0
        if metadata or _needs_quoting(local_id) or _needs_quoting(profile):  # rare: csv quotes
            self._writer.writerow((
                local_id, workload, profile, fmt(subtime), res, fmt(walltime),
                1 if state == "COMPLETED_SUCCESSFULLY" else 0, state, fmt(start), fmt(execution),
                fmt(finish), fmt(start - subtime), fmt(turnaround), fmt(stretch), alloc, fmt(energy),
                metadata,
            ))
            return
        # The common row needs no quoting: one %-format is several times faster than csv.
        self._out.write(_PLAIN_ROW % (
            local_id, workload, profile, subtime, res, walltime,
            1 if state == "COMPLETED_SUCCESSFULLY" else 0, state, start, execution,
            finish, start - subtime, turnaround, stretch, alloc, energy))

    def write_rejected(self, local_id: str, workload: str, profile: str, subtime: float, res: int,
                       walltime: float, metadata: str, state: str = "REJECTED") -> None:
        self._writer.writerow((
            local_id, workload, profile, fmt(subtime), res, fmt(walltime), 0, state,
            "", "", "", "", "", "", "", "", metadata,
        ))


_needs_quoting = re.compile('[,"\n\r]').search  # a match (truthy) when the text needs CSV quoting
