"""The `joulesim` command as a user runs it: decider in its own process, bad inputs, failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import zmq

from conftest import read_csv, sigint_as_at_a_terminal, write_platform, write_workload

JOULESIM = [sys.executable, "-m", "joulesim.cli.main"]


def joulesim(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120):
    return subprocess.run([*JOULESIM, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def schedule_without_wall_clock(path: str) -> dict[str, str]:
    row = read_csv(path)[0]
    del row["scheduling_time"], row["simulation_time"]
    return row


def test_run_with_no_arguments_simulates_the_default_case(tmp_path):
    result = joulesim("run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "jobs                  400 (400 succeeded" in result.stdout
    for line in ("makespan", "mean waiting time", "mean bounded slowdown",
                 "runs/001_jobs.csv, runs/001_schedule.csv, runs/001_machine_states.csv, runs/001_schedule.trace "
                 "(joulesim analyze runs/001)"):
        assert line in result.stdout
    rows = read_csv(str(tmp_path / "runs" / "001_jobs.csv"))
    assert len(rows) == 400 and {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}


def test_runs_without_an_export_prefix_never_replace_each_other(tmp_path):
    """Without -e, each run takes the next number in runs/ (Batsim's `out` made the next run replace
    the last one's files); a refused run takes none; -e keeps Batsim's rule, replacing."""
    small = ("-p", "small4", "-w", "tiny", "--in-process")
    assert joulesim("run", *small, cwd=tmp_path).returncode == 0
    first = (tmp_path / "runs" / "001_jobs.csv").read_bytes()
    assert joulesim("run", *small, "-d", "eazy", cwd=tmp_path).returncode == 2  # refused: claims nothing
    result = joulesim("run", *small, "-d", "fcfs", cwd=tmp_path)
    assert result.returncode == 0 and "runs/002_jobs.csv" in result.stdout
    assert sorted(os.listdir(tmp_path / "runs")) == [f"00{n}_{name}" for n in (1, 2) for name in
                                                    ("jobs.csv", "machine_states.csv", "schedule.csv", "schedule.trace")]
    assert (tmp_path / "runs" / "001_jobs.csv").read_bytes() == first  # untouched
    (tmp_path / "runs" / "041_jobs.csv").write_text("")  # numbers follow the highest, gaps and all
    assert "runs/042_jobs.csv" in joulesim("run", *small, cwd=tmp_path).stdout
    for _ in range(2):
        assert joulesim("run", *small, "-e", "mine", cwd=tmp_path).returncode == 0
    assert (tmp_path / "mine_jobs.csv").exists() and not (tmp_path / "runs" / "043_jobs.csv").exists()


def test_two_runs_give_byte_identical_outputs(tmp_path):
    for name in ("a", "b"):
        result = joulesim("run", "-d", "easy", "-e", str(tmp_path / name / "out"))
        assert result.returncode == 0, result.stderr
    for output in ("out_jobs.csv", "out_machine_states.csv"):
        assert (tmp_path / "a" / output).read_bytes() == (tmp_path / "b" / output).read_bytes()
    # Only the two wall-clock columns may differ.
    assert schedule_without_wall_clock(str(tmp_path / "a" / "out_schedule.csv")) == \
        schedule_without_wall_clock(str(tmp_path / "b" / "out_schedule.csv"))


def test_in_process_and_two_process_runs_agree(tmp_path):
    for name, extra in (("zmq", []), ("inproc", ["--in-process"])):
        result = joulesim("run", "-d", "conservative", "-e", str(tmp_path / name / "out"), *extra)
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "zmq" / "out_jobs.csv").read_bytes() == (tmp_path / "inproc" / "out_jobs.csv").read_bytes()


def test_simulate_and_decide_by_hand_in_two_processes(tmp_path):
    endpoint = f"ipc://{tmp_path}/decider.sock"
    decider = subprocess.Popen([*JOULESIM, "decide", "fcfs", "-s", endpoint, "--timeout", "60"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        result = joulesim("simulate", "-p", "small4", "-w", "tiny", "-e", str(tmp_path / "out"), "-s", endpoint,
                          "--timeout", "30")
        assert result.returncode == 0, result.stderr
        assert decider.wait(30) == 0
    finally:
        decider.kill()
    rows = read_csv(str(tmp_path / "out_jobs.csv"))
    assert len(rows) == 4 and all(r["success"] == "1" for r in rows)


def test_a_crashing_decider_ends_the_run_with_a_clear_error(tmp_path):
    (tmp_path / "crashing_decider.py").write_text(textwrap.dedent("""
        from joulesim.protocol.decider import Decider

        class Crasher(Decider):
            def on_job_submitted(self, job):
                raise RuntimeError("bug in my decider")
    """))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = joulesim("run", "-p", "small4", "-w", "tiny", "-d", "crashing_decider:Crasher",
                      "-e", str(tmp_path / "out"), env=env)
    assert result.returncode == 5
    assert "the decider process (joulesim decide crashing_decider:Crasher) exited with status" in result.stderr
    assert "outputs written so far are kept" in result.stderr
    assert "decider crashing_decider:Crasher raised an exception at simulated time t=0" in result.stderr
    assert "RuntimeError: bug in my decider" in result.stderr
    assert (tmp_path / "out_jobs.csv").exists()


def test_a_silent_decider_times_out(tmp_path):
    endpoint = f"ipc://{tmp_path}/nobody.sock"
    result = joulesim("simulate", "-p", "small4", "-w", "tiny", "-s", endpoint, "--timeout", "0.5",
                      "-e", str(tmp_path / "out"))
    assert result.returncode == 5
    assert "did not answer within 0.5 s" in result.stderr and "--timeout" in result.stderr
    assert "Traceback" not in result.stderr
    assert read_csv(str(tmp_path / "out_jobs.csv")) == []  # the header was written and kept


def simulate_against_one_reply(tmp_path, payload: bytes):
    """`joulesim simulate` against a socket that answers its first message with `payload`."""
    endpoint = f"ipc://{tmp_path}/reply.sock"
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind(endpoint)

    def answer():
        socket.recv()
        socket.send(payload)

    thread = threading.Thread(target=answer)
    thread.start()
    try:
        return joulesim("simulate", "-p", "small4", "-w", "tiny", "-s", endpoint, "--timeout", "30",
                        "-e", str(tmp_path / "out"))
    finally:
        thread.join(30)
        socket.close(0)
        context.term()


def test_malformed_json_from_the_decider(tmp_path):
    result = simulate_against_one_reply(tmp_path, b'{"now": 0, "events": [')
    assert result.returncode == 3
    assert "malformed JSON from the decider" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("case, expected", [
    ("no_master", "no master host"),
    ("unknown_profile", "jobs[0] (id '1'): field 'profile'"),
    ("negative_res", "jobs[0] (id '1'): field 'res'"),
    ("duplicate_id", "duplicate id '1'"),
    ("bad_events", "line 1"),
    ("missing_file", "nowhere.json"),
])
def test_bad_input_files_are_reported_with_file_and_field(tmp_path, case, expected):
    platform = write_platform(tmp_path, 2)
    jobs = [{"id": 1, "subtime": 0, "res": 1, "delay": 1}]
    extra: list[str] = []
    if case == "no_master":
        Path(platform).write_text(Path(platform).read_text().replace('<prop id="role" value="master"/>', ""))
    elif case == "unknown_profile":
        jobs = [{"id": 1, "subtime": 0, "res": 1, "profile": "nope"}]
    elif case == "negative_res":
        jobs = [{"id": 1, "subtime": 0, "res": -2, "delay": 1}]
    elif case == "duplicate_id":
        jobs = [{"id": 1, "subtime": 0, "res": 1, "delay": 1}, {"id": 1, "subtime": 3, "res": 1, "delay": 1}]
    elif case == "bad_events":
        (tmp_path / "events.txt").write_text('{"type": "machine_unavailable", "timestamp": 3}\n')
        extra = ["--events", str(tmp_path / "events.txt")]
    workload = write_workload(tmp_path, jobs)
    if case == "missing_file":
        workload = str(tmp_path / "nowhere.json")
    result = joulesim("run", "-p", platform, "-w", workload, "-e", str(tmp_path / "out"), *extra)
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    file_named = {"no_master": "platform.xml", "bad_events": "events.txt", "missing_file": "nowhere.json"}
    assert file_named.get(case, "workload.json") in result.stderr


def test_ctrl_c_stops_both_processes(tmp_path):
    """The decider blocks on a FIFO the test reads: no sleeps, no races."""
    fifo = tmp_path / "called"
    os.mkfifo(fifo)
    (tmp_path / "blocking_decider.py").write_text(textwrap.dedent(f"""
        import os, threading
        from joulesim.protocol.decider import Decider

        class Blocker(Decider):
            def on_simulation_begins(self, data):
                with open({str(fifo)!r}, "w") as f:
                    f.write(str(os.getpid()))
                threading.Event().wait()  # think forever
    """))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = subprocess.Popen([*JOULESIM, "run", "-p", "small4", "-w", "tiny", "-d", "blocking_decider:Blocker",
                            "-e", str(tmp_path / "out")], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                           preexec_fn=sigint_as_at_a_terminal)
    with open(fifo) as f:
        decider_pid = int(f.read())
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=30)
    assert run.returncode == 130 and "interrupted" in stderr
    with pytest.raises(ProcessLookupError):
        os.kill(decider_pid, 0)  # the decider was stopped and reaped
    assert (tmp_path / "out_jobs.csv").exists()


def test_decide_lists_the_shipped_deciders():
    result = joulesim("decide", "--list")
    assert result.returncode == 0
    for name in ("fcfs", "sjf", "easy", "conservative", "rejecter", "proportional", "inertial", "powercap",
                 "energybud", "reducepc"):
        assert name in result.stdout


def test_unknown_decider_name(tmp_path):
    result = joulesim("run", "-p", "small4", "-w", "tiny", "-d", "nosuch", "--in-process", "-e", str(tmp_path / "o"))
    assert result.returncode != 0 and "nosuch" in result.stderr and "easy" in result.stderr
    assert "Traceback" not in result.stderr



def test_simulate_without_a_platform_is_a_usage_error_not_a_traceback(tmp_path):
    # click >= 8.3 treats an explicit default=None as a value: -p must still be required.
    result = joulesim("simulate", "-s", f"ipc://{tmp_path}/none.sock", "--timeout", "1", cwd=tmp_path)
    assert result.returncode == 2
    assert "Missing option '-p' / '--platform'" in result.stderr
    assert "Traceback" not in result.stderr


def test_slurm_refuses_a_cluster_given_twice(tmp_path):
    result = joulesim("slurm", "-w", "tiny", "--local-nodes", "2", "--slurm-conf", "/etc/slurm/slurm.conf",
                      cwd=tmp_path)
    assert result.returncode == 2
    assert "give --slurm-conf or --local-nodes, not both" in result.stderr


def test_a_decider_speaking_the_old_batsim_text_protocol_is_named(tmp_path):
    result = simulate_against_one_reply(tmp_path, b"1:0.000000|0.000000:N")
    assert result.returncode == 3
    assert "speaks Batsim's old text protocol" in result.stderr and "Batsim 4's JSON protocol" in result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- issue 23: no lost work, one line

def earlier_run(tmp_path: Path) -> dict[str, bytes]:
    """A complete run under tmp_path/out; returns its files' contents."""
    result = joulesim("run", "-p", "small4", "-w", "tiny", "-d", "fcfs", "--in-process", "-e", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    return {path.name: path.read_bytes() for path in tmp_path.glob("out_*.csv")}


@pytest.mark.parametrize("args, expected", [
    (["-d", "eazy"], "joulesim: error: unknown decider 'eazy' (did you mean 'easy'?): use one of "),
    # easy takes the options of its shutdown variant; messages name it as typed.
    (["-d", "easy", "--option", "tidle=600"],
     "joulesim: error: decider 'easy' does not accept option(s) tidle (accepted: compute_pstate, pinned, "
     "sleep_pstate, storage_mapping, t_idle) (did you mean 't_idle'?)"),
    (["-d", "easy", "--option", "t_idle=600", "--option", "sleep_pstat=1"],
     "joulesim: error: decider 'easy' does not accept option(s) sleep_pstat (accepted: compute_pstate, "
     "pinned, sleep_pstate, storage_mapping, t_idle) (did you mean 'sleep_pstate'?)"),
    (["-d", "easy", "--option", "t_idle=soon"], "joulesim: error: decider easy: option t_idle='soon' is invalid"),
])
def test_a_refused_decider_leaves_earlier_results_untouched(tmp_path, args, expected):
    before = earlier_run(tmp_path)
    assert set(before) == {"out_jobs.csv", "out_machine_states.csv", "out_schedule.csv"}
    for mode in ([], ["--in-process"]):
        result = joulesim("run", "-p", "small4", "-w", "tiny", *args, *mode, "-e", str(tmp_path / "out"))
        assert result.returncode == 2, (mode, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(expected), (mode, result.stderr)
        assert "EasyWithShutdown" not in result.stderr
        assert {path.name: path.read_bytes() for path in tmp_path.glob("out_*.csv")} == before


@pytest.mark.parametrize("command", [["run"], ["run", "--in-process"], ["simulate", "-s", "ipc:///nonexistent/x.sock"]])
def test_an_unwritable_output_prefix_is_refused_before_anything_runs(tmp_path, command):
    (tmp_path / "a_file").write_text("")
    prefix = tmp_path / "a_file" / "x" / "out"
    result = joulesim(*command, "-p", "small4", "-w", "tiny", "--timeout", "5", "-e", str(prefix))
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"joulesim: error: {prefix}: export prefix: cannot write outputs there: {tmp_path / 'a_file'} is not a "
        "directory (choose an export prefix in a directory you can write to)"]
    (tmp_path / "out_schedule.csv").mkdir()
    result = joulesim(*command, "-p", "small4", "-w", "tiny", "--timeout", "5", "-e", str(tmp_path / "out"))
    assert result.returncode == 2 and f"{tmp_path / 'out_schedule.csv'} is a directory" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out_jobs.csv").exists()


def start_blocking_run(tmp_path: Path, at_call: int, *extra: str, new_session: bool = False) -> tuple[subprocess.Popen, int]:
    """`joulesim run` with an EASY decider that blocks for ever at its call `at_call` (1: at
    SIMULATION_BEGINS, once the outputs are open); returns the run and the decider's pid, once
    the decider blocks (it tells through a FIFO: no sleeps)."""
    fifo = tmp_path / f"called{at_call}"
    os.mkfifo(fifo)
    (tmp_path / "blocking_easy.py").write_text(textwrap.dedent(f"""
        import os, threading
        from joulesim.deciders.batch.easy import EasyBackfilling

        class BlockAt(EasyBackfilling):
            calls = 0

            def handle(self, message):
                self.calls += 1
                if self.calls == {at_call}:
                    with open({str(fifo)!r}, "w") as f:
                        f.write(str(os.getpid()))
                    threading.Event().wait()  # think for ever
                return super().handle(message)
    """))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    # The tiny workload submits jobs at t=0, 10, 20 and 30: call 3 (t=10) comes mid-run.
    run = subprocess.Popen([*JOULESIM, "run", "-p", "small4", "-w", "tiny", "-d", "blocking_easy:BlockAt",
                            "-e", str(tmp_path / "out"), *extra], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=new_session,
                           preexec_fn=sigint_as_at_a_terminal)
    with open(fifo) as f:
        decider_pid = int(f.read())
    return run, decider_pid


def test_a_run_killed_at_once_leaves_csv_files_with_their_header(tmp_path):
    earlier_run(tmp_path)
    run, decider_pid = start_blocking_run(tmp_path, 1)
    run.kill()
    run.communicate(timeout=30)
    try:
        os.kill(decider_pid, signal.SIGKILL)  # it dies with its parent anyway; do not wait for that
    except ProcessLookupError:
        pass
    assert (tmp_path / "out_jobs.csv").read_text().startswith("job_id,workload_name,")
    assert (tmp_path / "out_machine_states.csv").read_text().startswith("time,nb_sleeping,")
    assert not (tmp_path / "out_schedule.csv").exists()  # the earlier run's is not left beside them


@pytest.mark.parametrize("mode", [[], ["--in-process"]])
def test_ctrl_c_mid_run_prints_one_line_naming_the_outputs_kept(tmp_path, mode):
    """Ctrl-C at a terminal signals the whole process group: the run and its decider."""
    run, decider_pid = start_blocking_run(tmp_path, 3, *mode, new_session=True)
    if not mode:  # the decider is not in the terminal's group: the run stops it, it prints nothing
        assert os.getpgid(decider_pid) != run.pid
    os.killpg(run.pid, signal.SIGINT)
    _, stderr = run.communicate(timeout=30)
    assert run.returncode == 130
    prefix = tmp_path / "out"
    assert stderr.splitlines() == [
        f"joulesim: interrupted; outputs so far kept in {prefix}_jobs.csv, {prefix}_machine_states.csv, "
        f"{prefix}_schedule.trace"]
    if not mode:
        with pytest.raises(ProcessLookupError):
            os.kill(decider_pid, 0)  # stopped and reaped


def test_ctrl_c_during_start_up_prints_one_line(tmp_path):
    """SIGINT while Python still imports joulesim (-X importtime lists each import on stderr as
    it ends; fastjsonschema's come before the schemas are compiled and the platform loaded)."""
    run = subprocess.Popen([sys.executable, "-X", "importtime", *JOULESIM[1:], "run", "-p", "small4", "-w", "tiny",
                            "-e", str(tmp_path / "out")], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_at_a_terminal)
    for line in run.stderr:
        if "fastjsonschema" in line:
            run.send_signal(signal.SIGINT)
            break
    _, stderr = run.communicate(timeout=60)
    lines = [line for line in stderr.splitlines() if not line.startswith("import time:")]
    assert run.returncode == 130, stderr
    assert lines == ["joulesim: interrupted; no output written yet"]


def test_the_summary_names_the_energy_cost_file(tmp_path):
    prefix = tmp_path / "priced"
    result = joulesim("run", "--in-process", "-p", "grid_table2", "-w", "tiny", "-E", "-d", "fcfs", "-e", str(prefix))
    assert result.returncode == 0, result.stderr
    cost_line = next(line for line in result.stdout.splitlines() if line.startswith("energy cost"))
    assert f"{prefix}_energy_cost.csv" in cost_line and "PREFIX" not in result.stdout
    assert os.path.exists(f"{prefix}_energy_cost.csv")


@pytest.mark.parametrize("mode", [[], ["--in-process"]])
def test_a_decider_that_refuses_the_platform_is_one_line_and_exit_2(tmp_path, mode):
    """pcbe learns from SIMULATION_BEGINS that the platform has no nodes: bad input for it, one
    error line (its message, reported by the run: not a second 'decider exited' line), exit 2."""
    result = joulesim("run", "-p", "small4", "-w", "tiny", "-d", "pcbe", "-e", str(tmp_path / "out"), *mode)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("joulesim: error:")]
    assert errors == [errors[0]] and "decider pcbe: the platform has no node hierarchy" in errors[0], result.stderr
    assert "exited with status" not in result.stderr and "Traceback" not in result.stderr
    assert "outputs written so far are kept" in result.stderr


def test_a_decider_error_after_start_reaches_the_run_once(tmp_path):
    """A user decider that raises a JoulesimError mid-run: its message once, exit 2."""
    (tmp_path / "refusing_decider.py").write_text(textwrap.dedent("""
        from joulesim.protocol.decider import Decider
        from joulesim.protocol.errors import JoulesimError

        class Refuser(Decider):
            def on_job_submitted(self, job):
                raise JoulesimError(f"decider refuser: job {job.id} has no walltime; give every job one")
    """))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = joulesim("run", "-p", "small4", "-w", "tiny", "-d", "refusing_decider:Refuser",
                      "-e", str(tmp_path / "out"), env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("has no walltime; give every job one") == 1, result.stderr
    assert result.stderr.count("joulesim: error:") == 1 and "exited with status" not in result.stderr
