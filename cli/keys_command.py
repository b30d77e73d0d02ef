"""`joulesim keys generate DIR`: CURVE keys for a simulator-decider link across machines."""

from __future__ import annotations

import click

from joulesim.cli.error_reporting import reports_errors


@click.group()
def keys() -> None:
    """ZeroMQ CURVE keys (authentication and encryption between simulator and decider)."""


@keys.command()
@click.argument("directory")
@click.option("--force", is_flag=True, help="Replace keys already in DIRECTORY.")
@reports_errors
def generate(directory: str, force: bool) -> None:
    """Write the decider's and the simulator's key pairs into DIRECTORY (created, private)."""
    from joulesim.protocol.curve_keys import generate_keys

    target = generate_keys(directory, force)
    click.echo(f"keys written to {target}: give both sides --curve-keys {target} (copy the directory "
               "to the other machine over a safe channel; secret files are readable by you only)")
