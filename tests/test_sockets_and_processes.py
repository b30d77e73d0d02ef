"""Sockets and processes under hostile conditions: malformed endpoints and timeouts, frames,
CURVE authentication, and a `joulesim run` killed with SIGKILL."""

from __future__ import annotations

import glob
import os
import re
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import zmq

from joulesim.protocol.errors import DeciderUnavailableError, ProtocolError
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
@pytest.mark.parametrize("value, needle", [
    *[(text, "is not an ASCII decimal number") for text in ("nan", "inf", "١٢", "1_0")],
    ("1e400", "is beyond the largest number a double holds"),
    *[(text, "is not a number of seconds in (0, 86400]") for text in ("1e308", "0", "-1", "86401")],
])
def test_a_timeout_outside_its_range_is_refused(tmp_path, command, value, needle):
    result = joulesim(*command, "--timeout", value, cwd=tmp_path)
    assert result.returncode == 2
    assert_clean_error(result, "Invalid value for '--timeout'", needle)


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


class RouterDecider:
    """A misbehaving decider on a ROUTER socket, served from a thread: it answers every request
    with `replies(request_body)`, a list of frames lists (each sent after the request's
    envelope), so it can answer twice, or with no envelope at all. Polls with timeouts only."""

    def __init__(self, endpoint: str, replies, echo_envelope: bool = True):
        self.socket = zmq.Context.instance().socket(zmq.ROUTER)
        self.socket.bind(endpoint)
        self.replies = replies
        self.echo_envelope = echo_envelope
        self.requests: list[list[bytes]] = []  # every request's frames, identity first
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            if not self.socket.poll(50):
                continue
            frames = self.socket.recv_multipart()
            self.requests.append(frames)
            identity, envelope, body = frames[0], frames[1:-1], frames[-1]
            for reply in self.replies(body):
                self.socket.send_multipart([identity, *(envelope if self.echo_envelope else []), *reply])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.socket.close(linger=0)


def _empty_reply(body: bytes) -> list[bytes]:
    import json

    return [json.dumps({"now": json.loads(body)["now"], "events": []}).encode()]


def test_the_simulator_sends_what_a_req_correlate_socket_sends(tmp_path):
    """[request id, empty delimiter, JSON]: what REP deciders echo back, as with libzmq's REQ
    with ZMQ_REQ_CORRELATE; a new id for every request."""
    endpoint = f"ipc://{tmp_path}/d.sock"
    decider = RouterDecider(endpoint, lambda body: [_empty_reply(body)])
    requester = ZmqRequester(endpoint, 10)
    reference = zmq.Context.instance().socket(zmq.REQ)
    reference.setsockopt(zmq.REQ_CORRELATE, 1)
    reference.setsockopt(zmq.REQ_RELAXED, 1)
    reference.connect(endpoint)
    try:
        assert requester.exchange(b'{"now": 0, "events": []}') == b'{"now": 0, "events": []}'
        assert requester.exchange(b'{"now": 1, "events": []}') == b'{"now": 1, "events": []}'
        reference.send(b'{"now": 2, "events": []}')
        assert reference.poll(10_000) and reference.recv() == b'{"now": 2, "events": []}'
    finally:
        reference.close(linger=0)
        requester.close()
        decider.close()
    shapes = [[len(frame) for frame in request[1:-1]] for request in decider.requests]
    assert shapes == [[4, 0]] * 3
    assert decider.requests[0][1] != decider.requests[1][1]


def test_a_decider_that_answers_a_request_twice_is_a_protocol_error(tmp_path):
    endpoint = f"ipc://{tmp_path}/d.sock"
    decider = RouterDecider(endpoint, lambda body: [_empty_reply(body), _empty_reply(body)])
    requester = ZmqRequester(endpoint, 10)
    try:
        with pytest.raises(ProtocolError, match=r"(a second reply to request 1|more than one reply to request 1).*"
                                                r"must send exactly one reply per request"):
            for now in range(3):  # the second reply is seen with the first, or instead of the next
                assert requester.exchange(f'{{"now": {now}, "events": []}}'.encode()) == \
                    f'{{"now": {now}, "events": []}}'.encode()
    finally:
        requester.close()
        decider.close()


def test_a_reply_without_the_request_envelope_is_a_protocol_error(tmp_path):
    endpoint = f"ipc://{tmp_path}/d.sock"
    decider = RouterDecider(endpoint, lambda body: [_empty_reply(body)], echo_envelope=False)
    requester = ZmqRequester(endpoint, 10)
    try:
        with pytest.raises(ProtocolError, match=r"sent a message that answers no request.*exactly one reply"):
            requester.exchange(b'{"now": 0, "events": []}')
    finally:
        requester.close()
        decider.close()


def test_simulate_stops_cleanly_when_the_decider_answers_twice(tmp_path):
    endpoint = f"ipc://{tmp_path}/d.sock"
    decider = RouterDecider(endpoint, lambda body: [_empty_reply(body), _empty_reply(body)])
    try:
        result = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", endpoint, "--timeout", "10",
                          cwd=tmp_path)
    finally:
        decider.close()
    assert result.returncode == 3
    assert_clean_error(result, "must send exactly one reply per request")


# ----------------------------------------------------------------- no decider yet
def test_a_simulator_with_no_decider_says_once_where_it_waits(tmp_path, capfd):
    endpoint = f"ipc://{tmp_path}/nobody.sock"
    requester = ZmqRequester(endpoint, 0.6, waiting_notice_s=0)  # the notice at once, not after seconds
    try:
        with pytest.raises(DeciderUnavailableError, match=r"did not answer within 0.6 s"):
            requester.exchange(b'{"now": 0, "events": []}')
    finally:
        requester.close()
    err = capfd.readouterr().err
    assert err.count("joulesim: waiting for a decider at") == 1, err
    assert f"start one with `joulesim decide NAME -s {endpoint}`" in err


def test_a_decider_started_for_the_simulator_gets_no_such_notice(tmp_path, capfd):
    requester = ZmqRequester(f"ipc://{tmp_path}/nobody.sock", 0.3, lambda: None, waiting_notice_s=0)
    try:
        with pytest.raises(DeciderUnavailableError):
            requester.exchange(b'{"now": 0, "events": []}')
    finally:
        requester.close()
    assert "waiting for a decider" not in capfd.readouterr().err


def test_simulate_timing_out_with_no_decider_says_how_to_start_one(tmp_path):
    endpoint = f"ipc://{tmp_path}/nobody.sock"
    result = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", endpoint, "--timeout", "0.5", cwd=tmp_path)
    assert result.returncode == 5
    assert_clean_error(result, "did not answer within 0.5 s", f"`joulesim decide NAME -s {endpoint}`")


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


def test_an_unresolvable_host_is_named_not_blamed_on_authentication(tmp_path):
    if not zmq.has("curve"):
        pytest.skip("this libzmq has no CURVE support")
    assert joulesim("keys", "generate", "keys", cwd=tmp_path).returncode == 0
    # .invalid never resolves (RFC 6761); the refusal comes before any wait.
    for curve in ([], ["--curve-keys", "keys"]):
        result = joulesim("simulate", "-p", "cluster32", "-w", "tiny", "-s", "tcp://nosuchhost.invalid:28000",
                          *curve, "--timeout", "20", cwd=tmp_path)
        assert result.returncode == 2
        assert_clean_error(result, "host 'nosuchhost.invalid' cannot be resolved", "check the host name")
        assert "authentication probably failed" not in result.stderr and "did not answer" not in result.stderr


def _damage(keys: Path, how: str) -> str:
    """Damage one file of a keys directory as `how` says; returns the file's name."""
    secret = keys / "simulator.key_secret"
    text = secret.read_text()
    public = re.search(r'public-key = "(.*)"', text).group(1)
    secret_key = re.search(r'secret-key = "(.*)"', text).group(1)
    if how == "truncated":
        secret.write_text(text[: text.index(secret_key) + 20])
        return secret.name
    if how == "no secret-key":
        secret.write_text(text.replace(f'secret-key = "{secret_key}"', ""))
        return secret.name
    if how == "not Z85":
        secret.write_text(text.replace(secret_key, "~" * 40))
        return secret.name
    if how == "other secret-key":
        other = re.search(r'secret-key = "(.*)"', (keys / "decider.key_secret").read_text()).group(1)
        secret.write_text(text.replace(secret_key, other))
        return secret.name
    if how == "bad public-key":
        secret.write_text(text.replace(public, public[:-1]))
        return secret.name
    if how == "empty":
        (keys / "decider.key_secret").write_text("")
        return "decider.key_secret"
    if how == "bad authorized key":
        (keys / "authorized" / "simulator.key").write_text('public-key = "short"\n')
        return "simulator.key"
    if how == "junk authorized file":
        (keys / "authorized" / "other.key").write_text("hello\n")
        return "other.key"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["truncated", "no secret-key", "not Z85", "other secret-key", "bad public-key",
                                 "empty", "bad authorized key", "junk authorized file"])
def test_a_damaged_keys_file_is_refused_when_loaded_naming_it(tmp_path, how):
    if not zmq.has("curve"):
        pytest.skip("this libzmq has no CURVE support")
    from joulesim.protocol.curve_keys import CurveKeysError, generate_keys, load_keys

    keys = generate_keys(str(tmp_path / "keys"))
    name = _damage(keys, how)
    with pytest.raises(CurveKeysError, match=rf"{re.escape(name)}: .*joulesim keys generate .*keys --force"):
        load_keys(str(keys))


def test_run_with_a_truncated_secret_key_is_one_clean_line(tmp_path):
    if not zmq.has("curve"):
        pytest.skip("this libzmq has no CURVE support")
    assert joulesim("keys", "generate", "keys", cwd=tmp_path).returncode == 0
    _damage(tmp_path / "keys", "truncated")
    result = joulesim("run", "-w", "tiny", "--curve-keys", "keys", cwd=tmp_path)
    assert result.returncode == 2
    assert_clean_error(result, "simulator.key_secret: its secret-key is not a CURVE key",
                       "`joulesim keys generate keys --force`")
    assert "ZMQError" not in result.stderr


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


@pytest.mark.parametrize("where", ["name too long", "under a file"])
def test_keys_generate_at_an_impossible_place_is_one_clean_line(tmp_path, where):
    if not zmq.has("curve"):
        pytest.skip("this libzmq has no CURVE support")
    (tmp_path / "file").write_text("")
    directory = "k" * 300 if where == "name too long" else "file/keys"
    result = joulesim("keys", "generate", directory, cwd=tmp_path)
    assert result.returncode == 2
    assert_clean_error(result, "cannot write keys")
