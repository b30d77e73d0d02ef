"""`joulesim.Simulation`: a simulation advanced, inspected and forked from Python.

    sim = joulesim.Simulation("cluster32", "default", "easy")
    sim.run_until(3600)          # every event up to t = 3600 s handled
    sim.state()["waiting"]       # the jobs waiting then
    other = sim.fork()           # the same simulation at the same instant, independent from now on
    a, b = sim.run(), other.run()   # RunResults, as joulesim.simulate returns

The simulation lives in a process of its own (simulation_worker.py says why), made by forking
this one once the inputs are loaded, so a bad input is raised here, at construction. A fork
copies that process, the decider's state included: the decider must run in the simulator's
process (a shipped name, "module:Class", a Decider class or instance), whose state a fork
copies; a decider in a process of its own could not follow the fork, and is refused.
"""

from __future__ import annotations

import inspect
import os
import socket
import threading
import warnings
import weakref
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any, Mapping

from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import JoulesimError

if TYPE_CHECKING:
    from joulesim.run_result import RunResult

#: `joulesim.simulate` keywords that a stepwise simulation takes as they are (inputs and flags).
_CONFIG_KEYWORDS = ("energy", "master_host", "add_role_to_hosts", "platform_name", "idle_power", "event_grouping",
                    "mmax", "mmax_workload", "sched_config", "sched_config_file", "events", "forward_unknown_events",
                    "disable_machine_state_tracing", "disable_schedule_tracing", "verbosity", "enable_dynamic_jobs",
                    "enable_compute_sharing", "disable_storage_sharing", "enable_profile_reuse", "workflows",
                    "workflow_starts", "workflow_jobs_limit", "ignore_beyond_last_workflow",
                    "acknowledge_dynamic_jobs", "forward_profiles_on_submission", "timeout")

#: The owner's ends of every live simulation's socket: a new simulation's process closes the
#: copies it inherits, so that each process ends when its own owner closes it or goes away.
_OPEN_CHANNELS: "weakref.WeakSet[Simulation]" = weakref.WeakSet()


class Simulation:
    """One simulation that runs as far as you say, tells its state, and forks.

    Args: as `joulesim.simulate` (platform, workload, decider, options, and its input keywords:
    energy, event_grouping, mmax, events, ...), with the decider in this process. The outputs
    stay in memory: `run()` returns them as a `RunResult`.
    """

    def __init__(self, platform: Any = "cluster32", workload: Any = None, decider: Any = None, *,
                 options: Mapping[str, Any] | None = None, **keywords: Any):
        from joulesim.run_simulation import _decider_instance, option_text, simulate
        from joulesim.simulation_inputs import simulation_config

        unknown = sorted(set(keywords) - set(_CONFIG_KEYWORDS))
        if unknown:
            refused = {"export", "in_process", "socket_endpoint", "no_sched", "progress", "time_limit", "edc_library",
                       "edc_socket"}
            why = ("a stepwise simulation keeps its outputs in memory, with its decider in this process (run() returns "
                   "them as a RunResult's DataFrames)") if set(unknown) & refused else "not a keyword of joulesim.simulate"
            raise JoulesimError(f"joulesim.Simulation: {', '.join(unknown)}: {why}; it takes: "
                                f"{', '.join(_CONFIG_KEYWORDS)}")
        if decider is None:
            decider = "easy"
        if isinstance(decider, (list, tuple)):
            raise JoulesimError("joulesim.Simulation runs its decider in the simulator's process, so that a fork copies "
                                "it: give a shipped decider name, 'package.module:Class', or a Decider class or instance "
                                "(a command line runs a process that a fork cannot copy)")
        defaults = {name: parameter.default for name, parameter in inspect.signature(simulate).parameters.items()}
        settings = {name: keywords.get(name, defaults[name]) for name in _CONFIG_KEYWORDS}
        config = simulation_config(platform, workload, export_prefix=None, no_sched=False, progress=False, **settings)
        instance = _decider_instance(decider, {str(k): option_text(v) for k, v in (options or {}).items()})
        self._platform = config.platform
        self._connection: Connection | None = None
        self._pid = 0  # (a fork's process is its parent's child, not ours: 0, nothing to wait for)
        self._result: "RunResult | None" = None
        self.now = 0.0  #: the last simulated instant whose events were all handled
        self.finished = False  #: the simulation has ended (`run()` returns its outputs)
        self._start(config, instance)

    # ------------------------------------------------------------------ the process
    def _start(self, config: Any, decider: Decider) -> None:
        from joulesim.protocol.transport_inprocess import InProcessRequester
        from joulesim.simulation_worker import run_worker
        from joulesim.simulator.engine.decider_link import DeciderLink
        from joulesim.simulator.engine.simulation import Simulation as EngineSimulation

        simulation = EngineSimulation(config, DeciderLink(InProcessRequester(decider)))  # (its checks raise here)
        mine, theirs = socket.socketpair()
        with warnings.catch_warnings():
            # (Python warns that forking a threaded process can deadlock the child: the child here
            # runs the simulation alone, taking no lock another thread may hold, and never execs)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            mine.close()
            for other in list(_OPEN_CHANNELS):
                other._close_inherited()
            run_worker(Connection(theirs.detach()), simulation)  # (never returns: os._exit)
        theirs.close()
        self._pid = pid
        self._adopt(Connection(mine.detach()))
        self._expect("ready")

    def _adopt(self, connection: Connection) -> None:
        self._connection = connection
        _OPEN_CHANNELS.add(self)

    def _close_inherited(self) -> None:
        """(In a new simulation's process: this simulation's socket is not its to hold.)"""
        if self._connection is not None:
            self._connection.close()
        self._connection, self._pid = None, 0

    def _ask(self, *command: Any) -> tuple:
        if self._connection is None:
            raise JoulesimError("this joulesim.Simulation is closed")
        try:
            self._connection.send(command)
            return self._connection.recv()
        except (EOFError, OSError):
            self._connection = None
            raise JoulesimError("the simulation's process ended unexpectedly (killed, or out of memory); "
                                "this joulesim.Simulation cannot go on") from None

    def _expect(self, kind: str, *command: Any) -> Any:
        answer = self._ask(*command) if command else self._receive()
        if answer[0] == "error":
            self.finished = True
            raise answer[1]
        if answer[0] != kind and not (kind == "paused" and answer[0] == "finished"):
            raise JoulesimError(f"the simulation's process answered {answer[0]!r} where {kind!r} was expected")
        return answer

    def _receive(self) -> tuple:
        try:
            return self._connection.recv()  # type: ignore[union-attr]
        except (EOFError, OSError):
            self._connection = None
            raise JoulesimError("the simulation's process ended before it was ready") from None

    # ------------------------------------------------------------------ the user's calls
    def run_until(self, when: float) -> float:
        """Handle every event up to simulated time `when` (seconds); returns `now`, the last
        instant handled. At the end of the simulation, `finished` is True."""
        when = float(when)
        if when != when:
            raise JoulesimError("run_until: the time is NaN; give a number of simulated seconds")
        answer = self._expect("paused", "run_until", when)
        self.now = answer[1]
        self.finished = answer[0] == "finished"
        return self.now

    def run(self) -> "RunResult":
        """Run to the end; the outputs, as `joulesim.simulate` returns them."""
        if self._result is None:
            from joulesim.run_result import RunResult

            result = self._expect("result", "run")[1]
            self._result = RunResult(result, "<in-memory run>", self._platform)
            self.finished = True
        return self._result

    def state(self) -> dict[str, Any]:
        """The simulation now: `now`, `finished`, `decider_calls`, and the submitted jobs' ids by
        state (`waiting`, `running`, `ended`, `rejected`)."""
        return self._expect("state", "state")[1]

    def fork(self, decider: Any = None, *, options: Mapping[str, Any] | None = None) -> "Simulation":
        """An independent copy of this simulation at this instant (< 0.1 s: a process fork).

        With `decider` (a shipped name, "module:Class", a Decider class or instance, with its
        `options`), the copy's decisions come from that decider from the next message on: it is
        told the platform, the running jobs (`Decider.on_job_running`) and the waiting jobs first.
        Refused, with the reason, where that cannot tell it the present (machines off, decisions
        the old decider asked for later...: simulator/engine/decider_takeover.py)."""
        if self._connection is None:
            raise JoulesimError("this joulesim.Simulation is closed")
        command: tuple = ("fork",)
        if decider is not None or options:
            from joulesim.run_simulation import _decider_instance, option_text

            if decider is None or isinstance(decider, (list, tuple)):
                raise JoulesimError("fork(decider=...): give a shipped decider name, 'package.module:Class', or a "
                                    "Decider class or instance (options go with it)")
            command = ("fork", _decider_instance(decider, {str(k): option_text(v) for k, v in (options or {}).items()}))
        self._connection.send(command)
        channel = socket.socket(fileno=os.dup(self._connection.fileno()))
        try:
            data, fds, _, _ = socket.recv_fds(channel, 4096, 1)
        finally:
            channel.close()
        if not fds:
            said = data.decode(errors="replace")
            raise JoulesimError(said[1:] if said.startswith("!") else
                                f"the simulation's process could not fork ({said or 'it ended'})")
        other = Simulation.__new__(Simulation)
        other._platform = self._platform
        other._pid = 0
        other._result = None
        other.now = self.now
        other.finished = self.finished
        other._adopt(Connection(fds[0]))
        return other

    def close(self) -> None:
        """End the simulation's process (also when this object is garbage-collected)."""
        connection, self._connection = self._connection, None
        _OPEN_CHANNELS.discard(self)
        if connection is not None:
            try:
                connection.send(("close",))
            except OSError:
                pass
            connection.close()
        if self._pid:
            pid, self._pid = self._pid, 0
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if threading is not None and getattr(self, "_connection", None) is not None:
            self.close()
