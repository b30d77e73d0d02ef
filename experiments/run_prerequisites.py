"""What an experiment on a real trace needs before it runs: the trace beside the checkout, and
joulesim installed. Each missing one is one line naming it and how to fix it (exit status 2)."""

from __future__ import annotations

import sys
from pathlib import Path


def prerequisites_missing(trace: Path, log_name: str) -> bool:
    """True (after saying why on stderr) when `trace` is absent or joulesim cannot be imported."""
    if not trace.is_file():
        print(f"error: trace {trace} not found. This experiment reads the {log_name} log from "
              "../shared/data/swf/ beside the checkout (see ../shared/data/MANIFEST.md); pass "
              "--trace PATH to use a copy elsewhere.", file=sys.stderr)
        return True
    try:
        import joulesim  # noqa: F401
    except ImportError:
        print("error: joulesim is not importable: install it first (pip install -e '.[plot]')",
              file=sys.stderr)
        return True
    return False
