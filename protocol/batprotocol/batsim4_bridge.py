"""Translation between the simulator's Batsim 4 messages and an EDC speaking batprotocol.

The simulator core speaks Batsim 4's protocol only. `EdcRequester` stands where a decider
would: it turns each Batsim 4 message into the batprotocol message Batsim 5 would send at
that point, calls the EDC (library, child process or socket: edc_connection.py), and turns
its decisions back into Batsim 4 decisions. What Batsim 5 does differently is done here:

- job and profile ids are "workload!name" on both sides;
- a job killed by the EDC gets a JobCompletedEvent (COMPLETED_KILLED) before the
  JobsKilledEvent, as Batsim 5 sends it;
- calls-me-later (with ids, one-shot or periodic, stoppable) and energy probes are kept by
  periodic_triggers.py: each instant one is due at is asked of the simulator as a Batsim 4
  CALL_ME_LATER, and its REQUESTED_CALL goes to the EDC as the RequestedCallEvents and
  ProbeDataEmittedEvents due then (the hosts' joules read from the simulator, which offers
  them when it keeps energy: edc_connection.offer_host_energy); when nothing is due (a stopped
  call, a probe's first trigger) the EDC is not called;
- a forced stop goes to the core as joulesim's NOTIFY force_simulation_stop;
- the EDC's hello sets what were command-line flags in Batsim 4 (edc_connection.EdcFeatures).

- host state changes of Batsim 5's later revision (JSON only, message_layout.JSON_ONLY_MEMBERS)
  go to the core as SET_RESOURCE_STATE; its RESOURCE_STATE_CHANGED comes back as
  HostsPStateChangedEvent or HostsTurnedOnOffEvent, as asked.
- the events file's "generic" events, which the core forwards as NOTIFYs holding the event,
  go to the EDC as ExternalEventOccurredEvent (that revision's, JSON only too), with Batsim 5's
  id for each.

Batsim 4 events with no batprotocol counterpart (machine availability, energy answers) are
not forwarded, nor are profiles with submitted or killed
jobs (that schema has no field for them); decisions joulesim cannot apply (profile allocation
overrides, the probes Batsim 5 does not implement) are refused with a message that names them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

from joulesim.protocol.errors import DecisionError, ProtocolError
from joulesim.protocol.interval_set import format_interval_set, parse_runs
from joulesim.protocol.batprotocol.periodic_triggers import Due, PeriodicTriggers
from joulesim.protocol.batprotocol.message_layout import ENUMS, TABLES
from joulesim.protocol.batprotocol.profile_forms import ProfileFormError, batsim4_form

# Batsim 5's return code of a job it killed (its -2, as the uint32 the protocol carries).
KILLED_RETURN_CODE = 2 ** 32 - 2
_HOST_STATES = {"sleeping": "SLEEPING", "idle": "IDLE", "computing": "COMPUTING", "switching_on": "SWITCHING_ON",
                "switching_off": "SWITCHING_OFF"}


@dataclass(frozen=True)
class HostFacts:
    """What SimulationBeginsEvent tells of a host beyond Batsim 4's resource object."""

    speeds: tuple[float, ...]  # flop/s per pstate
    pstate: int
    cores: int


@dataclass
class BridgeState:
    """What the translation remembers between messages."""

    hosts: dict[int, HostFacts] = field(default_factory=dict)
    forward_profiles_on_simulation_begins: bool = False
    triggers: PeriodicTriggers = field(default_factory=PeriodicTriggers)  # calls-me-later and probes
    # Host state changes asked and not yet reported: (hosts, pstate) -> the Batsim 5 event that
    # reports them (HostsPStateChangedEvent or HostsTurnedOnOffEvent), oldest first
    switches: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    job_sizes: dict[str, int] = field(default_factory=dict)  # every job the EDC may name (its size)
    # Batsim 5's ids ("ee0!N") of the generic external events still to come, in the order the
    # simulator forwards them (edc_connection.set_external_events)
    external_event_ids: deque[str] = field(default_factory=deque)
    # How a double goes to the EDC: as it is (binary), or as flatbuffers' JSON prints it
    number: Callable[[float], float] = float
    # the same for a whole value (SimulationBeginsEvent's speeds and profiles)
    numbers: Callable[[Any], Any] = lambda value: value


# ------------------------------------------------------------------ simulator -> EDC
def to_batprotocol(message: dict[str, Any], state: BridgeState) -> tuple[dict[str, Any], list[Due]]:
    """The batprotocol message for one Batsim 4 message (possibly with no event), and the calls
    and probes that came due (each with whether it is its last, and whether it counts as one of
    its occurrences: PeriodicTriggers.next_occurrences asks for the following ones)."""
    events: list[dict[str, Any]] = []
    told: list[Due] = []
    number = state.number
    for event in message["events"]:
        kind, data, at = event["type"], event.get("data") or {}, number(event["timestamp"])
        if kind == "SIMULATION_BEGINS":
            events.append(_event(at, "SimulationBeginsEvent", state.numbers(_simulation_begins(data, state))))
        elif kind == "JOB_SUBMITTED":
            job = data["job"]
            state.job_sizes[data["job_id"]] = int(job["res"])
            events.append(_event(at, "JobSubmittedEvent", {
                "job_id": data["job_id"], "job": _job(data["job_id"], job, number),
                "submission_time": number(float(job["subtime"]))}))
        elif kind == "JOB_COMPLETED":
            if data["job_state"] == "COMPLETED_KILLED":
                continue  # (Batsim 4's report of a kill: Batsim 5's comes with JOB_KILLED, below)
            events.append(_event(at, "JobCompletedEvent", {
                "job_id": data["job_id"], "state": data["job_state"],
                "return_code": int(data.get("return_code", 0)) % 2 ** 32}))
        elif kind == "JOB_KILLED":
            progress = data.get("job_progress") or {}
            for job_id in data["job_ids"]:
                if job_id in progress:  # really killed (not finished before the kill)
                    events.append(_event(at, "JobCompletedEvent", {
                        "job_id": job_id, "state": "COMPLETED_KILLED", "return_code": KILLED_RETURN_CODE}))
            events.append(_event(at, "JobsKilledEvent", {
                "job_ids": list(data["job_ids"]),
                "progresses": [{"job_id": job_id, "wrapper": state.numbers(_kill_progress(job_id, entry))}
                               for job_id, entry in progress.items()]}))
        elif kind == "REQUESTED_CALL":
            due = state.triggers.due_at()
            told += due
            for trigger, last, counted in due:
                if trigger.probe is None:
                    events.append(_event(at, "RequestedCallEvent", {"call_me_later_id": trigger.id,
                                                                   "last_periodic_call": last}))
                elif counted:  # (a probe's first trigger starts its measure and says nothing)
                    events.append(_event(at, "ProbeDataEmittedEvent",
                                         state.triggers.probe_data(trigger.id, trigger.probe, number)))
        elif kind == "RESOURCE_STATE_CHANGED":  # (asked by a ChangeHostsPState or TurnOnOffHosts: JSON only)
            key = (format_interval_set(str(data["resources"])), str(data["state"]))
            asked = state.switches.get(key) or ["HostsPStateChangedEvent"]
            reported = asked.pop(0)
            events.append(_event(at, reported, {"host_ids": key[0],
                                                "pstate" if reported == "HostsPStateChangedEvent" else "state": int(key[1])}))
        elif kind == "NOTIFY" and data.get("type") == "generic" and state.external_event_ids:
            # (a generic event of the events file, forwarded whole by the core: JSON only)
            events.append(_event(at, "ExternalEventOccurredEvent", {
                "id": state.external_event_ids.popleft(), "external_event_type": "GenericExternalEvent",
                "external_event": {"data": data["data"]}}))
        elif kind == "NOTIFY" and data.get("type") == "no_more_static_job_to_submit":
            events.append(_event(at, "AllStaticJobsHaveBeenSubmittedEvent", {}))
        elif kind == "NOTIFY" and data.get("type") == "no_more_external_event_to_occur":
            events.append(_event(at, "AllStaticExternalEventsHaveBeenInjectedEvent", {}))
        elif kind == "SIMULATION_ENDS":
            events.append(_event(at, "SimulationEndsEvent", {}))
        # (other Batsim 4 events have no counterpart in this batprotocol revision)
    return {"now": number(float(message["now"])), "events": events}, told


def _event(at: float, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": at, "event_type": kind, "event": body}


def _job(job_id: str, job: dict[str, Any], number: Callable[[float], float]) -> dict[str, Any]:
    workload = job_id.split("!", 1)[0]
    walltime = job.get("walltime")
    profile = str(job["profile"])
    out: dict[str, Any] = {"resource_request": int(job["res"]), "rigid": True,
                           "profile_id": profile if "!" in profile else f"{workload}!{profile}",
                           "extra_data": _extra_data(job.get("extra_data"))}
    if isinstance(walltime, (int, float)) and walltime > 0:  # (Batsim 5 sends no walltime otherwise)
        out["walltime"] = number(float(walltime))
    return out


def _extra_data(value: Any) -> str:
    """A job's `extra_data` as Batsim 5 forwards it: its text, an object or list as compact JSON,
    else the empty string (always present: EDCs read it without checking)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return ""


def _simulation_begins(data: dict[str, Any], state: BridgeState) -> dict[str, Any]:
    def host(resource: dict[str, Any]) -> dict[str, Any]:
        facts = state.hosts.get(resource["id"], HostFacts((0.0,), 0, 1))
        return {"id": resource["id"], "name": resource["name"], "pstate": facts.pstate,
                "pstate_count": len(facts.speeds), "state": _HOST_STATES.get(resource.get("state"), "IDLE"),
                "properties": _properties(resource.get("properties")),
                "zone_properties": _properties(resource.get("zone_properties")),
                "core_count": facts.cores, "computation_speed": list(facts.speeds)}

    compute = [host(r) for r in data.get("compute_resources", [])]
    storage = [host(r) for r in data.get("storage_resources", [])]
    begins: dict[str, Any] = {
        "host_number": len(compute) + len(storage), "computation_host_number": len(compute),
        "computation_hosts": compute, "storage_host_number": len(storage), "storage_hosts": storage,
        "batsim_arguments": [], "batsim_execution_context_json": orjson.dumps(data.get("config", {})).decode(),
        "workloads": [{"name": name, "filename": path} for name, path in data.get("workloads", {}).items()],
    }
    if state.forward_profiles_on_simulation_begins:
        begins["profiles"] = [{"id": f"{workload}!{name}", **profile_union(workload, profile)}
                              for workload, profiles in data.get("profiles", {}).items()
                              for name, profile in profiles.items()]
    return begins


def _properties(properties: Any) -> list[dict[str, str]]:
    return [{"key": str(key), "value": str(value)} for key, value in (properties or {}).items()]


def _kill_progress(job_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    """Batsim 4's progress object as batprotocol's tree (a leaf, or a sequence and its task)."""
    workload = job_id.split("!", 1)[0]
    profile = f"{workload}!{entry.get('profile_name', '')}"
    if "current_task" in entry:
        return {"kill_progress_type": "KillProgressSequentialProfile", "kill_progress": {
            "profile_id": profile, "current_repetition": 0, "current_task_index": int(entry.get("current_task_index", 0)),
            "current_task_progress": _kill_progress(job_id, entry["current_task"])}}
    return {"kill_progress_type": "KillProgressAtomicProfile",
            "kill_progress": {"profile_id": profile, "progress": float(entry.get("progress", 0.0))}}


def profile_union(workload: str, profile: dict[str, Any]) -> dict[str, Any]:
    """A Batsim 4 profile object as batprotocol's Profile union ({profile_type, profile})."""
    kind = profile.get("type")
    if kind == "delay":
        return {"profile_type": "DelayProfile", "profile": {"delay": float(profile["delay"])}}
    if kind == "parallel":
        return {"profile_type": "ParallelTaskProfile", "profile": {
            "computation_vector": [float(x) for x in profile.get("cpu", [])],
            "communication_matrix": [float(x) for x in profile.get("com", [])]}}
    if kind in ("parallel_homogeneous", "parallel_homogeneous_total"):
        strategy = "DefinedAmountsSpreadUniformly" if kind.endswith("total") else "DefinedAmountsUsedForEachValue"
        return {"profile_type": "ParallelTaskHomogeneousProfile", "profile": {
            "computation_amount": float(profile.get("cpu", 0)), "communication_amount": float(profile.get("com", 0)),
            "generation_strategy": strategy}}
    if kind == "composed":
        return {"profile_type": "SequentialCompositionProfile", "profile": {
            "repetition_count": int(profile.get("repeat", 1)),
            "profile_ids": [f"{workload}!{name}" for name in profile.get("seq", [])]}}
    if kind == "parallel_homogeneous_pfs":
        return {"profile_type": "ParallelTaskOnStorageHomogeneousProfile", "profile": {
            "storage_name": str(profile.get("storage", "pfs")), "bytes_to_read": float(profile.get("bytes_to_read", 0)),
            "bytes_to_write": float(profile.get("bytes_to_write", 0)),
            "generation_strategy": profile.get("generation_strategy", "DefinedAmountsUsedForEachValue")}}
    if kind == "data_staging":
        return {"profile_type": "ParallelTaskDataStagingBetweenStoragesProfile", "profile": {
            "bytes_to_transfer": float(profile.get("nb_bytes", 0)), "emitter_storage_name": str(profile.get("from", "")),
            "receiver_storage_name": str(profile.get("to", ""))}}
    if kind in ("smpi", "usage_trace"):
        return {"profile_type": "TraceReplayProfile", "profile": {
            "trace_type": "SMPI" if kind == "smpi" else "FractionalComputation", "filename": str(profile.get("trace", ""))}}
    raise ProtocolError(f"profile of type {kind!r} has no batprotocol counterpart")


# batprotocol's profile tables' fields by the names Batsim 5's workload files give them, which
# profile_forms.batsim4_form reads (rc2's profiles.cpp: the same profile, two spellings)
_WORKLOAD_FIELDS = {
    "DelayProfile": {"delay": "delay"},
    "ParallelTaskProfile": {"computation_vector": "cpu", "communication_matrix": "com"},
    "ParallelTaskHomogeneousProfile": {"computation_amount": "cpu", "communication_amount": "com",
                                       "generation_strategy": "generation_strategy"},
    "SequentialCompositionProfile": {"repetition_count": "repeat", "profile_ids": "seq"},
    "ParallelTaskOnStorageHomogeneousProfile": {"storage_name": "storage", "bytes_to_read": "bytes_to_read",
                                                "bytes_to_write": "bytes_to_write",
                                                "generation_strategy": "generation_strategy"},
    "ParallelTaskDataStagingBetweenStoragesProfile": {"bytes_to_transfer": "nb_bytes", "emitter_storage_name": "from",
                                                      "receiver_storage_name": "to"},
    "TraceReplayProfile": {"trace_type": "trace_type", "filename": "filename"},
}


def batsim4_profile(profile_type: str, body: dict[str, Any], where: str) -> dict[str, Any]:
    """batprotocol's Profile union as a Batsim 4 profile object (for RegisterProfileEvent): as
    the same profile in a Batsim 5 workload file reads (profile_forms.batsim4_form), each field
    the EDC left out at its default (a missing vector of a ParallelTaskProfile: zeros)."""
    fields = _WORKLOAD_FIELDS.get(profile_type)
    if fields is None:
        raise DecisionError(f"{where}: a {profile_type} cannot be registered (Batsim 5 does not implement it either)")
    workload_form: dict[str, Any] = {"type": profile_type}
    for table_field in TABLES[profile_type]:
        value = body.get(table_field.name)
        if value is None and table_field.kind != "[f64]":  # (an absent vector stays absent: batsim4_form fills it)
            value = ENUMS[table_field.of][table_field.default] if table_field.kind == "u8" else table_field.default
        if value is not None:
            workload_form[fields[table_field.name]] = value
    if "seq" in workload_form:  # (Batsim 4 names a sequence's profiles within the job's workload)
        workload_form["seq"] = [name.split("!", 1)[-1] for name in workload_form["seq"]]
    try:
        return batsim4_form(workload_form)
    except ProfileFormError as exc:
        field, what, fix = exc.args
        raise DecisionError(f"{where}: {field} {what} ({fix})") from None


# ------------------------------------------------------------------ EDC -> simulator
def to_batsim4(reply: dict[str, Any], state: BridgeState, source: str) -> dict[str, Any]:
    """The Batsim 4 decisions of an EDC's reply."""
    # (a reply read from JSON holds only the fields the EDC wrote: absent ones take their defaults here)
    now = reply.get("now", 0.0)
    decisions: list[dict[str, Any]] = []
    for index, event in enumerate(reply.get("events") or []):
        at, kind, body = event.get("timestamp", 0.0), event.get("event_type", "NONE"), event.get("event") or {}
        where = f"{source}: event {index} ({kind}, t={at:g})"
        if kind == "ExecuteJobEvent":
            _known(body["job_id"], state, where)
            decisions.append(_decision(at, "EXECUTE_JOB", _execute(body, state, where)))
        elif kind == "RejectJobEvent":
            _known(body["job_id"], state, where)
            decisions.append(_decision(at, "REJECT_JOB", {"job_id": body["job_id"]}))
        elif kind == "KillJobsEvent":
            for job_id in body["job_ids"]:
                _known(job_id, state, where)
            decisions.append(_decision(at, "KILL_JOB", {"job_ids": list(body["job_ids"])}))
        elif kind == "CallMeLaterEvent":
            state.triggers.call_me_later(body, at, decisions, where)
        elif kind == "StopCallMeLaterEvent":
            state.triggers.forget(body["call_me_later_id"])
        elif kind == "CreateProbeEvent":
            state.triggers.create_probe(body, at, decisions, where)
        elif kind == "StopProbeEvent":  # (an unknown id: Batsim 5 warns and goes on)
            state.triggers.forget(body.get("probe_id") or "", probe=True)
        elif kind in ("TriggerProbeEvent", "ResetProbeEvent"):
            raise DecisionError(f"{where}: Batsim 5 does not implement {kind} (its server stops on it: \"Unhandled "
                                "event type\"), nor does joulesim: probes emit on their period only")
        elif kind in ("ChangeHostsPStateEvent", "TurnOnOffHostsEvent"):
            decisions.append(_decision(at, "SET_RESOURCE_STATE", _switch(kind, body, state, where)))
        elif kind == "RegisterJobEvent":
            job = body["job"]
            # ("workload!name": a profile of any workload, as Batsim 5 allows; the core resolves it)
            registered: dict[str, Any] = {"res": job.get("resource_request", 0), "profile": job.get("profile_id") or ""}
            if job.get("walltime") is not None:
                registered["walltime"] = job["walltime"]
            state.job_sizes[body["job_id"]] = int(job.get("resource_request", 0))  # (nameable even unacknowledged)
            decisions.append(_decision(at, "REGISTER_JOB", {"job_id": body["job_id"], "job": registered}))
        elif kind == "RegisterProfileEvent":
            entry = body.get("profile") or {}
            workload, _, name = str(entry.get("id", "")).partition("!")
            if not name:
                raise DecisionError(f"{where}: profile id {entry.get('id')!r} is not \"workload!name\"")
            decisions.append(_decision(at, "REGISTER_PROFILE", {
                "workload_name": workload, "profile_name": name,
                "profile": batsim4_profile(entry.get("profile_type", "NONE"), entry.get("profile") or {}, where)}))
        elif kind == "FinishRegistrationEvent":
            decisions.append(_decision(at, "NOTIFY", {"type": "registration_finished"}))
        elif kind == "ForceSimulationStopEvent":  # (joulesim's NOTIFY extension: the run ends at once)
            decisions.append(_decision(at, "NOTIFY", {"type": "force_simulation_stop"}))
        elif kind in ("EDCHelloEvent",):
            raise ProtocolError(f"{where}: the EDC said hello again (its hello belongs in batsim_edc_init's reply only)")
        else:
            raise DecisionError(f"{where}: joulesim does not apply {kind} yet (supported: ExecuteJobEvent, "
                                "RejectJobEvent, KillJobsEvent, CallMeLaterEvent, StopCallMeLaterEvent, "
                                "CreateProbeEvent, StopProbeEvent, RegisterJobEvent, RegisterProfileEvent, "
                                "FinishRegistrationEvent, ForceSimulationStopEvent, ChangeHostsPStateEvent, "
                                "TurnOnOffHostsEvent)")
    return {"now": now, "events": decisions}


def _switch(kind: str, body: dict[str, Any], state: BridgeState, where: str) -> dict[str, Any]:
    """A host state change of Batsim 5's later revision as Batsim 4's SET_RESOURCE_STATE, which
    does both: a computation pstate at once (ChangeHostsPStateEvent, rc2's host->set_pstate),
    or a switch to or from a sleep pstate through its transitions (TurnOnOffHostsEvent); the
    RESOURCE_STATE_CHANGED that follows is reported as the Batsim 5 event of the same kind."""
    ids = _platform_hosts(body["host_ids"], state, where, "host_ids")
    if not ids:
        raise DecisionError(f"{where}: host_ids {body['host_ids']!r} names no host")
    hosts = format_interval_set(ids)
    pstate = str(body.get("pstate" if kind == "ChangeHostsPStateEvent" else "state", 0))
    reported = "HostsPStateChangedEvent" if kind == "ChangeHostsPStateEvent" else "HostsTurnedOnOffEvent"
    state.switches.setdefault((hosts, pstate), []).append(reported)
    return {"resources": hosts, "state": pstate}


def _platform_hosts(text: str, state: BridgeState, where: str, key: str) -> list[int]:
    """The host ids an interval set in field `key` names, in its order; a malformed set, or one
    naming hosts the platform lacks, refused at once (before a range of billions is expanded)."""
    try:
        runs = parse_runs(text, max_intervals=max(state.hosts, default=0) + 1)
    except ValueError as exc:
        raise DecisionError(f"{where}: {key}: {exc}") from None
    last = max(state.hosts, default=-1)
    if any(high > last for _, high in runs):
        raise DecisionError(f"{where}: {key} {text!r} names hosts the platform lacks (its last host is {last})")
    return [host for low, high in runs for host in range(low, high + 1)]


def _known(job_id: str, state: BridgeState, where: str) -> None:
    if job_id not in state.job_sizes:
        raise DecisionError(f"{where}: names job {job_id!r}, which was never submitted (job ids are "
                            "\"workload!name\", as the JobSubmittedEvents give them)")


def _decision(at: float, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "data": data}


def _execute(body: dict[str, Any], state: BridgeState, where: str) -> dict[str, Any]:
    allocation = body["allocation"]
    decision: dict[str, Any] = {"job_id": body["job_id"], "alloc": allocation["host_allocation"]}
    if body.get("profile_allocation_override"):
        raise DecisionError(f"{where}: profile_allocation_override is not supported by joulesim (give the job's "
                            "allocation only)")
    placement, kind = allocation.get("executor_placement") or {}, allocation.get("executor_placement_type")
    if kind == "CustomExecutorToHostMapping":
        decision["mapping"] = {str(i): int(host) for i, host in enumerate(placement.get("mapping") or [])}
    elif kind == "PredefinedExecutorPlacementStrategyWrapper" and placement.get("strategy") == "FillOneHostCoresFirst":
        decision["mapping"] = _fill_cores_first(body, state, where)
    for entry in body.get("storage_placement") or []:
        decision.setdefault("storage_mapping", {})[entry["storage_name"]] = int(entry.get("host_id", 0))
    return decision


def _fill_cores_first(body: dict[str, Any], state: BridgeState, where: str) -> dict[str, int]:
    """Executor i on the allocation's hosts in order, each host's cores filled first."""
    hosts = _platform_hosts(body["allocation"]["host_allocation"], state, where, "host_allocation")
    executors = state.job_sizes.get(body["job_id"], len(hosts))
    mapping, index = {}, 0
    for position, host in enumerate(hosts):
        for _ in range(state.hosts.get(host, HostFacts((0.0,), 0, 1)).cores):
            if index == executors:
                return mapping
            mapping[str(index)] = position
            index += 1
    if index < executors:
        raise DecisionError(f"{where}: FillOneHostCoresFirst places {executors} executors on hosts holding "
                            f"{index} cores in all; allocate more hosts")
    return mapping
