"""A watchdog for an EDC library running in this process: `--timeout` for its calls.

A call into the library (dlopen and its constructors, batsim_edc_init, take_decisions, deinit)
cannot be taken back: Python cannot interrupt C code, and a signal's Python handler would wait
for the call to return. Each call releases the GIL (edc_library.py), so a thread can watch it:
the library marks each call with its start (`call`), and when one lasts `timeout_s` the watchdog
flushes the run's output files and hands one line to `on_hang`, which must end the process (the
command line's prints it and exits with status 5: edc_library.EdcLibrary's thread is still in
the library). An isolated library (`--edc-isolated`) needs none of this: it is a process that
does not answer, stopped after --timeout like any decider.

The watchdog wakes when a call may have run out its time, not periodically: once per `timeout_s`
when the library is idle, and a call costs its library two attribute stores and a clock read.
"""

from __future__ import annotations

import threading
from time import monotonic
from typing import Any, Callable


class CallWatchdog:
    def __init__(self, library: str, timeout_s: float, on_hang: Callable[[str], Any]):
        self.library = library
        self.timeout_s = timeout_s
        self.on_hang = on_hang
        #: (start on the monotonic clock, the function's name) of the call under way, or None.
        self.call: tuple[float, str] | None = None
        #: The run whose output files are flushed before the process ends (a Simulation, set by
        #: run_simulation.run_configured through EdcRequester.watch_outputs), or None.
        self.outputs: Any = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="joulesim EDC watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        wait = self.timeout_s
        while not self._stopped.wait(wait):
            call = self.call
            if call is None:
                wait = self.timeout_s
                continue
            left = call[0] + self.timeout_s - monotonic()
            if left > 0:
                wait = left
                continue
            if self.call is call and not self._stopped.is_set():  # (the same call, still under way)
                self.on_hang(self._hang_report(call[1]))
            wait = self.timeout_s

    def _hang_report(self, function: str) -> str:
        """The line that ends the run, with the outputs written so far flushed and named."""
        kept = _flush(self.outputs)
        text = (f"{self.library}: {function} did not return within {self.timeout_s:g} s (--timeout); the library "
                "runs in joulesim's process, which cannot take a call back from it, so the run ends here "
                "(--edc-isolated runs it in a child process)")
        if kept:
            text += f"\n(outputs written so far are kept: {', '.join(kept)})"
        return text

    def stop(self) -> None:
        self._stopped.set()


def _flush(simulation: Any) -> list[str]:
    """Flush the run's open output files (what Ctrl-C's clean-up keeps); their paths. The main
    thread is inside the library, not writing them."""
    if simulation is None:
        return []
    for handle in list(getattr(simulation, "_files", ())):  # (Simulation's open outputs)
        try:
            handle.flush()
        except (OSError, ValueError):  # (closed already: the run had ended)
            pass
    return list(getattr(simulation, "opened_outputs", ()))
