"""In-process transport: the same messages as over ZeroMQ, handed over without sockets.

The simulator and a Python decider then run in one process. Messages are passed as
decoded objects, so neither side pays for JSON; they are still validated by the
simulator like any reply from the wire.
"""

from __future__ import annotations

from typing import Any

from joulesim.protocol.decider import Decider


class InProcessRequester:
    """Simulator side of an in-process link to one decider object."""

    endpoint = "in-process"

    def __init__(self, decider: Decider):
        self.decider = decider

    def exchange_message(self, message: dict[str, Any]) -> Any:
        return self.decider.handle(message)

    def close(self) -> None:
        pass
