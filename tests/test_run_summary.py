"""The summary of `joulesim run` says what ran (issue 47, item 3): platform, workloads, decider
with its options and where it ran, and the settings that change results."""

from __future__ import annotations

from click.testing import CliRunner

from joulesim.cli.main import main


def test_the_summary_names_the_platform_the_workloads_the_decider_and_the_settings(tmp_path):
    result = CliRunner().invoke(main, ["run", "--in-process", "--no-progress", "-p", "homogeneous240", "--mmax", "32",
                                       "-w", "tiny", "-w", "default", "-E", "-d", "easy", "-o", "t_idle=600",
                                       "--event-grouping", "per-time", "-e", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("platform              ") and lines[0].endswith("homogeneous240.xml (32 compute hosts)")
    assert lines[1].startswith("workloads             ") and "tiny.json (4 jobs), " in lines[1]
    assert lines[1].endswith("default.json (400 jobs)")
    assert lines[2] == "decider               easy in this process, options t_idle=600"
    assert lines[3] == "settings              event grouping per-time, energy on (-E)"
    assert lines[-1].startswith("outputs               ") and str(tmp_path / "out_jobs.csv") in lines[-1]


def test_an_output_file_given_to_run_s_dash_o_gets_told_where_outputs_go(tmp_path):
    # (-o is an output file in the workload, plot, report and learn commands; in run it is a decider option)
    result = CliRunner().invoke(main, ["run", "--in-process", "--no-progress", "-o", "results.csv",
                                       "-e", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "'results.csv' is not key=value" in result.output and "the outputs' prefix is -e/--export" in result.output
