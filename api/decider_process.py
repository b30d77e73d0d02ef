"""Start a shipped or user decider as its own process, for `joulesim run` and the Python API."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.start_handshake import final_report, wait_until_started

_PREFIX = "joulesim-"
_OWNER_FILE = "owner.pid"  # the pid of the `joulesim run` that made the folder


def free_ipc_endpoint() -> tuple[str, str]:
    """A fresh ipc:// endpoint in a private temporary directory (returned for clean-up).

    Folders left by runs that were killed (kill -9 leaves no chance to clean up) are removed
    first: those whose owner process no longer exists.
    """
    remove_stale_ipc_folders()
    directory = tempfile.mkdtemp(prefix=_PREFIX)
    with open(os.path.join(directory, _OWNER_FILE), "w") as handle:
        handle.write(str(os.getpid()))
    return f"ipc://{os.path.join(directory, 'decider.sock')}", directory


def remove_stale_ipc_folders() -> list[str]:
    """Remove this user's joulesim-* temporary folders whose owner is dead; returns them."""
    removed = []
    for directory in glob.glob(os.path.join(tempfile.gettempdir(), _PREFIX + "*")):
        try:
            if os.stat(directory).st_uid != os.getuid():
                continue
            with open(os.path.join(directory, _OWNER_FILE)) as handle:
                owner = int(handle.read().strip())
        except (OSError, ValueError):
            continue  # not ours, or not a run's folder: leave it
        if not _alive(owner):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, belongs to someone else
    return True


def joulesim_decide_command(name: str, endpoint: str, options: dict[str, str], timeout_s: float,
                            curve_keys: str | None = None) -> list[str]:
    """The command line of `joulesim decide NAME` serving `endpoint`, tied to this process."""
    command = [sys.executable, "-m", "joulesim.cli.main", "decide", name, "-s", endpoint,
               "--timeout", repr(timeout_s), "--parent-pid", str(os.getpid())]
    if curve_keys is not None:
        command += ["--curve-keys", curve_keys]
    for key, value in options.items():
        command += ["--option", f"{key}={value}"]
    return command


class DeciderProcess:
    """A decider started as a child process from a command line (a shipped decider through
    `joulesim decide`, or any program that serves the Batsim protocol).

    It runs in its own process group: Ctrl-C at a terminal interrupts only us, and we stop it
    (one message, not one per process). With `reports_start` (a `joulesim decide` command line),
    it tells through a pipe whether it accepted its name and options (see start_handshake).
    """

    def __init__(self, command: list[str], description: str, stderr: Any = None, reports_start: bool = False):
        self.description = description
        self._ready_fd: int | None = None
        self._report_pipe: Any = None  # after wait_started: where a later error is reported
        pass_fds: tuple[int, ...] = ()
        if reports_start:
            self._ready_fd, write_fd = os.pipe()
            command = [*command, "--ready-fd", str(write_fd)]
            pass_fds = (write_fd,)
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                                            pass_fds=pass_fds, process_group=0)
        except OSError as exc:
            if self._ready_fd is not None:
                os.close(self._ready_fd)
            raise JoulesimError(f"cannot start the decider {description}: {exc.strerror or exc} (check the "
                                "command's first word: a program on PATH or a path to an executable)") from None
        finally:
            for fd in pass_fds:
                os.close(fd)  # the child holds its own copy: end of file when it exits

    def wait_started(self, timeout_s: float) -> None:
        """Return once the decider accepted its name and options (at once for a decider that
        does not report its start); raise its refusal as our error otherwise."""
        if self._ready_fd is None:
            return
        fd, self._ready_fd = self._ready_fd, None
        self._report_pipe = wait_until_started(fd, self.description, timeout_s, lambda: self.wait())

    def reported_error(self) -> JoulesimError | None:
        """Once the decider has exited: the error it reported through the start pipe, if any
        (see start_handshake: it printed nothing, the error is ours to report)."""
        if self._report_pipe is None:
            return None
        error = final_report(self._report_pipe, self.description)
        self._report_pipe.close()
        self._report_pipe = None
        return error

    def why_gone(self) -> str | JoulesimError | None:
        """None while the decider runs; otherwise its reported error, or a sentence for the user."""
        status = self.process.poll()
        if status is None:
            return None
        reported = self.reported_error()
        if reported is not None:
            return reported
        return (f"the decider process ({self.description}) exited with status {status} before answering "
                "(its own error message, if any, is above)")

    def wait(self, timeout_s: float = 5.0) -> int | None:
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """Make sure the decider is gone: ask, then insist."""
        if self._ready_fd is not None:
            os.close(self._ready_fd)
            self._ready_fd = None
        if self._report_pipe is not None:
            self._report_pipe.close()
            self._report_pipe = None
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_reporting_process(command: list[str], description: str) -> DeciderProcess:
    """A child that reports how it started (protocol/start_handshake.py), e.g. the process that
    loads an --edc-isolated library (open_edc's start_process)."""
    return DeciderProcess(command, description, reports_start=True)
