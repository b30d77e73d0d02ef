"""An EDC library loaded in a child process (`--edc-isolated`), so that its crash is a decider
error instead of the simulator's death.

The child loads the library and serves it as a Batsim 5 process EDC on a private ipc://
endpoint (a REP socket: the init message is the init data's size as a native uint32 then its
bytes, answered by the flags then the hello; then one message per call). The simulator talks
to it as to any process EDC, and watches it: if it dies (a segmentation fault, an abort), the
run stops with the signal named, and the outputs written so far are kept.

Run as `python -m joulesim.protocol.batprotocol.edc_isolated LIBRARY ENDPOINT PARENT_PID`.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import tempfile
from typing import Any

from joulesim.protocol.errors import JoulesimError


def isolated_channel(library: str, timeout_s: float) -> Any:
    from joulesim.protocol.batprotocol.edc_channels import SocketChannel
    from joulesim.protocol.batprotocol.edc_library import EdcLibrary

    EdcLibrary(library)  # (a file that is not an EDC library is told here, not from the child)
    folder = tempfile.mkdtemp(prefix="joulesim-edc-")
    endpoint = f"ipc://{folder}/edc"
    child = subprocess.Popen([sys.executable, "-m", "joulesim.protocol.batprotocol.edc_isolated", library, endpoint,
                              str(os.getpid())], stdin=subprocess.DEVNULL)

    def is_alive() -> str | None:
        status = child.poll()
        if status is None:
            return None
        if status < 0:
            name = signal.Signals(-status).name if -status in signal.Signals._value2member_map_ else str(-status)
            return (f"{library}: the EDC library crashed ({name}) in its child process (--edc-isolated); "
                    "the outputs written so far are kept")
        return f"{library}: the child process serving the EDC library exited with status {status}"

    channel = SocketChannel(endpoint, timeout_s, is_alive=is_alive, name=library)
    closing = channel.close

    def close() -> None:
        closing()
        if child.poll() is None:
            child.terminate()
        child.wait()
        try:
            os.rmdir(folder)
        except OSError:
            pass

    channel.close = close
    return channel


def serve(library: str, endpoint: str, parent: int) -> int:
    """The child: load the library, answer the simulator until it goes away (it dies with it)."""
    import zmq

    from joulesim.protocol.parent_death import die_with_parent

    die_with_parent(parent)
    from joulesim.protocol.batprotocol.edc_library import EdcLibrary

    edc = EdcLibrary(library)
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind(endpoint)
    try:
        first = socket.recv()
        size = struct.unpack_from("=I", first)[0]
        flags, hello = edc.init(first[4:4 + size])
        socket.send(struct.pack("=I", flags) + hello)
        while True:
            message = socket.recv()
            socket.send(edc.take_decisions(message))
    except JoulesimError as exc:  # a failure the library reported: said, then the parent sees the exit
        print(f"joulesim: {exc}", file=sys.stderr, flush=True)
        return 5
    finally:
        edc.close()


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1], sys.argv[2], int(sys.argv[3])))
