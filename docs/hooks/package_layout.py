"""Lets mkdocstrings read joulesim's sources from this checkout, whatever the install.

The repository's folders are not named after their packages (pyproject.toml's package-dir: `api/`
is `joulesim`, `protocol/` is `joulesim.protocol`...), so griffe, mkdocstrings' reader, cannot
find `joulesim` in the checkout, and from a command's sys.path it may take the `joulesim` script
for it. This hook lays the packages out under build/docs_package/ as symbolic links, at the
moment mkdocs loads its configuration (before mkdocstrings starts), and mkdocs.yml gives griffe
that folder first.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = ROOT / "build" / "docs_package"


def lay_out_packages() -> None:
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(LAYOUT, ignore_errors=True)
    package = LAYOUT / "joulesim"
    package.mkdir(parents=True)
    for entry in (ROOT / folders["joulesim"]).iterdir():  # the root package's own modules
        if entry.suffix == ".py":
            (package / entry.name).symlink_to(entry)
    for name, folder in folders.items():  # its sub-packages (theirs follow the folders)
        if name.count(".") == 1:
            (package / name.split(".")[1]).symlink_to(ROOT / folder, target_is_directory=True)


lay_out_packages()
