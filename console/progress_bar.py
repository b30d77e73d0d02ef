"""Progress of long work on stderr, on a terminal and in a log file alike.

On a terminal: tqdm's bar, redrawn in place. Elsewhere (a batch job's log, a pipe, CI): a
plain line every PLAIN_INTERVAL_S seconds, each ending in a newline, so that a log shows that
work goes on without one endless line of carriage returns; and nothing at all for work that
ends within PLAIN_DELAY_S, so that short runs keep a clean log.
"""

from __future__ import annotations

import sys
from typing import IO, Any

__all__ = ["PLAIN_DELAY_S", "PLAIN_INTERVAL_S", "progress_bar"]

PLAIN_DELAY_S = 5.0
PLAIN_INTERVAL_S = 5.0


class _LinePerUpdate:
    """A file for tqdm that turns each in-place redraw ('\\r' + bar) into one line."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        line = text.replace("\r", "").rstrip()
        if line:
            self.stream.write(line + "\n")

    def flush(self) -> None:
        self.stream.flush()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-like stream without isatty
        return False


def progress_bar(total: int | None, description: str, unit: str, *, file: IO[str] | None = None,
                 leave: bool = False, **options: Any) -> Any:
    """A tqdm bar for `total` units of work on `file` (stderr by default), in the form that suits it."""
    from tqdm import tqdm

    stream = sys.stderr if file is None else file
    if _is_terminal(stream):
        return tqdm(total=total, desc=description, unit=unit, file=stream, leave=leave,
                    dynamic_ncols=True, mininterval=0.5, **options)
    return tqdm(total=total, desc=description, unit=unit, file=_LinePerUpdate(stream), leave=leave,
                ncols=100, ascii=True, mininterval=PLAIN_INTERVAL_S, delay=PLAIN_DELAY_S, **options)
