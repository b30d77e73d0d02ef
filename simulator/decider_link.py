"""The simulator's end of the conversation: send a message, get a validated reply."""

from __future__ import annotations

import time
from typing import Any

from joulesim.protocol.codec import decode, encode
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.protocol.transport_zmq import ZmqRequester
from joulesim.protocol.validation import validate_decider_message


class DeciderLink:
    def __init__(self, transport: ZmqRequester | InProcessRequester):
        self.transport = transport
        self.calls = 0
        self.scheduling_time = 0.0  # wall-clock seconds spent waiting for replies

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        if isinstance(self.transport, InProcessRequester):
            reply = self.transport.exchange_message(message)
        else:
            reply = decode(self.transport.exchange(encode(message)), "the decider")
        self.scheduling_time += time.perf_counter() - started
        self.calls += 1
        validate_decider_message(reply, message["now"])
        return reply

    def close(self) -> None:
        self.transport.close()
