"""Exit statuses of errors found while a run goes on (docs/reference/reliability.md):
an input found wrong during the run (9, its outputs kept, not 2: refused before any output), a
decider leaving jobs waiting (4), a decider process ending with an error after the run (5); and
two command-line fixes of issue 46: -W without -w runs the workflow alone, and an EDC library
run under a stderr without a file descriptor (click's CliRunner) reaches its own error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

import joulesim
from joulesim.cli.main import main
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import RUN_INPUT_EXIT

#: Two zones without links: SimGrid loads it, but no route joins zone a to the master's zone,
#: found (as Batsim aborts) when a job's end first goes from h0 to the master.
TWO_ZONES = ('<?xml version="1.0"?><platform version="4.1"><zone id="top" routing="Full">'
             '<zone id="a" routing="Full"><host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/></zone>'
             '<zone id="mz" routing="Full"><host id="master_host" speed="1Gf"/></zone></zone></platform>')


def cli(*args: str, cwd=None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", *args], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, cwd=cwd, env=env)


def deadlocking_run(tmp_path) -> str:
    """A workload whose job 1 (a delay) ends at t=1, then job 2's two ranks each wait for the
    other's message first: a deadlock found at t=5, once job 1's row is written."""
    traces = tmp_path / "t"
    traces.mkdir()
    for rank in (0, 1):
        (traces / f"r{rank}.txt").write_text(f"{rank} init\n{rank} recv {1 - rank} 0 10\n{rank} send {1 - rank} 0 10\n")
    (traces / "list.txt").write_text("r0.txt\nr1.txt\n")
    path = tmp_path / "w.json"
    path.write_text(json.dumps({
        "nb_res": 2,
        "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d"},
                 {"id": 2, "subtime": 5, "res": 2, "walltime": 100, "profile": "p"}],
        "profiles": {"d": {"type": "delay", "delay": 1}, "p": {"type": "smpi", "trace": "t/list.txt"}}}))
    return str(path)


def one_job(tmp_path) -> str:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 100, "profile": "d"}],
                                "profiles": {"d": {"type": "delay", "delay": 1}}}))
    return str(path)


def assert_kept(result: subprocess.CompletedProcess, prefix) -> None:
    """One error line, naming the outputs kept; the jobs file is there, with its header."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("joulesim: error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"(outputs written so far are kept: {prefix}_jobs.csv" in result.stderr
    assert (prefix.parent / f"{prefix.name}_jobs.csv").read_text().startswith("job_id,")


@pytest.mark.parametrize("mode", [[], ["--in-process"]])
def test_an_smpi_trace_deadlock_found_during_the_run_exits_9_and_keeps_the_outputs(tmp_path, mode):
    workload = deadlocking_run(tmp_path)
    prefix = tmp_path / "out" / "x"
    done = cli("run", "-p", "small4", "-w", workload, "-e", str(prefix), "-q", *mode, cwd=tmp_path)
    assert done.returncode == RUN_INPUT_EXIT == 9, done.stderr
    assert "smpi profile 'p': the ranks' traces deadlock: rank 0 at line 2 (recv)" in done.stderr
    assert_kept(done, prefix)
    rows = (tmp_path / "out" / "x_jobs.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("1,w0,d,") and "COMPLETED_SUCCESSFULLY" in rows[1]


@pytest.mark.parametrize("mode", [[], ["--in-process"]])
def test_a_missing_zone_route_found_at_the_first_message_exits_9_and_keeps_the_outputs(tmp_path, mode):
    (tmp_path / "two.xml").write_text(TWO_ZONES)
    prefix = tmp_path / "out" / "x"
    done = cli("run", "-p", str(tmp_path / "two.xml"), "-w", one_job(tmp_path), "-e", str(prefix), "-q", *mode)
    assert done.returncode == 9, done.stderr
    assert "zone 'top' (routing Full) declares no route from 'a' to 'mz'" in done.stderr
    assert_kept(done, prefix)
    assert (tmp_path / "out" / "x_machine_states.csv").exists()


def test_the_api_keeps_the_error_an_input_error_with_status_9(tmp_path):
    (tmp_path / "two.xml").write_text(TWO_ZONES)
    with pytest.raises(InputError, match="declares no route from 'a' to 'mz'") as raised:
        joulesim.simulate(str(tmp_path / "two.xml"), one_job(tmp_path), "fcfs", export=str(tmp_path / "x"))
    assert raised.value.exit_code == 9


def test_an_input_refused_before_the_run_still_exits_2_without_outputs(tmp_path):
    """A rank trace read before the run (a line without its rank): 2, nothing written."""
    workload = deadlocking_run(tmp_path)
    (tmp_path / "t" / "r0.txt").write_text("init\n")
    done = cli("run", "-p", "small4", "-w", workload, "-e", str(tmp_path / "out" / "x"), "--in-process", cwd=tmp_path)
    assert done.returncode == 2 and "the rank field 'init' is not a rank of this job" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


DECIDERS = textwrap.dedent("""
    import atexit
    import os

    from joulesim.deciders.batch.fcfs import FCFS


    class Idle(FCFS):
        def decide(self):
            pass


    class ExitsWith3(FCFS):
        def __init__(self, options=None):
            super().__init__(options)
            atexit.register(os._exit, 3)  # (after it answered SIMULATION_ENDS: the run is complete)
""")


@pytest.fixture
def deciders_env(tmp_path):
    (tmp_path / "misbehaving.py").write_text(DECIDERS)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("mode", [["--in-process"], ["--in-process", "--event-grouping", "per-time"], []])
def test_a_decider_leaving_jobs_waiting_is_a_decision_error_exit_4(tmp_path, deciders_env, mode):
    """Batsim's actors and the per-time loop both raise it; it was a plain JoulesimError (1)."""
    prefix = tmp_path / "out" / "x"
    done = cli("run", "-p", "small4", "-w", "tiny", "-d", "misbehaving:Idle", "-e", str(prefix), "-q", *mode,
               env=deciders_env)
    assert done.returncode == 4, done.stderr
    assert "the decider left 4 submitted job(s) waiting (w0!1, w0!2, w0!3, w0!4)" in done.stderr
    assert_kept(done, prefix)


def test_a_decider_process_exiting_with_an_error_after_the_run_exits_5(tmp_path, deciders_env):
    done = cli("run", "-p", "small4", "-w", "tiny", "-d", "misbehaving:ExitsWith3", "-e", str(tmp_path / "x"), "-q",
               env=deciders_env)
    assert done.returncode == 5, done.stderr
    assert done.stderr == "joulesim: error: the decider process (joulesim decide misbehaving:ExitsWith3) exited with status 3\n"
    assert len((tmp_path / "x_jobs.csv").read_text().splitlines()) == 5  # (the run itself completed)


def test_simulate_s_decider_process_exiting_with_an_error_is_a_decider_unavailable_error(tmp_path, deciders_env,
                                                                                           monkeypatch):
    """The Python API's own check of the process's status: the CLI's exit 5 as an exception."""
    from joulesim.protocol.errors import DeciderUnavailableError

    monkeypatch.setenv("PYTHONPATH", deciders_env["PYTHONPATH"])
    with pytest.raises(DeciderUnavailableError, match="exited with status 3"):
        joulesim.simulate("small4", "tiny", "misbehaving:ExitsWith3", in_process=False)


# ---------------------------------------------------------------- -W without -w
DAX = ("<adag><job id='a' runtime='1' num_procs='1'/><job id='b' runtime='2' num_procs='1'/>"
       "<child ref='b'><parent ref='a'/></child></adag>")


@pytest.mark.parametrize("flags", [["-W", "{dax}"], ["--WS", "{dax}", "5"]])
def test_a_workflow_without_w_runs_alone_without_the_default_workload(tmp_path, flags):
    """As Batsim's -w is optional with -W: `run -W f.dax` loaded the default workload's 400 jobs
    beside the workflow."""
    (tmp_path / "f.dax").write_text(DAX)
    args = [flag.format(dax=tmp_path / "f.dax") for flag in flags]
    done = cli("run", "-p", "small4", *args, "-e", str(tmp_path / "x"), "-q", "--in-process")
    assert done.returncode == 0, done.stderr
    rows = (tmp_path / "x_jobs.csv").read_text().splitlines()[1:]
    expected = ["wf0", "wf0"] if flags[0] == "-W" else ["wfc0", "wfc0"]
    assert sorted(row.split(",")[1] for row in rows) == expected


def test_without_w_nor_a_workflow_run_keeps_the_default_workload(tmp_path):
    result = CliRunner().invoke(main, ["run", "-p", "small4", "--mmax", "2", "-d", "fcfs", "--in-process",
                                       "-e", str(tmp_path / "x"), "-q"])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "x_jobs.csv").read_text().splitlines()) == 401


def test_the_api_s_workflows_run_without_the_default_workload(tmp_path):
    (tmp_path / "f.dax").write_text(DAX)
    result = joulesim.simulate("small4", decider="fcfs", workflows=[str(tmp_path / "f.dax")])
    assert sorted(result.jobs["workload_name"]) == ["wf0", "wf0"]


# ---------------------------------------------------------------- faulthandler under CliRunner
def test_an_edc_library_run_without_a_stderr_file_descriptor_reaches_its_own_error(tmp_path):
    """CliRunner's stderr has no fileno(): faulthandler.enable raised io.UnsupportedOperation
    (exit 1, a traceback) before the library was even looked at."""
    result = CliRunner().invoke(main, ["simulate", "-p", "small4", "-w", "tiny", "--edc-library",
                                       str(tmp_path / "none.so"), "-e", str(tmp_path / "x")])
    assert result.exit_code == 2, repr(result.exception)
    assert f"{tmp_path / 'none.so'}: no such EDC library file" in result.output
