"""`joulesim workload`: make workloads from real traces or from models."""

from __future__ import annotations

import click

from joulesim.cli.lazy_group import LazyGroup


@click.group(cls=LazyGroup, lazy_commands={
    "from-swf": "joulesim.cli.workload_from_swf:from_swf",
    "generate": "joulesim.cli.workload_generate:generate",
})
def workload() -> None:
    """Convert real traces (SWF) or generate synthetic workloads, as Batsim JSON."""
