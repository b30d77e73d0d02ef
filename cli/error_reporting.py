"""One way for every `joulesim` command to end on an error: a readable line, an exit status."""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import click

from joulesim.protocol.errors import JoulesimError


def reports_errors(command: Callable) -> Callable:
    """Turn joulesim errors into one readable line and a non-zero exit status."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except JoulesimError as exc:
            click.echo(f"joulesim: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("joulesim: interrupted", err=True)
            sys.exit(130)

    return wrapper
