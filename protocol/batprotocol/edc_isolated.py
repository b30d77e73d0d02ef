"""An EDC library loaded in a child process (`--edc-isolated`), so that its crash is a decider
error instead of the simulator's death.

The library is loaded only in the child: the simulator checks the file (edc_library.
check_library_file: a regular file, an ELF file not cut short) and runs none of its code, not
even its constructors. The child loads it and reports through a pipe (protocol/start_handshake.py,
as `joulesim decide` does) that it is ready, or why it refuses the library (one error, the exit
status of the same refusal in-process); then it serves the library as a Batsim 5 process EDC on
a private ipc:// endpoint (a REP socket: the init message is the init data's size as a native
uint32 then its bytes, answered by the flags then the hello; then one message per call). After
the run, one empty request (joulesim's own, never a batprotocol message) asks it to call
batsim_edc_deinit and exit.

The simulator watches the child: if it dies (a segmentation fault, an abort, a SIGBUS), the run
stops with one line naming the signal and what the library was doing (loading, init,
take_decisions, deinit), and the outputs written so far are kept; if it does not answer, the
run stops after --timeout, as with any decider.

Run as `python -m joulesim.protocol.batprotocol.edc_isolated LIBRARY ENDPOINT PARENT_PID
--ready-fd FD`.
"""

from __future__ import annotations

import os
import signal
import struct
import sys
import tempfile
from typing import Any, Callable

from joulesim.protocol.batprotocol.edc_channels import SocketChannel
from joulesim.protocol.errors import DeciderUnavailableError, JoulesimError

#: What the library was doing, by the channel's phase, for the line that says the child died.
_DOING = {
    "loading": "while loading the library (dlopen, which runs its constructors)",
    "init": "in batsim_edc_init",
    "run": "in batsim_edc_take_decisions",
    "deinit": "in batsim_edc_deinit, after the run",
}


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def isolated_channel(library: str, timeout_s: float, start_process: Callable[[list[str], str], Any]) -> Any:
    """A channel to `library` served by a child process, once the child has loaded it.
    `start_process(command, name)` starts it and waits for its start report (DeciderProcess)."""
    from joulesim.protocol.batprotocol.edc_library import check_library_file

    check_library_file(library)  # (a file that cannot be a library is told here; none of its code runs)
    folder = tempfile.mkdtemp(prefix="joulesim-edc-")
    endpoint = f"ipc://{folder}/edc"
    process = start_process([sys.executable, "-m", "joulesim.protocol.batprotocol.edc_isolated", library, endpoint,
                             str(os.getpid())], f"{library} (--edc-isolated)")
    try:
        try:
            process.wait_started(timeout_s)
        except DeciderUnavailableError:
            status = process.wait()
            if status is None:
                raise DeciderUnavailableError(
                    f"{library}: the isolated process (--edc-isolated) had not loaded the library after "
                    f"{timeout_s:g} s (--timeout): dlopen, which runs its constructors, did not return") from None
            raise DeciderUnavailableError(_death(library, status, "loading")) from None
        return IsolatedChannel(library, endpoint, timeout_s, process, folder)
    except BaseException:
        process.stop()
        _remove(folder)
        raise


def _death(library: str, status: int, phase: str) -> str:
    how = f"died of {signal_name(-status)}" if status < 0 else f"exited with status {status}"
    text = f"{library}: the isolated process (--edc-isolated) {how} {_DOING[phase]}"
    if phase == "deinit":
        text += " (the run had ended: its outputs are complete)"
    return text


def _remove(folder: str) -> None:
    try:
        os.rmdir(folder)
    except OSError:
        pass


class IsolatedChannel(SocketChannel):
    """The library in its child process, reached as a process EDC."""

    def __init__(self, library: str, endpoint: str, timeout_s: float, process: Any, folder: str):
        self.process, self.folder = process, folder
        self.phase = "init"
        self._clean = True  # no request left without its reply (a REQ socket can send one more)
        self._initialised = False
        super().__init__(endpoint, timeout_s, is_alive=self._gone, name=library)

    def _gone(self) -> str | JoulesimError | None:
        """None while the child runs; otherwise the error it reported, or how it ended."""
        status = self.process.process.poll()
        if status is None:
            return None
        reported = self.process.reported_error()
        return reported if reported is not None else _death(self.name, status, self.phase)

    def init(self, data: bytes) -> tuple[int, bytes]:
        self._clean = False
        answer = super().init(data)
        self._clean = self._initialised = True
        self.phase = "run"
        return answer

    def exchange(self, message: bytes) -> bytes:
        self._clean = False
        reply = self.requester.exchange(message)
        self._clean = True
        return reply

    def close(self) -> None:
        """Have the child call batsim_edc_deinit (when it was initialised and waits for a
        request), then make sure it is gone. Its death in deinit is raised (DeciderUnavailableError)."""
        try:
            if self._initialised and self._clean and self.process.process.poll() is None:
                self._initialised = False
                self.phase = "deinit"
                self.requester.exchange(b"")
        finally:
            self.requester.close()
            self.process.stop()
            _remove(self.folder)


def serve(library: str, endpoint: str, parent: int, ready_fd: int | None) -> int:
    """The child: load the library, answer the simulator until it goes away (it dies with it)
    or asks for deinit."""
    import zmq

    from joulesim.protocol.batprotocol.edc_library import EdcLibrary
    from joulesim.protocol.parent_death import die_with_parent
    from joulesim.protocol.start_handshake import reports_failure, reports_start

    die_with_parent(parent)
    with reports_start(ready_fd):  # the library's refusal is the simulator's to tell
        edc = EdcLibrary(library)
        context = zmq.Context()
        socket = context.socket(zmq.REP)
        socket.bind(endpoint)
    with reports_failure(ready_fd):
        try:
            first = socket.recv()
            size = struct.unpack_from("=I", first)[0]
            flags, hello = edc.init(first[4:4 + size])
            socket.send(struct.pack("=I", flags) + hello)
            while True:
                message = socket.recv()
                if not message:  # the run has ended: deinit, then go
                    edc.close()
                    socket.send(b"")
                    return 0
                socket.send(edc.take_decisions(message))
        finally:
            edc.close()


def _arguments(argv: list[str]) -> tuple[str, str, int, int | None]:
    library, endpoint, parent, *rest = argv
    ready_fd = int(rest[1]) if rest[:1] == ["--ready-fd"] else None
    return library, endpoint, int(parent), ready_fd


if __name__ == "__main__":
    sys.exit(serve(*_arguments(sys.argv[1:])))
