"""ZeroMQ request-reply transport, Batsim 4 style.

The simulator connects and sends requests; the decider holds REP and binds. Every wait has a
timeout, so a decider that dies or falls silent ends the run with a clear error instead
of a hang.
"""

from __future__ import annotations

import sys
import time
from typing import Callable

import zmq

from joulesim.protocol.curve_keys import CurveKeys
from joulesim.protocol.endpoint import DEFAULT_ENDPOINT  # noqa: F401 (re-exported: it was defined here)
from joulesim.protocol.endpoint import check_host_resolves
from joulesim.protocol.errors import DeciderUnavailableError, JoulesimError, ProtocolError

# How often a waiting simulator asks whether the decider process is still alive.
_LIVENESS_PERIOD_S = 0.2

# How long a simulator whose decider nobody started for it waits for the first reply before it
# says, once, where it waits and how to start a decider (a decider answers SIMULATION_BEGINS in
# milliseconds once it runs, so seconds of silence mean there is none yet).
WAITING_NOTICE_S = 2.5

# pyzmq's flags and options as plain ints: its enum members cost an enum operation (a Python
# call) at each use, which send_multipart and recv_multipart make for every frame; per exchange
# that was 5 us of the 80 of an ipc round trip (BENCHMARKS.md, "The ZeroMQ round trip").
_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE_NOBLOCK = int(zmq.SNDMORE) | _NOBLOCK
_RCVMORE = int(zmq.RCVMORE)
_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)

_ONE_REPLY = ("a decider must send exactly one reply per request (a REP socket does; a ROUTER or DEALER "
              "socket must answer each request once, echoing its envelope frames)")


def _refuse_more_frames(socket: zmq.Socket, sender: str) -> None:
    """Called when a message has more than one frame (Batsim messages are one frame of JSON):
    drains the rest, so the socket is left in a clean state, and raises ProtocolError."""
    count = 1
    while socket.getsockopt(_RCVMORE):
        socket.recv()
        count += 1
    raise _too_many_frames(sender, count)


def _too_many_frames(sender: str, count: int) -> ProtocolError:
    return ProtocolError(f"{sender} sent a message of {count} ZeroMQ frames; the protocol sends each "
                         "message as exactly one frame holding its JSON (fix: send the JSON with one "
                         "send(), not send_multipart)")


class ZmqRequester:
    """Simulator side: send one message, wait for its one reply.

    On the wire this is a REQ socket with ZMQ_REQ_CORRELATE and ZMQ_REQ_RELAXED set: every
    request goes as [request id, empty delimiter, JSON], which a REP decider (pybatsim,
    batsched, `joulesim decide`) echoes around its one-frame reply, so a reply is matched to
    its request by id and a stray reply can never be taken for the answer to a later request.
    The socket is a DEALER doing that framing itself, rather than a REQ socket with those
    options, because libzmq's REQ drops a reply with an older id silently (and never shows
    input between requests): a decider that answers a request twice would go unnoticed. Here
    that reply is seen, and the run stops with a ProtocolError saying so. (RELAXED only matters
    after a request timed out, and a timeout ends the run here.)

    When nobody watches the decider (`is_alive` is None: the user starts it), a simulator that
    has had no reply at all after `waiting_notice_s` says once, on stderr, where it waits and
    how to start a decider.
    """

    def __init__(self, endpoint: str, timeout_s: float,
                 is_alive: Callable[[], str | None] | None = None, curve: CurveKeys | None = None,
                 waiting_notice_s: float | None = WAITING_NOTICE_S):
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        # Returns None while the decider lives, or a sentence saying why it is gone.
        self.is_alive = is_alive
        self.curve = curve
        # A decider this process started (is_alive given) is not the user's to start.
        self._waiting_notice_s = waiting_notice_s if is_alive is None else None
        self._answered = False  # any reply yet: later silences are the decider thinking
        check_host_resolves(endpoint)  # else the wait would end blaming the decider or CURVE
        self._request_id = 0
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.DEALER)
        self._socket.setsockopt(zmq.LINGER, 0)
        if curve is not None:  # CURVE client: it knows the decider's public key
            self._socket.curve_secretkey = curve.simulator_secret
            self._socket.curve_publickey = curve.simulator_public
            self._socket.curve_serverkey = curve.decider_public
        self._first_wait_s = min(timeout_s, _LIVENESS_PERIOD_S)
        self._socket.setsockopt(zmq.RCVTIMEO, max(1, int(self._first_wait_s * 1000)))
        try:
            self._socket.connect(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise DeciderUnavailableError(f"cannot connect to the decider at {endpoint}: {exc}") from None

    def exchange(self, payload: bytes) -> bytes:
        socket = self._socket
        started = time.monotonic()
        self._request_id = (self._request_id + 1) & 0xFFFFFFFF
        request_id = self._request_id.to_bytes(4, "little")
        try:
            socket.send(request_id, _SNDMORE_NOBLOCK)
        except zmq.Again:
            # No connection to queue on: libzmq drops, without retrying, a connection whose
            # handshake failed (a peer that is not ZeroMQ, or with other CURVE settings).
            self._wait(zmq.POLLOUT, started)
            socket.send(request_id, _SNDMORE_NOBLOCK)
        # (A message's frames are queued together: once its first is taken, so are the others.)
        socket.send(b"", _SNDMORE_NOBLOCK)
        socket.send(payload, _NOBLOCK)
        # First wait: one blocking recv bounded by the socket's RCVTIMEO (cheaper than poll +
        # recv); later waits check the deadline and the decider's liveness in between.
        try:
            frames = [socket.recv()]
        except zmq.Again:
            self._wait(zmq.POLLIN, started)
            frames = [socket.recv()]
        while socket.getsockopt(_RCVMORE):  # (the rest of that message is there already)
            frames.append(socket.recv())
        if frames[0] != request_id or len(frames) < 3 or frames[1]:
            raise self._stray(frames)
        if len(frames) > 3:
            raise _too_many_frames("the decider", len(frames) - 2)
        self._answered = True
        if socket.getsockopt(_EVENTS) & _POLLIN:  # a second reply already came with it
            raise ProtocolError(f"the decider at {self.endpoint} sent more than one reply to request "
                                f"{self._request_id}; {_ONE_REPLY}")
        return frames[2]

    def _stray(self, frames: list[bytes]) -> ProtocolError:
        """The error for a message that is not the reply to the request being waited for."""
        if len(frames) >= 3 and len(frames[0]) == 4 and not frames[1]:
            earlier = int.from_bytes(frames[0], "little")
            if 0 < earlier < self._request_id:
                return ProtocolError(f"the decider at {self.endpoint} sent a second reply to request {earlier} "
                                     f"while the simulator waited for the reply to request {self._request_id}; "
                                     f"{_ONE_REPLY}")
        return ProtocolError(f"the decider at {self.endpoint} sent a message that answers no request (its "
                             f"envelope is not the request id and empty frame the request carried; got "
                             f"{len(frames)} frames); {_ONE_REPLY}")

    def _wait(self, event: int, started: float) -> None:
        """Return once the socket can do `event` (POLLIN: a message came; POLLOUT: a connection
        takes the request), or raise when `timeout_s` since `started` has passed or the decider
        is gone; says once where it waits if no decider has answered yet."""
        deadline = started + self.timeout_s
        notice_at = None
        if self._waiting_notice_s is not None and not self._answered:
            notice_at = started + self._waiting_notice_s
        period_ms = _LIVENESS_PERIOD_S * 1000 if self.is_alive else None
        while True:
            now = time.monotonic()
            remaining_ms = (deadline - now) * 1000
            if remaining_ms <= 0:
                raise DeciderUnavailableError(self._silence(event))
            if notice_at is not None and now >= notice_at:
                print(self._waiting_notice(), file=sys.stderr, flush=True)
                self._waiting_notice_s = notice_at = None  # once per run
            wait_ms = remaining_ms if period_ms is None else min(remaining_ms, period_ms)
            if notice_at is not None:
                wait_ms = min(wait_ms, (notice_at - now) * 1000)
            if self._socket.poll(max(1, int(wait_ms)), event):
                return
            if self.is_alive is not None:
                reason = self.is_alive()
                if isinstance(reason, JoulesimError):  # the error the decider reported to us
                    raise reason
                if reason:
                    raise DeciderUnavailableError(reason)

    def _start_hint(self) -> str:
        keys = f" --curve-keys {self.curve.directory}" if self.curve is not None else ""
        return (f"start one with `joulesim decide NAME -s {self.endpoint}{keys}` "
                "(NAME from `joulesim decide --list`)")

    def _waiting_notice(self) -> str:
        return (f"joulesim: waiting for a decider at {self.endpoint}: none has answered yet; "
                f"{self._start_hint()}; the simulator gives up after {self.timeout_s:g} s (--timeout)")

    def _silence(self, event: int) -> str:
        if event == zmq.POLLOUT:  # libzmq dropped the connection during its handshake
            fix = ("with --curve-keys, authentication probably failed: give both sides the same keys directory"
                   if self.curve is not None else
                   "if the decider runs with --curve-keys DIR, give the simulator the same --curve-keys DIR")
            return (f"the decider at {self.endpoint} did not answer within {self.timeout_s:g} s: the peer there "
                    f"refused the ZeroMQ handshake (it is not a ZeroMQ REP socket, or its CURVE security differs); "
                    f"{fix}")
        hint = ("; with --curve-keys, authentication probably failed: give both sides the same "
                "keys directory" if self.curve is not None else "")
        start = f" {self._start_hint()};" if self.is_alive is None and not self._answered else ""
        return (f"the decider at {self.endpoint} did not answer within {self.timeout_s:g} s "
                f"(is it running and bound to that endpoint?{start} give it more time with --timeout{hint})")

    def close(self) -> None:
        self._socket.close(linger=0)
        self._context.term()


class ZmqReplier:
    """Decider side: bind, receive one message, send one reply."""

    def __init__(self, endpoint: str, curve: CurveKeys | None = None):
        self.endpoint = endpoint
        self._context = zmq.Context()
        self._authenticator = None
        self._socket = self._context.socket(zmq.REP)
        self._socket.setsockopt(zmq.LINGER, 1000)
        self._timeout_s: float | None = None  # RCVTIMEO now (-1: wait forever)
        if curve is not None:  # CURVE server: accepts only the simulator's public key
            from zmq.auth.thread import ThreadAuthenticator

            self._authenticator = ThreadAuthenticator(self._context)
            self._authenticator.start()
            self._authenticator.configure_curve(domain="*", location=str(curve.authorized))
            self._socket.curve_secretkey = curve.decider_secret
            self._socket.curve_publickey = curve.decider_public
            self._socket.curve_server = True
        try:
            self._socket.bind(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise DeciderUnavailableError(
                f"cannot bind the decider to {endpoint}: {exc} "
                "(is another decider already using it? pick another endpoint with -s)") from exc

    def receive(self, timeout_s: float | None) -> bytes | None:
        """The next message, or None when none came within `timeout_s` seconds."""
        if timeout_s != self._timeout_s:  # one blocking recv bounded by RCVTIMEO: no poll call
            self._socket.setsockopt(zmq.RCVTIMEO, -1 if timeout_s is None else max(1, int(timeout_s * 1000)))
            self._timeout_s = timeout_s
        try:
            frame = self._socket.recv()
        except zmq.Again:
            return None
        if self._socket.getsockopt(_RCVMORE):
            _refuse_more_frames(self._socket, "the simulator")
        return frame

    def send(self, payload: bytes) -> None:
        self._socket.send(payload)

    def close(self) -> None:
        self._socket.close(linger=1000)
        if self._authenticator is not None:
            self._authenticator.stop()
        self._context.term()
