"""ZeroMQ request-reply transport, Batsim 4 style.

The simulator holds REQ and connects; the decider holds REP and binds. Every wait has a
timeout, so a decider that dies or falls silent ends the run with a clear error instead
of a hang.
"""

from __future__ import annotations

import time
from typing import Callable

import zmq

from joulesim.protocol.curve_keys import CurveKeys
from joulesim.protocol.errors import DeciderUnavailableError, ProtocolError

DEFAULT_ENDPOINT = "tcp://127.0.0.1:28000"

# How often a waiting simulator asks whether the decider process is still alive.
_LIVENESS_PERIOD_S = 0.2


def _refuse_more_frames(socket: zmq.Socket, sender: str) -> None:
    """Called when a message has more than one frame (Batsim messages are one frame of JSON):
    drains the rest, so the socket is left in a clean state, and raises ProtocolError."""
    count = 1
    while socket.getsockopt(zmq.RCVMORE):
        socket.recv()
        count += 1
    raise ProtocolError(f"{sender} sent a message of {count} ZeroMQ frames; the protocol sends each "
                        "message as exactly one frame holding its JSON (fix: send the JSON with one "
                        "send(), not send_multipart)")


class ZmqRequester:
    """Simulator side: send one message, wait for one reply."""

    def __init__(self, endpoint: str, timeout_s: float,
                 is_alive: Callable[[], str | None] | None = None, curve: CurveKeys | None = None):
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        # Returns None while the decider lives, or a sentence saying why it is gone.
        self.is_alive = is_alive
        self.curve = curve
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
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
        socket.send(payload)
        # First wait: one blocking recv bounded by the socket's RCVTIMEO (cheaper than poll +
        # recv); later waits check the deadline and the decider's liveness in between.
        try:
            frame = socket.recv()
        except zmq.Again:
            pass
        else:
            if socket.getsockopt(zmq.RCVMORE):
                _refuse_more_frames(socket, "the decider")
            return frame
        deadline = time.monotonic() + self.timeout_s - self._first_wait_s
        period_ms = _LIVENESS_PERIOD_S * 1000 if self.is_alive else None
        while True:
            remaining_ms = (deadline - time.monotonic()) * 1000
            if remaining_ms <= 0:
                hint = ("; with --curve-keys, authentication probably failed: give both sides the same "
                        "keys directory" if self.curve is not None else "")
                raise DeciderUnavailableError(
                    f"the decider at {self.endpoint} did not answer within {self.timeout_s:g} s "
                    f"(is it running and bound to that endpoint? give it more time with --timeout{hint})")
            wait_ms = remaining_ms if period_ms is None else min(remaining_ms, period_ms)
            if self._socket.poll(max(1, int(wait_ms)), zmq.POLLIN):
                frame = socket.recv()
                if socket.getsockopt(zmq.RCVMORE):
                    _refuse_more_frames(socket, "the decider")
                return frame
            if self.is_alive is not None:
                reason = self.is_alive()
                if reason:
                    raise DeciderUnavailableError(reason)

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
        if self._socket.getsockopt(zmq.RCVMORE):
            _refuse_more_frames(self._socket, "the simulator")
        return frame

    def send(self, payload: bytes) -> None:
        self._socket.send(payload)

    def close(self) -> None:
        self._socket.close(linger=1000)
        if self._authenticator is not None:
            self._authenticator.stop()
        self._context.term()
