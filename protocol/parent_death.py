"""A decider started by `joulesim run` dies with it, even when it is killed with SIGKILL."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Ask Linux to send SIGTERM when the parent exits; exit now if it already has.

    Elsewhere (or if prctl is unavailable) the decider server notices the change of parent
    while it waits (protocol.decider_server), within a second.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # it died before prctl took effect
        sys.exit(5)
