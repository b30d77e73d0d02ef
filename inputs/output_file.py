"""Output files a user names (`-o`, `--out`, a campaign's results folder): checked before the
work, and written whole.

Every joulesim output file is written to a new temporary file beside it, then renamed over it,
so that the path holds one whole result, never a half-written file. A rename replaces whatever
the name points at: as root, `-o /dev/full` would turn the device node into a regular file, and
`-o FIFO` would remove the pipe. So an existing path that is not a regular file (a folder, a
device, a FIFO, a socket, or a symbolic link to one of them) is refused before anything is
written, with one line naming the path (InputError, exit status 2); it is never written in
place either (a FIFO without a reader would block the command). Standard output is what the
commands that can print their result write when `-o` is not given.

A symbolic link to a regular file is kept: the file it names is replaced (as root, renaming over
`/dev/stdout`, a link, would otherwise turn it into a regular file when standard output is
redirected to a file). The temporary file is made by mkstemp: a new name that nothing else holds, opened with O_EXCL,
so a leftover FIFO or symbolic link beside the output is never opened, followed or written
through. It is removed when the write fails or is interrupted.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable

from joulesim.inputs.input_error import InputError

__all__ = ["check_output_file", "make_output_folder", "non_regular_kind", "refuse_non_regular_file", "write_bytes_whole",
           "write_whole"]

_FIX = "give a path in a folder you can write to"
_SPECIAL_FIX = "give the path of a regular file, or remove what is there"


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def non_regular_kind(path: str) -> str | None:
    """What the existing `path` is when it is not a regular file (followed through symbolic
    links): "a folder", "a FIFO (named pipe)", "a character device (through a symbolic link)"...;
    None for a regular file, a path that does not exist or cannot be examined (callers that
    write there report that error themselves). Never opens `path`."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    return _kind(mode) + (" (through a symbolic link)" if os.path.islink(path) else "")


def refuse_non_regular_file(path: str, what: str, folder_fix: str | None = None,
                            special_fix: str = _SPECIAL_FIX) -> None:
    """Raise InputError when `path` exists and is not a regular file (followed through symbolic
    links). A folder says "is a folder, not a file" (with `folder_fix`, when given); a device,
    FIFO or socket says what it is (with `special_fix`). A path that does not exist yet passes."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # a new file (or a dangling link, which the rename replaces); its folder is checked apart
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise InputError(path, what, f"cannot be written: {_reason(exc)}", _FIX) from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise InputError(path, what, "is a folder, not a file", folder_fix or "give the path of a file in it")
    link = " (through a symbolic link)" if os.path.islink(path) else ""
    raise InputError(path, what, f"is {_kind(mode)}{link}, not a regular file: joulesim writes a new file and "
                     "renames it over the path, which would replace it", special_fix)


def _probe(folder: str, what: str, shown: str) -> None:
    """Create and remove a new file in `folder`: raise InputError naming `shown` when that fails.
    As root, or on a read-only or special file system, the permission bits (os.access) do not
    tell whether a write will succeed."""
    try:
        handle, probe = tempfile.mkstemp(prefix=".joulesim-write-check-", dir=folder)
        os.close(handle)
        os.remove(probe)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise InputError(shown, what, f"cannot be written: {_reason(exc)}", _FIX) from None


def _make_folder(folder: str, what: str, shown: str) -> None:
    """Make `folder` and its parents; the error names `shown` (the option's path) and, when it is
    another path, `folder` too."""
    named = "" if folder == shown else f"{folder} "
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        raise InputError(shown, what, f"{named}is a file, not a folder", _FIX) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise InputError(shown, what, f"folder {named}cannot be created: {_reason(exc)}", _FIX) from None


def check_output_file(path: str, what: str, folder_fix: str | None = None) -> None:
    """Raise InputError unless the file `path` can be written: not an existing folder, device,
    FIFO or socket, and a new file can be made beside it (its folder is made if missing)."""
    refuse_non_regular_file(path, what, folder_fix)
    folder = os.path.dirname(path) or "."
    _make_folder(folder, what, path)
    _probe(folder, what, path)


def make_output_folder(folder: str, what: str) -> None:
    """Make the folder `folder` (with its parents) and check that files can be written in it."""
    _make_folder(folder, what, folder)
    if not os.path.isdir(folder):
        raise InputError(folder, what, "is not a folder", _FIX)
    _probe(folder, what, folder)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_whole(path: str, what: str, data: bytes, fix: str = _FIX) -> None:
    """`data` written whole to `path` (write_whole)."""
    def write(temporary: str) -> None:
        with open(temporary, "wb") as out:
            out.write(data)

    write_whole(path, what, write, fix)


def write_whole(path: str, what: str, write: Callable[[str], object], fix: str = _FIX) -> None:
    """write(TEMPORARY), a new file beside `path`, then rename it over `path`: `path` holds the
    whole new content or what it held. `path` must not be an existing folder, device, FIFO or
    socket (refuse_non_regular_file); a failed write is an InputError naming `path`."""
    refuse_non_regular_file(path, what)
    # A symbolic link (to a regular file, or dangling) is kept and the file it names is replaced:
    # renaming over the link would turn /dev/stdout, redirected to a file, into a regular file.
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    except (OSError, ValueError) as exc:
        raise InputError(path, what, f"cannot be written: {_reason(exc)}", fix) from None
    os.close(handle)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_umask())  # (mkstemp makes it private)
        os.replace(temporary, target)
    except BaseException as exc:
        try:
            os.remove(temporary)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(path, what, f"cannot be written: {_reason(exc)}", fix) from None
        raise
