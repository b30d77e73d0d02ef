"""Ctrl-C at any moment of a `joulesim` command: one line, exit status 130, never a traceback.

Python turns SIGINT into a KeyboardInterrupt wherever the program is. Inside a command, the
command's `reports_errors` catches it (after the `finally` blocks that stop a decider process
and close the output files), and a run says which outputs it kept. Before that - while Python
imports joulesim and its libraries, compiles the protocol's schemas, or click parses the command
line - there is nothing to clean up and nobody to catch it: the handler installed first thing by
`joulesim.cli.main` says so and exits at once.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from typing import Any, Iterator

#: The line when no run has written anything yet.
NOTHING_WRITTEN = "joulesim: interrupted; no output written yet"

_commands_running = 0  # commands (reports_errors) that turn Ctrl-C into their own message


def started_as_joulesim(module_name: str) -> bool:
    """Whether this process is the `joulesim` program (the console script, or `python -m
    joulesim.cli.main`), not a program that imports joulesim (pytest, a notebook): only the
    program takes over Ctrl-C."""
    return module_name == "__main__" or os.path.basename(sys.argv[0]) == "joulesim"


def install() -> None:
    """Take over SIGINT, unless this process was started with it ignored (e.g. `nohup`, or a
    parent that handles Ctrl-C for both of us): then it stays ignored."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return
    signal.signal(signal.SIGINT, _on_interrupt)


def _on_interrupt(signum: int, frame: Any) -> None:
    if _commands_running:
        # Further Ctrl-Cs would interrupt the clean-up that the first one started (stopping
        # the decider, closing files): it is short and bounded, so they are ignored.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt
    try:
        sys.stdout.flush()  # what a command printed before
    except (OSError, ValueError):
        pass
    print(NOTHING_WRITTEN, file=sys.stderr, flush=True)
    # Not SystemExit: the code it would interrupt (an import, click's parser) may catch that.
    os._exit(130)


@contextmanager
def command_reports_interruption() -> Iterator[None]:
    """While a command runs, Ctrl-C raises KeyboardInterrupt for it to report."""
    global _commands_running
    _commands_running += 1
    try:
        yield
    finally:
        _commands_running -= 1
