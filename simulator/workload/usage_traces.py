"""The traces of a `usage_trace` profile (Batsim 4.2.1): per rank, lines `RANK m_usage USAGE FLOPS`.

Batsim replays them with SimGrid's replay reader (jobs_execution.cpp, usage_trace_replayer):
USAGE in [0, 1] and FLOPS >= 0, both finite (Batsim asserts so); the files are found as
trace_listing.py says. A line for another rank of the job is skipped, as SimGrid does; a rank
without any line of its own (an empty file) is an error, as for smpi traces.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass

from joulesim.inputs.input_error import InputError
from joulesim.simulator.workload.trace_listing import action_lines, rank_files

_FORM = "write 'RANK m_usage USAGE FLOPS', USAGE in [0, 1] (the share of the host's cores busy), FLOPS >= 0 per core"


@dataclass
class UsageTraces:
    listing: str
    ranks: list[array]  # per rank: usage, flops, usage, flops, ... (one pair per line)

    @property
    def nb_ranks(self) -> int:
        return len(self.ranks)


def load_usage_traces(listing: str, where: str) -> UsageTraces:
    files = rank_files(listing, where)
    ranks = []
    for rank, path in enumerate(files):
        pairs = array("d")
        token = str(rank)
        for number, fields, _ in action_lines(path, f"{where}: the trace of rank {rank} (listed in {listing})"):
            if fields[0] != token:
                if not fields[0].isdigit() or int(fields[0]) >= len(files):
                    raise InputError(path, f"line {number}", f"the rank field {fields[0]!r} is not a rank of this job "
                                     f"(0 to {len(files) - 1})", "start every line with the rank that runs it")
                continue
            if len(fields) < 4 or fields[1] != "m_usage":
                problem = f"unknown action {fields[1]!r}" if len(fields) > 1 and fields[1] != "m_usage" else "too few fields"
                raise InputError(path, f"line {number} (rank {rank})", problem, _FORM)
            usage, flops = _number(path, number, rank, fields[2], "USAGE"), _number(path, number, rank, fields[3], "FLOPS")
            if usage > 1:
                raise InputError(path, f"line {number} (rank {rank})", f"USAGE {fields[2]} is more than 1", _FORM)
            pairs.extend((usage, flops))
        if not pairs:  # (as for smpi traces: SimGrid would replay nothing for this rank)
            raise InputError(path, f"{where}: the trace of rank {rank} (listed in {listing})",
                             f"has no line for rank {rank} (the file is empty, holds only blank lines and '#' "
                             "comments, or only other ranks' lines)", _FORM.replace("write", f"write rank {rank}'s lines", 1))
        ranks.append(pairs)
    return UsageTraces(listing, ranks)


def _number(path: str, number: int, rank: int, token: str, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or "_" in token:
        raise InputError(path, f"line {number} (rank {rank})", f"{what} {token!r} is not a finite number >= 0", _FORM)
    return value
