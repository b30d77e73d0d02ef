"""The network runner as the kernel's model and as what its transfers share links with.

Batsim's actors hand the kernel these two (BatsimActors.runner_started). They are apart from
batsim_actors.py, which setup.py compiles: they take the runner's bound methods as their own
attributes, which a class compiled by mypyc cannot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from joulesim.simulator.engine.kernel_extensions import LinkSharing, Model

if TYPE_CHECKING:
    from joulesim.simulator.engine.batsim_actors import BatsimActors


class RunnerModel(Model):
    """The network runner as the kernel's model."""

    def __init__(self, actors: "BatsimActors", runner: Any):
        self.actors = actors
        self.runner = runner
        self.next_event = runner.next_event  # (bound once: the kernel asks at every step)
        # A runner that can be stepped is (ptask_L07's actions are updated at every step),
        # while it says so (RunnerModel.stepped).
        runner.stepped = hasattr(runner, "next_step")
        if runner.stepped:
            self.next_step = runner.next_step
            self.move = runner.move

    @property
    def stepped(self) -> bool:  # type: ignore[override]
        return self.runner.stepping()

    def process(self, start: float, horizon: float, limit: float) -> None:
        self.actors.runner_events(self.runner, start, horizon, limit)

    def step(self) -> None:
        self.actors.runner_events(self.runner, stepped=True)


class RunnerLinks(LinkSharing):
    """The network runner's parallel tasks as what the kernel's transfers share links with."""

    def __init__(self, runner: Any):
        self._runner = runner
        self._table = runner.table
        self.leave = runner.leave_transfer
        self.rate = runner.transfer_rate
        self.refresh = runner.refresh

    def join(self, route: Any) -> int:
        return self._runner.join_transfer(route.links, route.latency)

    @property
    def version(self) -> int:  # type: ignore[override]
        return self._table.version
