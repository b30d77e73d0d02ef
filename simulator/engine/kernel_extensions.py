"""What plugs into the replicated SimGrid kernel (simgrid_kernel.Kernel) from outside it: a model
with a calendar of its own (`Model`: the network runner) and the linear system the transfers
share links in (`LinkSharing`). Batsim's actors implement both (batsim_actors.RunnerModel,
RunnerLinks). They live apart from the kernel's module because that module may be compiled
(mypyc, see setup.py), and a compiled class cannot be subclassed by interpreted code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from joulesim.simulator.engine.simgrid_kernel import Route

__all__ = ["LinkSharing", "Model"]


class LinkSharing:
    """Where the transfers share links with other work (the network runner's parallel tasks,
    on ptask_L07's one linear system): a transfer past its latency joins it (a slot, -1 when it
    shares nothing) and leaves it when it ends; its rate is the last solve's, re-solved at each
    step's start (`refresh`), and `version` changes whenever the rates may have."""

    version = 0

    def join(self, route: Route) -> int:
        raise NotImplementedError

    def leave(self, slot: int) -> None:
        raise NotImplementedError

    def rate(self, slot: int) -> float:
        raise NotImplementedError

    def refresh(self) -> None:
        raise NotImplementedError


class Model:
    """A model with a calendar of its own (the network runner, through Batsim's actors).

    A `stepped` one has its actions updated at every step of the kernel, as SimGrid's full
    update does: it tells the length of the step it needs (`next_step`), is told each step
    (`move`) and handles what is due then (`step`); the others tell when their next event is due and handle their events (`process`)."""

    stepped = False

    def next_step(self) -> float:
        """The seconds until its next event (-1: none)."""
        raise NotImplementedError

    def move(self, delta: float) -> bool:
        """The clock moved by `delta`: update its actions; whether something is due now."""
        raise NotImplementedError

    def step(self) -> None:
        """Handle what is due now (after `move` said so)."""
        raise NotImplementedError

    def next_event(self) -> float:
        """When its next event is due (inf: none)."""
        raise NotImplementedError

    def process(self, start: float, horizon: float, limit: float) -> None:
        """Handle its events: the first is due (the clock is at `start`), the next ones while
        within `horizon` of it (a negative one: no other action) and before `limit`; the model
        moves the clock to each (Kernel.set_clock)."""
        raise NotImplementedError
