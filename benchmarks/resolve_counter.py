"""Counting the network runner's rate re-solves from outside (benchmarks only)."""

from __future__ import annotations


class ResolveCounter:
    """Wraps the fair-bottleneck solver the runner looks up in its module at each re-solve;
    `calls` counts them (reset it between runs)."""

    def __init__(self) -> None:
        from joulesim.simulator.models import ptask_runner

        self.calls = 0
        solve = ptask_runner.fair_bottleneck_periods

        def counted(*args):
            self.calls += 1
            return solve(*args)

        ptask_runner.fair_bottleneck_periods = counted
