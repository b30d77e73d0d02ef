"""Start a shipped or user decider as its own process, for `joulesim run`."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile


def free_ipc_endpoint() -> tuple[str, str]:
    """A fresh ipc:// endpoint in a private temporary directory (returned for clean-up)."""
    directory = tempfile.mkdtemp(prefix="joulesim-")
    return f"ipc://{os.path.join(directory, 'decider.sock')}", directory


class DeciderProcess:
    def __init__(self, name: str, endpoint: str, options: dict[str, str], timeout_s: float):
        command = [sys.executable, "-m", "joulesim.cli.main", "decide", name, "-s", endpoint,
                   "--timeout", str(timeout_s)]
        for key, value in options.items():
            command += ["--option", f"{key}={value}"]
        self.description = f"joulesim decide {name}"
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)

    def why_gone(self) -> str | None:
        """None while the decider runs; otherwise a sentence for the user."""
        status = self.process.poll()
        if status is None:
            return None
        return (f"the decider process ({self.description}) exited with status {status} before answering "
                "(its own error message, if any, is above)")

    def wait(self, timeout_s: float = 5.0) -> int | None:
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """Make sure the decider is gone: ask, then insist."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
