"""The short summary `joulesim run` and `joulesim simulate` print at the end."""

from __future__ import annotations

import click

from joulesim.simulator.simulation import SimulationResult


def print_summary(result: SimulationResult) -> None:
    stats = result.stats
    lines = [
        f"jobs                  {stats.nb_jobs} ({stats.nb_success} succeeded, {stats.nb_killed} killed, "
        f"{stats.nb_rejected} rejected)",
        f"makespan              {stats.makespan:.1f} s",
        f"mean waiting time     {stats.mean_waiting:.1f} s",
        f"mean bounded slowdown {stats.mean_bounded_slowdown:.2f} (tau = 10 s)",
        f"decider calls         {result.decider_calls} in {result.wall_time:.2f} s of wall-clock time",
        "outputs               " + ", ".join(result.outputs),
    ]
    click.echo("\n".join(lines))
