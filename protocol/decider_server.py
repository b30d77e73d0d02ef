"""Run a decider as its own process: bind a REP socket and answer until SIMULATION_ENDS."""

from __future__ import annotations

from joulesim.protocol.codec import decode, encode
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import DeciderUnavailableError
from joulesim.protocol.transport_zmq import ZmqReplier
from joulesim.protocol.validation import validate_simulator_message


def serve(decider: Decider, endpoint: str, timeout_s: float | None = None,
          validate: bool = True) -> int:
    """Answer simulator messages on `endpoint`; returns the number of messages answered.

    `timeout_s` bounds the wait for each message, so a decider whose simulator died
    does not wait forever.
    """
    replier = ZmqReplier(endpoint)
    answered = 0
    try:
        while not decider.finished:
            raw = replier.receive(timeout_s)
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
