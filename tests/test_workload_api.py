"""Workloads from the Python API (issue 47, item 6): generate, convert an SWF trace, save, and
simulate, without the command line."""

from __future__ import annotations

import json

import pytest

import joulesim
from joulesim.protocol.errors import JoulesimError


def test_a_generated_workload_simulates_and_equals_the_command_s_file(tmp_path):
    from click.testing import CliRunner

    from joulesim.cli.main import main

    workload = joulesim.generate_workload("lublin", seed=3, jobs=80, nb_res=32)
    result = joulesim.simulate("cluster32", workload, "easy")
    assert len(result.jobs) == 80 and (result.jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    joulesim.save_workload(workload, tmp_path / "api.json")
    command = tmp_path / "cli.json"
    CliRunner().invoke(main, ["workload", "generate", "lublin", "--seed", "3", "--jobs", "80", "--nb-res", "32",
                              "-o", str(command)])
    assert (tmp_path / "api.json").read_bytes() == command.read_bytes()


def test_a_converted_trace_simulates(tmp_path):
    lines = [f"{j} {10 * j} 0 {60 + j} 2 -1 -1 2 {200 if j % 2 else -1} -1 1 1 1 -1 1 -1 -1 -1" for j in range(1, 11)]
    trace = tmp_path / "trace.swf"
    trace.write_text("; MaxNodes: 8\n; MaxProcs: 8\n" + "\n".join(lines) + "\n")
    workload, report = joulesim.convert_swf(trace)
    assert report["kept"] == 10 and report["walltime_missing"] == 5
    result = joulesim.simulate("cluster32", workload, "fcfs")
    assert (result.jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    joulesim.save_workload(workload, tmp_path / "trace.json")
    assert len(json.loads((tmp_path / "trace.json").read_text())["jobs"]) == 10


def test_an_unknown_model_is_refused_by_name():
    with pytest.raises(JoulesimError, match="unknown workload model 'lubin': use one of lublin, batsim-eval, grid-stream"):
        joulesim.generate_workload("lubin")
