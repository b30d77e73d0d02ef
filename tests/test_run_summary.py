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
    assert lines[0] == "platform              homogeneous240, shipped (32 compute hosts)"
    assert lines[1] == "workloads             tiny, shipped (4 jobs), default, shipped (400 jobs)"
    assert lines[2] == "decider               easy in this process, options t_idle=600"
    assert lines[3] == "settings              event grouping per-time, energy on (-E)"
    assert lines[-1].startswith("outputs               ") and str(tmp_path / "out_jobs.csv") in lines[-1]


def test_an_output_file_given_to_run_s_dash_o_gets_told_where_outputs_go(tmp_path):
    # (-o is an output file in the workload, plot, report and learn commands; in run it is a decider option)
    result = CliRunner().invoke(main, ["run", "--in-process", "--no-progress", "-o", "results.csv",
                                       "-e", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "'results.csv' is not key=value" in result.output and "the outputs' prefix is -e/--export" in result.output


def test_a_platform_or_workload_file_of_the_user_shows_by_its_path(tmp_path):
    workload = tmp_path / "jobs.json"
    workload.write_text('{"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 20, "profile": "d"}], '
                        '"profiles": {"d": {"type": "delay", "delay": 10}}}')
    result = CliRunner().invoke(main, ["run", "--in-process", "--no-progress", "-w", str(workload),
                                       "-e", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1] == f"workloads             {workload} (1 job)"
