"""Run a decider as its own process: bind a REP socket and answer until SIMULATION_ENDS."""

from __future__ import annotations

import os
import time

from joulesim.protocol.codec import decode, encode
from joulesim.protocol.curve_keys import CurveKeys
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import DeciderUnavailableError
from joulesim.protocol.transport_zmq import ZmqReplier
from joulesim.protocol.validation import validate_simulator_message

# How often a decider started by `joulesim run` checks that its parent still lives, when the
# operating system cannot tell it (no PR_SET_PDEATHSIG outside Linux).
_PARENT_CHECK_S = 1.0


def serve(decider: Decider, endpoint: str, timeout_s: float | None = None,
          validate: bool = True, curve: CurveKeys | None = None, parent_pid: int | None = None) -> int:
    """Answer simulator messages on `endpoint`; returns the number of messages answered.

    `timeout_s` bounds the wait for each message, so a decider whose simulator died does not
    wait forever; with `parent_pid`, the wait also ends as soon as that process is gone.
    """
    replier = ZmqReplier(endpoint, curve)
    answered = 0
    try:
        while not decider.finished:
            raw = _receive(replier, timeout_s, parent_pid)
            if raw is None:
                raise DeciderUnavailableError(
                    f"no message from the simulator on {endpoint} for {timeout_s:g} s "
                    "(did it stop? start it with the same endpoint, or raise --timeout)")
            message = decode(raw, "the simulator")
            if validate:
                validate_simulator_message(message)
            replier.send(encode(decider.handle(message)))
            answered += 1
    finally:
        replier.close()
    return answered


def _receive(replier: ZmqReplier, timeout_s: float | None, parent_pid: int | None) -> bytes | None:
    if parent_pid is None:
        return replier.receive(timeout_s)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        wait = _PARENT_CHECK_S if deadline is None else min(_PARENT_CHECK_S, deadline - time.monotonic())
        raw = replier.receive(max(wait, 0.001))
        if raw is not None:
            return raw
        if os.getppid() != parent_pid:
            raise DeciderUnavailableError(f"the process that started this decider (pid {parent_pid}) is gone; "
                                          "stopping")
        if deadline is not None and time.monotonic() >= deadline:
            return None
