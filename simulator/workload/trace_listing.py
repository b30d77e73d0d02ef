"""Where the rank traces of an `smpi` or `usage_trace` profile are, and their lines.

Batsim 4.2.1 (src/profiles.cpp): the profile's `trace` field is a path relative to the
workload file's directory, joined as text (directory + "/" + trace, so even a path starting
with "/" stays relative). That file lists one trace file per line, rank 0's first, each path
relative to the listing's own directory; the job has as many ranks as the listing has lines.

Each rank file is read as SimGrid's replay reader does (src/xbt/xbt_replay.cpp): lines split on
blanks, empty lines and lines starting with '#' skipped, the first field a rank, the second an
action; the reader stops at the end of the file before acting on a last line that no newline
ends, so such a line is dropped here too.
"""

from __future__ import annotations

import os
from typing import Iterator

from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import check_file_type

_WHERE_FIX = ("check the path: Batsim reads the listing relative to the workload file's directory and each "
              "rank trace relative to the listing's directory, even a path that starts with '/'")


def beside(directory: str, name: str) -> str:
    """Batsim's join: text, so an absolute `name` stays relative to `directory`."""
    return (directory or ".") + "/" + name


def listing_path(workload_path: str, trace_field: str) -> str:
    """The listing a profile's `trace` field names, for a workload read from `workload_path`
    (a workload built in Python has no directory: the current one)."""
    directory = os.path.dirname(os.path.abspath(workload_path)) if os.path.exists(workload_path) else os.getcwd()
    return beside(directory, trace_field)


def read_lines(path: str, where: str) -> list[str]:
    """The file's lines (split on newlines only); InputError naming `where` when unreadable, or
    when it is a directory, a device, a named pipe or a socket (checked before opening it: a
    FIFO would wait for a writer for ever, /dev/zero never end)."""
    try:
        check_file_type(path, os.stat(path), "a trace file", where)
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as handle:
            return handle.read().split("\n")
    except FileNotFoundError:
        raise InputError(path, where, "no such file", _WHERE_FIX) from None
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise InputError(path, where, f"cannot be read ({getattr(e, 'strerror', None) or e})",
                         "check the file's permissions") from None


def rank_files(listing: str, where: str) -> list[str]:
    """The trace file of each rank, from the listing file."""
    lines = read_lines(listing, f"{where}: the listing of rank traces (its 'trace' field)")
    if lines and not lines[-1]:
        lines.pop()  # no line after a final newline
    if not lines:
        raise InputError(listing, where, "the listing of rank traces is empty", "write one trace file per line, rank 0's first")
    base = os.path.dirname(listing)
    files = []
    for number, line in enumerate(lines, start=1):
        name = line.rstrip()
        if not name:
            raise InputError(listing, f"line {number}", f"blank line: it would be rank {number - 1}'s trace",
                             "remove it: every line names one rank's trace file")
        files.append(beside(base, name))
    return files


def action_lines(path: str, where: str) -> Iterator[tuple[int, list[str], str]]:
    """(line number, fields, line) of each action line of a rank file, as SimGrid's reader sees
    them. The file is read at once: an unreadable one fails before any line is given."""
    lines = read_lines(path, where)
    lines.pop()  # the part after the last newline: SimGrid does not act on it
    return _actions(lines)


def _actions(lines: list[str]) -> Iterator[tuple[int, list[str], str]]:
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if fields and fields[0][0] != "#":
            yield number, fields, line
