"""The decider-side library: turn protocol messages into callbacks, and calls into decisions.

A decider subclasses `Decider`, overrides the callbacks it cares about, and emits
decisions with the methods below. It sees only protocol messages: nothing here knows how
the simulator works. `handle()` maps one simulator message to one reply; the transports
(`serve_zmq`, or the in-process transport) only move those messages.

Time-stamped decisions (Batsim 4 time dilation): every decision carries the decider's
clock `self.now`. It starts each call at the message's `now`; `think(seconds)` moves it
forward, so decisions emitted after `think` apply later, and the reply's `now` is the
clock at the end of the call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from procset import ProcSet

from joulesim.protocol.interval_set import format_interval_set, parse_interval_set


@dataclass
class SubmittedJob:
    """A job as the decider learns it from JOB_SUBMITTED."""

    id: str
    subtime: float
    res: int
    walltime: float  # -1 when the job has none
    profile: str
    json: dict[str, Any] = field(default_factory=dict)
    profile_data: dict[str, Any] | None = None  # only when profiles are forwarded

    @property
    def workload(self) -> str:
        return self.id.split("!", 1)[0]


class Decider:
    """Base class of every decider. Callbacks do nothing unless overridden."""

    def __init__(self, options: dict[str, str] | None = None):
        self.options: dict[str, str] = dict(options or {})
        self.now: float = 0.0
        self.nb_resources: int = 0
        self.compute_resources: list[dict[str, Any]] = []
        self.config: dict[str, Any] = {}
        self.jobs: dict[str, SubmittedJob] = {}
        self.finished = False
        self._events: list[dict[str, Any]] = []
        self._allocations: dict[str, ProcSet] = {}  # running jobs executed with a ProcSet

    # ------------------------------------------------------------------ callbacks
    def on_simulation_begins(self, data: dict[str, Any]) -> None: ...

    def on_job_submitted(self, job: SubmittedJob) -> None: ...

    def on_job_completed(self, job: SubmittedJob, state: str, return_code: int, alloc: ProcSet) -> None: ...

    def on_job_killed(self, job_ids: list[str], progress: dict[str, Any]) -> None: ...

    def on_resource_state_changed(self, resources: ProcSet, state: str) -> None: ...

    def on_requested_call(self) -> None: ...

    def on_answer(self, data: dict[str, Any]) -> None: ...

    def on_machine_unavailable(self, resources: ProcSet) -> None: ...

    def on_machine_available(self, resources: ProcSet) -> None: ...

    def on_no_more_static_job_to_submit(self) -> None: ...

    def on_no_more_external_event_to_occur(self) -> None: ...

    def on_notify(self, notify_type: str, data: dict[str, Any]) -> None:
        """NOTIFY types the library does not map to a dedicated callback."""

    def on_simulation_ends(self) -> None: ...

    def decide(self) -> None:
        """Called once per message, after every event of it was dispatched."""

    # ------------------------------------------------------------------ decisions
    def think(self, seconds: float) -> None:
        """Advance the decision clock: later decisions take effect `seconds` later."""
        if seconds < 0:
            raise ValueError("think() takes a non-negative duration")
        self.now += seconds

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        self._events.append({"timestamp": self.now, "type": kind, "data": data})

    def execute_job(self, job_id: str, alloc: "ProcSet | str | list[int]", mapping: dict[int, int] | None = None) -> None:
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
        self._emit("EXECUTE_JOB", data)

    def reject_job(self, job_id: str) -> None:
        self._emit("REJECT_JOB", {"job_id": job_id})

    def kill_jobs(self, job_ids: list[str]) -> None:
        self._emit("KILL_JOB", {"job_ids": list(job_ids)})

    def call_me_later(self, timestamp: float) -> None:
        self._emit("CALL_ME_LATER", {"timestamp": timestamp})

    def set_resource_state(self, resources: ProcSet | str, state: int | str) -> None:
        self._emit("SET_RESOURCE_STATE", {"resources": format_interval_set(resources), "state": str(state)})

    def query_consumed_energy(self) -> None:
        self._emit("QUERY", {"requests": {"consumed_energy": {}}})

    def register_profile(self, workload_name: str, profile_name: str, profile: dict[str, Any]) -> None:
        self._emit("REGISTER_PROFILE", {"workload_name": workload_name, "profile_name": profile_name, "profile": profile})

    def register_job(self, job_id: str, job: dict[str, Any]) -> None:
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
        """Answer one simulator message (already decoded and validated) with one reply."""
        self.now = float(message["now"])
        self._events = []
        for event in message["events"]:
            self._dispatch(event)
        if not self.finished:
            self.decide()
        reply = {"now": self.now, "events": self._events}
        self._events = []
        return reply

    def _dispatch(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        data = event["data"]
        if kind == "JOB_SUBMITTED":
            raw = data.get("job", {})
            # Positional: id, subtime, res, walltime, profile, json, profile_data (once per job).
            job = SubmittedJob(data["job_id"], float(raw.get("subtime", event["timestamp"])),
                               int(raw.get("res", 0)), float(raw.get("walltime", -1)),
                               str(raw.get("profile", "")), raw, data.get("profile"))
            self.jobs[job.id] = job
            self.on_job_submitted(job)
        elif kind == "JOB_COMPLETED":
            job = self.jobs.get(data["job_id"]) or SubmittedJob(data["job_id"], 0.0, 0, -1, "")
            alloc = self._allocations.pop(job.id, None)
            if alloc is None:
                alloc = parse_interval_set(data.get("alloc", ""))
            self.on_job_completed(job, data["job_state"], int(data.get("return_code", 0)), alloc)
        elif kind == "JOB_KILLED":
            for job_id in data["job_ids"]:
                self._allocations.pop(job_id, None)
            self.on_job_killed(list(data["job_ids"]), dict(data.get("job_progress", {})))
        elif kind == "REQUESTED_CALL":
            self.on_requested_call()
        elif kind == "RESOURCE_STATE_CHANGED":
            self.on_resource_state_changed(parse_interval_set(data["resources"]), str(data["state"]))
        elif kind == "ANSWER":
            self.on_answer(data)
        elif kind == "NOTIFY":
            self._dispatch_notify(data)
        elif kind == "SIMULATION_BEGINS":
            self.nb_resources = int(data.get("nb_compute_resources", data.get("nb_resources", 0)))
            self.compute_resources = list(data.get("compute_resources", []))
            self.config = dict(data.get("config", {}))
            self.on_simulation_begins(data)
        elif kind == "SIMULATION_ENDS":
            self.finished = True
            self.on_simulation_ends()

    def _dispatch_notify(self, data: dict[str, Any]) -> None:
        kind = data["type"]
        if kind == "no_more_static_job_to_submit":
            self.on_no_more_static_job_to_submit()
        elif kind == "no_more_external_event_to_occur":
            self.on_no_more_external_event_to_occur()
        elif kind == "event_machine_unavailable":
            self.on_machine_unavailable(parse_interval_set(data["resources"]))
        elif kind == "event_machine_available":
            self.on_machine_available(parse_interval_set(data["resources"]))
        else:
            self.on_notify(kind, data)
