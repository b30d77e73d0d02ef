"""ZeroMQ endpoints as joulesim accepts them: checked before any socket is made.

Accepted forms are `tcp://HOST:PORT` (PORT 1-65535; HOST a name, an IPv4 address, `[IPv6]`
or `*` for binding every interface) and `ipc://PATH` (a Unix socket path of at most the
system's limit). Anything else is refused with the forms a user can write, rather than
failing deep inside libzmq with "Invalid argument".
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from joulesim.protocol.errors import JoulesimError

# Where the simulator connects and a decider binds when told nowhere (Batsim 4's default).
# (This module imports no zmq, so a command that only names the default, such as
# `joulesim run --in-process`, does not load libzmq.)
DEFAULT_ENDPOINT = "tcp://127.0.0.1:28000"
_TCP = re.compile(r"tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9*._-]+):([0-9]{1,5})\Z")
FORMS = "tcp://HOST:PORT (e.g. tcp://127.0.0.1:28000) or ipc://PATH (e.g. ipc:///tmp/joulesim.sock)"


def ipc_path_max_len() -> int:
    """Linux's sockaddr_un.sun_path holds 107 bytes and a NUL; libzmq exposes the limit when known."""
    import zmq

    return getattr(zmq, "IPC_PATH_MAX_LEN", 107) or 107


class EndpointError(JoulesimError):
    """An endpoint string that no socket could use."""

    exit_code = 2


@dataclass(frozen=True)
class Endpoint:
    text: str
    transport: str  # "tcp" or "ipc"
    host: str = ""  # tcp only, without IPv6 brackets

    @property
    def is_local(self) -> bool:
        """True when only this machine can reach it: ipc://, or tcp on a loopback address."""
        if self.transport == "ipc":
            return True
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # "*" or a host name: reachable from the network


def parse_endpoint(text: str) -> Endpoint:
    """The endpoint of `text`, or EndpointError saying which forms are accepted."""
    if text.startswith("ipc://"):
        path = text[len("ipc://"):]
        if not path or "\0" in path:
            raise EndpointError(f"endpoint {text!r}: ipc:// needs a file path; use {FORMS}")
        limit = ipc_path_max_len()
        if len(path.encode()) > limit:
            raise EndpointError(f"endpoint {text[:60]!r}...: an ipc:// path may have at most {limit} "
                                f"bytes (the system's Unix socket limit); use a shorter path, e.g. in /tmp")
        return Endpoint(text, "ipc")
    match = _TCP.match(text)
    if not match:
        raise EndpointError(f"endpoint {text[:80]!r} is not one joulesim can use; use {FORMS}")
    host, port = match.group(1).strip("[]"), int(match.group(2))
    if not 1 <= port <= 65535:
        raise EndpointError(f"endpoint {text!r}: port {port} is outside 1-65535; use {FORMS}")
    return Endpoint(text, "tcp", host)


def check_host_resolves(text: str) -> None:
    """Raise EndpointError when a tcp:// endpoint names a host that cannot be resolved.

    libzmq would retry such a connection in the background until the timeout, which then
    blames the decider (or, with CURVE, authentication) for what is a typo or a missing DNS
    entry; asking the resolver once, before any socket exists, names the real cause.
    """
    endpoint = parse_endpoint(text)
    if endpoint.transport != "tcp" or endpoint.host == "*":
        return
    try:
        ipaddress.ip_address(endpoint.host)
        return  # an address needs no resolver
    except ValueError:
        pass
    import socket  # (a host name to resolve: the rest of a run needs no socket module)

    try:
        socket.getaddrinfo(endpoint.host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise EndpointError(f"endpoint {text[:80]!r}: host {endpoint.host[:60]!r} cannot be resolved ({reason}); "
                            "check the host name, or give its IP address (e.g. tcp://192.0.2.7:28000)") from None


def exposure_warning(endpoint: Endpoint, curve: bool) -> str | None:
    """A warning for an endpoint other machines may reach, or None when it is local."""
    if endpoint.is_local:
        return None
    text = (f"joulesim: warning: {endpoint.text} is reachable beyond this machine: anyone who can reach "
            "it can read the workload and send decisions (or pose as the decider).")
    if curve:
        return text + " CURVE authentication (--curve-keys) is on: only holders of the keys can talk."
    return text + (" Prefer 127.0.0.1 or ipc://, or authenticate both ends with --curve-keys DIR "
                   "(keys from `joulesim keys generate DIR`).")
