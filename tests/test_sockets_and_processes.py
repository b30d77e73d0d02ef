"""Sockets and processes under hostile conditions: malformed endpoints and timeouts, frames,
CURVE authentication, and a `joulesim run` killed with SIGKILL."""

from __future__ import annotations

import glob
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import zmq

from joulesim.protocol.errors import ProtocolError
from joulesim.protocol.transport_zmq import ZmqReplier, ZmqRequester

TESTS = Path(__file__).resolve().parent


def joulesim(*args: str, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def assert_clean_error(result: subprocess.CompletedProcess, *needles: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


# ----------------------------------------------------------------- command-line values
@pytest.mark.parametrize("command", ["simulate", "decide"])
@pytest.mark.parametrize("value, needle", [
    ("garbage", "is not one joulesim can use; use tcp://HOST:PORT"),
    ("tcp://127.0.0.1:notaport", "is not one joulesim can use"),
    ("tcp://", "is not one joulesim can use"),
    ("tcp://127.0.0.1:70000", "port 70000 is outside 1-65535"),
    ("udp://127.0.0.1:1", "is not one joulesim can use"),
    ("ipc://", "ipc:// needs a file path"),
    ("ipc:///tmp/" + "a" * 200, "may have at most"),
])
def test_a_malformed_endpoint_is_refused_before_anything_starts(tmp_path, command, value, needle):
    args = ["-p", "cluster32", "-w", "tiny"] if command == "simulate" else ["easy"]
    result = joulesim(command, *args, "-s", value, cwd=tmp_path)
    assert result.returncode == 2
    assert_clean_error(result, "'-s' / '--socket-endpoint'", needle)


@pytest.mark.parametrize("command", [["simulate", "-p", "cluster32", "-w", "tiny"], ["decide", "easy"], ["run"]])
@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "0", "-1", "86401"])
def test_a_timeout_outside_its_range_is_refused(tmp_path, command, value):
    result = joulesim(*command, "--timeout", value, cwd=tmp_path)
    assert result.returncode == 2
    assert_clean_error(result, "Invalid value for '--timeout'", "is not a number of seconds in (0, 86400]")


def test_an_endpoint_beyond_loopback_gets_a_loud_warning(tmp_path):
    # Nothing listens there: the run fails fast, but the warning comes first.
    result = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", "tcp://0.0.0.0:1", "--timeout", "0.5",
                      cwd=tmp_path)
    assert_clean_error(result, "warning: tcp://0.0.0.0:1 is reachable beyond this machine", "--curve-keys")
    quiet = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", "tcp://127.0.0.1:1", "--timeout", "0.5",
                     cwd=tmp_path)
    assert "warning" not in quiet.stderr


# ----------------------------------------------------------------- frames
def _serve_once(endpoint: str, frames: list[bytes], ready: threading.Event) -> None:
    context = zmq.Context.instance()
    socket = context.socket(zmq.REP)
    socket.bind(endpoint)
    ready.set()
    socket.recv()
    socket.send_multipart(frames)
    socket.close(linger=1000)


def test_a_multi_frame_reply_is_a_protocol_error(tmp_path):
    endpoint = f"ipc://{tmp_path}/d.sock"
    ready = threading.Event()
    server = threading.Thread(target=_serve_once, args=(endpoint, [b'{"now": 0, "events": []}', b"x"], ready))
    server.start()
    assert ready.wait(10)
    requester = ZmqRequester(endpoint, 10)
    try:
        with pytest.raises(ProtocolError, match=r"the decider sent a message of 2 ZeroMQ frames.*one send\(\)"):
            requester.exchange(b'{"now": 0, "events": []}')
    finally:
        requester.close()
        server.join(10)


def test_a_multi_frame_request_is_a_protocol_error(tmp_path):
    endpoint = f"ipc://{tmp_path}/d.sock"
    replier = ZmqReplier(endpoint)
    socket = zmq.Context.instance().socket(zmq.REQ)
    socket.connect(endpoint)
    socket.send_multipart([b"{}", b"", b"more"])
    try:
        with pytest.raises(ProtocolError, match=r"the simulator sent a message of 3 ZeroMQ frames"):
            replier.receive(10)
    finally:
        socket.close(linger=0)
        replier.close()


def test_simulate_stops_cleanly_on_a_multi_frame_reply(tmp_path):
    endpoint = f"ipc://{tmp_path}/d.sock"
    ready = threading.Event()
    server = threading.Thread(target=_serve_once, args=(endpoint, [b'{"now": 0, "events": []}', b"x"], ready))
    server.start()
    assert ready.wait(10)
    result = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", endpoint, "--timeout", "10", cwd=tmp_path)
    server.join(10)
    assert result.returncode == 3
    assert_clean_error(result, "2 ZeroMQ frames")


# ----------------------------------------------------------------- CURVE
def test_curve_keys_let_the_right_simulator_in_and_keep_others_out(tmp_path):
    if not zmq.has("curve"):
        pytest.skip("this libzmq has no CURVE support")
    for name in ("keys", "other"):
        generated = joulesim("keys", "generate", name, cwd=tmp_path)
        assert generated.returncode == 0, generated.stderr
    assert oct(os.stat(tmp_path / "keys" / "decider.key_secret").st_mode & 0o777) == "0o600"
    again = joulesim("keys", "generate", "keys", cwd=tmp_path)
    assert_clean_error(again, "keys already exist", "--force")

    ok = joulesim("run", "-w", "tiny", "--curve-keys", "keys", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr

    endpoint = f"ipc://{tmp_path}/d.sock"
    decider = subprocess.Popen([sys.executable, "-m", "joulesim.cli.main", "decide", "easy", "-s", endpoint,
                                "--curve-keys", "keys", "--timeout", "20"], cwd=tmp_path,
                               stderr=subprocess.PIPE, text=True)
    try:
        intruder = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", endpoint, "--curve-keys", "other",
                            "--timeout", "1.5", cwd=tmp_path)
        assert intruder.returncode == 5
        assert_clean_error(intruder, "did not answer within 1.5 s", "authentication probably failed")
        plain = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", endpoint, "--timeout", "1.5",
                         cwd=tmp_path)
        assert plain.returncode == 5
        friend = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", endpoint, "--curve-keys", "keys",
                          "--timeout", "10", cwd=tmp_path)
        assert friend.returncode == 0, friend.stderr
    finally:
        decider.kill()
        decider.communicate(timeout=10)


def test_a_keys_directory_that_is_not_one_is_refused(tmp_path):
    result = joulesim("run", "-w", "tiny", "--curve-keys", str(tmp_path / "missing"), cwd=tmp_path)
    assert_clean_error(result, "not a joulesim keys directory", "joulesim keys generate DIR")


# ----------------------------------------------------------------- processes
def _wait_readable(fd: int, seconds: float) -> bool:
    return bool(select.select([fd], [], [], seconds)[0])


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfd_open to wait for a non-child")
def test_a_killed_run_takes_its_decider_along_and_its_folder_is_cleaned_next_time(tmp_path):
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    reader = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)
    env = {"TMPDIR": str(tmp_path), "JOULESIM_TEST_READY": str(ready),
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.Popen([sys.executable, "-m", "joulesim.cli.main", "run", "-w", "tiny", "-d",
                            "blocking_decider:BlockingDecider", "--timeout", "600"], cwd=tmp_path,
                           env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _wait_readable(reader, 60), "the decider never started"
        decider_pid = int(os.read(reader, 64))
        folders = glob.glob(str(tmp_path / "joulesim-*"))
        assert len(folders) == 1 and (Path(folders[0]) / "owner.pid").read_text() == str(run.pid)
        watch = os.pidfd_open(decider_pid)
        run.send_signal(signal.SIGKILL)
        run.wait(10)
        assert _wait_readable(watch, 10), "the decider outlived its killed parent"
        os.close(watch)
    finally:
        os.close(reader)
        if run.poll() is None:
            run.kill()
    assert os.path.isdir(folders[0])  # kill -9 left no chance to clean up...
    again = joulesim("run", "-w", "tiny", cwd=tmp_path, env={"TMPDIR": str(tmp_path)})
    assert again.returncode == 0, again.stderr
    assert glob.glob(str(tmp_path / "joulesim-*")) == []  # ...the next run did


def test_an_in_process_decider_bug_is_reported_with_a_header(tmp_path):
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "JOULESIM_TEST_READY": str(tmp_path / "not-a-dir" / "ready")}
    result = joulesim("run", "-w", "tiny", "--in-process", "-d", "blocking_decider:BlockingDecider",
                      cwd=tmp_path, env=env)
    assert result.returncode == 6
    assert "joulesim: error: decider blocking_decider:BlockingDecider raised an exception at simulated time t=0" \
        in result.stderr


def test_garbage_bytes_to_a_decider_are_a_protocol_error(tmp_path):
    endpoint = f"ipc://{tmp_path}/d.sock"
    decider = subprocess.Popen([sys.executable, "-m", "joulesim.cli.main", "decide", "easy", "-s", endpoint,
                                "--timeout", "20"], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    socket = zmq.Context.instance().socket(zmq.REQ)
    socket.connect(endpoint)
    socket.send(b"\xff\xfe{not json")
    try:
        _, stderr = decider.communicate(timeout=30)
    finally:
        socket.close(linger=0)
    assert decider.returncode == 3
    assert "malformed JSON from the simulator" in stderr and "Traceback" not in stderr
