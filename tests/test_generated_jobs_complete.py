"""Generated and converted workloads give jobs that complete (issue 47, item 1).

Under Batsim's rule a job whose walltime equals its run time is killed when it reaches it
(COMPLETED_WALLTIME_REACHED). The generators used to write walltime = run time ("exact
estimates") and from-swf gave that walltime to jobs without a requested time: every job of the
README's examples was killed. The defaults are now twice the run time, and a run where most jobs
were killed at their walltime says so in its summary.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from joulesim.cli.main import main

GENERATORS = [
    ["lublin", "--jobs", "60", "--nb-res", "32", "--seed", "1"],
    ["batsim-eval", "--jobs", "60", "--seed", "1"],
    ["grid-stream", "--jobs", "60", "--seed", "1"],
]


def run(tmp_path, workload: str, name: str) -> str:
    result = CliRunner().invoke(main, ["run", "--in-process", "--no-progress", "-p", "cluster32", "-w", workload,
                                       "-e", str(tmp_path / name)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("arguments", GENERATORS, ids=lambda a: a[0])
def test_a_generated_workload_s_jobs_complete_by_default(tmp_path, arguments):
    path = str(tmp_path / "jobs.json")
    assert CliRunner().invoke(main, ["workload", "generate", *arguments, "-o", path]).exit_code == 0
    summary = run(tmp_path, path, "default")
    assert "jobs                  60 (60 succeeded, 0 killed, 0 rejected)" in summary
    assert "warning" not in summary
    # with exact estimates every job reaches its walltime, and the summary says so
    assert CliRunner().invoke(main, ["workload", "generate", *arguments, "--walltime-factor", "1",
                                     "-o", path]).exit_code == 0
    summary = run(tmp_path, path, "exact")
    assert "(0 succeeded, 60 killed, 0 rejected)" in summary
    assert "warning               60 of 60 jobs were killed at their walltime" in summary


def test_an_swf_job_without_requested_time_completes_by_default(tmp_path):
    header = "; MaxNodes: 8\n; MaxProcs: 8\n"
    lines = [f"{j} {10 * j} 0 {100 + j} 2 -1 -1 2 -1 -1 1 1 1 -1 1 -1 -1 -1" for j in range(1, 21)]
    trace = tmp_path / "trace.swf"
    trace.write_text(header + "\n".join(lines) + "\n")
    path = str(tmp_path / "jobs.json")
    assert CliRunner().invoke(main, ["workload", "from-swf", str(trace), "-o", path]).exit_code == 0
    assert "(20 succeeded, 0 killed, 0 rejected)" in run(tmp_path, path, "swf")
    assert CliRunner().invoke(main, ["workload", "from-swf", str(trace), "--missing-walltime", "runtime",
                                     "-o", path]).exit_code == 0
    assert "warning               20 of 20 jobs were killed at their walltime" in run(tmp_path, path, "swf_runtime")
