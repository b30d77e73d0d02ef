"""The engine's calendar entries: what simpy's `Environment.step()` needs of an event, and no more.

The calendar is simpy's heap; `Simulation.at` (and the job life cycle's inlined copy of it)
pushes these instead of full simpy Timeouts: one object per event instead of several calls.
"""

from __future__ import annotations

from typing import Any, Callable


def _fire(event: "CalendarEntry") -> None:
    """The one simpy callback: calls what `Simulation.at` scheduled (no closure per event)."""
    event.callback(event.value)


class CalendarEntry:
    """A calendar entry: the least that simpy's `Environment.step()` processes.

    step() pops (time, priority, id, event), swaps out `event.callbacks`, calls each with the
    event, then checks `event._ok`. A full simpy Timeout per job event costs several Python
    calls more; this entry costs one object.
    """

    __slots__ = ("callbacks", "_ok", "callback", "value")

    def __init__(self, callback: Callable[[Any], None], value: Any):
        self.callbacks = _FIRE
        self._ok = True
        self.callback = callback
        self.value = value


_FIRE = (_fire,)
