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
from conftest import read_csv, write_platform, write_workload

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
    for line in ("makespan", "mean waiting time", "mean bounded slowdown", "out_jobs.csv"):
        assert line in result.stdout
    rows = read_csv(str(tmp_path / "out_jobs.csv"))
    assert len(rows) == 400 and {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}


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
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
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
