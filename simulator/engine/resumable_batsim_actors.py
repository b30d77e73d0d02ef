"""Batsim's actors interpreted, for the runs that write checkpoints or resume from one.

setup.py compiles batsim_actors.py: its actors are then compiled generators, faster, but without
the frames that a checkpoint reads to say where each actor waits and with which locals
(resumable_actors.py). A run that checkpoints takes its actors from this module instead, which
runs the same source file (installed beside the compiled module) as Python: the same code, line
for line, so both make the same simcalls in the same order and write the same files. Its classes
are this module's, so that a checkpoint names them and a resuming run finds them here.
"""

from __future__ import annotations

from pathlib import Path

import joulesim.simulator.engine.batsim_actors as _compiled

#: The source of batsim_actors, whether or not it was compiled (a compiled module's __file__ is
#: its extension, beside which the build installs the source).
SOURCE = Path(_compiled.__file__).with_name("batsim_actors.py")

exec(compile(SOURCE.read_text(encoding="utf-8"), str(SOURCE), "exec"), globals())  # noqa: S102
