"""Reaching a Batsim 5 External Decision Component, and standing where a decider stands.

Three channels, one protocol (Batsim 5's src/edc.cpp):
- a library loaded in this process (edc_library.py): its init and take_decisions functions;
- a library in a child process (`isolated`, edc_isolated.py): the child serves it as a
  process EDC on a private ipc:// endpoint, so a crash in the library is a decider error here;
- a process EDC on a ZeroMQ socket (`socket`): joulesim connects a request socket; the first
  request is the init data (its size as a native-endian uint32, then its bytes), whose reply is
  the flags (a uint32) then the hello message; then one message per call.

`EdcRequester` does the handshake at once (the hello's features decide how the simulation is
configured), then serves the simulator's DeciderLink: `exchange_message` takes a Batsim 4
message and returns Batsim 4 decisions (batsim4_bridge.py), through the EDC's format.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from joulesim.protocol.batprotocol import batsim4_bridge
from joulesim.protocol.batprotocol.batsim4_bridge import BridgeState, HostFacts
from joulesim.protocol.batprotocol.binary_format import BatprotocolError, decode_message, encode_message
from joulesim.protocol.batprotocol.edc_channels import LibraryChannel, SocketChannel
from joulesim.protocol.batprotocol.edc_library import FORMAT_BINARY, FORMAT_JSON, EdcError, EdcInputError
from joulesim.protocol.batprotocol.json_format import as_flatbuffers_prints, encode_json, flatbuffers_double, read_json
from joulesim.protocol.errors import DeciderUnavailableError, DecisionError, JoulesimError, ProtocolError

#: batprotocol major versions joulesim takes in a hello: 0.x (batprotocol-cpp's 2024-11 revision
#: says "0.1.0") and 1.x (what pybatsim's batprotocol API calls the revision Batsim 5 uses; its
#: events beyond the 2024-11 schema are refused by name when they come).
KNOWN_MAJORS = ("0", "1")
#: pybatsim's batprotocol API sends this until told a version ("#TODO" there); Batsim 5 checks no
#: version, so such EDCs run on it, and here.
UNSET_VERSION = "undefined"
#: The most init data joulesim passes an EDC (--edc-init, --edc-init-file, the API's edc_init):
#: Batsim 5 reads the init file whole; a larger file is refused before it is read.
INIT_DATA_MAX_BYTES = 64 * 1024 * 1024


def init_data_bytes(value: str | bytes, what: str = "edc_init") -> bytes:
    """The bytes an EDC gets for `value`. Batsim 5 passes the bytes of its command line's init
    string as they are, so joulesim does too: a string goes back to the bytes it was read from
    (os.fsencode: UTF-8, with the undecodable bytes Python keeps as surrogate escapes); bytes
    are taken as they are."""
    if isinstance(value, str):
        try:
            data = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as exc:  # (only from Python: a lone surrogate no byte gave)
            raise EdcInputError(f"{what}: character {exc.start} ({value[exc.start]!r}) is a lone surrogate, which "
                                "stands for no bytes (give the init data as bytes)") from None
    else:
        data = bytes(value)
    if len(data) > INIT_DATA_MAX_BYTES:
        raise EdcInputError(f"{what}: holds {len(data)} bytes, more than joulesim passes an EDC "
                            f"({INIT_DATA_MAX_BYTES // (1024 * 1024)} MiB)")
    return data


def read_init_file(path: str) -> bytes:
    """The EDC's init data from the file `path` (--edc-init-file, --edc-library-file's FILE...):
    a regular file of at most INIT_DATA_MAX_BYTES, checked before it is opened (a FIFO would
    block the open, /dev/zero would never end)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise EdcInputError(f"{path}: is not a regular file (a directory, a device or a FIFO); the EDC's init "
                                "data is read from a regular file")
        if info.st_size > INIT_DATA_MAX_BYTES:
            raise EdcInputError(f"{path}: holds {info.st_size} bytes, more than joulesim passes an EDC as its init "
                                f"data ({INIT_DATA_MAX_BYTES // (1024 * 1024)} MiB)")
        with open(path, "rb") as file:
            data = file.read(INIT_DATA_MAX_BYTES + 1)  # (it may have grown since)
    except OSError as exc:
        raise EdcInputError(f"{path}: cannot read the EDC's init data file: {exc.strerror}") from None
    if len(data) > INIT_DATA_MAX_BYTES:
        raise EdcInputError(f"{path}: holds more than the {INIT_DATA_MAX_BYTES // (1024 * 1024)} MiB joulesim passes "
                            "an EDC as its init data")
    return data


@dataclass(frozen=True)
class EdcFeatures:
    """What the EDC's hello asks of the simulation (Batsim 4 had command-line flags for it)."""

    dynamic_registration: bool = False
    profile_reuse: bool = False
    acknowledge_dynamic_jobs: bool = False
    forward_profiles_on_job_submission: bool = False
    forward_profiles_on_jobs_killed: bool = False
    forward_profiles_on_simulation_begins: bool = False
    forward_unknown_external_events: bool = False
    compute_sharing: bool = False
    storage_sharing: bool = True

    def simulation_flags(self) -> dict[str, bool]:
        """The keywords of simulation_config (Batsim 4's command-line flags) this hello sets."""
        return {"enable_dynamic_jobs": self.dynamic_registration, "acknowledge_dynamic_jobs": self.acknowledge_dynamic_jobs,
                "forward_profiles_on_submission": self.forward_profiles_on_job_submission,
                "enable_profile_reuse": self.profile_reuse, "enable_compute_sharing": self.compute_sharing,
                "disable_storage_sharing": not self.storage_sharing,
                # Batsim 5.0.0-rc2 sends every generic external event, whatever the hello's
                # forward_unknown_external_events (which it never reads); the types it does not
                # know are refused (external_events.batsim5_event_ids)
                "forward_unknown_events": True}

    @staticmethod
    def flag_names() -> tuple[str, ...]:
        return tuple(EdcFeatures().simulation_flags())


class EdcRequester:
    """The simulator's side of a batprotocol EDC (what InProcessRequester is for a decider)."""

    # Batsim 5 sends doubles as they are (flatbuffers float64), not rounded as Batsim 4 prints them
    batsim4_numbers = False

    def __init__(self, channel: Any, init_data: bytes):
        self.channel = channel
        self.endpoint = channel.name
        self.state = BridgeState()
        #: True: close() (the end of the run) leaves the EDC open, and close_now() closes it (the
        #: command line calls batsim_edc_deinit after it has printed the summary or the error).
        self.keep_open = False
        try:
            flags, hello = channel.init(init_data)
            self.json = self._format(flags)
            if self.json:  # (the doubles an EDC reads in JSON are those flatbuffers prints)
                self.state.number, self.state.numbers = flatbuffers_double, as_flatbuffers_prints
            self.features = self._hello(hello)
        except BaseException:
            channel.close()
            raise
        self.state.forward_profiles_on_simulation_begins = self.features.forward_profiles_on_simulation_begins

    def _format(self, flags: int) -> bool:
        chosen = flags & (FORMAT_BINARY | FORMAT_JSON)
        if chosen not in (FORMAT_BINARY, FORMAT_JSON) or flags & ~(FORMAT_BINARY | FORMAT_JSON):
            raise ProtocolError(f"{self.endpoint}: batsim_edc_init set flags {flags:#x}; they must be exactly one "
                                f"format: {FORMAT_BINARY:#x} (flatbuffers binary) or {FORMAT_JSON:#x} (JSON)")
        return chosen == FORMAT_JSON

    def _decode(self, data: bytes, what: str) -> dict[str, Any]:
        try:
            return read_json(data) if self.json else decode_message(data)
        except BatprotocolError as exc:
            form = "JSON" if self.json else "flatbuffers binary"
            raise BatprotocolError(f"{self.endpoint}: {what} is not a valid batprotocol message in {form}: "
                                   f"{exc}") from None

    def _hello(self, data: bytes) -> EdcFeatures:
        message = self._decode(data, "its hello (batsim_edc_init's reply)")
        events = message.get("events") or []
        if len(events) != 1 or events[0].get("event_type") != "EDCHelloEvent":
            kinds = ", ".join(str(e.get("event_type", "NONE")) for e in events) or "no event"
            raise ProtocolError(f"{self.endpoint}: its init reply must hold exactly one EDCHelloEvent (it holds "
                                f"{kinds})")
        hello = events[0].get("event") or {}
        version = hello["batprotocol_version"]
        if version != UNSET_VERSION and (version.split(".", 1)[0] not in KNOWN_MAJORS or "." not in version):
            raise ProtocolError(f"{self.endpoint}: its hello speaks batprotocol version {version!r}, which joulesim "
                                f"does not know (it speaks {', '.join(m + '.x' for m in KNOWN_MAJORS)}: the revisions "
                                "that Batsim 5's EDCs and pybatsim use)")
        requested = hello.get("requested_simulation_features") or {}
        constraints = hello.get("scheduling_constraints") or {}
        strategy = constraints.get("job_allocation_validation_strategy", "MatchJobRequestExactly")
        if strategy != "MatchJobRequestExactly":
            raise ProtocolError(f"{self.endpoint}: its hello asks for job_allocation_validation_strategy {strategy}; "
                                "joulesim checks allocations as Batsim does, MatchJobRequestExactly")
        self.name = hello["decision_component_name"]
        return EdcFeatures(**{key: bool(requested.get(key, False)) for key in (
            "dynamic_registration", "profile_reuse", "acknowledge_dynamic_jobs", "forward_profiles_on_job_submission",
            "forward_profiles_on_jobs_killed", "forward_profiles_on_simulation_begins",
            "forward_unknown_external_events")},
            compute_sharing=bool(constraints.get("compute_sharing", False)),
            storage_sharing=bool(constraints.get("storage_sharing", True)))

    def set_platform(self, platform: Any) -> None:
        """The platform's hosts (their pstates' speeds and cores, for SimulationBeginsEvent)."""
        self.state.hosts = {host.id: HostFacts(tuple(host.speeds), host.pstate, host.cores)
                            for host in [*platform.compute_hosts, *platform.storage_hosts]}

    def set_external_events(self, ids: list[str]) -> None:
        """Batsim 5's ids of the run's generic external events, in the order the core forwards
        them (simulator.workload.external_events.batsim5_event_ids): each goes to the EDC as an
        ExternalEventOccurredEvent, an event of Batsim 5's later batprotocol revision that
        joulesim writes in the JSON format only."""
        if ids and not self.json:
            raise ProtocolError(f"{self.endpoint}: the external events hold {len(ids)} generic events, which "
                                "reach an EDC as ExternalEventOccurredEvent, an event of Batsim 5's later "
                                "batprotocol revision whose binary numbering is not public here: joulesim sends it "
                                "in the JSON format only (have the EDC choose JSON in its init flags)")
        self.state.external_event_ids = deque(ids)

    def exchange_message(self, message: dict[str, Any]) -> dict[str, Any]:
        outgoing, due = batsim4_bridge.to_batprotocol(message, self.state)
        again = self.state.triggers.next_occurrences(due, message["now"]) if due else []
        if not outgoing["events"]:  # (only what batprotocol does not say: the EDC is not called)
            return {"now": message["now"], "events": again}
        data = encode_json(outgoing, checked=False) + b"\0" if self.json else encode_message(outgoing)
        reply = self._decode(self.channel.exchange(data), f"its reply at t={message['now']:g}")
        decisions = batsim4_bridge.to_batsim4(reply, self.state, self.endpoint)
        if again:
            decisions["events"][:0] = again
        return decisions

    def offer_host_energy(self, joules: Callable[[list[int]], list[float]], hosts: int) -> None:
        """The simulator offers each compute host's joules since t=0 (`joules(host ids)`, read at
        the current time) for its `hosts` compute hosts: what energy probes emit."""
        self.state.triggers.host_energy, self.state.triggers.energy_hosts = joules, hosts

    def watch_outputs(self, simulation: Any) -> None:
        """The run (a Simulation) whose output files a library's watchdog flushes before it
        ends a run whose library never returns (edc_watchdog.py)."""
        watchdog = getattr(self.channel, "watchdog", None)
        if watchdog is not None:
            watchdog.outputs = simulation

    def close(self) -> None:
        if not self.keep_open:
            self.channel.close()

    def close_now(self) -> None:
        """batsim_edc_deinit (a library), the child process stopped (--edc-isolated), the socket
        closed."""
        self.channel.close()


def configured(edc: EdcRequester, build: Callable[[dict[str, bool]], Any]) -> Any:
    """The run's configuration, `build(flags)` given the flags the EDC's hello sets, with the
    EDC told the platform's hosts; the EDC is closed if that fails."""
    try:
        config = build(edc.features.simulation_flags())
        edc.set_platform(config.platform)
        return config
    except BaseException:
        edc.close()
        raise


@contextmanager
def errors_naming(edc: EdcRequester) -> Iterator[None]:
    """Errors of a run decided by `edc` (a decision that cannot apply, a broken reply, jobs left
    waiting) begin with the EDC's name: the library or endpoint to look at."""
    try:
        yield
    except (DecisionError, ProtocolError, DeciderUnavailableError) as exc:
        _prefix(exc, edc.endpoint)
        raise
    except JoulesimError as exc:
        if type(exc) is JoulesimError:  # (the run's own: "the decider left jobs waiting"...)
            _prefix(exc, edc.endpoint)
        raise


def _prefix(exc: Exception, name: str) -> None:
    text = str(exc)
    if not text.startswith(name):
        exc.args = (f"{name}: {text}",)


def open_edc(library: str | None = None, socket: str | None = None, isolated: bool = False,
             init_data: bytes = b"", timeout_s: float = 60.0,
             on_hang: Callable[[str], Any] | None = None,
             start_process: Callable[[list[str], str], Any] | None = None) -> EdcRequester:
    """Connect to the EDC and do its handshake. `on_hang`: for a library in this process, a
    watchdog (edc_watchdog.py) calls it with one line when a call into the library lasts
    `timeout_s`; it must end the process (the command line's does; without it, such a library
    hangs the run, which --edc-isolated avoids). `start_process(command, name)`: with
    `isolated`, starts the child that loads the library (the API's DeciderProcess, which reports
    how it started: protocol/start_handshake.py)."""
    if len(init_data) > INIT_DATA_MAX_BYTES:
        init_data_bytes(init_data)  # (raises)
    if (library is None) == (socket is None):
        raise JoulesimError("give an EDC library (--edc-library PATH) or an EDC socket (--edc-socket ENDPOINT), "
                            "one of them")
    if socket is not None:
        if isolated:
            raise JoulesimError("--edc-isolated loads a library in a child process: it goes with --edc-library, "
                                "not --edc-socket (a process EDC already runs apart)")
        return EdcRequester(SocketChannel(socket, timeout_s), init_data)
    if isolated:
        from joulesim.protocol.batprotocol.edc_isolated import isolated_channel

        if start_process is None:
            raise JoulesimError("--edc-isolated needs a way to start its child process (open_edc's start_process)")
        return EdcRequester(isolated_channel(library, timeout_s, start_process), init_data)
    watchdog = None
    if on_hang is not None:
        from joulesim.protocol.batprotocol.edc_watchdog import CallWatchdog

        watchdog = CallWatchdog(library, timeout_s, on_hang)
    return EdcRequester(LibraryChannel(library, watchdog), init_data)


__all__ = ["INIT_DATA_MAX_BYTES", "EdcError", "EdcFeatures", "EdcInputError", "EdcRequester", "HostFacts", "configured",
           "errors_naming", "init_data_bytes", "open_edc", "read_init_file"]
