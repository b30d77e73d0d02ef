"""In-process transport: the same messages as over ZeroMQ, handed over without sockets.

The simulator and a Python decider then run in one process. Messages are passed as
decoded objects, so neither side pays for JSON; they are still validated by the
simulator like any reply from the wire.

The build compiles this module (setup.py): every decider call passes here. The decider is any
object with a `handle(message)` method (a Decider, or one that acts as one), hence `Any`.
"""

from __future__ import annotations

from typing import Any


class InProcessRequester:
    """Simulator side of an in-process link to one decider object."""

    def __init__(self, decider: Any):
        self.decider = decider
        self.endpoint = "in-process"

    def exchange_message(self, message: dict[str, Any]) -> Any:
        return self.decider.handle(message)

    def close(self) -> None:
        pass
