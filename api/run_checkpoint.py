"""Checkpoints of a run, and runs resumed from them (`joulesim run --checkpoint-at` /
`--checkpoint-every`, `joulesim resume`).

A checkpoint is taken where nothing is half done. Per-time runs: at the simulation's pause point,
every event up to its instant handled, none after it (where `joulesim.Simulation.run_until` stops).
With Batsim's actors: between two steps of the kernel once its clock reaches the instant, every
actor waiting for an action to end; each is written as the place it waits at and the values it
needs from there on (simulator/engine/resumable_actors.py). It holds:
- the run's recipe (what the command line gave: the inputs, the decider, the flags) and a SHA-256
  of each input file and of joulesim's own code: a resume refuses inputs or code that changed;
- the simulation's state: every object of the simulation but its inputs (read again when it
  resumes), the decider link and the output files, written by `state_codec` (no pickle);
- the output files' sizes then: a resume cuts each back there, so that rows written after the
  checkpoint by a run that was killed do not stay, and appends;
- every message exchanged with the decider: a resume starts the decider afresh and replays
  them, checking that it answers each as it did. A decider whose answers depend on anything
  else (the wall clock, an unseeded random generator) cannot be resumed, and the resume says so.

Runs with dynamic jobs or workflows cannot be checkpointed yet.
"""

from __future__ import annotations

import hashlib
import importlib
import math
import os
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import Any, Callable

import orjson

from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.checkpoint.checkpoint_file import CheckpointError, read_checkpoint, write_checkpoint
from joulesim.simulator.checkpoint.state_codec import (
    StateCodecError, StateDecoder, StateEncoder, external_objects, place_text)
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.engine.simulation import Simulation, SimulationResult
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.output.output_files import ALL_OUTPUT_NAMES, output_path
from joulesim.simulator.workload.job_record import COMPLETED_STATES, REJECTED

#: The packages whose code a checkpoint's state depends on (their files' digest is checked).
_CODE_PACKAGES = ("joulesim", "joulesim.simulator", "joulesim.protocol", "joulesim.deciders", "joulesim.inputs")


@dataclass
class CheckpointPlan:
    """When to write checkpoints, and where. `at`: simulated times; `every_s`: wall-clock seconds
    between checkpoints; `recipe`: how the run was started (JSON), given back by `joulesim resume`."""

    path: str
    at: list[float] = field(default_factory=list)
    every_s: float | None = None
    recipe: dict[str, Any] = field(default_factory=dict)

    def next_time(self, covered: float) -> float:
        """The first simulated time of `at` a checkpoint taken before `covered` does not cover
        (inf: none). A checkpoint taken when the next event is at `covered` holds the state at
        every time before it."""
        return min((t for t in self.at if t >= covered), default=math.inf)


def checkpoint_refusal(config: SimulationConfig) -> str | None:
    """Why this run cannot be checkpointed yet (None: it can)."""
    if config.workflows:
        return "a run with workflows (-W, --WS) cannot be checkpointed yet"
    if config.dynamic_jobs:
        return "a run with dynamic jobs (--enable-dynamic-jobs) cannot be checkpointed yet"
    if config.no_sched:
        return "a --no-sched run has no decider to resume with: it needs no checkpoint"
    if config.export_prefix is None:
        return "a checkpoint needs the run's outputs in files (an export prefix)"
    return None


# ---------------------------------------------------------------- the messages, recorded
class MessageLog:
    """Every message and reply of the run so far, compressed as they come (a million calls take
    tens of MB here where they would take hundreds as they are)."""

    _BATCH = 1 << 20  # bytes gathered before they are compressed (one call per exchange cost 9 us)

    def __init__(self) -> None:
        self._compressor = zlib.compressobj(6)
        self._chunks: list[bytes] = []
        self._pending: list[bytes] = []
        self._pending_size = 0
        self.count = 0

    def add(self, message: bytes, reply: bytes) -> None:
        self._pending += (message, b"\n", reply, b"\n")
        self._pending_size += len(message) + len(reply) + 2
        self.count += 1
        if self._pending_size >= self._BATCH:
            self._compress_pending()

    def _compress_pending(self) -> None:
        data = self._compressor.compress(b"".join(self._pending))
        if data:
            self._chunks.append(data)
        self._pending.clear()
        self._pending_size = 0

    def stream(self) -> bytes:
        """The log so far as one complete zlib stream (the log goes on after)."""
        self._compress_pending()
        return b"".join(self._chunks) + self._compressor.copy().flush()


def message_pairs(log: bytes, count: int) -> list[tuple[bytes, bytes]]:
    """The (message, reply) pairs of a checkpoint's message log (its section, decompressed)."""
    lines = log.split(b"\n")
    if len(lines) != 2 * count + 1 or lines[-1]:
        raise CheckpointError(f"the checkpoint's message log does not hold the {count} exchanges its header says: "
                              "it is damaged")
    return [(lines[i], lines[i + 1]) for i in range(0, 2 * count, 2)]


def replay_messages(transport: Any, pairs: list[tuple[bytes, bytes]]) -> None:
    """Give a fresh decider the run's messages again; each reply must be the one it gave."""
    in_process = hasattr(transport, "exchange_message")
    for index, (message, recorded) in enumerate(pairs):
        if in_process:
            reply = orjson.dumps(transport.exchange_message(orjson.loads(message)))
        else:
            reply = transport.exchange(message)
        if reply != recorded:
            now = orjson.loads(message).get("now")
            raise JoulesimError(
                f"the decider cannot be resumed: replayed the run's messages, it answered message {index + 1} "
                f"(t={now}) otherwise than it did in the run. Its decisions depend on more than the messages "
                f"(the wall clock, a random generator without a seed, a file...). Answered then: "
                f"{recorded[:200].decode(errors='replace')}; now: {reply[:200].decode(errors='replace')}")


class RecordingTransport:
    """A decider's transport whose every exchange goes into a MessageLog; after each, a due
    wall-clock checkpoint is asked for (`wall_due`)."""

    def __init__(self, transport: Any, log: MessageLog, wall_due: Callable[[], None]):
        self._transport = transport
        self._log = log
        self._wall_due = wall_due
        if hasattr(transport, "exchange_message"):
            self.exchange_message = self._exchange_message
        else:
            self.exchange = self._exchange

    def _exchange_message(self, message: dict[str, Any]) -> dict[str, Any]:
        sent = orjson.dumps(message)  # (before the decider may change it)
        reply = self._transport.exchange_message(message)
        self._log.add(sent, orjson.dumps(reply))
        self._wall_due()
        return reply

    def _exchange(self, message: bytes) -> bytes:
        reply = self._transport.exchange(message)
        self._log.add(message, reply)
        self._wall_due()
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


# ---------------------------------------------------------------- fingerprints
def code_digest() -> str:
    """SHA-256 of the source files of joulesim's simulator, protocol, deciders and API."""
    digest = hashlib.sha256()
    for name in _CODE_PACKAGES:
        package = importlib.import_module(name)
        for folder in package.__path__:
            root = Path(folder)
            for path in sorted(root.rglob("*.py")):
                digest.update(f"{name}/{path.relative_to(root).as_posix()}\n".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def input_files(config: SimulationConfig, options: Any) -> list[str]:
    """The files the run read: its platform and workloads, and every file the options name."""
    paths = {config.platform.source, *(w.path for w in config.workloads), *(w.path for w in config.workflows)}

    def gather(value: Any) -> None:
        if isinstance(value, str):
            paths.add(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                gather(item)
        elif isinstance(value, dict):
            for item in value.values():
                gather(item)

    gather(options)
    return sorted(os.path.abspath(p) for p in paths if isinstance(p, str) and p and os.path.isfile(p))


def file_digests(paths: list[str]) -> dict[str, str]:
    return {path: hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in paths}


# ---------------------------------------------------------------- writing
class RunCheckpoints:
    """A run that writes checkpoints as `plan` says (run_configured calls its three steps)."""

    def __init__(self, plan: CheckpointPlan, config: SimulationConfig):
        refusal = checkpoint_refusal(config)
        if refusal:
            raise CheckpointError(f"--checkpoint-at / --checkpoint-every: {refusal}")
        self.plan = plan
        self.config = config
        self.externals = external_objects([config])  # (before the run: the inputs as a resume reads them)
        self.inputs = file_digests(input_files(config, plan.recipe))
        self.code = code_digest()
        self.log = MessageLog()
        self.simulation: Simulation | None = None
        self.decider: Any = None  # the decider's own transport (recording)
        self._wall_due_at = math.inf
        self.written = 0  # checkpoints written by this process
        self._wall_before = 0.0  # (a resumed run: what its earlier processes took)
        self._started = perf_counter()

    def recording(self, transport: Any) -> RecordingTransport:
        self.decider = transport  # (a resumed run replays the messages to it, unrecorded)
        return RecordingTransport(transport, self.log, self._check_wall)

    def simulation_for(self, config: SimulationConfig, link: DeciderLink) -> Simulation:
        simulation = self.simulation = Simulation(config, link, resumable=True)
        self._arm(simulation, -math.inf)
        return simulation

    def run(self, simulation: Simulation) -> SimulationResult:
        return simulation.run()

    def _arm(self, simulation: Simulation, covered: float) -> None:
        """The next checkpoint: at the simulation's pause point (per-time: before its clock passes
        the time), or at the kernel's step boundary (Batsim's actors: once its clock reaches it)."""
        if simulation.actors is None:
            simulation.pause = self._pause
            simulation.pause_at = self.plan.next_time(covered)
        else:
            kernel = simulation.actors.kernel
            kernel.boundary = self._boundary
            kernel.boundary_at = self.plan.next_time(covered)
        if self.plan.every_s is not None:
            self._wall_due_at = perf_counter() + self.plan.every_s

    def _check_wall(self) -> None:
        simulation = self.simulation
        if perf_counter() >= self._wall_due_at and simulation is not None:
            # (at the next pause point or step boundary)
            if simulation.actors is None:
                simulation.pause_at = -math.inf
            else:
                simulation.actors.kernel.boundary_at = -math.inf
            self._wall_due_at = math.inf

    def _pause(self, now: float, next_time: float) -> None:
        simulation = self.simulation
        self.write(simulation, now, next_time)
        self._arm(simulation, next_time)

    def _boundary(self, now: float) -> None:
        simulation = self.simulation
        covered = math.nextafter(now, math.inf)  # (every event at `now` is handled)
        self.write(simulation, now, covered)
        self._arm(simulation, covered)

    def write(self, simulation: Simulation, now: float, next_time: float) -> int:
        """Write the checkpoint of `simulation`, paused at `now` (its next event at `next_time`);
        returns its size in bytes."""
        outputs = {}
        for handle in simulation._files:
            handle.flush()
            outputs[handle.name] = os.fstat(handle.fileno()).st_size
        paths = {id(handle): handle.name for handle in simulation._files}
        given = {id(simulation.link): "link", id(simulation.pause): "pause"}
        if simulation.actors is not None:
            given[id(simulation.actors.kernel.boundary)] = "boundary"
        if simulation._progress is not None:
            given[id(simulation._progress)] = "progress"
        encoder = StateEncoder(self.externals, given, lambda handle: paths.get(id(handle)), _describe_actor)
        try:
            state = encoder.encode(simulation, "the simulation")
        except StateCodecError as exc:
            raise JoulesimError(f"--checkpoint: this run cannot be checkpointed yet: {exc}") from None
        link = simulation.link
        header = {
            "what": "a joulesim run paused at a checkpoint",
            "now": now, "covered": next_time, "recipe": self.plan.recipe, "inputs": self.inputs, "code": self.code,
            "outputs": outputs, "decider_calls": link.calls, "scheduling_time": link.scheduling_time,
            "messages": self.log.count, "nb_externals": len(self.externals),
            "wall_s": self._wall_before + perf_counter() - self._started,
        }
        size = write_checkpoint(self.plan.path, header, {"state": orjson.dumps(state)},
                                compressed={"messages": self.log.stream()})
        self.written += 1
        self._tell(f"checkpoint at t={now:g}: {self.plan.path} ({size / 1e6:.2f} MB)")
        return size

    def _tell(self, text: str) -> None:
        """A line on stderr, unless the run is quiet (-q, network-only)."""
        if self.config.verbosity in ("information", "debug"):
            print(f"joulesim: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- resuming
@dataclass
class SavedRun:
    """A checkpoint read back: its header and sections."""

    path: str
    header: dict[str, Any]
    sections: dict[str, bytes]

    @property
    def recipe(self) -> dict[str, Any]:
        return self.header["recipe"]


def read_run_checkpoint(path: str) -> SavedRun:
    header, sections = read_checkpoint(path)
    needed = {"now", "covered", "recipe", "inputs", "code", "outputs", "decider_calls", "messages", "wall_s"}
    missing = sorted(needed - set(header)) + sorted({"state", "messages"} - set(sections))
    if missing:
        raise CheckpointError(f"{path}: its header or sections lack {', '.join(missing)}: it is not a run's checkpoint")
    return SavedRun(path, header, sections)


class ResumedRun(RunCheckpoints):
    """A run restored from a checkpoint (run_configured calls its three steps), which goes on
    writing checkpoints as its plan says."""

    def __init__(self, saved: SavedRun, plan: CheckpointPlan, config: SimulationConfig):
        header = saved.header
        super().__init__(plan, config)
        if self.code != header["code"]:
            raise CheckpointError(f"{saved.path} was written by other joulesim code (another version, or changed "
                                  "files): resume it with the code that wrote it")
        for path, digest in header["inputs"].items():
            now = self.inputs.get(path)
            if now is None:
                raise CheckpointError(f"{path}, an input of the checkpointed run, is gone: resume needs the run's inputs")
            if now != digest:
                raise CheckpointError(f"{path} changed since the checkpoint (its SHA-256 differs): resume needs the "
                                      "inputs the run started with")
        if len(self.externals) != header.get("nb_externals"):
            raise CheckpointError(f"{saved.path}: the inputs read again do not give the run's objects (the options "
                                  "differ from the run's)")
        self.saved = saved
        self._wall_before = header["wall_s"]

    def simulation_for(self, config: SimulationConfig, link: DeciderLink) -> Simulation:
        header = self.saved.header
        # (a checkpoint cuts back only its run's own output files, each a regular file)
        allowed = {output_path(config.export_prefix, name) for name in ALL_OUTPUT_NAMES} if config.export_prefix else set()
        for path, size in header["outputs"].items():
            if path not in allowed or type(size) is not int or size < 0:
                raise CheckpointError(f"{self.saved.path} names {path!r} among its outputs, which is not an output of its "
                                      "run: it is damaged, or not a checkpoint to trust")
            if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
                raise CheckpointError(f"{path} is not a regular file: resume needs the outputs as the run left them")
            try:
                actual = os.path.getsize(path)
            except OSError:
                actual = -1
            if actual < size:
                raise CheckpointError(f"{path} is {'gone' if actual < 0 else 'shorter than at the checkpoint'}: "
                                      "resume needs the outputs as the run left them")
        for path, size in header["outputs"].items():
            os.truncate(path, size)  # (rows the killed run wrote after the checkpoint go)
        opened: list[Any] = []

        def reopen(path: str) -> Any:
            if path not in header["outputs"]:
                raise StateCodecError(f"an output file {path} the checkpoint does not list")
            handle = open(path, "a", newline="")
            opened.append(handle)
            return handle

        progress = None
        if config.progress:
            from joulesim.console.progress_bar import progress_bar

            progress = progress_bar(sum(len(w.jobs) for w in config.workloads), "simulating", "job")
        decoder = StateDecoder(self.externals, {"link": link, "pause": self._pause, "boundary": self._boundary,
                                                "progress": progress}, reopen, _resumed_actor)
        try:
            simulation = decoder.decode(orjson.loads(self.saved.sections["state"]))
            if type(simulation) is not Simulation:
                raise StateCodecError("its state is not a simulation")
        except (StateCodecError, orjson.JSONDecodeError) as exc:
            for handle in opened:
                handle.close()
            raise CheckpointError(f"{self.saved.path}: its state cannot be read back ({exc})") from None
        if progress is not None:
            progress.update(sum(1 for r in simulation.records.values() if r.state in COMPLETED_STATES or r.state == REJECTED))
        simulation.use_link(link)
        self.simulation = simulation
        return simulation

    def run(self, simulation: Simulation) -> SimulationResult:
        header = self.saved.header
        link = simulation.link
        pairs = message_pairs(self.saved.sections["messages"], header["messages"])
        self._tell(f"resuming {self.saved.path} at t={header['now']:g}: the decider is given the run's "
                   f"{len(pairs):,} messages again")
        replay_messages(self.decider, pairs)
        # (the log goes on from the replayed messages, so that later checkpoints hold them all)
        for message, reply in pairs:
            self.log.add(message, reply)
        link.calls = header["decider_calls"]
        link.scheduling_time = header["scheduling_time"]
        self._arm(simulation, header["covered"])
        return simulation.resume(self._wall_before)


def _describe_actor(encoder: StateEncoder, code: Any, where: Any) -> Any:
    """An actor's code (a generator of BatsimActors) as the place it waits at and what it needs."""
    from joulesim.simulator.engine.resumable_batsim_actors import BatsimActors
    from joulesim.simulator.engine.resumable_actors import NotResumable, describe

    frame = code.gi_frame
    if frame is None:  # (an actor that has ended, still named, e.g. the last REQ-REP actor)
        return ["ended"]
    owner = frame.f_locals.get("self", frame.f_locals.get("actors"))
    if not isinstance(owner, BatsimActors):
        raise StateCodecError(f"{place_text(where)}: a generator that is not one of Batsim's actors")
    try:
        function, place, values = describe(owner, code)
    except NotResumable as exc:
        raise StateCodecError(f"{place_text(where)}: {exc}") from None
    return [encoder.encode(owner, where), function, place, list(values),
            [encoder.encode(value, where) for value in values.values()]]


def _resumed_actor(decoder: StateDecoder, node: Any) -> Any:
    from joulesim.simulator.engine.resumable_batsim_actors import BatsimActors
    from joulesim.simulator.engine.resumable_actors import NotResumable, resumed

    if node == ["ended"]:
        ended = _ended()
        next(ended, None)
        return ended
    owner_node, function, place, names, values = node
    owner = decoder.decode(owner_node)
    if not isinstance(owner, BatsimActors) or type(function) is not str or type(place) is not str:
        raise StateCodecError("an actor described with something else than Batsim's actors")
    try:
        return resumed(owner, function, place, dict(zip(names, [decoder.decode(v) for v in values])))
    except NotResumable as exc:
        raise StateCodecError(str(exc)) from None


def _ended():
    """An actor's code that has ended (made, then run to its end)."""
    return
    yield
