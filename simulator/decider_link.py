"""The simulator's end of the conversation: send a message, get a validated reply."""

from __future__ import annotations

from time import perf_counter
from typing import Any

from joulesim.protocol.codec import decode, encode
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.protocol.transport_zmq import ZmqRequester
from joulesim.protocol.validation import validate_decider_message


class DeciderLink:
    def __init__(self, transport: ZmqRequester | InProcessRequester):
        self.transport = transport
        self._in_process = isinstance(transport, InProcessRequester)  # no encoding needed
        self.calls = 0
        self.scheduling_time = 0.0  # wall-clock seconds spent waiting for replies
        # The platform's resource count, once known: bounds the interval sets a reply may hold.
        self.nb_resources: int | None = None

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        started = perf_counter()
        if self._in_process:
            reply = self.transport.exchange_message(message)
        else:
            reply = decode(self.transport.exchange(encode(message)), "the decider")
        self.scheduling_time += perf_counter() - started
        self.calls += 1
        validate_decider_message(reply, message["now"], self.nb_resources)
        return reply

    def close(self) -> None:
        self.transport.close()
