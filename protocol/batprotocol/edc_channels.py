"""The channels to an EDC: what joulesim sends the init data and the messages through (Batsim 5's
src/edc.cpp), whatever the EDC is: a library in this process, or a process on a ZeroMQ socket
(a process EDC, or a library served in a child process by edc_isolated.py). Each has `init(data)
-> (flags, hello message)`, `exchange(message) -> reply`, `close()` and a `name` for messages."""

from __future__ import annotations

import struct
from typing import Any, Callable

from joulesim.protocol.batprotocol.edc_library import EdcLibrary
from joulesim.protocol.errors import ProtocolError


class LibraryChannel:
    """A library loaded in this process; with a `watchdog` (edc_watchdog.CallWatchdog), each of
    its calls is watched, from its loading to its deinit."""

    def __init__(self, path: str, watchdog: Any = None):
        self.name = path
        self.watchdog = watchdog
        try:
            self.library = EdcLibrary(path, watchdog)
        except BaseException:
            if watchdog is not None:
                watchdog.stop()
            raise

    def init(self, data: bytes) -> tuple[int, bytes]:
        return self.library.init(data)

    def exchange(self, message: bytes) -> bytes:
        return self.library.take_decisions(message)

    def close(self) -> None:
        try:
            self.library.close()
        finally:
            if self.watchdog is not None:
                self.watchdog.stop()


def _edc_requester(endpoint: str, timeout_s: float, is_alive: Callable[[], Any] | None):
    """A ZeroMQ requester whose hints, when nobody answers, are about a process EDC."""
    from joulesim.protocol.transport_zmq import ZmqRequester

    class EdcZmqRequester(ZmqRequester):
        def _start_hint(self) -> str:
            return (f"start the process EDC so that it binds {self.endpoint} (a ZeroMQ REP socket speaking "
                    f"batprotocol, e.g. `python examples/deciders/fcfs_edc.py {self.endpoint}`)")

    return EdcZmqRequester(endpoint, timeout_s, is_alive=is_alive)


class SocketChannel:
    """A process EDC (Batsim 5's protocol over a ZeroMQ request socket)."""

    def __init__(self, endpoint: str, timeout_s: float, is_alive: Callable[[], Any] | None = None, name: str = ""):
        self.name = name or f"the EDC at {endpoint}"
        self.requester = _edc_requester(endpoint, timeout_s, is_alive)

    def init(self, data: bytes) -> tuple[int, bytes]:
        reply = self.requester.exchange(struct.pack("=I", len(data)) + data)
        if len(reply) < 4:
            raise ProtocolError(f"{self.name}: its reply to the init message holds {len(reply)} bytes; it must "
                                "start with the 4-byte format flags, then the hello message")
        return struct.unpack_from("=I", reply)[0], reply[4:]

    def exchange(self, message: bytes) -> bytes:
        return self.requester.exchange(message)

    def close(self) -> None:
        self.requester.close()
