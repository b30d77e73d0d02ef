"""The results of an experiment in its README: a Markdown block between two markers, replaced
by each run (the rest of the README is prose and stays as written)."""

from __future__ import annotations

import re
from pathlib import Path

MARK_BEGIN, MARK_END = "<!-- results: begin -->", "<!-- results: end -->"


def replace_results(readme: Path, text: str) -> None:
    """Put `text` between the results markers of `readme`."""
    block = f"{MARK_BEGIN}\n{text}\n{MARK_END}"
    readme.write_text(re.sub(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END), lambda _: block,
                             readme.read_text(), flags=re.S))
