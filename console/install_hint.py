"""The command that installs one of joulesim's extras, as it works for this installation.

joulesim is installed from a checkout (`pip install .`), not from a package index, so
"pip install 'joulesim[plot]'" would fail for most users. pip records where an installation
came from (direct_url.json, PEP 610): when that is a local folder, the hint names it.
"""

from __future__ import annotations

import json
from functools import cache
from urllib.parse import unquote, urlparse

__all__ = ["install_hint"]


@cache
def _checkout_folder() -> str | None:
    """The local folder joulesim was installed from, or None (an index, a wheel, not installed)."""
    from importlib import metadata

    try:
        text = metadata.distribution("joulesim").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        url = json.loads(text).get("url", "")
    except (ValueError, AttributeError):
        return None
    parsed = urlparse(url)
    if parsed.scheme != "file" or url.endswith((".whl", ".tar.gz", ".zip")):
        return None
    return unquote(parsed.path)


def install_hint(extra: str) -> str:
    """E.g. "pip install '/home/me/joulesim[plot]'" for a checkout, else "pip install 'joulesim[plot]'"."""
    folder = _checkout_folder()
    if folder is not None:
        return f"pip install '{folder}[{extra}]'"
    return f"pip install 'joulesim[{extra}]' (from a joulesim checkout: pip install '.[{extra}]')"
