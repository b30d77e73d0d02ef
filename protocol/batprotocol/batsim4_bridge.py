"""Translation between the simulator's Batsim 4 messages and an EDC speaking batprotocol.

The simulator core speaks Batsim 4's protocol only. `EdcRequester` stands where a decider
would: it turns each Batsim 4 message into the batprotocol message Batsim 5 would send at
that point, calls the EDC (library, child process or socket: edc_connection.py), and turns
its decisions back into Batsim 4 decisions. What Batsim 5 does differently is done here:

- job and profile ids are "workload!name" on both sides;
- a job killed by the EDC gets a JobCompletedEvent (COMPLETED_KILLED) before the
  JobsKilledEvent, as Batsim 5 sends it;
- calls-me-later carry an id, may be periodic (every multiple of the period after now, an
  infinite or finite number of times, the last flagged) and may be stopped: each is asked
  of the simulator as a Batsim 4 CALL_ME_LATER at its time, and each REQUESTED_CALL is
  handed to the EDC as the RequestedCallEvents of the ids due then (none, for stopped ones:
  then the EDC is not called at all; the simulator still waits until that time before it
  ends, where Batsim 5 would end at once);
- energy probes ride on the same periodic grid: at each trigger the bridge reads the hosts'
  joules from the simulator (BridgeState.host_energy, offered by the simulation when it keeps
  energy) and sends ProbeDataEmittedEvents, as Batsim 5.0.0-rc2 does (its first trigger
  only starts the measure);
- a forced stop goes to the core as joulesim's NOTIFY force_simulation_stop;
- the EDC's hello sets what were command-line flags in Batsim 4 (edc_connection.EdcFeatures).

Batsim 4 events with no batprotocol counterpart in the 2024-11 schema (machine availability,
pstate changes, energy answers) are not forwarded, nor are profiles with submitted or killed
jobs (that schema has no field for them); decisions joulesim cannot apply (profile allocation
overrides, the probes Batsim 5 does not implement) are refused with a message that names them.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

from joulesim.protocol.errors import DecisionError, ProtocolError
from joulesim.protocol.interval_set import format_interval_set, parse_runs
from joulesim.protocol.batprotocol.profile_forms import batsim4_form

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
class _Probe:
    """A periodic energy probe (CreateProbeEvent) as Batsim 5.0.0-rc2 implements them: the
    Power metric read as each host's joules since t=0 (SimGrid's sg_host_get_consumed_energy),
    on hosts, accumulated without reset."""

    hosts: list[int]
    host_ids: str  # the hosts as Batsim 5 writes them back (a canonical interval set)
    aggregation: str  # NoResourcesAggregation (one value per host), Sum or ArithmeticMean
    started: bool = False  # Batsim 5's first trigger only starts the measure; data comes from the second


@dataclass
class _Call:
    id: str
    period_ms: int = 0  # 0: one shot
    remaining: int | None = None  # calls left (None: until stopped)
    at_ms: int = 0  # a periodic call's next occurrence, in whole milliseconds
    probe: _Probe | None = None  # a probe's triggers (its own namespace of ids), not a call


@dataclass
class BridgeState:
    """What the translation remembers between messages."""

    hosts: dict[int, HostFacts] = field(default_factory=dict)
    forward_profiles_on_simulation_begins: bool = False
    due: dict[float, list[_Call]] = field(default_factory=dict)  # time -> calls due then
    asked: list[float] = field(default_factory=list)  # (a heap) the times a CALL_ME_LATER was sent for
    job_sizes: dict[str, int] = field(default_factory=dict)  # every job the EDC may name (its size)
    # How a double goes to the EDC: as it is (binary), or as flatbuffers' JSON prints it
    number: Callable[[float], float] = float
    # the same for a whole value (SimulationBeginsEvent's speeds and profiles)
    numbers: Callable[[Any], Any] = lambda value: value
    # Each compute host's joules since t=0 now, given host ids (None: the run has no energy
    # accounting), and how many compute hosts it knows: what energy probes read.
    host_energy: Callable[[list[int]], list[float]] | None = None
    energy_hosts: int = 0


# ------------------------------------------------------------------ simulator -> EDC
def to_batprotocol(message: dict[str, Any],
                   state: BridgeState) -> tuple[dict[str, Any], list[tuple[_Call, bool, bool]]]:
    """The batprotocol message for one Batsim 4 message (possibly with no event), and the calls
    and probes that came due (each with whether it is its last, and whether it counts as one of
    its occurrences: next_occurrences asks for the following ones)."""
    events: list[dict[str, Any]] = []
    told: list[tuple[_Call, bool, bool]] = []
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
            due = _calls_due(at, state)
            told += due
            for call, last, counted in due:
                if call.probe is None:
                    events.append(_event(at, "RequestedCallEvent", {"call_me_later_id": call.id,
                                                                   "last_periodic_call": last}))
                elif counted:  # (a probe's first trigger starts its measure and says nothing)
                    events.append(_event(at, "ProbeDataEmittedEvent", _probe_data(call.id, call.probe, state)))
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
            "bytes_to_write": float(profile.get("bytes_to_write", 0))}}
    if kind == "data_staging":
        return {"profile_type": "ParallelTaskDataStagingBetweenStoragesProfile", "profile": {
            "bytes_to_transfer": float(profile.get("nb_bytes", 0)), "emitter_storage_name": str(profile.get("from", "")),
            "receiver_storage_name": str(profile.get("to", ""))}}
    if kind in ("smpi", "usage_trace"):
        return {"profile_type": "TraceReplayProfile", "profile": {
            "trace_type": "SMPI" if kind == "smpi" else "FractionalComputation", "filename": str(profile.get("trace", ""))}}
    raise ProtocolError(f"profile of type {kind!r} has no batprotocol counterpart")


def batsim4_profile(profile_type: str, body: dict[str, Any], where: str) -> dict[str, Any]:
    """batprotocol's Profile union as a Batsim 4 profile object (for RegisterProfileEvent)."""
    if profile_type == "DelayProfile":
        return {"type": "delay", "delay": body.get("delay", 0.0)}
    if profile_type == "ParallelTaskProfile":  # (a missing vector is zeros, as in a Batsim 5 workload)
        given = {"type": "ParallelTaskProfile", "cpu": body.get("computation_vector"),
                 "com": body.get("communication_matrix")}
        return batsim4_form({key: value for key, value in given.items() if value is not None})
    if profile_type == "ParallelTaskHomogeneousProfile":
        total = body.get("generation_strategy") == "DefinedAmountsSpreadUniformly"
        return {"type": "parallel_homogeneous_total" if total else "parallel_homogeneous",
                "cpu": body.get("computation_amount", 0.0), "com": body.get("communication_amount", 0.0)}
    if profile_type == "SequentialCompositionProfile":
        return {"type": "composed", "repeat": body.get("repetition_count", 1),
                "seq": [name.split("!", 1)[-1] for name in body["profile_ids"]]}
    if profile_type == "ParallelTaskOnStorageHomogeneousProfile":
        return {"type": "parallel_homogeneous_pfs", "storage": body["storage_name"],
                "bytes_to_read": body.get("bytes_to_read", 0.0), "bytes_to_write": body.get("bytes_to_write", 0.0)}
    if profile_type == "ParallelTaskDataStagingBetweenStoragesProfile":
        return {"type": "data_staging", "nb_bytes": body.get("bytes_to_transfer", 0.0), "from": body["emitter_storage_name"],
                "to": body["receiver_storage_name"]}
    if profile_type == "TraceReplayProfile":
        return {"type": "smpi" if body.get("trace_type", "SMPI") == "SMPI" else "usage_trace", "trace": body["filename"]}
    raise DecisionError(f"{where}: a {profile_type} cannot be registered (Batsim 5 does not implement it either)")


def _calls_due(at: float, state: BridgeState) -> list[tuple[_Call, bool, bool]]:
    """The calls and probes of the REQUESTED_CALL at `at`, each with whether it is its last and
    whether it counts (a probe's first trigger does not: Batsim 5 starts its measure then, and
    emits from the next one on). Each time asked got one CALL_ME_LATER, so each REQUESTED_CALL
    answers the earliest time still asked for (matched by order, not by value: the simulator's
    clock may read 0.9999999999999999 at a call asked for 1.0)."""
    if not state.asked:
        return []
    calls = state.due.pop(heapq.heappop(state.asked), [])
    # (periodic calls due together come in the order of their ids, as Batsim 5's periodic
    # actor walks its map of them; one-shot calls after, in the order they were asked; then
    # the probes, by id, as the periodic actor's slice lists them)
    ordered = (sorted((c for c in calls if c.period_ms and c.probe is None), key=lambda c: c.id)
               + [c for c in calls if not c.period_ms]
               + sorted((c for c in calls if c.probe is not None), key=lambda c: c.id))
    due = []
    for call in ordered:
        counted = call.probe is None or call.probe.started
        due.append((call, counted and call.period_ms > 0 and call.remaining == 1, counted))
        if call.probe is not None:
            call.probe.started = True
    return due


def _probe_data(probe_id: str, probe: _Probe, state: BridgeState) -> dict[str, Any]:
    """A ProbeDataEmittedEvent as Batsim 5.0.0-rc2's periodic actor fills it (its nb_emitted and
    nb_triggered are always 0 there: "TODO: implement me")."""
    assert state.host_energy is not None  # (checked when the probe was created)
    joules = state.host_energy(probe.hosts)
    if probe.aggregation == "NoResourcesAggregation":
        kind, data = "VectorialProbeData", {"data": [state.number(value) for value in joules]}
    else:
        total = 0.0
        for value in joules:  # (summed in order, as Batsim 5's loop does)
            total += value
        if probe.aggregation == "ArithmeticMean":
            total /= len(joules)
        kind, data = "AggregatedProbeData", {"data": state.number(total)}
    return {"probe_id": probe_id, "resources_type": "HostResources", "resources": {"host_ids": probe.host_ids},
            "metrics": "Power", "data_type": kind, "data": data, "manually_triggered": False,
            "nb_emitted": 0, "nb_triggered": 0}


def next_occurrences(due: list[tuple[_Call, bool, bool]], call_now: float, state: BridgeState) -> list[dict[str, Any]]:
    """The CALL_ME_LATER decisions for the next occurrence of the periodic calls and probes that
    came due in the message sent at `call_now` (asked whether the EDC was called or not: a
    probe's first trigger tells it nothing)."""
    decisions: list[dict[str, Any]] = []
    for call, last, counted in due:
        if call.period_ms and not last:  # (from its own time: the clock may read a hair before it)
            call.at_ms += call.period_ms
            remaining = call.remaining if call.remaining is None or not counted else call.remaining - 1
            _ask(call, _seconds(call.at_ms), state, decisions, call_now, remaining)
    return decisions


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
            _call_me_later(body, at, state, decisions, where)
        elif kind == "StopCallMeLaterEvent":
            _forget(body["call_me_later_id"], state)
        elif kind == "CreateProbeEvent":
            _create_probe(body, at, state, decisions, where)
        elif kind == "StopProbeEvent":  # (an unknown id: Batsim 5 warns and goes on)
            _forget(body.get("probe_id") or "", state, probe=True)
        elif kind in ("TriggerProbeEvent", "ResetProbeEvent"):
            raise DecisionError(f"{where}: Batsim 5 does not implement {kind} (its server stops on it: \"Unhandled "
                                "event type\"), nor does joulesim: probes emit on their period only")
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
                                "FinishRegistrationEvent, ForceSimulationStopEvent)")
    return {"now": now, "events": decisions}


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
    try:
        runs = parse_runs(body["allocation"]["host_allocation"], max_intervals=max(state.hosts, default=0) + 1)
    except ValueError as exc:
        raise DecisionError(f"{where}: host_allocation: {exc}") from None
    last = max(state.hosts, default=-1)
    if any(high > last for _, high in runs):  # (before expanding a range of billions)
        raise DecisionError(f"{where}: host_allocation {body['allocation']['host_allocation']!r} names hosts the "
                            f"platform lacks (its last host is {last})")
    hosts = [h for low, high in runs for h in range(low, high + 1)]
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


def _call_me_later(body: dict[str, Any], at: float, state: BridgeState, decisions: list, where: str) -> None:
    call_id, when, kind = body["call_me_later_id"], body.get("when") or {}, body.get("when_type")
    _forget(call_id, state)  # (asked again under the same id: replaces the earlier one)
    if kind == "OneShot":
        to_ms = 1 if when.get("time_unit") == "Millisecond" else 1000
        time = _seconds(when.get("time", 0) * to_ms)
        _ask(_Call(call_id), time if time >= at else at, state, decisions, at, None)
        return
    period_ms, remaining = _periodic(when, "call", where)
    if remaining is not None and remaining <= 0:
        return
    first_ms = _next_multiple(at, period_ms)
    _ask(_Call(call_id, period_ms, remaining, first_ms), _seconds(first_ms), state, decisions, at, remaining)


def _periodic(when: dict[str, Any], what: str, where: str) -> tuple[int, int | None]:
    """A Periodic trigger's period in milliseconds and its number of periods (None: infinite)."""
    to_ms = 1 if when.get("time_unit") == "Millisecond" else 1000
    if when.get("offset"):
        raise DecisionError(f"{where}: a periodic {what} with offset {when['offset']} (Batsim 5 supports offset 0 only)")
    period_ms = when.get("period", 0) * to_ms
    if period_ms <= 0:
        raise DecisionError(f"{where}: a periodic {what} needs a period > 0")
    if when.get("mode_type") == "FinitePeriodNumber":
        return period_ms, (when.get("mode") or {}).get("nb_periods", 0)
    return period_ms, None


# What Batsim 5.0.0-rc2 implements of CreateProbeEvent's choices (its periodic actor stops on the others)
_PROBE_AGGREGATIONS = ("NoResourcesAggregation", "Sum", "ArithmeticMean")


def _create_probe(body: dict[str, Any], at: float, state: BridgeState, decisions: list, where: str) -> None:
    """A periodic energy probe, checked as Batsim 5.0.0-rc2 checks it: what it refuses (a one-shot
    trigger, another metric, links, no accumulation or a reset, a quantile) is refused here with
    the field to change. Like Batsim 5, the emission filter and the temporal aggregation are
    read but not applied (every period emits)."""
    probe_id = body.get("probe_id") or ""
    where = f"{where}: probe {probe_id!r}"
    if state.host_energy is None:
        raise DecisionError(f"{where}: energy probes read the hosts' consumed energy: run the simulation with "
                            "-E/--energy (Batsim 5's --energy-host)")
    if any(call.id == probe_id and call.probe is not None for calls in state.due.values() for call in calls):
        raise DecisionError(f"{where}: this probe id is already in use (stop it first with a StopProbeEvent, or "
                            "give the new probe another id)")
    if body.get("metrics", "Power") != "Power":
        raise DecisionError(f"{where}: metrics {body['metrics']}: Batsim 5 implements the Power metric only "
                            "(each host's consumed energy)")
    if body.get("resources_type") != "HostResources":
        raise DecisionError(f"{where}: resources must be HostResources (Batsim 5 implements probes on hosts only; "
                            f"got {body.get('resources_type', 'none')})")
    hosts = _probe_hosts(str((body.get("resources") or {}).get("host_ids") or ""), state, where)
    accumulation = body.get("data_accumulation_strategy") or {}
    if body.get("data_accumulation_strategy_type") != "ProbeDataAccumulation":
        raise DecisionError(f"{where}: data_accumulation_strategy must be ProbeDataAccumulation (Batsim 5 "
                            "implements accumulative probes only; got "
                            f"{body.get('data_accumulation_strategy_type', 'none')})")
    if accumulation.get("reset_mode_type") != "NoReset":
        raise DecisionError(f"{where}: the accumulation's reset_mode must be NoReset (Batsim 5 does not implement "
                            f"resets; got {accumulation.get('reset_mode_type', 'none')})")
    aggregation = body.get("resources_aggregation_function_type", "NONE")
    if aggregation not in _PROBE_AGGREGATIONS:
        raise DecisionError(f"{where}: resources_aggregation_function must be one of {', '.join(_PROBE_AGGREGATIONS)} "
                            f"(what Batsim 5 implements; got {aggregation})")
    if body.get("emission_filtering_policy_type", "NONE") not in ("NoFiltering", "ThresholdFilteringFunction"):
        raise DecisionError(f"{where}: give an emission_filtering_policy (NoFiltering)")
    trigger = (body.get("measurement_triggering_policy") or {})
    if (body.get("measurement_triggering_policy_type") != "TemporalTriggerWrapper"
            or trigger.get("temporal_trigger_type") != "Periodic"):
        raise DecisionError(f"{where}: the measurement_triggering_policy must be a periodic TemporalTrigger "
                            "(Batsim 5 does not implement one-shot probes)")
    period_ms, remaining = _periodic(trigger.get("temporal_trigger") or {}, "probe", where)
    if remaining is not None and remaining < 1:
        raise DecisionError(f"{where}: a finite periodic probe needs nb_periods >= 1 (got {remaining})")
    probe = _Probe(hosts, format_interval_set(hosts), aggregation)
    first_ms = _next_multiple(at, period_ms)
    _ask(_Call(probe_id, period_ms, remaining, first_ms, probe), _seconds(first_ms), state, decisions, at, remaining)


def _probe_hosts(text: str, state: BridgeState, where: str) -> list[int]:
    try:
        runs = parse_runs(text, max_intervals=max(state.energy_hosts, 1))
    except ValueError as exc:
        raise DecisionError(f"{where}: resources.host_ids: {exc}") from None
    if not runs:
        raise DecisionError(f"{where}: resources.host_ids is empty: name the hosts to measure (e.g. \"0-3\")")
    if any(high >= state.energy_hosts for _, high in runs):
        raise DecisionError(f"{where}: resources.host_ids {text!r} names hosts that are not compute hosts (their ids "
                            f"are 0-{state.energy_hosts - 1})")
    return sorted({host for low, high in runs for host in range(low, high + 1)})


def _seconds(milliseconds: int) -> float:
    """A time in whole milliseconds as seconds: one float per millisecond count, so that calls
    due at the same instant (10 x 30 ms, 3 x 100 ms) meet at the same time."""
    return milliseconds / 1000


def _forget(call_id: str, state: BridgeState, probe: bool = False) -> None:
    """No more calls (or probe triggers) of this id (the simulator's REQUESTED_CALL at their time
    then finds none due, and the EDC is not called for it)."""
    for calls in state.due.values():
        calls[:] = [call for call in calls if call.id != call_id or (call.probe is not None) != probe]


def _next_multiple(after: float, period_ms: int) -> int:
    """The first multiple of the period strictly after `after`, in milliseconds (Batsim 5's
    periodic grid)."""
    k = int(after * 1000 // period_ms) + 1
    while _seconds((k - 1) * period_ms) > after:  # (after * 1000 rounded up past a multiple)
        k -= 1
    while _seconds(k * period_ms) <= after:
        k += 1
    return k * period_ms


def _ask(call: _Call, time: float, state: BridgeState, decisions: list, at: float, remaining: int | None) -> None:
    call.remaining = remaining
    if time not in state.due:
        state.due[time] = []
        heapq.heappush(state.asked, time)
        decisions.append(_decision(at, "CALL_ME_LATER", {"timestamp": time}))
    state.due[time].append(call)
