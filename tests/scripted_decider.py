"""A decider for tests: records every message and answers with a test-provided script."""

from __future__ import annotations

from typing import Any, Callable

from joulesim.protocol.decider import Decider


class ScriptedDecider(Decider):
    """`script(decider, message)` is called for each message after the first and emits decisions."""

    def __init__(self, script: Callable[["ScriptedDecider", dict[str, Any]], None] | None = None):
        super().__init__()
        self.script = script
        self.messages: list[dict[str, Any]] = []

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        self.messages.append(message)
        self._message = message
        return super().handle(message)

    def decide(self) -> None:
        # The first message holds SIMULATION_BEGINS alone; scripts start with the next one.
        if self.script is not None and self._message["events"][0]["type"] != "SIMULATION_BEGINS":
            self.script(self, self._message)

    def events_of(self, kind: str) -> list[tuple[float, dict[str, Any]]]:
        """(message now, event) of every received event of type `kind`."""
        return [(m["now"], e) for m in self.messages for e in m["events"] if e["type"] == kind]

    def types_per_message(self) -> list[tuple[float, list[str]]]:
        return [(m["now"], [e["type"] for e in m["events"]]) for m in self.messages]


def submitted(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["data"] for e in message["events"] if e["type"] == "JOB_SUBMITTED"]


def execute_then_kill(alloc: str, at: float, job_id: str = "w0!1", **execute: Any) -> ScriptedDecider:
    """A decider that starts every submitted job on `alloc` (with `execute`'s keywords, e.g.
    storage_mapping) and kills `job_id` at time `at` (a CALL_ME_LATER)."""
    def script(decider: ScriptedDecider, message: dict[str, Any]) -> None:
        for job in submitted(message):
            decider.execute_job(job["job_id"], alloc, **execute)
            decider.call_me_later(at)
        if any(e["type"] == "REQUESTED_CALL" for e in message["events"]):
            decider.kill_jobs([job_id])
    return ScriptedDecider(script)
