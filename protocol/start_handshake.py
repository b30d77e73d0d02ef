"""How a decider process started by `joulesim run` (or `joulesim.simulate(in_process=False)`)
tells its parent that it is ready, or why it refused to start, before the parent opens any
output file.

The parent passes the write end of a pipe (`joulesim decide --ready-fd N`). The decider writes
one JSON line once it is built from its name and options: {"ready": true}, or {"error": MESSAGE,
"exit_code": N} when it refuses them (an unknown name or option, a value out of range, a missing
model file). The parent then reports that one error as its own (one line, the same exit status
as `--in-process`) and the run touches no output file. End of file without a line: the decider
died before it could say (a crash, a signal); its own message, if any, is on stderr.

The pipe stays open while the decider serves: if it stops on an error later (e.g. a node decider
given a platform without nodes, which it learns from SIMULATION_BEGINS), it writes that error as
a second line and exits without printing it, and the parent reports it as its own, once.
"""

from __future__ import annotations

import os
import select
import sys
from contextlib import contextmanager
from typing import BinaryIO, Iterator

import orjson

from joulesim.protocol.errors import DeciderUnavailableError, JoulesimError


class DeciderRefusedError(JoulesimError):
    """The decider process refused its name or options; its message and exit status."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


@contextmanager
def _errors_to_parent(ready_fd: int) -> Iterator[None]:
    """A JoulesimError goes to the parent, which reports it (nothing on our stderr), and we exit
    with its status; anything else closes the pipe (end of file: the parent says the decider
    died, the traceback says why) and goes its usual way."""
    try:
        yield
    except JoulesimError as exc:
        _send(ready_fd, {"error": str(exc), "exit_code": exc.exit_code})
        sys.exit(exc.exit_code)
    except BaseException:
        os.close(ready_fd)
        raise


@contextmanager
def reports_start(ready_fd: int | None) -> Iterator[None]:
    """Decider side: around building the decider. With no pipe, errors go their usual way."""
    if ready_fd is None:
        yield
        return
    with _errors_to_parent(ready_fd):
        yield
    _send(ready_fd, {"ready": True}, close=False)  # kept open for reports_failure


@contextmanager
def reports_failure(ready_fd: int | None) -> Iterator[None]:
    """Decider side: around serving, once started (the same rule as reports_start)."""
    if ready_fd is None:
        yield
        return
    with _errors_to_parent(ready_fd):
        yield
    os.close(ready_fd)


def _send(fd: int, report: dict, close: bool = True) -> None:
    try:
        os.write(fd, orjson.dumps(report) + b"\n")  # one short write: atomic on a pipe
    except OSError:
        pass  # the parent is gone: nobody to tell
    finally:
        if close:
            os.close(fd)


def _refusal(line: bytes, description: str) -> JoulesimError:
    """The error a report line carries (or that the line is unreadable)."""
    try:
        report = orjson.loads(line)
        return DeciderRefusedError(str(report["error"]), int(report["exit_code"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return DeciderUnavailableError(f"the decider process ({description}) sent an unreadable report: "
                                       f"{line[:200]!r}")


def final_report(pipe: BinaryIO, description: str) -> JoulesimError | None:
    """Parent side, once the decider has exited: the error it reported, if any."""
    try:
        line = pipe.readline()  # the writer has exited: end of file at once
    except (OSError, ValueError):
        return None
    return _refusal(line, description) if line else None


def wait_until_started(read_fd: int, description: str, timeout_s: float, status_after_exit) -> BinaryIO:
    """Parent side: return the pipe (for final_report) once the decider is ready; raise its
    refusal, or that it died or did not start in time. `status_after_exit()` gives its exit
    status once it has ended."""
    pipe = os.fdopen(read_fd, "rb")
    try:
        readable, _, _ = select.select([pipe], [], [], timeout_s)
        if not readable:
            raise DeciderUnavailableError(
                f"the decider process ({description}) was not ready after {timeout_s:g} s (raise --timeout "
                "if it needs longer to load)")
        line = pipe.readline()
        if not line:
            raise DeciderUnavailableError(
                f"the decider process ({description}) exited with status {status_after_exit()} before it "
                "started (its own error message, if any, is above)")
        if line.strip() == b'{"ready":true}':
            return pipe
        raise _refusal(line, description)
    except BaseException:
        pipe.close()
        raise
