"""The process behind a `joulesim.Simulation`: it holds one simulation and obeys its owner.

A stepwise simulation cannot be paused by returning from the simulator's loop (Batsim's actors
are generators, deep in their stacks at any instant), so it runs in a process of its own that
waits, at the pause point, for its owner's next command on a socket. `fork` is then
`os.fork()` at that point: the new process is the same simulation at the same instant, stacks,
decider and in-memory outputs included, and shares nothing mutable with the old one. It gets a
socket of its own, whose other end goes to the owner (SCM_RIGHTS).

Commands (tuples, pickled between these two processes of the same program, never read from a
file) and their answers:
- ("run_until", t): run until the clock would move past t -> ("paused", now) or ("finished", now);
- ("run",): run to the end -> ("result", SimulationResult);
- ("fork",): -> ("fork", pid) with the new process's socket;
- ("state",): -> ("state", {...}): the instant and the jobs by state;
- ("close",): the process ends.
A run that fails answers ("error", exception) to that command and every later one.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import socket
from multiprocessing.connection import Connection
from typing import Any

from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.engine.simulation import Simulation
from joulesim.simulator.workload.job_record import NOT_SUBMITTED, REJECTED, RUNNING, SUBMITTED


class _Closed(Exception):
    """The owner closed this simulation (or went away): the process ends."""


class SimulationWorker:
    def __init__(self, connection: Connection, simulation: Simulation):
        self.connection = connection
        self.simulation = simulation
        self.started = False
        self.now = 0.0
        self.next_time = 0.0  # the next instant with something to do
        self.awaiting: str | None = None  # the answer owed at the next pause or at the end
        self.result: Any = None
        self.error: BaseException | None = None
        simulation.pause = self._pause

    # ------------------------------------------------------------------ the process's life
    def serve(self) -> None:
        """Answer commands until the owner closes; run the simulation when told to."""
        try:
            self.connection.send(("ready", 0.0))
            self._serve_commands()  # returns when told to run
            self.started = True
            try:
                self.result = self.simulation.run()
            except (JoulesimError, KeyboardInterrupt) as exc:
                self.error = exc
            except Exception as exc:  # (a decider's own bug: the owner sees it, this process stays sane)
                self.error = JoulesimError(f"the simulation stopped: {type(exc).__name__}: {exc}")
            self.simulation.pause_at = math.inf
            self._answer_owed()
            while True:
                self._serve_commands()
        except _Closed:
            return

    def _pause(self, now: float, next_time: float) -> None:
        self.now, self.next_time = now, next_time
        self._answer_owed()
        self._serve_commands()

    def _answer_owed(self) -> None:
        owed, self.awaiting = self.awaiting, None
        if owed is None:
            return
        if self.error is not None:
            self._send(("error", self.error))
        elif self.result is not None:
            self.now = self.simulation.env._now
            self._send(("result", self.result) if owed == "run" else ("finished", self.now))
        else:
            self._send(("paused", self.now))

    # ------------------------------------------------------------------ commands
    def _serve_commands(self) -> None:
        """Answer commands; return when the simulation must go on (it is paused, or not started)."""
        finished = self.result is not None or self.error is not None
        while True:
            try:
                command = self.connection.recv()
            except (EOFError, OSError):
                raise _Closed from None
            kind = command[0]
            if kind == "close":
                raise _Closed
            if kind == "state":
                self._send(("state", self._state()))
            elif kind == "fork":
                self._fork(command[1] if len(command) > 1 else None)
            elif finished and self.error is not None:
                self._send(("error", self.error))
            elif kind == "run_until":
                when = command[1]
                if finished:
                    self._send(("finished", self.now))
                elif self.started and self.next_time > when:  # nothing to do up to `when`
                    self._send(("paused", self.now))
                else:
                    self.simulation.pause_at = when
                    self.awaiting = "run_until"
                    return
            elif kind == "run":
                if finished:
                    self._send(("result", self.result))
                else:
                    self.simulation.pause_at = math.inf
                    self.awaiting = "run"
                    return

    def _state(self) -> dict[str, Any]:
        by_state: dict[str, list[str]] = {"waiting": [], "running": [], "ended": [], "rejected": []}
        for job_id, record in self.simulation.records.items():
            state = record.state
            if state == NOT_SUBMITTED:
                continue
            if state == SUBMITTED:
                by_state["waiting"].append(job_id)
            elif state == RUNNING:
                by_state["running"].append(job_id)
            elif state == REJECTED:
                by_state["rejected"].append(job_id)
            else:
                by_state["ended"].append(job_id)
        return {"now": self.now if self.result is None else self.simulation.env._now,
                "started": self.started, "finished": self.result is not None or self.error is not None,
                "decider_calls": self.simulation.link.calls, **by_state}

    def _fork(self, decider: Any = None) -> None:
        """A copy of this process, paused here; with `decider`, the copy's decider from now on
        (decider_takeover.py: refused with the reason before any copy is made)."""
        if decider is not None:
            reason = self._takeover_refusal()
            if reason:
                self._send_fork_refusal(reason)
                return
        mine, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the fork: the same simulation, its own socket
            theirs.close()
            self.connection.close()
            self.connection = Connection(mine.detach())
            if decider is not None:
                from joulesim.simulator.engine.decider_takeover import take_over

                take_over(self.simulation, decider)
            return  # (back to serving commands, now the fork's)
        mine.close()
        try:
            self._send_fds(str(pid).encode(), [theirs.fileno()])
        finally:
            theirs.close()

    def _takeover_refusal(self) -> str:
        from joulesim.simulator.engine.decider_takeover import refusal

        if self.result is not None or self.error is not None:
            return "the simulation is over"
        return refusal(self.simulation)

    def _send_fork_refusal(self, reason: str) -> None:
        """(The fork's answer carries no socket then: the owner raises `reason`.)"""
        self._send_fds(("!" + reason).encode(), [])

    def _send_fds(self, data: bytes, fds: list[int]) -> None:
        """A fork's answer: the fork's pid in ASCII with its socket attached (or a refusal),
        outside the pickled framing: the owner reads it with recv_fds."""
        channel = socket.socket(fileno=os.dup(self.connection.fileno()))
        try:
            socket.send_fds(channel, [data], fds)
        except OSError:
            raise _Closed from None
        finally:
            channel.close()

    def _send(self, answer: tuple) -> None:
        if answer[0] == "error":  # (an exception of the decider's own may not survive the trip)
            try:
                pickle.loads(pickle.dumps(answer[1]))
            except Exception:  # noqa: BLE001
                answer = ("error", JoulesimError(str(answer[1])))
        try:
            self.connection.send(answer)
        except OSError:
            raise _Closed from None


def run_worker(connection: Connection, simulation: Simulation) -> None:
    """The worker process's body: serve, then end without running the owner's exit handlers."""
    # Forks of this process end on their own (their owner closes them): nobody waits for them.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Ctrl-C is the owner's to handle)
    status = 0
    try:
        SimulationWorker(connection, simulation).serve()
    except BaseException:  # noqa: BLE001 (nothing may escape into the owner's code, copied here)
        status = 1
    finally:
        os._exit(status)
