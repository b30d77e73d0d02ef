"""`joulesim analyze` / `joulesim plot`: exact metrics of small runs, errors, and the PNGs."""

from __future__ import annotations

import json
import math
import sys

import pytest
from click.testing import CliRunner

from joulesim.analysis.metrics import compute_metrics
from joulesim.analysis.run_outputs import RunOutputs
from joulesim.cli.analyze_command import analyze
from joulesim.cli.plot_command import plot
from joulesim.deciders import load_decider

from conftest import run_in_process, write_platform, write_workload

# On 2 hosts with FCFS: j1 (2 hosts, 100 s) runs 0-100; j2 (1 host, 5 s, submitted at 10) and
# j3 (1 host, 50 s, submitted at 20) both start at 100.
JOBS = [
    {"id": 1, "subtime": 0, "res": 2, "delay": 100},
    {"id": 2, "subtime": 10, "res": 1, "delay": 5},
    {"id": 3, "subtime": 20, "res": 1, "delay": 50},
]


def simulate(tmp_path, jobs=JOBS, hosts=2, decider="fcfs", name="run"):
    folder = tmp_path / name
    folder.mkdir()
    prefix = str(folder / "out")
    run_in_process(load_decider(decider, {}), write_platform(folder, hosts),
                   [write_workload(folder, jobs)], prefix)
    return prefix


@pytest.fixture
def small(tmp_path):
    return simulate(tmp_path)


def test_exact_metrics(small):
    m = compute_metrics(RunOutputs(small))
    assert (m["nb_jobs"], m["nb_jobs_finished"], m["nb_jobs_killed"], m["nb_jobs_rejected"]) == (3, 3, 0, 0)
    assert m["makespan"] == pytest.approx(150)
    assert m["mean_waiting_time"] == pytest.approx((0 + 90 + 80) / 3)
    assert m["max_waiting_time"] == pytest.approx(90)
    # bounded slowdowns: 100/100 = 1, 95/max(5,10) = 9.5, 130/50 = 2.6
    assert m["mean_bounded_slowdown"] == pytest.approx((1 + 9.5 + 2.6) / 3)
    assert m["max_bounded_slowdown"] == pytest.approx(9.5)
    assert m["utilization"] == pytest.approx((2 * 100 + 5 + 50) / (2 * 150))
    assert m["nb_machines"] == 2
    # No energy accounting: no energy figure. Switches are a count the schedule gives (0 here).
    assert m["consumed_joules"] is None and m["nb_machine_switches"] == 0


def test_zero_machine_switches_are_0_in_json_not_null(small):
    """The schedule says 0; analyze --json (and so campaigns' results.csv) said null."""
    assert RunOutputs(small).schedule["nb_machine_switches"] == 0
    result = CliRunner().invoke(analyze, [small, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["nb_machine_switches"] == 0
    table = CliRunner().invoke(analyze, [small]).output
    assert next(line for line in table.splitlines() if line.startswith("machine switches")).split()[-1] == "0"


def test_tau(small):
    m = compute_metrics(RunOutputs(small), tau=60)
    assert m["mean_bounded_slowdown"] == pytest.approx((1 + 95 / 60 + 130 / 60) / 3)


def test_side_by_side_and_json(tmp_path):
    a = simulate(tmp_path, name="fcfs")
    # A second run: one host, EASY; job 1 (20 s) runs first, job 2 waits 20 s.
    b = simulate(tmp_path, jobs=[{"id": 1, "subtime": 0, "res": 1, "delay": 20},
                                 {"id": 2, "subtime": 0, "res": 1, "delay": 10}],
                 hosts=1, decider="easy", name="easy")
    result = CliRunner().invoke(analyze, [a, b])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert a in lines[0] and b in lines[0] and lines[0].index(a) < lines[0].index(b)
    makespan = next(line for line in lines if line.startswith("makespan"))
    assert "150.0" in makespan and "30.0" in makespan
    result = CliRunner().invoke(analyze, [a, b, "--json", "--tau", "10"])
    rows = json.loads(result.output)
    assert [r["run"] for r in rows] == [a, b]
    assert rows[1]["mean_waiting_time"] == pytest.approx(10)  # (0 + 20) / 2
    assert rows[1]["utilization"] == pytest.approx(1.0)


def test_missing_and_malformed_files(tmp_path, small):
    result = CliRunner().invoke(analyze, [str(tmp_path / "nothing" / "out")])
    assert result.exit_code == 2
    assert "nothing/out_jobs.csv: no such file" in result.output
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "out_jobs.csv").write_text("job_id,foo\n1,2\n")
    result = CliRunner().invoke(analyze, [str(bad / "out")])
    assert result.exit_code == 2
    assert "out_jobs.csv: missing column(s)" in result.output and "submission_time" in result.output
    with open(small + "_schedule.csv") as f:
        header = f.readline()
    with open(small + "_schedule.csv", "w") as f:
        f.write(header)
    result = CliRunner().invoke(analyze, [small])
    assert result.exit_code == 2 and "out_schedule.csv: expected exactly one data row" in result.output
    # (`plot` reads the same files: a bad input file, exit 2 too, as docs/reference/reliability.md says)
    result = CliRunner().invoke(plot, [str(tmp_path / "nothing" / "out"), "-o", str(tmp_path / "plots")])
    assert result.exit_code == 2 and "nothing/out_jobs.csv: no such file" in result.output
    result = CliRunner().invoke(plot, [str(bad / "out"), "-o", str(tmp_path / "plots")])
    assert result.exit_code == 2 and "out_jobs.csv: missing column(s)" in result.output


def test_a_missing_bokeh_is_not_a_bad_input_file(monkeypatch):
    """AnalysisError is a bad file (2); the report's missing extra stays status 1."""
    from joulesim.analysis.html_report import bokeh_version
    from joulesim.analysis.run_outputs import AnalysisError

    monkeypatch.setitem(sys.modules, "bokeh", None)  # (import bokeh then raises ImportError)
    with pytest.raises(AnalysisError, match="needs Bokeh") as raised:
        bokeh_version()
    assert raised.value.exit_code == 1


def _check_png(path, min_side=300):
    import matplotlib.image as mpimg

    image = mpimg.imread(path)
    assert image.ndim == 3 and min(image.shape[:2]) >= min_side
    assert image.std() > 0.01  # not a blank image


def test_plots(tmp_path, small):
    out = tmp_path / "pngs"
    result = CliRunner().invoke(plot, [small, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "no power plot" in result.output
    for kind in ("gantt", "machine_states"):
        _check_png(out / f"run_out_{kind}.png")
    assert not (out / "run_out_power.png").exists()
    # A power plot appears when the energy file exists.
    with open(small + "_consumed_energy.csv", "w") as f:
        f.write("time,energy,event_type,wattmin,epower\n0,0,s,200,200\n100,30000,e,200,300\n"
                "150,37500,e,200,150\n")
    result = CliRunner().invoke(plot, [small, "-o", str(out)])
    assert result.exit_code == 0, result.output
    _check_png(out / "run_out_power.png")


def test_compare_plot(tmp_path):
    a = simulate(tmp_path, name="a")
    b = simulate(tmp_path, decider="easy", name="b")
    path = tmp_path / "cmp.png"
    result = CliRunner().invoke(plot, ["--compare", a, b, "--x", "utilization", "--y",
                                       "mean_bounded_slowdown", "-o", str(path)])
    assert result.exit_code == 0, result.output
    _check_png(path)
    result = CliRunner().invoke(plot, ["--compare", a, b, "--y", "consumed_joules", "-o", str(path)])
    assert result.exit_code == 1 and "consumed_joules" in result.output


def test_gantt_of_10000_jobs_renders(tmp_path):
    import random

    rng = random.Random(3)
    jobs, t = [], 0.0
    for i in range(10_000):
        # Arrivals every 15 s on average: a load of about 0.8 on 64 hosts. (Every 3 s made the
        # queue grow all run long, and EASY's passes over it were 20 of this test's 23 s.)
        t += rng.expovariate(1 / 15)
        jobs.append({"id": i, "subtime": round(t, 2), "res": rng.choice([1, 1, 2, 4, 8, 16, 37]),
                     "delay": rng.choice([10, 30, 60, 200])})
    prefix = simulate(tmp_path, jobs=jobs, hosts=64, decider="easy", name="big")
    from joulesim.analysis.gantt import plot_gantt

    plot_gantt(RunOutputs(prefix), str(tmp_path / "big_gantt.png"))  # speed: see benchmarks, not here
    _check_png(tmp_path / "big_gantt.png")


def test_missing_matplotlib_is_a_readable_error(small, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = CliRunner().invoke(plot, [small])
    # The command that installs the extra for this installation (here: the checkout's folder).
    from joulesim.console.install_hint import install_hint

    assert result.exit_code == 1 and install_hint("plot") in result.output and "[plot]'" in result.output


def test_evalys_reads_the_jobs_file(small):
    try:
        from evalys.jobset import JobSet
    except ImportError:
        pytest.skip("evalys is not installed (optional): cannot check that it reads out_jobs.csv")
    jobset = JobSet.from_csv(small + "_jobs.csv")
    assert len(jobset.df) == 3
    assert not math.isnan(float(jobset.df["waiting_time"].mean()))
