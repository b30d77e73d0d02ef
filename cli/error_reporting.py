"""One way for every `joulesim` command to end on an error: a readable line, an exit status."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable

import click

from joulesim.cli.interruption import command_reports_interruption
from joulesim.protocol.errors import JoulesimError
from joulesim.run_interrupted import RunInterrupted


def reports_errors(command: Callable) -> Callable:
    """Turn joulesim errors into one readable line and a non-zero exit status."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with command_reports_interruption():
                return command(*args, **kwargs)
        except JoulesimError as exc:
            click.echo(f"joulesim: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt as exc:
            # A run says which outputs it kept (RunInterrupted); other commands say their own
            # elsewhere (a campaign's results) or have none.
            click.echo(f"joulesim: {exc.message}" if isinstance(exc, RunInterrupted) else "joulesim: interrupted",
                       err=True)
            # The command has cleaned up (its finally blocks ran). Not SystemExit: with a Ctrl-C
            # landing in an import the command makes (the simulator's modules are imported by the
            # commands that use them), the process then ended by SIGINT (status -2) instead of 130
            # in 5 of 40 tries; os._exit gave 130 in 60 of 60 (cause in CPython's shutdown not found).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)

    return wrapper
