"""The simulator's end of the conversation: send a message, get a validated reply."""

from __future__ import annotations

from time import perf_counter
from typing import TYPE_CHECKING, Any, TextIO

from joulesim.protocol.codec import decode, encode
from joulesim.protocol.errors import RunTimeLimitError
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.protocol.validation import validate_decider_message

if TYPE_CHECKING:  # (an in-process run loads no libzmq)
    from joulesim.protocol.transport_zmq import ZmqRequester


class WallClockLimit:
    """A wall-clock time limit that counts from `since` (a perf_counter() value, default now):
    `joulesim.simulate(time_limit=...)` starts it when called, so the inputs' loading counts."""

    def __init__(self, seconds: float, since: float | None = None):
        self.seconds = seconds
        self.since = perf_counter() if since is None else since


class DeciderLink:
    def __init__(self, transport: "ZmqRequester | InProcessRequester | Any"):
        """`transport`: a requester (ZeroMQ, in-process, or a Batsim 5 EDC's)."""
        self.transport: Any = transport
        # (a Python decider, or a Batsim 5 EDC whose requester does its own encoding)
        self._in_process = hasattr(transport, "exchange_message")  # no encoding needed
        # Whether messages carry numbers as Batsim 4 prints them (rounded to the microsecond);
        # Batsim 5's batprotocol carries doubles as they are (an EDC's requester says so).
        self.batsim4_numbers = getattr(transport, "batsim4_numbers", True)
        self.calls = 0
        self.scheduling_time = 0.0  # wall-clock seconds spent waiting for replies
        # The platform's resource count, once known: bounds the interval sets a reply may hold.
        self.nb_resources: int | None = None
        # perf_counter() value past which the run stops (a wall-clock limit), checked at each call.
        self.deadline = float("inf")
        self.time_limit_s = float("inf")
        self._trace: TextIO | None = None  # where messages are written (trace_messages)
        # Events told first, in the next message, to a decider taking over (decider_takeover.py).
        self.takeover: list[dict[str, Any]] | None = None

    def trace_messages(self, out: TextIO) -> None:
        """Write every message and reply to `out` (-v network-only or debug), one JSON line each."""
        self._trace = out

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.takeover is not None:
            return self._call_taking_over(message)
        trace = self._trace
        if self._in_process:
            if trace is not None:
                trace.write(f"joulesim: sent: {encode(message).decode()}\n")
            started = perf_counter()
            reply = self.transport.exchange_message(message)
            finished = perf_counter()
            if trace is not None:
                trace.write(f"joulesim: received: {encode(reply).decode()}\n")
        else:
            sent = encode(message)
            if trace is not None:  # the bytes that go over the wire, each way
                trace.write(f"joulesim: sent: {sent.decode()}\n")
            started = perf_counter()
            answer = self.transport.exchange(sent)
            if trace is not None:  # before decoding: a reply that is not JSON shows too
                trace.write(f"joulesim: received: {answer.decode(errors='replace')}\n")
            reply = decode(answer, "the decider")
            finished = perf_counter()
        self.scheduling_time += finished - started
        self.calls += 1
        if finished > self.deadline:
            raise RunTimeLimitError(f"the run went past its time limit of {self.time_limit_s:g} s of wall-clock "
                                    f"time (at simulated time t={message['now']:g}, after {self.calls} decider "
                                    "calls); give it a longer limit, or a smaller workload")
        validate_decider_message(reply, message["now"], self.nb_resources)
        return reply

    def _call_taking_over(self, message: dict[str, Any]) -> dict[str, Any]:
        """The first message to a decider taking over (decider_takeover.py): SIMULATION_BEGINS
        alone, then the present (running and waiting jobs) at the head of `message`, all stamped
        with its time; the two replies' decisions in order, as one reply."""
        now = message["now"]
        begins, *present = [{"timestamp": now, **event} for event in self.takeover]  # type: ignore[union-attr]
        self.takeover = None
        first = self.call({"now": now, "events": [begins]})
        second = self.call({"now": max(now, first["now"]), "events": present + message["events"]})
        self.calls -= 1  # (one call of the simulation's)
        return {"now": second["now"], "events": first["events"] + second["events"]}

    def limit_wall_time(self, limit: "float | WallClockLimit | None") -> None:
        """Stop the run with RunTimeLimitError once the limit's seconds of wall-clock time have
        passed (a number: from now; a WallClockLimit: from its start)."""
        if limit is not None:
            if not isinstance(limit, WallClockLimit):
                limit = WallClockLimit(limit)
            self.time_limit_s = limit.seconds
            self.deadline = limit.since + limit.seconds

    def close(self) -> None:
        self.transport.close()
