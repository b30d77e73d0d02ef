"""Opening the files a user names (workloads, events files, SWF traces), with clear errors.

A path that is missing, a directory, a device or unreadable ends in an InputError that says so,
never an OSError traceback; a device such as /dev/zero or /dev/urandom would otherwise be read
forever. A named pipe (a FIFO made by mkfifo) is refused too: opening it waits until some
process opens it for writing, for ever if none does. Regular files and the shell's pipes
(`-w <(generate)`, `/dev/stdin` fed by `|`: opening them never waits) are read.
"""

from __future__ import annotations

import os
import stat

from joulesim.inputs.input_error import InputError


def _pipe_device() -> int:
    """The device of the kernel's pipe file system, which anonymous pipes live on (Linux)."""
    read_end, write_end = os.pipe()
    try:
        return os.fstat(read_end).st_dev
    finally:
        os.close(read_end)
        os.close(write_end)


def check_input_file(path: str, kind: str) -> None:
    """Raise InputError unless `path` names a readable file or a shell's pipe; `kind` is what it
    should be, e.g. "a workload JSON file". Checked with os.stat, before anything is opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(path, "file", "does not exist", f"give the path of {kind}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise InputError(path, "file", f"cannot be read: {getattr(exc, 'strerror', None) or exc}",
                         "check the path and its permissions") from None
    check_file_type(path, info, kind)


def check_file_type(path: str, info: os.stat_result, kind: str, where: str = "file") -> None:
    """Raise InputError naming `where` if `info` (os.stat of `path`) is a directory, a device, a
    named pipe or a socket: what every reader of the user's files refuses before opening it."""
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise InputError(path, where, "is a directory", f"give the path of {kind} inside it")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise InputError(path, where, "is a device, not a file (it may never end)", f"give the path of {kind}")
    if stat.S_ISFIFO(mode) and info.st_dev != _pipe_device():
        raise InputError(path, where, "is a named pipe (FIFO): reading it would wait, for ever if no process "
                         "writes to it", f"give the path of {kind} (or the shell's pipe, e.g. <(command))")
    if stat.S_ISSOCK(mode):
        raise InputError(path, where, "is a socket, not a file", f"give the path of {kind}")


def read_input_file(path: str, kind: str) -> bytes:
    """The whole content of `path`, checked as by check_input_file."""
    check_input_file(path, kind)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise InputError(path, "file", f"cannot be read: {exc.strerror or exc}",
                         "check the path and its permissions") from None


def read_text_file(path: str, kind: str) -> str:
    """The whole content of `path` as UTF-8 text (a BOM is kept out), checked as by check_input_file."""
    raw = read_input_file(path, kind)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(path, f"line {line}", f"is not UTF-8 text ({exc.reason})", f"save {kind} as UTF-8") from None
