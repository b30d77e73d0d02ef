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

#: Steps a command leaves for after its summary or its error line (after_the_report).
_last_steps: list[Callable[[], None]] = []


def after_the_report(step: Callable[[], None]) -> None:
    """Run `step` once the command has printed all it prints (its summary, or its error line),
    before the process exits: what may crash the process, like an EDC library's
    batsim_edc_deinit, then comes after every word and every output of the run. A JoulesimError
    it raises is reported as the command's own (its exit status, if the command had succeeded);
    after Ctrl-C, once the interruption is told, the steps run and nothing more is said."""
    _last_steps.append(step)


def _run_last_steps() -> JoulesimError | None:
    """The steps left by the command, last first; the first error one of them raised."""
    failure = None
    while _last_steps:
        step = _last_steps.pop()
        try:
            step()
        except JoulesimError as exc:
            failure = failure or exc
    return failure


def _flush_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def report_and_exit_now(error: JoulesimError) -> None:
    """Print `error`'s line and end the process with its exit status, now, from any thread (a
    watchdog's, when the main thread is stuck in foreign code that cannot be interrupted)."""
    _flush_standard_streams()
    click.echo(f"joulesim: error: {error}", err=True)
    _flush_standard_streams()
    os._exit(error.exit_code)


def reports_errors(command: Callable) -> Callable:
    """Turn joulesim errors into one readable line and a non-zero exit status."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with command_reports_interruption():
                result = command(*args, **kwargs)
        except JoulesimError as exc:
            click.echo(f"joulesim: error: {exc}", err=True)
            _flush_standard_streams()
            also = _run_last_steps()
            if also is not None:
                click.echo(f"joulesim: error: {also}", err=True)
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
            _run_last_steps()  # (what they would raise adds nothing to the interruption)
            os._exit(130)
        except BaseException:  # (click's usage errors, a bug's traceback: the steps clean up, quietly)
            _run_last_steps()
            raise
        if _last_steps:
            _flush_standard_streams()
            failure = _run_last_steps()
            if failure is not None:
                click.echo(f"joulesim: error: {failure}", err=True)
                sys.exit(failure.exit_code)
        return result

    return wrapper
