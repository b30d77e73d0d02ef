"""`joulesim workload from-swf`: SWF (Parallel Workloads Archive) -> Batsim JSON workload."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from joulesim.cli.workload_from_swf import from_swf
from joulesim.inputs.input_error import InputError
from joulesim.simulator.workload.workload_loader import load_workload
from joulesim.workload_tools.swf import SwfHeader, convert_swf, read_swf, write_workload

HEADER = "; Version: 2.2\n; Computer: test\n; MaxNodes: 8 (batch partition; 16 total)\n; MaxProcs: 8\n;\n"


def line(job, submit, runtime, alloc, req_procs=-1, req_time=-1, status=1, wait=0):
    fields = [job, submit, wait, runtime, alloc, -1, -1, req_procs, req_time, -1, status, 1, 1, -1, 1, -1, -1, -1]
    return " ".join(str(f) for f in fields)


def write(tmp_path: Path, text: str, name: str = "trace.swf") -> str:
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return str(path)


def simple(jobs):
    return [(j["id"], j["subtime"], j["res"], j["walltime"], j["profile"]) for j in jobs]


def test_basic_conversion_exact_output(tmp_path):
    trace = write(tmp_path, HEADER + "\n".join([
        line(15, 100, 60, 2, 2, 120),
        line(16, 130, 30, 1, 1, 60),
        line(17, 150, 60, 4, 4, 600),
    ]) + "\n")
    workload, report = convert_swf(trace)
    assert workload["nb_res"] == 8  # leading integer of "8 (batch partition; 16 total)"
    assert simple(workload["jobs"]) == [
        (15, 0, 2, 120, "delay_60"), (16, 30, 1, 60, "delay_30"), (17, 50, 4, 600, "delay_60")]
    assert workload["profiles"] == {"delay_30": {"type": "delay", "delay": 30},
                                    "delay_60": {"type": "delay", "delay": 60}}
    assert report["kept"] == 3 and report["dropped_total"] == 0 and report["submit_shift"] == 100


def test_no_header_no_final_newline_decreasing_submits(tmp_path):
    trace = write(tmp_path, "\n".join([
        line(1, 500, 10, 1, -1, 20),
        line(2, 400, 10, -1, 3, 20),    # allocated -1: requested processors
        line(3, 450, 10, 2, 2, 20),
    ]))  # no final newline
    with pytest.raises(InputError, match="MaxNodes nor MaxProcs"):
        convert_swf(trace)
    workload, report = convert_swf(trace, nb_res=4)
    assert simple(workload["jobs"]) == [(2, 0, 3, 20, "delay_10"), (3, 50, 2, 20, "delay_10"),
                                        (1, 100, 1, 20, "delay_10")]
    assert report["submit_times_decreasing"] == 1
    assert report["size_from_requested_processors"] == 1
    assert report["nb_res_source"] == "--nb-res"
    kept, _ = convert_swf(trace, nb_res=4, keep_submit_times=True)
    assert [j["subtime"] for j in kept["jobs"]] == [400, 450, 500]


def test_every_cleaning_rule_counted(tmp_path):
    trace = write(tmp_path, HEADER + "\n".join([
        line(1, 0, 10, 1, 1, 20),
        line(2, 5, -1, 2, 2, 20),       # run time < 0
        line(3, 6, 0, -1, -1, 20, 5),   # cancelled: run time 0, no processors
        line(4, 7, 10, 0, -1, 20),      # size <= 0
        line(5, -3, 10, 1, 1, 20),      # submit < 0
        line(6, 8, 10, 9, 9, 20),       # larger than the 8-node machine
        line(1, 9, 10, 1, 1, 20),       # duplicate id
        line(7, 10, 10, 8, 8, 20),      # exactly the machine: kept
    ]) + "\n")
    workload, report = convert_swf(trace)
    assert [j["id"] for j in workload["jobs"]] == [1, 7]
    assert report["dropped"] == {"runtime_negative": 1, "cancelled": 1, "size_not_positive": 1,
                                 "submit_negative": 1, "larger_than_machine": 1, "duplicate_id": 1}
    assert report["dropped_total"] == 6 and report["kept"] == 2 and report["job_lines"] == 8


def test_procs_per_node(tmp_path):
    trace = write(tmp_path, "; MaxNodes: 4\n; MaxProcs: 64\n" + "\n".join([
        line(1, 0, 10, 16), line(2, 1, 10, 17), line(3, 2, 10, 64), line(4, 3, 10, 65)]))
    workload, report = convert_swf(trace, procs_per_node=16)
    assert [(j["id"], j["res"]) for j in workload["jobs"]] == [(1, 1), (2, 2), (3, 4)]
    assert report["nb_res"] == 4 and report["dropped"]["larger_than_machine"] == 1
    # counted in processors: MaxProcs is the machine size (units stay consistent)
    workload, report = convert_swf(trace)
    assert workload["nb_res"] == 64 and report["kept"] == 3


def test_walltime_rules(tmp_path):
    trace = write(tmp_path, HEADER + "\n".join([
        line(1, 0, 100, 1, 1, -1),     # no requested time
        line(2, 1, 100, 1, 1, 50),     # requested time < run time
        line(3, 2, 0, 1, 1, -1),       # 0 s job, no requested time
        line(4, 3, 100, 1, 1, 200),
    ]))
    by_rule = {}
    for rule in ("runtime", "none", "2x", "1.5x"):
        workload, report = convert_swf(trace, missing_walltime=rule)
        by_rule[rule] = [j["walltime"] for j in workload["jobs"]]
        assert report["walltime_missing"] == 2 and report["walltime_below_runtime"] == 1
        assert report["walltime_raised_to_runtime"] == 0
    assert by_rule == {"runtime": [100, 50, 1, 200], "none": [-1, 50, -1, 200],
                       "2x": [200, 50, 1, 200], "1.5x": [150, 50, 1, 200]}
    workload, report = convert_swf(trace, fix_walltime=True)  # (and 2x, the default, where there is no request)
    assert [j["walltime"] for j in workload["jobs"]] == [200, 100, 1, 200]
    assert report["walltime_below_runtime"] == 1 and report["walltime_raised_to_runtime"] == 1
    with pytest.raises(InputError, match="missing-walltime"):
        convert_swf(trace, missing_walltime="twice")


def test_compute_profile(tmp_path):
    trace = write(tmp_path, HEADER + "\n".join([line(1, 0, 60, 2, 2, 100), line(2, 1, 60, 1, 1, 100),
                                                line(3, 2, 30, 1, 1, 100)]))
    workload, _ = convert_swf(trace, profile="compute", speed=1e9)
    assert [j["profile"] for j in workload["jobs"]] == ["compute_60", "compute_60", "compute_30"]
    assert workload["profiles"] == {
        "compute_30": {"type": "parallel_homogeneous", "cpu": 30_000_000_000, "com": 0},
        "compute_60": {"type": "parallel_homogeneous", "cpu": 60_000_000_000, "com": 0}}
    with pytest.raises(InputError, match="speed"):
        convert_swf(trace, profile="compute")


def test_time_windows_and_mmax(tmp_path):
    week = 7 * 24 * 3600
    trace = write(tmp_path, HEADER + "\n".join([
        line(1, 1000, 10, 1), line(2, 2000, 10, 1), line(3, 1000 + week, 10, 1),
        line(4, 1000 + week + 5, 10, 1), line(5, 1000 + 2 * week, 10, 1)]))
    w, r = convert_swf(trace, week=1)
    assert simple(w["jobs"]) == [(3, 0, 1, 20, "delay_10"), (4, 5, 1, 20, "delay_10")]  # (walltime: 2x by default)
    assert r["outside_window"] == 3 and r["window"] == [1000 + week, 1000 + 2 * week]
    w, r = convert_swf(trace, week=0, keep_submit_times=True)
    assert [j["subtime"] for j in w["jobs"]] == [1000, 2000]
    w, r = convert_swf(trace, time_from=2000, time_to=1000 + week + 5)
    assert [j["id"] for j in w["jobs"]] == [2, 3] and r["outside_window"] == 3
    w, r = convert_swf(trace, time_from=1000 + week)
    assert [j["id"] for j in w["jobs"]] == [3, 4, 5]
    w, r = convert_swf(trace, mmax=2)
    assert [j["id"] for j in w["jobs"]] == [1, 2] and r["beyond_mmax"] == 3
    w, r = convert_swf(trace, week=9)
    assert w["jobs"] == [] and w["profiles"] == {}
    with pytest.raises(InputError, match="--week"):
        convert_swf(trace, week=0, time_from=0)


def test_gz_input_same_as_plain(tmp_path):
    text = HEADER + "\n".join(line(i, 10 * i, 5 + i, 1, 1, 100) for i in range(1, 6)) + "\n"
    plain = convert_swf(write(tmp_path, text))[0]
    gz = convert_swf(write(tmp_path, text, "trace.swf.gz"))[0]
    assert plain == gz and len(gz["jobs"]) == 5


def test_truncated_line_and_bad_number(tmp_path):
    good = line(1, 0, 10, 1, 1, 20)
    truncated = write(tmp_path, HEADER + good + "\n" + "2 5 0 10 1 -1 -1 1", "t1.swf")  # cut, no newline
    with pytest.raises(InputError) as info:
        convert_swf(truncated)
    assert "t1.swf" in str(info.value) and "line 7" in str(info.value) and "8 fields" in str(info.value)

    bad = write(tmp_path, HEADER + good + "\n" + line(2, 5, 10, 1, 1, "1O0") + "\n", "t2.swf")
    with pytest.raises(InputError) as info:
        convert_swf(bad)
    message = str(info.value)
    assert "t2.swf" in message and "line 7" in message and "field 9 (requested time)" in message
    assert "'1O0'" in message

    bad_runtime = write(tmp_path, HEADER + line(1, 0, "abc", 1) + "\n", "t3.swf")
    with pytest.raises(InputError, match=r"line 6: field 4 \(run time\)"):
        convert_swf(bad_runtime)

    for path in (truncated, bad):
        workload, report = convert_swf(path, lenient=True)
        assert [j["id"] for j in workload["jobs"]] == [1]
        assert report["bad_lines"] == 1 and report["bad_line_examples"][0].startswith("line 7")


def test_float_fields_accepted(tmp_path):
    # average CPU time and other fields can be decimals in PWA logs
    trace = write(tmp_path, HEADER + "1 0 0 10 1 3.75 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n"
                                     "2 1.5 0 2.5 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n")
    workload, _ = convert_swf(trace)
    assert simple(workload["jobs"]) == [(1, 0, 1, 20, "delay_10"), (2, 1.5, 1, 20, "delay_2.5")]
    assert workload["profiles"]["delay_2.5"] == {"type": "delay", "delay": 2.5}


def test_header_parsing(tmp_path):
    trace = write(tmp_path, "; Version: 2\n; MaxNodes: 256\n;   --- converted ---\n" + line(1, 0, 1, 1))
    header = SwfHeader()
    records = list(read_swf(trace, header))
    assert header.integer("MaxNodes") == 256 and header.integer("MaxProcs") is None
    assert len(records) == 1 and records[0].line == 4


def test_cli_writes_loadable_deterministic_output(tmp_path):
    trace = write(tmp_path, HEADER + "\n".join([
        line(1, 100, 60, 2, 2, 120), line(2, 50, 30, 1, 1, -1), line(3, 60, -1, 1, 1, 10)]))
    out, out2 = tmp_path / "w.json", tmp_path / "w2.json"
    report_path = tmp_path / "report.json"
    runner = CliRunner()
    result = runner.invoke(from_swf, [trace, "-o", str(out), "--report-json", str(report_path),
                                      "--missing-walltime", "2x"])
    assert result.exit_code == 0, result.output
    assert "run time < 0: 1" in result.output and "kept: 2 jobs" in result.output
    report = json.loads(report_path.read_text())
    assert report["dropped"]["runtime_negative"] == 1 and report["kept"] == 2
    doc = json.loads(out.read_text())
    assert doc["jobs"] == [
        {"id": 2, "subtime": 0, "res": 1, "walltime": 60, "profile": "delay_30"},
        {"id": 1, "subtime": 50, "res": 2, "walltime": 120, "profile": "delay_60"}]
    workload = load_workload(str(out), "w0")
    assert workload.nb_res == 8 and [j.local_id for j in workload.jobs] == ["2", "1"]
    assert runner.invoke(from_swf, [trace, "-o", str(out2), "--missing-walltime", "2x"]).exit_code == 0
    assert out.read_bytes() == out2.read_bytes()

    compute = tmp_path / "c.json"
    result = runner.invoke(from_swf, [trace, "-o", str(compute), "--profile", "compute", "--speed", "1Gf"])
    assert result.exit_code == 0, result.output
    assert load_workload(str(compute), "w0").profiles["compute_60"]["cpu"] == 60e9


def test_cli_errors_exit_non_zero(tmp_path):
    bad = write(tmp_path, HEADER + line(1, 0, 10, 1) + "\n1 2 3\n")
    runner = CliRunner()
    result = runner.invoke(from_swf, [bad, "-o", str(tmp_path / "w.json")])
    assert result.exit_code == 2
    assert "joulesim: error:" in result.output and "line 7" in result.output
    result = runner.invoke(from_swf, [bad, "-o", str(tmp_path / "w.json"), "--lenient"])
    assert result.exit_code == 0 and "bad lines skipped (--lenient): 1" in result.output
    result = runner.invoke(from_swf, [bad, "-o", str(tmp_path / "w.json"), "--profile", "compute"])
    assert result.exit_code == 2 and "--speed" in result.output
    result = runner.invoke(from_swf, [str(tmp_path / "missing.swf"), "-o", str(tmp_path / "w.json")])
    assert result.exit_code == 2 and "missing.swf" in result.output
    result = runner.invoke(from_swf, [bad, "-o", str(tmp_path / "w.json"), "--missing-walltime", "x2"])
    assert result.exit_code != 0 and "missing-walltime" in result.output


# ---- the real traces in ../shared/data ----

def test_real_kth_sp2(shared_data, tmp_path):
    workload, report = convert_swf(shared_data / "swf" / "KTH-SP2-1996-2.1-cln.swf")
    assert workload["nb_res"] == 100 and report["nb_res_source"] == "header MaxNodes"
    assert report["job_lines"] == 28_476
    assert 28_000 <= report["kept"] <= 28_476
    jobs = workload["jobs"]
    assert jobs[0]["id"] == 15 and jobs[0]["subtime"] == 0  # ids start at 15 in this log
    assert all(a["subtime"] <= b["subtime"] for a, b in zip(jobs, jobs[1:]))
    assert all(1 <= j["res"] <= 100 for j in jobs)
    out = tmp_path / "kth.json"
    write_workload(workload, str(out))
    assert len(load_workload(str(out), "w0").jobs) == report["kept"]


def test_real_nasa_ipsc_needs_walltime_fallback(shared_data, tmp_path):
    path = shared_data / "swf" / "NASA-iPSC-1993-3.1-cln.swf.gz"
    workload, report = convert_swf(path)
    assert workload["nb_res"] == 128
    assert report["walltime_missing"] == report["kept"] > 18_000
    assert all(j["walltime"] == max(1, 2 * workload["profiles"][j["profile"]]["delay"]) for j in workload["jobs"])
    workload, _ = convert_swf(path, missing_walltime="none", week=2)
    assert workload["jobs"] and all(j["walltime"] == -1 for j in workload["jobs"])
    out = tmp_path / "nasa.json"
    write_workload(workload, str(out))
    load_workload(str(out), "w0")


def test_real_lublin_and_ctc_headers(shared_data):
    workload, report = convert_swf(shared_data / "swf" / "lublin_256.swf", mmax=500)
    assert workload["nb_res"] == 256 and report["kept"] == 500  # "Version: 2", only MaxNodes
    workload, report = convert_swf(shared_data / "swf" / "CTC-SP2-1996-3.1-cln.swf.gz", week=3)
    assert workload["nb_res"] == 338  # "338 (batch partition; 512 total)"
    assert 0 < report["kept"] < 77_222


@pytest.mark.parametrize("option, value", [("--from", "nan"), ("--to", "١٠"), ("--week", "1_0"), ("--nb-res", "0")])
def test_numeric_options_are_ascii_decimals_within_bounds(tmp_path, option, value):
    # float() and click's ranges took 'nan' (it passes every comparison), '١٠' and '1_0' (issue 23)
    trace = write(tmp_path, HEADER + line(1, 0, 10, 1) + "\n")
    result = CliRunner().invoke(from_swf, [trace, "-o", str(tmp_path / "w.json"), option, value])
    assert result.exit_code == 2 and f"Invalid value for '{option}': {value!r}" in result.output, result.output
    assert not (tmp_path / "w.json").exists()


def test_from_swf_caps_jobs_with_max_jobs_and_still_takes_its_former_name_with_a_warning(tmp_path):
    # (issue 47, item 4: --mmax counts hosts in run and simulate, as in Batsim; from-swf's cap on
    # jobs is --max-jobs)
    from click.testing import CliRunner

    from joulesim.cli.workload_from_swf import from_swf

    trace = write(tmp_path, HEADER + "\n".join(line(j, j, 10, 1) for j in range(1, 6)))
    out = tmp_path / "w.json"
    result = CliRunner().invoke(from_swf, [trace, "-o", str(out), "--max-jobs", "2"])
    assert result.exit_code == 0 and "warning" not in result.output
    assert len(json.loads(out.read_text())["jobs"]) == 2
    result = CliRunner().invoke(from_swf, [trace, "-o", str(out), "--mmax", "3"])
    assert result.exit_code == 0 and "--mmax is now --max-jobs" in result.output
    assert len(json.loads(out.read_text())["jobs"]) == 3
    assert CliRunner().invoke(from_swf, [trace, "-o", str(out), "--mmax", "3", "--max-jobs", "2"]).exit_code == 2
