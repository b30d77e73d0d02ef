"""`out_jobs.csv`: one row per job, written when the job finishes or is rejected, in Batsim
4.2.1's format.

Numbers are printed as std::to_string prints them (six decimals); times derive from Batsim's
run time (job_runtime.py). `consumed_energy` is -1 when the run has no energy accounting
(Batsim's value for a job whose energy was never measured) and empty for a rejected job.
`metadata` is written between double quotes, always; no other field is quoted.

One deliberate difference: Batsim writes the texts as they are, so a double quote in metadata,
or a comma, double quote or line break in a job id, workload or profile name (IRMaSim's
profile names have commas) breaks its row for CSV readers. joulesim quotes such a field and
doubles its double quotes (RFC 4180), so its files stay readable; any other row is Batsim's.
"""

from __future__ import annotations

import re
from typing import Any, Final

from joulesim.simulator.output.job_runtime import batsim_runtime_and_finish

JOBS_COLUMNS = [
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
]

# A finished job's row: one %-format (this runs once per job).
_FINISHED_ROW: Final = '%s,%s,%s,%f,%d,%f,%d,%s,%f,%f,%f,%f,%f,%f,%s,%s,"%s"\n'
# A rejected job's row: no times, allocation or energy.
_REJECTED_ROW: Final = '%s,%s,%s,%f,%d,%f,0,%s,,,,,,,,,"%s"\n'

NO_ENERGY = -1.0  # Batsim's consumed_energy of a job when energy is not simulated
_NO_ENERGY_TEXT: Final = "%f" % NO_ENERGY


class JobsOutput:
    def __init__(self, out: Any = None, energy: bool = False):
        """`out`: the file (its header is written now); `energy`: whether the run accounts energy
        (-E), without which every job gets -1. (Made without arguments, it writes nothing: a
        checkpoint remakes it so, then sets its attributes; the build compiles this class, which
        runs its __init__ then.)"""
        self._out = out
        self._energy = energy
        if out is not None:
            out.write(",".join(JOBS_COLUMNS) + "\n")

    def write_finished(self, local_id: str, workload: str, profile: str, subtime: float, res: int,
                       walltime: float, state: str, start: float, finish: float, alloc: str,
                       energy: float | str, metadata: str) -> None:
        """`energy`: joules, or Batsim's %Lf text of them (a long double, printed by the caller)."""
        runtime = finish - start  # batsim_runtime_and_finish, inlined (this runs once per job)
        if runtime == 0:
            runtime, finish = batsim_runtime_and_finish(start, finish)
        turnaround = finish - subtime
        if _needs_quoting(local_id + workload + profile) or '"' in metadata:  # rare
            local_id, workload, profile, metadata = _quoted(local_id, workload, profile, metadata)
        self._out.write(_FINISHED_ROW % (
            local_id, workload, profile, subtime, res, walltime,
            1 if state == "COMPLETED_SUCCESSFULLY" else 0, state, start, runtime,
            finish, start - subtime, turnaround, turnaround / runtime, alloc,
            (energy if type(energy) is str else "%f" % energy) if self._energy else _NO_ENERGY_TEXT, metadata))  # type: ignore[str-format]

    def write_rejected(self, local_id: str, workload: str, profile: str, subtime: float, res: int,
                       walltime: float, metadata: str, state: str = "REJECTED") -> None:
        if _needs_quoting(local_id + workload + profile) or '"' in metadata:
            local_id, workload, profile, metadata = _quoted(local_id, workload, profile, metadata)
        self._out.write(_REJECTED_ROW % (local_id, workload, profile, subtime, res, walltime, state, metadata))


_needs_quoting: Final = re.compile('[,"\n\r]').search  # a match (truthy) when a text field needs CSV quoting


def _quoted(local_id: str, workload: str, profile: str, metadata: str) -> tuple[str, str, str, str]:
    """The texts of a row that Batsim would break, made CSV: the first three quoted when they
    need it, double quotes doubled (metadata's own quotes are in the row's format)."""
    def field(text: str) -> str:
        return '"' + text.replace('"', '""') + '"' if _needs_quoting(text) else text
    return field(local_id), field(workload), field(profile), metadata.replace('"', '""')
