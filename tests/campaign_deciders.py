"""Deciders that misbehave, for the campaign runner's tests (imported by workers by name)."""

from __future__ import annotations

import os

from joulesim.deciders.batch.fcfs import FCFS


class CrashingDecider(FCFS):
    """FCFS that raises on its third decision call (a bug in a user's decider)."""

    def decide(self) -> None:
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls == 3:
            raise RuntimeError("deliberate bug on call 3")
        super().decide()


class ExitingDecider(FCFS):
    """Kills the process it runs in (as a crash in native code would)."""

    def decide(self) -> None:
        os._exit(3)


class SpinningDecider(FCFS):
    """Never returns from its first decision: only killing its worker stops it."""

    def decide(self) -> None:
        while True:
            pass
