"""Opening the files a user names (workloads, events files, SWF traces), with clear errors.

A path that is missing, a directory, a device or unreadable ends in an InputError that says so,
never an OSError traceback; a device such as /dev/zero or /dev/urandom would otherwise be read
forever. Pipes (`-w <(generate)`) and regular files are read.
"""

from __future__ import annotations

import os
import stat

from joulesim.inputs.input_error import InputError


def check_input_file(path: str, kind: str) -> None:
    """Raise InputError unless `path` names a readable file or pipe; `kind` is what it should
    be, e.g. "a workload JSON file"."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(path, "file", "does not exist", f"give the path of {kind}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise InputError(path, "file", f"cannot be read: {getattr(exc, 'strerror', None) or exc}",
                         "check the path and its permissions") from None
    if stat.S_ISDIR(mode):
        raise InputError(path, "file", "is a directory", f"give the path of {kind} inside it")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise InputError(path, "file", "is a device, not a file (it may never end)", f"give the path of {kind}")


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
