"""Ctrl-C during a simulation: a KeyboardInterrupt that says which output files are kept."""

from __future__ import annotations


class RunInterrupted(KeyboardInterrupt):
    """Raised by `joulesim.simulate` (and `joulesim run` / `simulate`) on Ctrl-C. It is a
    KeyboardInterrupt, so code that stops on Ctrl-C still does; `outputs` lists the files the
    run wrote so far, which stay (with their headers and every row written)."""

    def __init__(self, outputs: list[str] | tuple[str, ...] = ()):
        self.outputs = list(outputs)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        if not self.outputs:
            return "interrupted; no output written yet"
        return "interrupted; outputs so far kept in " + ", ".join(self.outputs)
