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


def test_the_compose_services_run_commands_that_exist():
    import subprocess
    import sys

    import yaml

    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    for name, service in compose["services"].items():
        target = service["build"].get("target")
        if target is not None:
            assert re.search(rf"^FROM \S+ AS {target}$", dockerfile, flags=re.M), f"{name}: no stage {target}"
        command = service.get("command")
        if command is None:  # the stage's CMD
            stage = dockerfile.split(f"AS {target}\n", 1)[1]
            command = __import__("json").loads(re.search(r"^CMD (\[.*\])$", stage, flags=re.M).group(1))
        # Each command's subcommand parses its options (only --help runs).
        result = subprocess.run([sys.executable, "-m", "joulesim.cli.main", command[0], "--help"],
                                capture_output=True, text=True)
        assert result.returncode == 0, (name, result.stderr)
        for option in [word for word in command[1:] if word.startswith("-")]:
            assert option in result.stdout, (name, option)
