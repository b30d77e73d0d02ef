"""The decider-side library: turn protocol messages into callbacks, and calls into decisions.

A decider subclasses `Decider`, overrides the callbacks it cares about, and emits
decisions with the methods below. It sees only protocol messages: nothing here knows how
the simulator works. `handle()` maps one simulator message to one reply; the transports
(`serve_zmq`, or the in-process transport) only move those messages.

Time-stamped decisions (Batsim 4 time dilation): every decision carries the decider's
clock `self.now`. It starts each call at the message's `now`; `think(seconds)` moves it
forward, so decisions emitted after `think` apply later, and the reply's `now` is the
clock at the end of the call.

The build compiles this module (setup.py), `Decider` as a class that Python classes may extend
(every decider does). Compiled code checks a value against its annotation where the annotation
is a built-in type (str, int, float, bool, list, dict...): the callbacks are annotated to return
`Any` (an override that returns something is not refused), and the arguments that a decider
passes and Python converts (`kill_jobs`' ids, a decision's resources, the options) abstract
types. Compiled, a job id that is not a string is refused where it is passed (a TypeError);
in Python the simulator's check of the reply refuses the decision.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from procset import ProcSet

from joulesim.protocol.batsim_number_format import TIME_PRINT_STEP_S
from joulesim.protocol.errors import DeciderInputError, JoulesimError, ProtocolError
from joulesim.protocol.interval_set import canonical_runs, format_interval_set, procset_from_canonical_runs
from joulesim.protocol.submitted_job import SubmittedJob
from joulesim.protocol.time_range import MAX_SIMULATED_TIME

try:  # (mypyc's class options: mypy_extensions comes with mypy, at build time only)
    from mypy_extensions import mypyc_attr
except ImportError:
    from joulesim.protocol.compiled_class_options import mypyc_attr  # type: ignore[no-redef]

__all__ = ["MAX_RESOURCES", "Decider", "SubmittedJob"]

# More resources than any platform joulesim loads (the platform loaders' own limit is lower):
# a SIMULATION_BEGINS announcing more is refused before a decider sizes anything by it.
MAX_RESOURCES = 1 << 24


@mypyc_attr(allow_interpreted_subclasses=True)
class Decider:
    """Base class of every decider. Callbacks do nothing unless overridden.

    `self.jobs` holds the jobs the decider may still act on: a job enters at its JOB_SUBMITTED
    and leaves once its JOB_COMPLETED has been dispatched, or when the decider rejects it, so
    memory does not grow with the length of the trace (only the ids of ended jobs are kept,
    to refuse a simulator that submits or completes one twice).

    The callbacks are annotated to return `Any`: what an override returns is ignored.
    """

    def __init__(self, options: Mapping[str, Any] | None = None):
        self.options: dict[str, Any] = dict(options or {})
        self.now: float = 0.0
        self.nb_resources: int = 0
        self.compute_resources: list[dict[str, Any]] = []
        self.config: dict[str, Any] = {}
        self.jobs: dict[str, SubmittedJob] = {}
        self._ended: set[str] = set()  # ids of completed jobs
        self._rejected: set[str] = set()  # ids of jobs this decider rejected
        self.finished = False
        self._begun = False  # SIMULATION_BEGINS received
        self._nb_all_resources = MAX_RESOURCES  # until SIMULATION_BEGINS says
        self._events: list[dict[str, Any]] = []
        self._allocations: dict[Any, ProcSet] = {}  # running jobs executed with a ProcSet

    # ------------------------------------------------------------------ copies
    # A decider is copied with pickle (a fork hands one to another process). Compiled, this
    # class keeps its attributes in its own slots and mypyc's default state is theirs alone: the
    # attributes of a Python subclass (its __dict__) would be lost. The state is both.
    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = dict(getattr(self, "__dict__", {}))
        for klass in type(self).__mro__:
            for name in klass.__dict__.get("__mypyc_attrs__", ()):
                if name not in state and name not in ("__dict__", "__weakref__"):
                    try:
                        state[name] = getattr(self, name)
                    except AttributeError:  # (an attribute not set yet)
                        pass
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    # ------------------------------------------------------------------ callbacks
    def on_simulation_begins(self, data: dict[str, Any]) -> Any: ...

    def on_job_submitted(self, job: SubmittedJob) -> Any: ...

    def on_job_completed(self, job: SubmittedJob, state: str, return_code: int, alloc: ProcSet) -> Any: ...

    def on_job_killed(self, job_ids: list[str], progress: dict[str, Any]) -> Any: ...

    def on_resource_state_changed(self, resources: ProcSet, state: str) -> Any: ...

    def on_requested_call(self) -> Any: ...

    def on_answer(self, data: dict[str, Any]) -> Any: ...

    def on_machine_unavailable(self, resources: ProcSet) -> Any: ...

    def on_machine_available(self, resources: ProcSet) -> Any: ...

    def on_no_more_static_job_to_submit(self) -> Any: ...

    def on_no_more_external_event_to_occur(self) -> Any: ...

    def on_notify(self, notify_type: str, data: dict[str, Any]) -> Any:
        """NOTIFY types the library does not map to a dedicated callback."""

    def on_simulation_ends(self) -> Any: ...

    def on_job_running(self, job: SubmittedJob, alloc: ProcSet, start: float) -> Any:
        """A job that runs on `alloc` since `start`, which this decider takes over: joulesim's
        JOB_RUNNING, sent only when a forked simulation changes its decider
        (`joulesim.Simulation.fork(decider=...)`), after SIMULATION_BEGINS and before the waiting
        jobs' JOB_SUBMITTED. A decider that keeps no state of running jobs may ignore it; one that
        does and cannot take them over says so (the default)."""
        raise JoulesimError(f"decider {type(self).__name__} cannot take over a simulation whose jobs are running "
                            "(it does not implement on_job_running): fork with a decider that does, such as the "
                            "queue policies (fcfs, easy, ...)")

    def decide(self) -> Any:
        """Called once per message, after every event of it was dispatched."""

    def reached(self, t: float) -> bool:
        """Whether time `t` has come. Batsim prints `now` to the microsecond, rounding to
        nearest, so the REQUESTED_CALL asked for at a time the decider computed (an idle
        machine's expiry, the end of a period) may read up to half a microsecond before it:
        `now >= t` would then miss the very call made for it."""
        return t <= self.now + TIME_PRINT_STEP_S

    # ------------------------------------------------------------------ decisions
    def think(self, seconds: Any) -> None:
        """Advance the decision clock: later decisions take effect `seconds` (a number, >= 0) later."""
        if seconds < 0:
            raise ValueError("think() takes a non-negative duration")
        self.now += float(seconds)

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        self._events.append({"timestamp": self.now, "type": kind, "data": data})

    def execute_job(self, job_id: str, alloc: "ProcSet | str | Iterable[int]", mapping: Mapping[int, int] | None = None,
                    storage_mapping: Mapping[str, int] | None = None) -> None:
        """Start a job on `alloc`; `mapping`: executor -> index in alloc; `storage_mapping`: the
        storage labels of its profile (pfs, data_staging) -> storage resource ids."""
        if isinstance(alloc, str):
            text = alloc  # sent as given: the simulator accepts any valid form and checks it
        else:
            if isinstance(alloc, ProcSet):
                # Kept so that JOB_COMPLETED need not parse the same set back.
                self._allocations[job_id] = alloc
            text = format_interval_set(alloc)
        data: dict[str, Any] = {"job_id": job_id, "alloc": text}
        if mapping is not None:
            data["mapping"] = {str(k): v for k, v in mapping.items()}
        if storage_mapping is not None:
            data["storage_mapping"] = dict(storage_mapping)
        self._emit("EXECUTE_JOB", data)

    def reject_job(self, job_id: str) -> None:
        self._emit("REJECT_JOB", {"job_id": job_id})
        if self.jobs.pop(job_id, None) is not None:
            self._rejected.add(job_id)

    def kill_jobs(self, job_ids: Iterable[str]) -> None:
        self._emit("KILL_JOB", {"job_ids": list(job_ids)})

    def call_me_later(self, timestamp: float) -> None:
        """Ask for a REQUESTED_CALL at `timestamp`. A time at or beyond the simulated time range
        (2^33 s, see protocol.time_range; e.g. now + a timeout of 1e30 s) is a call that no
        simulation can reach: it is not sent, rather than being refused by the simulator."""
        if timestamp >= MAX_SIMULATED_TIME:
            return
        self._emit("CALL_ME_LATER", {"timestamp": timestamp})

    def set_resource_state(self, resources: "ProcSet | str | Iterable[int]", state: Any) -> None:
        self._emit("SET_RESOURCE_STATE", {"resources": format_interval_set(resources), "state": str(state)})

    def query_consumed_energy(self) -> None:
        self._emit("QUERY", {"requests": {"consumed_energy": {}}})

    def register_profile(self, workload_name: str, profile_name: str, profile: Mapping[str, Any]) -> None:
        self._emit("REGISTER_PROFILE", {"workload_name": workload_name, "profile_name": profile_name, "profile": profile})

    def register_job(self, job_id: str, job: Mapping[str, Any]) -> None:
        self._emit("REGISTER_JOB", {"job_id": job_id, "job": job})

    def notify_registration_finished(self) -> None:
        self._emit("NOTIFY", {"type": "registration_finished"})

    def notify_continue_registration(self) -> None:
        self._emit("NOTIFY", {"type": "continue_registration"})

    def set_job_metadata(self, job_id: str, metadata: str) -> None:
        self._emit("SET_JOB_METADATA", {"job_id": job_id, "metadata": metadata})

    def change_job_state(self, job_id: str, job_state: str, kill_reason: str = "") -> None:
        self._emit("CHANGE_JOB_STATE", {"job_id": job_id, "job_state": job_state, "kill_reason": kill_reason})

    # ------------------------------------------------------------------ dispatch
    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer one simulator message (already decoded and validated) with one reply.

        Raises ProtocolError when the message contradicts what the simulator said before (a
        job submitted twice, a resource the platform does not have, time going backwards...):
        a well-formed message can still be one no simulator would send.
        """
        now = float(message["now"])
        if now < self.now:
            raise self._contradiction(message, None, f"now {now:g} is before the previous message's now "
                                      f"({self.now:g}): simulated time cannot go backwards")
        self.now = now
        self._events = []
        try:
            for index, event in enumerate(message["events"]):
                if self.finished:
                    raise self._contradiction(message, index, "an event after SIMULATION_ENDS")
                try:
                    self._dispatch(event)
                except _Contradiction as contradiction:
                    raise self._contradiction(message, index, str(contradiction)) from None
            if not self.finished:
                self.decide()
        except JoulesimError as exc:
            if type(exc) is not JoulesimError:
                raise  # a more specific error keeps its class and exit status
            # A decider's own error says that it cannot work with what the simulator sent: this
            # run's platform or workload (bad input, exit status 2, as in either process mode).
            raise DeciderInputError(str(exc)) from None
        reply = {"now": self.now, "events": self._events}
        self._events = []
        return reply

    @staticmethod
    def _contradiction(message: dict[str, Any], index: int | None, text: str) -> ProtocolError:
        where = "simulator message"
        if index is not None:
            event = message["events"][index]
            where += f": events[{index}] ({event['type']} at t={event['timestamp']:g})"
        return ProtocolError(f"{where}: {text}; the simulator and this decider disagree on the "
                             "simulation's state (is the simulator a Batsim-4-compatible one?)")

    def _resources(self, text: str) -> ProcSet:
        """An interval set of resources the platform has (checked before it is expanded)."""
        limit = self._nb_all_resources
        try:
            runs, _, _ = canonical_runs(text, limit)
        except ValueError as exc:
            raise _Contradiction(str(exc)) from None
        if runs and runs[-1][1] >= limit:
            raise _Contradiction(f"resources {text[:60]!r} name ids beyond the {limit} resources "
                                 "announced in SIMULATION_BEGINS")
        return procset_from_canonical_runs(runs)

    def _dispatch(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        data = event["data"]
        if kind == "JOB_SUBMITTED":
            job = _job_of(data, event["timestamp"])
            job_id = job.id
            if job_id in self.jobs or job_id in self._ended or job_id in self._rejected:
                raise _Contradiction(f"job {job_id} was already submitted")
            self.jobs[job_id] = job
            self.on_job_submitted(job)
        elif kind == "JOB_COMPLETED":
            job_id = data["job_id"]
            job = self.jobs.get(job_id)
            if job is None:
                if job_id in self._ended:
                    raise _Contradiction(f"job {job_id} had already completed")
                job = SubmittedJob(job_id, 0.0, 0, -1, "")  # a dynamic job registered without acknowledgement
            alloc = self._allocations.pop(job_id, None)
            if alloc is None:
                alloc = self._resources(data.get("alloc", ""))
            self.on_job_completed(job, data["job_state"], int(data.get("return_code", 0)), alloc)
            self.jobs.pop(job_id, None)  # after the callback, which may still look it up
            self._ended.add(job_id)
        elif kind == "JOB_KILLED":
            for job_id in data["job_ids"]:
                self._allocations.pop(job_id, None)
            self.on_job_killed(list(data["job_ids"]), dict(data.get("job_progress", {})))
        elif kind == "REQUESTED_CALL":
            self.on_requested_call()
        elif kind == "RESOURCE_STATE_CHANGED":
            self.on_resource_state_changed(self._resources(data["resources"]), str(data["state"]))
        elif kind == "ANSWER":
            self.on_answer(data)
        elif kind == "NOTIFY":
            self._dispatch_notify(data)
        elif kind == "SIMULATION_BEGINS":
            if self._begun:
                raise _Contradiction("SIMULATION_BEGINS was already received")
            self._begin(data)
            self.on_simulation_begins(data)
        elif kind == "SIMULATION_ENDS":
            self.finished = True
            self.on_simulation_ends()
        elif kind == "JOB_RUNNING":  # (joulesim's takeover of a forked simulation: on_job_running)
            job = _job_of(data, 0.0)
            if job.id in self.jobs:
                raise _Contradiction(f"job {job.id} was already submitted")
            alloc = self._resources(data["alloc"])
            self.jobs[job.id] = job
            self._allocations[job.id] = alloc
            self.on_job_running(job, alloc, float(data["start"]))

    def _begin(self, data: dict[str, Any]) -> None:
        """Read and check the platform's size and resources, before any decider sizes by them."""
        nb_all = data.get("nb_resources", 0)
        nb_compute = data.get("nb_compute_resources", nb_all)
        if not (type(nb_all) is int and type(nb_compute) is int and 0 <= nb_compute <= nb_all <= MAX_RESOURCES):
            raise _Contradiction(f"nb_resources {nb_all!r} and nb_compute_resources {nb_compute!r} must be "
                                 f"integers with 0 <= nb_compute_resources <= nb_resources <= {MAX_RESOURCES:,}")
        resources = list(data.get("compute_resources", []))
        ids = [r.get("id") if isinstance(r, dict) else None for r in resources]
        if not all(type(i) is int and 0 <= i < nb_all for i in ids) or len(set(ids)) != len(ids):
            raise _Contradiction(f"compute_resources must have distinct integer ids below nb_resources "
                                 f"({nb_all}); got ids {str(ids[:8])[:60]}")
        self._begun = True
        self._nb_all_resources = nb_all
        self.nb_resources = nb_compute
        self.compute_resources = resources
        self.config = dict(data.get("config", {}))

    def _dispatch_notify(self, data: dict[str, Any]) -> None:
        kind = data["type"]
        if kind == "no_more_static_job_to_submit":
            self.on_no_more_static_job_to_submit()
        elif kind == "no_more_external_event_to_occur":
            self.on_no_more_external_event_to_occur()
        elif kind == "event_machine_unavailable":
            self.on_machine_unavailable(self._resources(data["resources"]))
        elif kind == "event_machine_available":
            self.on_machine_available(self._resources(data["resources"]))
        else:
            self.on_notify(kind, data)


class _Contradiction(Exception):
    """A simulator event that contradicts the session so far (turned into a ProtocolError)."""


def _job_of(data: dict[str, Any], subtime: float) -> SubmittedJob:
    """The job of a JOB_SUBMITTED's (or JOB_RUNNING's) data; `subtime` when its JSON has none."""
    raw = data.get("job", {})
    # Positional: id, subtime, res, walltime, profile, json, profile_data (once per job).
    return SubmittedJob(data["job_id"], float(raw.get("subtime", subtime)), int(raw.get("res", 0)),
                        float(raw.get("walltime", -1)), str(raw.get("profile", "")), raw, data.get("profile"))
