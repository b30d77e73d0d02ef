"""Output paths of `joulesim learn`, checked before the work and written whole.

`learn generate` scores pairs for minutes to hours and `learn fit` fits 18 forms: an output
path that cannot be written (a folder where a file is expected, a file where a folder is, a
device or FIFO, a path under a file such as /etc/passwd/x, /proc) must be refused before that
work starts, with the path named, not found out by a traceback at the end. The checks and the
whole-file writes are every command's (inputs/output_file.py); this module names them for learn.
"""

from __future__ import annotations

from collections.abc import Callable

from joulesim.inputs import output_file
from joulesim.inputs.output_file import make_output_folder

__all__ = ["check_output_file", "make_output_folder", "write_via_temporary"]


def check_output_file(path: str, what: str) -> None:
    """Raise InputError unless the file `path` can be written (its folder is made if missing)."""
    output_file.check_output_file(path, what, "give the path of a file, e.g. FOLDER/scores.parquet")


def write_via_temporary(path: str, what: str, write: Callable[[str], object]) -> None:
    """write(a temporary file beside PATH), then rename it to PATH: PATH is the whole new content
    or what it was; an existing PATH that is not a regular file is refused."""
    output_file.write_whole(path, what, write)
