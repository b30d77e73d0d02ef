"""Which processes a test started, however deep: each test run puts a mark of its own in the
environment of what it starts, and every descendant inherits it (daemons, the jobs' processes,
Dask workers); Slurm's slurmstepd sets up an environment of its own, so it is found as the parent
of a marked job process. A check after a command or a fixture lists the live ones by process
id: nothing to wait for, and processes of other runs on the machine never count."""

from __future__ import annotations

import uuid
from pathlib import Path

MARK_VARIABLE = "JOULESIM_TEST_RUN"


def new_mark() -> str:
    return uuid.uuid4().hex


def _stat(pid: int) -> tuple[str, str, int] | None:
    """(command name, state, parent pid), or None once the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
    return name, fields[0], int(fields[1])


def live_marked_processes(mark: str) -> dict[int, str]:
    """pid -> command name of every live (not zombie) process whose environment holds the mark,
    and of the slurmstepd that run them."""
    wanted = f"{MARK_VARIABLE}={mark}".encode()
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environment = (proc / "environ").read_bytes()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        stat = _stat(int(proc.name))
        if stat is not None and stat[1] != "Z" and wanted in environment.split(b"\0"):
            found[int(proc.name)] = stat[0]
            parent = _stat(stat[2])
            if parent is not None and parent[0] == "slurmstepd" and parent[1] != "Z":
                found[stat[2]] = parent[0]
    return found
