"""Standard Workload Format (SWF) traces of the Parallel Workloads Archive -> Batsim JSON workloads.

The reader streams the trace line by line (plain or .gz), parses the ';' header comments and
yields one `SwfRecord` per job line. `convert_swf` cleans the records, extracts a time window,
and builds a Batsim 4 workload dict (delay or parallel_homogeneous profiles) plus a report that
counts every dropped or changed job.

SWF fields (1-based), as named in the archive's definition:
  1 job number, 2 submit time, 3 wait time, 4 run time, 5 allocated processors,
  6 average CPU time, 7 used memory, 8 requested processors, 9 requested time,
  10 requested memory, 11 status, 12 user id, 13 group id, 14 executable number,
  15 queue number, 16 partition number, 17 preceding job, 18 think time.
"""

from __future__ import annotations

import gzip
import math
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator

import orjson

from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import check_input_file
from joulesim.inputs.json_input import MAX_INT32
from joulesim.inputs.output_file import write_bytes_whole
from joulesim.protocol.time_range import MAX_SIMULATED_TIME, TIME_RANGE_TEXT, check_time

FIELD_NAMES = (
    "job number", "submit time", "wait time", "run time", "allocated processors",
    "average CPU time", "used memory", "requested processors", "requested time",
    "requested memory", "status", "user id", "group id", "executable number",
    "queue number", "partition number", "preceding job", "think time",
)
NB_FIELDS = len(FIELD_NAMES)
WEEK = 7 * 24 * 3600

# Report keys of the cleaning rules, in the order they are applied (a job counts for the first only).
DROP_RULES = {
    "runtime_negative": "run time < 0",
    "cancelled": "cancelled (run time 0, no processors)",
    "size_not_positive": "size <= 0 (allocated and requested processors)",
    "submit_negative": "submit time < 0",
    "larger_than_machine": "larger than the machine (res > nb_res)",
    "duplicate_id": "duplicate job number",
}

# An SWF number as the archive writes them: ASCII digits, an optional '-' (-1 is "unknown") and
# decimals. int() and float() alone would also take '１２' (any Unicode digit), '1_000', '+5',
# 'nan', 'inf' and '1e3', which no trace contains.
_SWF_NUMBER = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)").fullmatch
# The fields joulesim uses (0-based) and the value each must stay below: times within the
# simulated range, processors a C int (Batsim's res), the job number (in magnitude) an integer
# that stays exact in JSON (a double). The other fields are only checked to be numbers.
_TIME_FIELDS = frozenset({1, 3, 8})  # submit time, run time, requested time
_PROCESSOR_FIELDS = frozenset({4, 7})  # allocated and requested processors
_FIELD_LIMITS = {0: 2.0 ** 53, 1: MAX_SIMULATED_TIME, 3: MAX_SIMULATED_TIME, 4: MAX_INT32 + 1,
                 7: MAX_INT32 + 1, 8: MAX_SIMULATED_TIME}
# Integers of smaller magnitude are within every limit: the fast path compares with it alone.
_COMMON_LIMIT = min(_FIELD_LIMITS.values())
# A job line is ~100 characters; a longer line (a binary file, a decompression bomb without
# newlines) is refused before it is held in memory.
MAX_LINE_CHARS = 1 << 20
_LINE_FIX = "fix the line, or pass --lenient to skip bad lines"

_LEADING_INT = re.compile(r"\s*([+-]?)([0-9]+)")
# Header integers saturate here: enough to exceed any machine size, small enough to print.
_HEADER_INT_CAP = 10 ** 30


@dataclass(slots=True)
class SwfRecord:
    """One job line: the fields joulesim uses (numbers as in the file, int when integral)."""

    line: int
    job: int
    submit: float
    runtime: float
    alloc_procs: float
    req_procs: float
    req_time: float
    status: float


@dataclass
class SkippedLines:
    """The bad lines --lenient skipped: how many, and the first few as (line number, problem).
    Only a few are kept: a binary file read with --lenient has millions."""

    count: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)
    kept: int = 5

    def add(self, lineno: int, problem: str) -> None:
        self.count += 1
        if len(self.examples) < self.kept:
            self.examples.append((lineno, problem))


@dataclass
class SwfHeader:
    """The ';' comment lines as `key: value` pairs (first occurrence kept, keys as written)."""

    fields: dict[str, str] = field(default_factory=dict)

    def integer(self, key: str) -> int | None:
        """Leading integer of a header value ("338 (batch partition; 512 total)" -> 338), or None.
        ASCII digits only; values beyond 10**30 read as 10**30."""
        value = self.fields.get(key)
        if value is None:
            return None
        m = _LEADING_INT.match(value)
        if not m:
            return None
        digits = m.group(2).lstrip("0") or "0"
        number = int(digits) if len(digits) <= 31 else _HEADER_INT_CAP
        return -min(number, _HEADER_INT_CAP) if m.group(1) == "-" else min(number, _HEADER_INT_CAP)


def open_trace(path: str):
    """A text stream of the trace: gzip.open for .gz, plain open otherwise."""
    path = str(path)
    check_input_file(path, "an SWF trace (plain text or .gz)")
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
        return open(path, "r", encoding="utf-8", errors="replace", newline="")
    except OSError as exc:
        raise InputError(path, "file", f"cannot be read: {exc.strerror or exc}",
                         "check the path and its permissions") from exc


def _clip(text: str, limit: int = 30) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


def _parse_line(parts: list[str], lineno: int) -> tuple[list[Any] | None, tuple[str, str, str] | None]:
    """The values of a job line's fields, or its first problem as (where, problem, fix): the
    slow path, for lines that are not 18 small ASCII integers."""
    if len(parts) != NB_FIELDS:
        return None, (f"line {lineno}", f"has {len(parts)} fields, an SWF job line has {NB_FIELDS}",
                      "a truncated or merged line: fix it, or pass --lenient to skip bad lines")
    values: list[Any] = []
    for index, text in enumerate(parts):
        where = f"line {lineno}: field {index + 1} ({FIELD_NAMES[index]})"
        if not _SWF_NUMBER(text):
            return None, (where, f"{_clip(text)} is not a number",
                          f"SWF fields are ASCII numbers like 12 or 3.5, -1 when unknown; {_LINE_FIX}")
        value = float(text)  # linear time even for thousands of digits, unlike int()
        limit = _FIELD_LIMITS.get(index)
        if limit is None:  # a field joulesim does not use
            values.append(int(value) if value.is_integer() and abs(value) < 2.0 ** 53 else value)
            continue
        # Negative times and sizes are dropped by the cleaning rules; the job number is an id.
        if not (value < limit and (index != 0 or value > -limit)):
            name = FIELD_NAMES[index]
            if index in _TIME_FIELDS and math.isfinite(value):
                problem = check_time(value, name)
            elif index in _TIME_FIELDS:  # thousands of digits: show them, not "inf"
                problem = f"{name} is {_clip(text)}: {TIME_RANGE_TEXT}"
            elif index in _PROCESSOR_FIELDS:
                problem = f"{name} is {_clip(text)}, beyond {MAX_INT32:,} (the largest job size)"
            else:
                problem = f"{name} is {_clip(text)}, beyond 2^53 in magnitude (no longer exact in JSON)"
            return None, (where, problem, _LINE_FIX)
        if value.is_integer() and abs(value) < 2.0 ** 53:
            value = int(value)  # exact below 2^53
        elif index == 0:
            return None, (where, f"{_clip(text)} is not an integer", f"job numbers are integers; {_LINE_FIX}")
        values.append(value)
    return values, None


def read_swf(path: str, header: SwfHeader | None = None, lenient: bool = False,
             bad_lines: SkippedLines | None = None) -> Iterator[SwfRecord]:
    """Yield the job records of an SWF trace, streamed line by line.

    Header comments fill `header` (if given). A line with a wrong field count, a field that is
    not an ASCII number, or a used field out of its range raises InputError (file, line
    number, field name) unless `lenient`; then it is skipped and counted in `bad_lines` (if
    given). A trace without any valid job line is an error.
    """
    path = str(path)
    fields_of_header = header.fields if header is not None else {}
    nb_records = 0
    skipped = bad_lines if bad_lines is not None else SkippedLines(kept=1)
    limit = _COMMON_LIMIT
    try:
        with open_trace(path) as stream:
            readline = stream.readline
            lineno = 0
            while True:
                line = readline(MAX_LINE_CHARS)
                if not line:
                    break
                lineno += 1
                if len(line) == MAX_LINE_CHARS and line[-1] not in "\r\n":
                    while line and line[-1] not in "\r\n":  # skip the rest, a chunk at a time
                        line = readline(MAX_LINE_CHARS)
                    values, problem = None, (f"line {lineno}", f"is longer than {MAX_LINE_CHARS:,} characters",
                                             "an SWF job line has 18 numbers: is this an SWF trace? "
                                             "(--lenient skips such lines)")
                else:
                    stripped = line.strip()
                    if not stripped:
                        continue
                    if stripped[0] == ";":
                        key, sep, value = stripped[1:].partition(":")
                        key = key.strip()
                        if sep and key and " " not in key and key not in fields_of_header:
                            fields_of_header[key] = value.strip()
                        continue
                    parts = stripped.split()
                    # Fast path: on ASCII without '_' or '+', int() takes exactly -?[0-9]+; small
                    # enough used values need no other check.
                    if (len(parts) == NB_FIELDS and stripped.isascii() and "_" not in stripped
                            and "+" not in stripped):
                        try:
                            values = list(map(int, parts))
                        except ValueError:
                            pass
                        else:
                            job, submit, runtime, alloc = values[0], values[1], values[3], values[4]
                            req_procs, req_time = values[7], values[8]
                            if (-limit < job < limit and submit < limit and runtime < limit and alloc < limit
                                    and req_procs < limit and req_time < limit):
                                nb_records += 1
                                yield SwfRecord(lineno, job, submit, runtime, alloc, req_procs, req_time, values[10])
                                continue
                    values, problem = _parse_line(parts, lineno)
                if problem is None:
                    nb_records += 1
                    yield SwfRecord(lineno, values[0], values[1], values[3], values[4],
                                    values[7], values[8], values[10])
                    continue
                if not lenient:
                    raise InputError(path, *problem)
                skipped.add(lineno, f"{problem[0]}: {problem[1]}")
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(path, "file", f"cannot be read: {exc}",
                         "check that the file is a complete plain or gzip-compressed SWF trace") from exc
    if nb_records == 0:
        if skipped.count:
            raise InputError(path, "file", f"none of its {skipped.count:,} job lines is valid "
                             f"(first: {skipped.examples[0][1]})",
                             "is this an SWF trace? Each job line has 18 numbers")
        raise InputError(path, "file", "has no job line (only comments and blank lines)" if lineno else "is empty",
                         "an SWF trace has one line of 18 numbers per job")


def parse_missing_walltime(text: str) -> tuple[str, float]:
    """'runtime' | 'none' | '<factor>x' -> ("runtime", 1) / ("none", 0) / ("factor", f)."""
    text = str(text).strip().lower()
    if text == "runtime":
        return ("runtime", 1.0)
    if text == "none":
        return ("none", 0.0)
    if text.endswith("x"):
        try:
            factor = float(text[:-1])
        except ValueError:
            factor = math.nan
        if math.isfinite(factor) and factor > 0:
            return ("factor", factor)
    raise ValueError(f"invalid --missing-walltime {text!r}: use runtime, none, or a factor like 2x")


def _num(value: float) -> int | float:
    """int when integral (JSON stays '600', not '600.0')."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _num_name(value: float) -> str:
    value = _num(value)
    return str(value) if isinstance(value, int) else repr(value)


def convert_swf(path: str, *, profile: str = "delay", speed: float | None = None,
                missing_walltime: str = "2x", fix_walltime: bool = False,
                procs_per_node: int = 1, nb_res: int | None = None,
                time_from: float | None = None, time_to: float | None = None,
                week: int | None = None, mmax: int | None = None,
                keep_submit_times: bool = False, lenient: bool = False,
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Convert an SWF trace to a Batsim workload dict; returns (workload, report).

    profile: "delay" (delay = run time) or "compute" (parallel_homogeneous, cpu = run time x
    `speed` flops per host, com 0). missing_walltime: "<f>x", "none" or "runtime", for jobs whose
    requested time is unknown (default 2x: with "runtime" such a job is killed when it reaches
    its walltime, as Batsim kills it). procs_per_node: job size = ceil(processors / K).
    nb_res: machine size; default from the header (see `machine_size`).
    time_from/time_to (trace seconds, [from, to)) or week (N-th 7-day window from the first
    kept submission) extract jobs; mmax keeps the first N jobs after cleaning and sorting.
    """
    path = str(path)
    if profile not in ("delay", "compute"):
        raise InputError(path, "option --profile", f"unknown profile kind {profile!r}", "use delay or compute")
    if profile == "compute" and (speed is None or not speed > 0 or not math.isfinite(speed)):
        raise InputError(path, "option --speed", "a compute profile needs a host speed > 0",
                         "pass --speed FLOPS, e.g. --speed 1Gf (the speed of the platform's hosts)")
    try:
        wall_mode, wall_factor = parse_missing_walltime(missing_walltime)
    except ValueError as exc:
        raise InputError(path, "option --missing-walltime", str(exc)) from None
    if not 1 <= procs_per_node <= MAX_INT32:
        raise InputError(path, "option --procs-per-node", f"{procs_per_node} is not in 1..{MAX_INT32:,}")
    if week is not None and (time_from is not None or time_to is not None):
        raise InputError(path, "option --week", "cannot be combined with --from/--to", "give one or the other")
    if week is not None and week < 0:
        raise InputError(path, "option --week", f"{week} is negative", "weeks are numbered from 0")
    if week is not None and week * WEEK >= MAX_SIMULATED_TIME:
        raise InputError(path, "option --week", f"week {week} starts beyond the simulated time range",
                         f"weeks are numbered from 0 to {int(MAX_SIMULATED_TIME // WEEK) - 1:,}")
    for option, value in (("--from", time_from), ("--to", time_to)):
        if value is not None and not math.isfinite(value):
            raise InputError(path, f"option {option}", f"{value} is not a finite number", "give a time in seconds")
    if time_from is not None and time_to is not None and time_to <= time_from:
        raise InputError(path, "option --to", f"{time_to} is not after --from {time_from}")
    if mmax is not None and mmax < 0:
        raise InputError(path, "option --mmax", f"{mmax} is negative")
    if nb_res is not None and not 1 <= nb_res <= MAX_INT32:
        raise InputError(path, "option --nb-res", f"{nb_res} is not in 1..{MAX_INT32:,}")

    header = SwfHeader()
    bad_lines = SkippedLines()
    given_nb_res = nb_res
    nb_res_source = ""

    drops = {key: 0 for key in DROP_RULES}
    size_from_requested = 0
    seen_ids: set[int] = set()
    # (submit, order, record, size) of the jobs that pass every cleaning rule
    kept: list[tuple[float, int, SwfRecord, int]] = []
    decreasing = 0
    previous_submit = -math.inf
    for order, rec in enumerate(read_swf(path, header, lenient, bad_lines)):
        if not nb_res_source:  # the header comes before the jobs
            nb_res, nb_res_source = machine_size(path, header, given_nb_res, procs_per_node)
        if rec.submit < previous_submit:
            decreasing += 1
        previous_submit = rec.submit
        procs = rec.alloc_procs
        if procs <= 0 and rec.req_procs > 0:
            procs = rec.req_procs
            from_requested = True
        else:
            from_requested = False
        if rec.runtime < 0:
            drops["runtime_negative"] += 1
            continue
        if procs <= 0:
            drops["cancelled" if rec.runtime == 0 else "size_not_positive"] += 1
            continue
        if rec.submit < 0:
            drops["submit_negative"] += 1
            continue
        size = math.ceil(procs / procs_per_node)
        if size > nb_res:
            drops["larger_than_machine"] += 1
            continue
        if rec.job in seen_ids:
            drops["duplicate_id"] += 1
            continue
        seen_ids.add(rec.job)
        size_from_requested += from_requested
        kept.append((rec.submit, order, rec, size))
    del seen_ids
    if not nb_res_source:  # no job line at all
        nb_res, nb_res_source = machine_size(path, header, given_nb_res, procs_per_node)

    cleaned = len(kept)
    window = None
    if week is not None and kept:
        first = min(k[0] for k in kept)
        window = (first + week * WEEK, first + (week + 1) * WEEK)
    elif time_from is not None or time_to is not None:
        window = (-math.inf if time_from is None else time_from, math.inf if time_to is None else time_to)
    if window is not None:
        lo, hi = window
        kept = [k for k in kept if lo <= k[0] < hi]
    outside_window = cleaned - len(kept)

    kept.sort()  # by (submit, order): orders are distinct, so records are never compared
    beyond_mmax = 0
    if mmax is not None and len(kept) > mmax:
        beyond_mmax = len(kept) - mmax
        del kept[mmax:]

    shift = kept[0][0] if kept and not keep_submit_times else 0
    walltime_missing = walltime_below = walltime_raised = 0
    profiles_used: dict[float, str] = {}
    jobs: list[dict[str, Any]] = []
    for submit, _, rec, size in kept:
        runtime = rec.runtime
        if rec.req_time > 0:
            walltime = rec.req_time
            if walltime < runtime:
                walltime_below += 1
                if fix_walltime:
                    walltime = runtime
                    walltime_raised += 1
        else:
            walltime_missing += 1
            if wall_mode == "none":
                walltime = -1
            elif wall_mode == "runtime":
                walltime = runtime
            else:
                walltime = runtime * wall_factor
                if walltime >= MAX_SIMULATED_TIME:
                    raise InputError(path, f"line {rec.line}: field 9 (requested time)",
                                     check_time(walltime, f"the walltime (run time x {wall_factor:g})"),
                                     "lower the --missing-walltime factor, or use runtime or none")
            if walltime != -1:
                walltime = max(walltime, 1)  # Batsim needs walltime > 0: a 0 s job gets 1 s
        subtime = submit - shift
        # Each time is in range (read_swf checks it); so must be the job's latest end.
        if subtime + walltime >= MAX_SIMULATED_TIME or subtime + runtime >= MAX_SIMULATED_TIME:
            longest = ("walltime", walltime) if walltime > runtime else ("run time", runtime)
            raise InputError(path, f"line {rec.line}: field 2 (submit time)",
                             check_time(subtime + longest[1], f"its submit time + its {longest[0]}"),
                             "extract a window (--from/--to, --week), or drop --keep-submit-times")
        name = profiles_used.get(runtime)
        if name is None:
            name = f"{profile}_{_num_name(runtime)}"
            profiles_used[runtime] = name
        # Most values are ints already (read_swf makes integral values ints): skip _num for them.
        jobs.append({"id": rec.job, "subtime": subtime if type(subtime) is int else _num(subtime), "res": size,
                     "walltime": walltime if type(walltime) is int else _num(walltime), "profile": name})

    profiles: dict[str, dict[str, Any]] = {}
    for runtime in sorted(profiles_used):
        name = profiles_used[runtime]
        if profile == "delay":
            profiles[name] = {"type": "delay", "delay": _num(runtime)}
        else:
            cpu = runtime * speed
            if not math.isfinite(cpu):  # orjson would write it as null
                raise InputError(path, "option --speed", f"run time {_num_name(runtime)} s x {speed:g} flop/s "
                                 "overflows a double", "give the hosts' real speed")
            profiles[name] = {"type": "parallel_homogeneous", "cpu": _num(cpu), "com": 0}

    workload: dict[str, Any] = {"nb_res": nb_res, "jobs": jobs, "profiles": profiles}
    # When simulated time 0 was (the header's UnixStartTime is the trace's time 0; the shift moves
    # it to the first kept job): `joulesim report --start-time WORKLOAD.json` dates its axis from it.
    # Batsim and joulesim ignore top-level fields they do not know.
    unix_start = header.integer("UnixStartTime")
    if unix_start is not None and 0 <= unix_start < 10 ** 11:
        workload["unix_start_time"] = _num(unix_start + shift)
    report: dict[str, Any] = {
        "input": path,
        "job_lines": bad_lines.count + sum(drops.values()) + cleaned,
        "bad_lines": bad_lines.count,
        "bad_line_examples": [problem for _, problem in bad_lines.examples],  # each starts "line N"
        "nb_res": nb_res,
        "nb_res_source": nb_res_source,
        "dropped": drops,
        "dropped_total": sum(drops.values()),
        "cleaned": cleaned,
        "window": None if window is None else [_num(window[0]) if math.isfinite(window[0]) else None,
                                               _num(window[1]) if math.isfinite(window[1]) else None],
        "outside_window": outside_window,
        "beyond_mmax": beyond_mmax,
        "kept": len(jobs),
        "submit_times_decreasing": decreasing,
        "submit_shift": _num(shift),
        "size_from_requested_processors": size_from_requested,
        "walltime_missing": walltime_missing,
        "missing_walltime_rule": missing_walltime,
        "walltime_below_runtime": walltime_below,
        "walltime_raised_to_runtime": walltime_raised,
        "profiles": len(profiles),
        "profile_kind": profile,
        "unix_start_time": workload.get("unix_start_time"),
    }
    return workload, report


def machine_size(path: str, header: SwfHeader, nb_res: int | None, procs_per_node: int) -> tuple[int, str]:
    """Machine size in the unit of the jobs' res, and where it came from.

    --nb-res wins. Otherwise the header: MaxNodes, else MaxProcs (divided by K when
    --procs-per-node K > 1). One exception to keep units consistent: when jobs are counted in
    processors (K = 1) and the header gives both, with MaxProcs > MaxNodes (nodes of several
    cores, e.g. CEA-Curie 5,544 nodes / 93,312 processors), MaxProcs is used.
    """
    if nb_res is not None:
        return nb_res, "--nb-res"
    size, source, key = _header_machine_size(path, header, procs_per_node)
    if size > MAX_INT32:
        raise InputError(path, f"header {key}", f"{_clip(header.fields[key])} is beyond {MAX_INT32:,} hosts",
                         "fix the header, or pass --nb-res N (the number of hosts of the platform)")
    return size, source


def _header_machine_size(path: str, header: SwfHeader, procs_per_node: int) -> tuple[int, str, str]:
    """(size, where it came from, the header key it came from)."""
    max_nodes = header.integer("MaxNodes")
    max_procs = header.integer("MaxProcs")
    max_nodes = max_nodes if max_nodes is not None and max_nodes > 0 else None
    max_procs = max_procs if max_procs is not None and max_procs > 0 else None
    if max_nodes is not None:
        if procs_per_node == 1 and max_procs is not None and max_procs > max_nodes:
            return max_procs, "header MaxProcs (jobs counted in processors; MaxNodes counts nodes)", "MaxProcs"
        return max_nodes, "header MaxNodes", "MaxNodes"
    if max_procs is not None:
        if procs_per_node > 1:
            return max(1, max_procs // procs_per_node), f"header MaxProcs / {procs_per_node}", "MaxProcs"
        return max_procs, "header MaxProcs", "MaxProcs"
    unusable = [f"{key}: {_clip(header.fields[key])}" for key in ("MaxNodes", "MaxProcs") if key in header.fields]
    problem = (f"has no usable MaxNodes nor MaxProcs line ({', '.join(unusable)}: not a positive ASCII integer)"
               if unusable else "has no MaxNodes nor MaxProcs line")
    raise InputError(path, "header", problem + ", so the machine size is unknown",
                     "pass --nb-res N (the number of hosts of the platform)")


def write_workload(workload: dict[str, Any], out_path: str) -> None:
    """Write the workload JSON (orjson), one job and one profile per line; deterministic."""
    dumps = orjson.dumps
    parts = [b'{\n  "nb_res": ', dumps(workload["nb_res"])]
    if "unix_start_time" in workload:
        parts += [b',\n  "unix_start_time": ', dumps(workload["unix_start_time"])]
    parts.append(b',\n  "jobs": [')
    jobs = workload["jobs"]
    parts.append(b",".join(b"\n    " + dumps(j) for j in jobs))
    parts.append(b"\n  ],\n  \"profiles\": {" if jobs else b"],\n  \"profiles\": {")
    profiles = workload["profiles"]
    parts.append(b",".join(b"\n    " + dumps(name) + b": " + dumps(p) for name, p in profiles.items()))
    parts.append(b"\n  }\n}\n" if profiles else b"}\n}\n")
    # A new file renamed over out_path (inputs/output_file.py): an existing folder, FIFO or device
    # there is refused with one line (exit status 2), never opened (a FIFO would block) nor replaced.
    write_bytes_whole(str(out_path), "output file", b"".join(parts), "check the directory exists and is writable")


def format_report(report: dict[str, Any]) -> str:
    """The report as readable lines."""
    lines = [f"SWF conversion of {report['input']}:",
             f"  job lines read: {report['job_lines']}"]
    if report["bad_lines"]:
        lines.append(f"  bad lines skipped (--lenient): {report['bad_lines']}")
        lines.extend(f"    {example}" for example in report["bad_line_examples"])
    lines.append(f"  nb_res: {report['nb_res']} ({report['nb_res_source']})")
    for key, label in DROP_RULES.items():
        lines.append(f"  dropped, {label}: {report['dropped'][key]}")
    lines.append(f"  after cleaning: {report['cleaned']}")
    if report["window"] is not None:
        lines.append(f"  outside the window {report['window']}: {report['outside_window']}")
    if report["beyond_mmax"]:
        lines.append(f"  beyond --mmax: {report['beyond_mmax']}")
    lines.append(f"  kept: {report['kept']} jobs, {report['profiles']} {report['profile_kind']} profiles")
    lines.append(f"  submit times decreasing in the trace (re-sorted): {report['submit_times_decreasing']}")
    lines.append(f"  submit times shifted by: -{report['submit_shift']} s")
    if report.get("unix_start_time") is not None:
        lines.append(f"  simulated time 0 is Unix time {report['unix_start_time']} (header UnixStartTime + shift; "
                     "joulesim report --start-time WORKLOAD.json dates its axis from it)")
    lines.append(f"  size from requested processors (allocated -1): {report['size_from_requested_processors']}")
    lines.append(f"  walltime missing (requested time -1), rule '{report['missing_walltime_rule']}': "
                 f"{report['walltime_missing']}")
    lines.append(f"  walltime below run time (kept: the job is killed): {report['walltime_below_runtime']}")
    lines.append(f"  walltime raised to run time (--fix-walltime): {report['walltime_raised_to_runtime']}")
    return "\n".join(lines)
