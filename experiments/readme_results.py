"""An experiment's README written from its results files, never typed by hand.

A README holds two kinds of generated text, both rewritten by each full run of the experiment
and checked against the committed results by tests/test_experiment_readmes.py:

- the results block, between `MARK_BEGIN` and `MARK_END` (the tables);
- figures inline in the prose, `<!-- figure: KEY -->text<!-- /figure -->`, where KEY is a key of
  what the experiment's `readme_figures(results folder)` returns. Markdown renderers hide the
  comments, so the prose reads as prose, and a rerun rewrites every figure it quotes.

Any other number in a README must not be a measurement: `loose_numbers` lists those that are
neither inputs (numbers written in the experiment's own source files), nor references (§6.5,
table 3, seed 004, a date, a year), nor counts up to 10.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Mapping
from pathlib import Path

MARK_BEGIN, MARK_END = "<!-- results: begin -->", "<!-- results: end -->"
_BLOCK = re.compile(re.escape(MARK_BEGIN) + ".*?" + re.escape(MARK_END), re.S)
_FIGURE = re.compile(r"<!-- figure: ([\w.\-]+) -->(.*?)<!-- /figure -->", re.S)


class ReadmeError(ValueError):
    """A README whose markers do not fit its experiment's figures."""


def replace_results(readme: Path, text: str) -> None:
    """Put `text` between the results markers of `readme` (the README's other text unchanged)."""
    write_readme(readme, text, {})


def render_readme(text: str, block: str | None, figures: Mapping[str, str], *, name: str = "README") -> str:
    """`text` with its results block replaced by `block` (unless None) and each inline figure by
    `figures[KEY]`. A KEY the figures do not have is an error naming it (a misspelt marker would
    otherwise keep a stale figure)."""
    unknown = sorted({key for key in figure_keys(text) if key not in figures})
    if unknown:
        raise ReadmeError(f"{name}: no figure named {', '.join(unknown)} (known: {', '.join(sorted(figures))})")
    if block is not None:
        if not _BLOCK.search(text):
            raise ReadmeError(f"{name}: no results block ({MARK_BEGIN} ... {MARK_END})")
        text = _BLOCK.sub(lambda _: f"{MARK_BEGIN}\n{block}\n{MARK_END}", text)
    return _FIGURE.sub(lambda m: f"<!-- figure: {m.group(1)} -->{figures[m.group(1)]}<!-- /figure -->", text)


def write_readme(readme: Path, block: str | None, figures: Mapping[str, str]) -> None:
    """Rewrite `readme`'s results block and inline figures (see render_readme)."""
    readme.write_text(render_readme(readme.read_text(), block, figures, name=str(readme)))


def figure_keys(text: str) -> list[str]:
    """The inline figures' keys, in the README's order."""
    return [m.group(1) for m in _FIGURE.finditer(text)]


# ---------------------------------------------------------------- numbers typed by hand
_NUMBER = re.compile(r"(?<![\w.\-/'])(\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(?=x?(?![\w]))")
# A number right after one of these words or signs names a part of a document or a thing, not
# a measurement: "§6.5", "table 6.1", "seed 004", "figures 1 and 2", "tables 5.1-5.3", "[8]".
_REFERENCE_BEFORE = re.compile(
    r"(?:§|#|\[|\bseeds?|\btables?|\bfigures?|\bfig\.|\bchapters?|\bsections?|\beq\.|\bissues?|\bref\.|"
    r"\bexp(?:eriment)?s?|\bsteps?|\bcases?|\bweeks?|\bversion|\bBatsim|\bSimGrid|\bPython|\bcolumns?|\brows?)"
    r"(?:[\s\d.,\-]|\band\b|\bor\b)*$", re.I)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _canonical(token: str) -> str:
    return token.replace(",", "")


def number_tokens(text: str) -> set[str]:
    """Every number written in `text`, in canonical form (no thousands separators)."""
    return {_canonical(m.group(1)) for m in _NUMBER.finditer(text)}


def source_numbers(folder: Path, patterns: Iterable[str] = ("*.py", "*.toml", "*.json")) -> set[str]:
    """The numbers an experiment's source and input files set (its results/ aside): its inputs,
    which a README may state. Of Python, the literals (numbers, and numbers inside strings) but not
    the comments: a comment "# 223.6 W" restating a computed value is not an input."""
    found: set[str] = set()
    for pattern in patterns:
        for path in sorted(folder.rglob(pattern)):
            if "results" in path.relative_to(folder).parts:
                continue
            text = path.read_text()
            if path.suffix == ".py":
                tokens = tokenize.generate_tokens(io.StringIO(text).readline)
                text = "\n".join(t.string for t in tokens if t.type in (tokenize.NUMBER, tokenize.STRING)
                                 or t.type == getattr(tokenize, "FSTRING_MIDDLE", -1))
            found |= number_tokens(text.replace("_", ""))
    return found


def _prose(text: str) -> Iterable[tuple[int, str]]:
    """(line number, text) of what a reader reads as prose: generated parts blanked, inline code
    blanked, and of a code block only its comments (a command's "# about 3 min" is a claim)."""
    def blank(match: re.Match) -> str:
        return "\n" * match.group(0).count("\n")
    text = _BLOCK.sub(blank, text)
    text = _FIGURE.sub(lambda m: "\n" * m.group(0).count("\n") + " FIGURE ", text)
    in_code = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            comment = line.partition(" # ")[2]
            if comment:
                yield number, comment
            continue
        yield number, _CODE_SPAN.sub(" CODE ", _DATE.sub(" DATE ", line))


def _is_small_count_or_year(token: str) -> bool:
    """Counts up to 10 ("3 seeds", "2 cores") and years ("January 2024") are not measurements."""
    return token.isdigit() and (int(token) <= 10 or (len(token) == 4 and 1950 <= int(token) <= 2039))


def loose_numbers(text: str, allowed: set[str]) -> list[tuple[int, str]]:
    """(line, number) of each number a reader meets outside the generated parts that is neither in
    `allowed` (the experiment's inputs, as number_tokens writes them), nor a reference, nor a count
    up to 10 or a year."""
    # Compared as values: "6.10" in the code states the README's "6.1", "1.25e10" its "12500000000".
    allowed_values = {float(token) for token in allowed}
    loose = []
    for number, line in _prose(text):
        for m in _NUMBER.finditer(line):
            token = _canonical(m.group(1))
            if not (_is_small_count_or_year(token) or float(token) in allowed_values
                    or _REFERENCE_BEFORE.search(line[:m.start()])):
                loose.append((number, m.group(1)))
    return loose
