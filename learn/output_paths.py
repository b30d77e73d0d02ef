"""Output paths of `joulesim learn`, checked before the work and written whole.

`learn generate` scores pairs for minutes to hours and `learn fit` fits 18 forms: an output
path that cannot be written (a folder where a file is expected, a file where a folder is, a
path under a file such as /etc/passwd/x, /proc) must be refused before that work starts, with
the path named, not found out by a traceback at the end. The check writes a probe file where
the output will go and removes it: as root, or on a read-only or special file system, the
permission bits (os.access) do not tell whether a write will succeed.

Outputs are written to `PATH.tmp` and renamed over PATH, so that PATH holds one whole run's
result, never a half-written file or a mix with an older run's.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import JoulesimError

__all__ = ["check_output_file", "make_output_folder", "write_via_temporary"]

_FIX = "give a path in a folder you can write to"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _probe(path: str, what: str, shown: str) -> None:
    """Create and remove the file `path`: raise InputError naming `shown` when that fails."""
    try:
        with open(path, "x"):
            pass
        os.remove(path)
    except FileExistsError:  # a leftover of an interrupted run: writable if it can be replaced
        try:
            with open(path, "w"):
                pass
            os.remove(path)
        except OSError as exc:
            raise InputError(shown, what, f"cannot be written: {_reason(exc)}", _FIX) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
        raise InputError(shown, what, f"cannot be written: {reason}", _FIX) from None


def _make_folder(folder: str, what: str, shown: str) -> None:
    """Make `folder` and its parents; the error names `shown` (the option's path) and, when it is
    another path, `folder` too."""
    named = "" if folder == shown else f"{folder} "
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        raise InputError(shown, what, f"{named}is a file, not a folder", _FIX) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
        raise InputError(shown, what, f"folder {named}cannot be created: {reason}", _FIX) from None


def check_output_file(path: str, what: str) -> None:
    """Raise InputError unless the file `path` can be written (its folder is made if missing)."""
    if os.path.isdir(path):
        raise InputError(path, what, "is a folder, not a file", "give the path of a file, e.g. FOLDER/scores.parquet")
    _make_folder(os.path.dirname(path) or ".", what, path)
    _probe(path + ".tmp", what, path)


def make_output_folder(folder: str, what: str) -> None:
    """Make the folder `folder` (with its parents) and check that files can be written in it."""
    _make_folder(folder, what, folder)
    if not os.path.isdir(folder):
        raise InputError(folder, what, "is not a folder", _FIX)
    _probe(os.path.join(folder, ".joulesim-write-check"), what, folder)


def write_via_temporary(path: str, what: str, write: Callable[[str], object]) -> None:
    """write(PATH.tmp), then rename it to PATH: PATH is the whole new content or what it was."""
    temporary = path + ".tmp"
    try:
        write(temporary)
        os.replace(temporary, path)
    except OSError as exc:
        try:
            os.remove(temporary)
        except OSError:
            pass
        raise JoulesimError(f"{path}: {what}: cannot be written: {_reason(exc)}") from None
