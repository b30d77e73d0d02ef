"""docker/Dockerfile copies every folder the package is built from (no Docker engine here)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_dockerfile_copies_every_package_folder():
    package_dirs = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values())
    copied = set(re.findall(r"^COPY (\S+) \./\1$", (ROOT / "docker" / "Dockerfile").read_text(), flags=re.M))
    assert package_dirs <= copied, f"not copied: {sorted(package_dirs - copied)}"
    assert all((ROOT / folder).is_dir() for folder in copied)
