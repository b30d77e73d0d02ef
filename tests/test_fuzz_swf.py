"""Hostile, broken and random SWF traces: each converts with exactly the values it gives, or
ends with an InputError naming the file and the line and field (or, with --lenient, a counted
skipped line); never a traceback, a hang or a silent acceptance.

The property-based tests run JOULESIM_FUZZ_EXAMPLES examples each (default 120, derandomized by
the 'ci' profile of conftest.py); ``JOULESIM_FUZZ_EXAMPLES=5000 HYPOTHESIS_PROFILE=dev pytest
tests/test_fuzz_swf.py`` explores further.
"""

from __future__ import annotations

import gzip
import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from joulesim.inputs.input_error import InputError
from joulesim.protocol.time_range import MAX_SIMULATED_TIME
from joulesim.workload_tools.ptask_from_swf import EligibleJob, PtaskParams, eligible_jobs, ptask_workload
from joulesim.workload_tools.swf import MAX_LINE_CHARS, SkippedLines, convert_swf, read_swf

from conftest import fuzz_settings

HEADER = "; Version: 2.2\n; MaxNodes: 64\n; MaxProcs: 64\n"  # job lines start at line 4
FIRST_JOB_LINE = 4
BEYOND = "below 2^33 s"  # in every out-of-range time message (protocol/time_range.py)
# The SWF number grammar: ASCII digits, an optional '-', optional decimals.
SWF_NUMBER = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")


def line(job=1, submit=0, runtime=10, alloc=1, req_time=20, **fields) -> str:
    values = [job, submit, 0, runtime, alloc, -1, -1, alloc, req_time, -1, 1, 1, 1, -1, 1, -1, -1, -1]
    for index, value in fields.items():  # f3="..." sets field 3 (1-based)
        values[int(index[1:]) - 1] = value
    return " ".join(str(v) for v in values)


def write(directory: Path, content: str | bytes, name: str = "trace.swf") -> str:
    path = directory / name
    data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") and isinstance(content, str) else data)
    return str(path)


def refused(path: str, *parts: str, **options) -> str:
    """Convert `path`; assert an InputError naming the file and every part; return its message."""
    with pytest.raises(InputError) as info:
        convert_swf(path, **options)
    message = str(info.value)
    assert message.startswith(path + ": "), message
    for part in parts:
        assert part in message, (part, message)
    return message


def trace_with(tmp_path: Path, bad_line: str, name: str = "trace.swf") -> str:
    """A trace of three good jobs then `bad_line` (line 7)."""
    good = "\n".join(line(job=i, submit=i) for i in (1, 2, 3))
    return write(tmp_path, HEADER + good + "\n" + bad_line + "\n", name)


# --- 1. integers of 2^64 and beyond, and other out-of-range values ---------------------------


@pytest.mark.parametrize("fields, where, problem", [
    ({"job": 2 ** 64}, "field 1 (job number)", "beyond 2^53"),
    ({"job": -2 ** 64}, "field 1 (job number)", "beyond 2^53"),
    ({"job": "1.5"}, "field 1 (job number)", "not an integer"),
    ({"submit": 2 ** 64}, "field 2 (submit time)", BEYOND),
    ({"runtime": 10 ** 20}, "field 4 (run time)", BEYOND),
    ({"runtime": 2 ** 33}, "field 4 (run time)", BEYOND),
    ({"runtime": "9" * 5000}, "field 4 (run time)", "(5,000 characters)"),
    ({"req_time": 2 ** 64}, "field 9 (requested time)", BEYOND),
    ({"alloc": 2 ** 64}, "field 5 (allocated processors)", "beyond 2,147,483,647"),
    ({"f8": 2 ** 31}, "field 8 (requested processors)", "beyond 2,147,483,647"),
])
def test_out_of_range_values_name_the_line_and_field(tmp_path, fields, where, problem):
    path = trace_with(tmp_path, line(**{"job": 9, **fields}))
    refused(path, f"line 7: {where}", problem, "--lenient")
    workload, report = convert_swf(path, lenient=True)
    assert report["bad_lines"] == 1 and report["bad_line_examples"][0].startswith(f"line 7: {where}")
    assert [j["id"] for j in workload["jobs"]] == [1, 2, 3]


def test_large_values_in_unused_fields_are_harmless(tmp_path):
    # used memory, user id, ... are not converted: any SWF number is accepted there.
    path = trace_with(tmp_path, line(job=9, f7=2 ** 64, f12=10 ** 30, f18="9" * 5000))
    assert convert_swf(path)[1]["kept"] == 4


def test_largest_values_convert(tmp_path):
    below = int(MAX_SIMULATED_TIME) - 1
    path = write(tmp_path, "; MaxNodes: 2147483647\n" + line(job=2 ** 53 - 1, submit=0, runtime=below,
                                                              alloc=2 ** 31 - 1, req_time=below) + "\n")
    (job,) = convert_swf(path)[0]["jobs"]
    assert job == {"id": 2 ** 53 - 1, "subtime": 0, "res": 2 ** 31 - 1, "walltime": below,
                   "profile": f"delay_{below}"}


# --- 3. numbers exactly as SWF writes them -------------------------------------------------


@pytest.mark.parametrize("token", ["１２", "٣", "1_000", "+5", "nan", "NaN", "inf", "Infinity", "-inf", "1e3",
                                   "1E3", "0x10", "-", ".", "--1", "1.2.3", "1,5", "12s", "½", "²", "١٢"])
def test_anything_but_ascii_decimals_is_not_a_number(tmp_path, token):
    path = trace_with(tmp_path, line(job=9, submit=token))
    refused(path, "line 7: field 2 (submit time)", f"{token!r} is not a number", "ASCII numbers")


@pytest.mark.parametrize("token, value", [("12", 12), ("-0", 0), ("12.0", 12), ("12.", 12), ("2.5", 2.5),
                                          (".5", 0.5), ("007", 7)])
def test_ascii_decimals_are_numbers(tmp_path, token, value):
    path = trace_with(tmp_path, line(job=9, runtime=token))
    (record,) = [r for r in read_swf(path) if r.job == 9]
    assert record.runtime == value and type(record.runtime) is type(value)


@pytest.mark.parametrize("value, parts", [
    (str(10 ** 30), ["header MaxNodes", "beyond 2,147,483,647 hosts", "--nb-res"]),
    ("9" * 5000, ["header MaxNodes", "(5,000 characters)"]),
    ("１２", ["header", "MaxNodes: '１２'", "not a positive ASCII integer", "--nb-res"]),
])
def test_header_machine_sizes(tmp_path, value, parts):
    refused(write(tmp_path, f"; MaxNodes: {value}\n" + line() + "\n"), *parts)


# --- 4. files that are not SWF traces ------------------------------------------------------


@pytest.mark.parametrize("content, parts", [
    ("", ["file: is empty"]),
    ("\n\n  \n", ["file: has no job line"]),
    (HEADER, ["file: has no job line (only comments"]),
])
@pytest.mark.parametrize("name", ["trace.swf", "trace.swf.gz"])
def test_traces_without_jobs(tmp_path, content, parts, name):
    refused(write(tmp_path, content, name), *parts, nb_res=8)


def test_binary_junk(tmp_path):
    junk = random.Random(1).randbytes(20_000)
    path = write(tmp_path, junk)
    refused(path, "line", "fix", nb_res=8)
    refused(path, "none of its", "job lines is valid", "SWF trace", nb_res=8, lenient=True)


def test_lenient_counts_every_bad_line_but_keeps_a_few(tmp_path):
    path = write(tmp_path, HEADER + line() + "\n" + "not a job line\n" * 50_000)
    workload, report = convert_swf(path, lenient=True)
    assert report["bad_lines"] == 50_000 and report["job_lines"] == 50_001 and len(workload["jobs"]) == 1
    assert report["bad_line_examples"] == [f"line {n}: has 4 fields, an SWF job line has 18" for n in range(5, 10)]


@pytest.mark.parametrize("damage", ["truncated", "corrupt", "not gzip"])
def test_broken_gzip(tmp_path, damage):
    data = gzip.compress((HEADER + "\n".join(line(job=i, submit=i) for i in range(2000)) + "\n").encode())
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "corrupt":
        data = data[:40] + bytes(40) + data[80:]
    else:
        data = b"plain text, named .gz\n"
    refused(write(tmp_path, data, "trace.swf.gz"), "file: cannot be read", "complete plain or gzip-compressed")


def test_a_line_too_long_is_refused_without_holding_it(tmp_path):
    path = trace_with(tmp_path, "1 " * (MAX_LINE_CHARS // 2 + 10))
    refused(path, "line 7", f"longer than {MAX_LINE_CHARS:,} characters")
    workload, report = convert_swf(path, lenient=True)
    assert report["bad_lines"] == 1 and len(workload["jobs"]) == 3


def test_a_directory_or_a_device_is_refused(tmp_path):
    refused(str(tmp_path), "file: is a directory")
    if os.path.exists("/dev/zero"):  # would be read forever
        refused("/dev/zero", "is a device")


# --- 2. times the conversion computes, and options -----------------------------------------


def test_a_walltime_factor_pushing_beyond_the_range(tmp_path):
    path = write(tmp_path, HEADER + line(runtime=2 ** 32, req_time=-1) + "\n")
    refused(path, "line 4: field 9 (requested time)", "the walltime (run time x 4)", BEYOND, "--missing-walltime",
            missing_walltime="4x")


def test_kept_submit_times_plus_run_times_beyond_the_range(tmp_path):
    path = write(tmp_path, HEADER + line(submit=8 * 10 ** 9, runtime=10 ** 9, req_time=10 ** 9) + "\n")
    refused(path, "line 4: field 2 (submit time)", BEYOND, "--keep-submit-times", keep_submit_times=True)
    assert convert_swf(path)[0]["jobs"][0]["subtime"] == 0  # shifted: fine


@pytest.mark.parametrize("options, where", [
    ({"week": 10 ** 400}, "option --week"),
    ({"week": 14203}, "option --week"),
    ({"time_from": math.nan}, "option --from"),
    ({"time_to": math.inf}, "option --to"),
    ({"nb_res": 2 ** 31}, "option --nb-res"),
    ({"procs_per_node": 10 ** 400}, "option --procs-per-node"),
    ({"profile": "compute", "speed": 1e306}, "option --speed"),
])
def test_out_of_range_options(tmp_path, options, where):
    refused(write(tmp_path, HEADER + line(runtime=1000) + "\n"), where, **options)


def test_ptask_selection_reads_traces_as_strictly(tmp_path):
    path = trace_with(tmp_path, line(job=9, runtime="1_000"))
    with pytest.raises(InputError, match="line 7: field 4 \\(run time\\)"):
        eligible_jobs(path, p_lower=0)
    assert len(eligible_jobs(path, p_lower=0, lenient=True)) == 3
    with pytest.raises(ValueError, match="job 5: its walltime"):
        ptask_workload([EligibleJob(5, 3600.0, 2, -1.0)], PtaskParams(f_wall=1e7))


# --- through the command line ----------------------------------------------------------------


def test_cli_reports_a_hostile_trace_without_traceback(tmp_path):
    path = trace_with(tmp_path, line(job=2 ** 64))
    command = [sys.executable, "-m", "joulesim.cli.main", "workload", "from-swf", path, "-o", str(tmp_path / "w.json")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"joulesim: error: {path}: line 7: field 1 (job number)")
    result = subprocess.run(command + ["--lenient"], capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert "bad lines skipped (--lenient): 1" in result.stdout


def test_real_traces_with_decimals_read_strictly(shared_data):
    # The strict grammar accepts every line of real traces (these have decimal CPU times).
    for name in ("CTC-SP2-1996-3.1-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz"):
        bad = SkippedLines()
        records = sum(1 for _ in read_swf(str(shared_data / "swf" / name), lenient=True, bad_lines=bad))
        assert records > 50_000 and bad.count == 0


# --- properties -----------------------------------------------------------------------------

# (text, value) pairs of valid SWF numbers
def integers(low: int, high: int):
    return st.integers(low, high).map(lambda v: (str(v), v))


decimals = st.tuples(st.integers(0, 2 ** 32 - 1), st.integers(0, 999)).map(
    lambda p: (f"{p[0]}.{p[1]:03d}", float(f"{p[0]}.{p[1]:03d}")))
times = st.one_of(integers(0, 2 ** 32 - 1), decimals)  # submit + run time stays in range
# run times: submit + 2 x run time (the default walltime of a job without a request) stays in range
runtimes = st.one_of(integers(0, 2 ** 31 - 2), decimals.filter(lambda d: d[1] < 2 ** 31 - 2))


@st.composite
def valid_traces(draw) -> tuple[str, list[list[tuple[str, object]]]]:
    """An SWF trace whose jobs all pass the cleaning rules; its fields as (text, value)."""
    ids = draw(st.lists(st.integers(-2 ** 53 + 1, 2 ** 53 - 1), min_size=1, max_size=6, unique=True))
    rows = []
    for job_id in ids:
        rows.append([
            (str(job_id), job_id), draw(times), draw(integers(-1, 10 ** 9)), draw(runtimes),
            draw(integers(1, 64)), draw(st.one_of(integers(-1, 10 ** 9), decimals)), draw(integers(-1, 2 ** 60)),
            draw(integers(-1, 64)), draw(st.one_of(integers(-1, -1), times.filter(lambda t: t[1] > 0))),
            *[draw(integers(-1, 2 ** 60)) for _ in range(9)]])
    text = HEADER + "\n".join(" ".join(text for text, _ in row) for row in rows) + "\n"
    return text, rows


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz_swf")


@fuzz_settings
@given(trace=valid_traces(), gz=st.booleans())
def test_valid_traces_convert_exactly(scratch, trace, gz):
    text, rows = trace
    path = write(scratch, text, "trace.swf.gz" if gz else "trace.swf")
    records = list(read_swf(path))
    assert [(r.job, r.submit, r.runtime, r.alloc_procs, r.req_procs, r.req_time) for r in records] == \
        [(row[0][1], row[1][1], row[3][1], row[4][1], row[7][1], row[8][1]) for row in rows]
    workload, report = convert_swf(path)
    assert report["kept"] == len(rows) and report["bad_lines"] == 0
    first = min(row[1][1] for row in rows)
    by_id = {job["id"]: job for job in workload["jobs"]}
    for row in rows:
        job = by_id[row[0][1]]
        submit, runtime, alloc, req_time = row[1][1], row[3][1], row[4][1], row[8][1]
        assert job["subtime"] == submit - first and job["res"] == alloc
        assert job["walltime"] == (req_time if req_time > 0 else max(2 * runtime, 1))  # (--missing-walltime 2x)
        assert workload["profiles"][job["profile"]] == {"type": "delay", "delay": runtime}


hostile_tokens = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["１２", "٣", "1_000", "+5", "nan", "inf", "Infinity", "1e3", "0x10", "-", ".", "1.", ".5",
                     "-.5", "--1", "2" * 30, "18446744073709551616", "9" * 5000, "-0", "1.5", "-1", ";", ""]),
    st.integers(-2 ** 70, 2 ** 70).map(str),
    st.floats().map(repr))


in_line_tokens = hostile_tokens.filter(lambda t: "\n" not in t and "\r" not in t)  # keep one line


@fuzz_settings
@given(trace=valid_traces(), data=st.data())
def test_a_mutated_line_is_refused_or_skipped_with_lenient(scratch, trace, data):
    text, rows = trace
    lines = text.splitlines()
    index = data.draw(st.integers(HEADER.count("\n"), len(lines) - 1))
    fields = lines[index].split(" ")
    fields[data.draw(st.integers(0, len(fields) - 1))] = data.draw(in_line_tokens)
    if data.draw(st.booleans()):  # also insert or delete a field
        if data.draw(st.booleans()):
            fields.insert(data.draw(st.integers(0, len(fields))), data.draw(in_line_tokens))
        elif len(fields) > 1:
            del fields[data.draw(st.integers(0, len(fields) - 1))]
    lines[index] = " ".join(fields)
    path = write(scratch, "\n".join(lines) + "\n")
    number = index + 1
    try:
        strict = convert_swf(path)
    except InputError as exc:
        strict = None
        assert str(exc).startswith(f"{path}: line {number}") or f"{path}: file: " in str(exc), str(exc)
    try:
        workload, report = convert_swf(path, lenient=True)
    except InputError as exc:  # only when no job line is left
        assert strict is None and f"{path}: file: " in str(exc)
        return
    if strict is None:
        assert report["bad_lines"] == 1 and report["bad_line_examples"][0].startswith(f"line {number}")
    else:
        assert report["bad_lines"] == 0 and (workload, report) == strict
    for job in workload["jobs"]:
        assert type(job["id"]) is int and abs(job["id"]) < 2 ** 53
        assert 0 <= job["subtime"] < MAX_SIMULATED_TIME and 1 <= job["res"] <= 64
        assert job["walltime"] == -1 or 0 < job["walltime"] < MAX_SIMULATED_TIME


single_tokens = hostile_tokens.filter(lambda t: t.split() == [t] and not t.startswith(";"))


@fuzz_settings
@given(token=single_tokens, field=st.sampled_from([3, 4, 6, 12]))
def test_a_field_is_accepted_exactly_when_it_is_an_swf_number(scratch, token, field):
    # field 3 wait time and 6, 12 are unused (any SWF number); 4, the run time, must be in range
    path = write(scratch, HEADER + line(**{f"f{field}": token}) + "\n")
    expected = bool(SWF_NUMBER.fullmatch(token)) and (field != 4 or float(token) < MAX_SIMULATED_TIME)
    try:
        convert_swf(path)
    except InputError as exc:
        assert not expected, str(exc)
        assert f"line 4: field {field} (" in str(exc)
    else:
        assert expected


@fuzz_settings
@given(content=st.one_of(st.binary(max_size=300), st.text(max_size=300)), gz=st.booleans(), lenient=st.booleans())
def test_garbage_converts_or_is_refused(scratch, content, gz, lenient):
    path = write(scratch, content, "trace.swf.gz" if gz else "trace.swf")
    try:
        workload, _ = convert_swf(path, nb_res=8, lenient=lenient)
    except InputError as exc:
        assert str(exc).startswith(path + ": ")
        return
    for job in workload["jobs"]:
        assert 0 <= job["subtime"] < MAX_SIMULATED_TIME and 1 <= job["res"] <= 8
