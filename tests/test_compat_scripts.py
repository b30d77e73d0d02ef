"""compat/run_pybatsim.sh leaves no temporary folder behind (issue 47, item 8).

The script needs the package registry to install pybatsim, so the suite does not run it whole;
here its first step fails (a `python3` that exits 1), and the throw-away folder it made must be
gone all the same. (Run whole on 2026-11-29: the three schedulers complete, outputs in the
given folder, no folder left in /tmp.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "compat" / "run_pybatsim.sh"


def test_the_pybatsim_script_removes_its_temporary_folder_when_it_fails(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "python3").chmod(0o755)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(temporary)}
    done = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert list(temporary.iterdir()) == []
    assert (tmp_path / "out").is_dir()
