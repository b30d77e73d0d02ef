"""The shape of batprotocol's messages (Batsim 5), as joulesim reads and writes them.

batprotocol defines its messages with a flatbuffers schema. This module describes the same
wire layout in joulesim's own terms, for binary_format.py and json_format.py: each table's
fields in slot order (a union field takes two slots, its member's kind then the member),
each union's members in index order (index 0 is "no member"), each enum's names in value
order. Layout facts taken from batprotocol's public schema as of 2024-11-20 (the newest
reachable from here; Batsim 5.0.0-rc2 pins a 2026 revision whose additions are listed in
LATER_EVENTS).

A field kind is one of: "str", "bool", "u8" (an enum, named by `enum`), "u32", "u64", "f64",
"table" (named by `of`), "union" (named by `of`), or a vector "[str]", "[f64]", "[u32]",
"[table]" (of `of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Field:
    name: str
    kind: str
    of: str = ""  # the table, union or enum it holds
    default: Any = None  # scalars: the value when absent
    required: bool = False


def _f(name: str, kind: str, of: str = "", default: Any = None, required: bool = False, optional: bool = False) -> Field:
    """`optional`: a scalar that may be absent (None), distinct from any value."""
    if default is None and not optional:
        default = {"bool": False, "u8": 0, "u32": 0, "u64": 0, "f64": 0.0}.get(kind)
    return Field(name, kind, of, default, required)


def _req(name: str, kind: str, of: str = "") -> Field:
    return _f(name, kind, of, required=True)


ENUMS: dict[str, tuple[str, ...]] = {
    "HomogeneousParallelTaskGenerationStrategy": ("DefinedAmountsUsedForEachValue", "DefinedAmountsSpreadUniformly"),
    "TraceType": ("SMPI", "FractionalComputation"),
    "FinalJobState": ("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                      "COMPLETED_KILLED", "REJECTED"),
    "PredefinedExecutorPlacementStrategy": ("SpreadOverHostsFirst", "FillOneHostCoresFirst"),
    "CumulativeFunction": ("Sum", "Minimum", "Maximum"),
    "Metrics": ("Power", "NetworkLoad", "ComputationLoad", "NormalizedNetworkLoad", "NormalizedComputationLoad"),
    "BooleanComparisonOperator": ("GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual"),
    "TimeUnit": ("Second", "Millisecond"),
    "JobAllocationValidationStrategy": ("None", "MatchJobRequestExactly", "MatchJobRequestBigEnough"),
    "HostState": ("SLEEPING", "IDLE", "COMPUTING", "SWITCHING_ON", "SWITCHING_OFF"),
}

UNIONS: dict[str, tuple[str, ...]] = {
    "Profile": ("DelayProfile", "ParallelTaskProfile", "ParallelTaskHomogeneousProfile",
                "SequentialCompositionProfile", "ForkJoinCompositionProfile", "ParallelTaskMergeCompositionProfile",
                "ParallelTaskOnStorageHomogeneousProfile", "ParallelTaskDataStagingBetweenStoragesProfile",
                "TraceReplayProfile"),
    "ExecutorPlacement": ("PredefinedExecutorPlacementStrategyWrapper", "CustomExecutorToHostMapping"),
    "KillProgress": ("KillProgressAtomicProfile", "KillProgressSequentialProfile", "KillProgressForkJoinProfile"),
    "Resources": ("HostResources", "LinkResources"),
    "ProbeMeasurementTriggeringPolicy": ("TemporalTriggerWrapper",),
    "ProbeDataAccumulationStrategy": ("NoProbeDataAccumulation", "ProbeDataAccumulation"),
    "ResetMode": ("NoReset", "ProbeAccumulationReset"),
    "TemporalAggregationFunction": ("NoTemporalAggregation", "ExponentialMovingAverage", "SlidingWindowOperation"),
    "ResourcesAggregationFunction": ("NoResourcesAggregation", "Sum", "ArithmeticMean", "QuantileFunction"),
    "ProbeEmissionFilteringPolicy": ("NoFiltering", "ThresholdFilteringFunction"),
    "ProbeData": ("AggregatedProbeData", "VectorialProbeData"),
    "PeriodicMode": ("Infinite", "FinitePeriodNumber"),
    "TemporalTrigger": ("OneShot", "Periodic"),
    # (Batsim 5.0.0-rc2's revision, reached only through a JSON-only member: see JSON_ONLY_MEMBERS)
    "ExternalEvent": ("GenericExternalEvent",),
    "Event": ("JobSubmittedEvent", "JobCompletedEvent", "RejectJobEvent", "ExecuteJobEvent", "KillJobsEvent",
              "JobsKilledEvent", "RegisterProfileEvent", "RegisterJobEvent", "CreateProbeEvent", "StopProbeEvent",
              "TriggerProbeEvent", "ResetProbeEvent", "ProbeDataEmittedEvent", "CallMeLaterEvent",
              "RequestedCallEvent", "StopCallMeLaterEvent", "BatsimHelloEvent", "EDCHelloEvent",
              "SimulationBeginsEvent", "SimulationEndsEvent", "AllStaticJobsHaveBeenSubmittedEvent",
              "AllStaticExternalEventsHaveBeenInjectedEvent", "FinishRegistrationEvent", "ForceSimulationStopEvent"),
}

_EMPTY: list[Field] = []
TABLES: dict[str, list[Field]] = {
    # profiles
    "DelayProfile": [_f("delay", "f64")],
    "ParallelTaskProfile": [_f("computation_vector", "[f64]"), _f("communication_matrix", "[f64]")],
    "SequentialCompositionProfile": [_f("repetition_count", "u32", default=1), _req("profile_ids", "[str]")],
    "ForkJoinCompositionProfile": [_req("profile_ids", "[str]")],
    "ParallelTaskMergeCompositionProfile": [_req("profile_ids", "[str]")],
    "ParallelTaskHomogeneousProfile": [_f("computation_amount", "f64"), _f("communication_amount", "f64"),
                                       _f("generation_strategy", "u8", "HomogeneousParallelTaskGenerationStrategy")],
    "ParallelTaskOnStorageHomogeneousProfile": [
        _req("storage_name", "str"), _f("bytes_to_read", "f64"), _f("bytes_to_write", "f64"),
        _f("generation_strategy", "u8", "HomogeneousParallelTaskGenerationStrategy")],
    "ParallelTaskDataStagingBetweenStoragesProfile": [
        _f("bytes_to_transfer", "f64"), _req("emitter_storage_name", "str"), _req("receiver_storage_name", "str")],
    "TraceReplayProfile": [_f("trace_type", "u8", "TraceType"), _req("filename", "str")],
    # jobs
    # (walltime: optional in Batsim 5's revision, as its sources read it; absent: no walltime)
    "Job": [_f("resource_request", "u32"), _f("walltime", "f64", optional=True), _f("extra_data", "str"),
            _f("rigid", "bool", default=True), _f("profile_id", "str")],
    "JobSubmittedEvent": [_req("job_id", "str"), _req("job", "table", "Job"), _f("submission_time", "f64")],
    "JobCompletedEvent": [_req("job_id", "str"), _f("state", "u8", "FinalJobState"), _f("return_code", "u32")],
    "RejectJobEvent": [_req("job_id", "str")],
    "PredefinedExecutorPlacementStrategyWrapper": [_f("strategy", "u8", "PredefinedExecutorPlacementStrategy")],
    "CustomExecutorToHostMapping": [_f("mapping", "[u32]")],
    "StorageHost": [_req("storage_name", "str"), _f("host_id", "u32")],
    "AllocationPlacement": [_req("host_allocation", "str"), _req("executor_placement", "union", "ExecutorPlacement")],
    "ProfileAllocationPlacement": [_req("profile_id", "str"), _req("host_allocation", "str"),
                                   _req("executor_placement", "union", "ExecutorPlacement")],
    "ExecuteJobEvent": [_req("job_id", "str"), _req("allocation", "table", "AllocationPlacement"),
                        _f("profile_allocation_override", "[table]", "ProfileAllocationPlacement"),
                        _f("storage_placement", "[table]", "StorageHost")],
    "KillJobsEvent": [_req("job_ids", "[str]")],
    "KillProgressAtomicProfile": [_req("profile_id", "str"), _f("progress", "f64")],
    "KillProgressSequentialProfile": [_req("profile_id", "str"), _f("current_repetition", "u32"),
                                      _f("current_task_index", "u32"),
                                      _req("current_task_progress", "table", "KillProgressWrapper")],
    "KillProgressForkJoinProfile": [_req("profile_id", "str"), _req("tasks_progress", "[table]", "KillProgressWrapper")],
    "KillProgressWrapper": [_req("kill_progress", "union", "KillProgress")],
    "JobAndProgress": [_req("job_id", "str"), _req("wrapper", "table", "KillProgressWrapper")],
    "JobsKilledEvent": [_req("job_ids", "[str]"), _req("progresses", "[table]", "JobAndProgress")],
    "ProfileAndId": [_req("id", "str"), _req("profile", "union", "Profile")],
    "RegisterProfileEvent": [_f("profile", "table", "ProfileAndId")],
    "RegisterJobEvent": [_req("job_id", "str"), _req("job", "table", "Job")],
    # probes
    "HostResources": [_f("host_ids", "str")],
    "LinkResources": [_f("link_ids", "[str]")],
    "NoProbeDataAccumulation": _EMPTY,
    "NoReset": _EMPTY,
    "ProbeAccumulationReset": [_f("new_value", "f64")],
    "ProbeDataAccumulation": [_f("reset_mode", "union", "ResetMode"), _f("cumulative_function", "u8", "CumulativeFunction"),
                              _f("temporal_normalization", "bool")],
    "NoTemporalAggregation": _EMPTY,
    "ExponentialMovingAverage": _EMPTY,
    "SlidingWindowOperation": _EMPTY,
    "NoResourcesAggregation": _EMPTY,
    "Sum": _EMPTY,
    "ArithmeticMean": _EMPTY,
    "QuantileFunction": [_f("threshold", "f64")],
    "NoFiltering": _EMPTY,
    "ThresholdFilteringFunction": [_f("threshold", "f64"), _f("operator", "u8", "BooleanComparisonOperator")],
    "CreateProbeEvent": [
        _f("probe_id", "str"), _f("metrics", "u8", "Metrics"), _f("resources", "union", "Resources"),
        _f("data_accumulation_strategy", "union", "ProbeDataAccumulationStrategy"),
        _f("measurement_triggering_policy", "union", "ProbeMeasurementTriggeringPolicy"),
        _f("resources_aggregation_function", "union", "ResourcesAggregationFunction"),
        _f("temporal_aggregation_function", "union", "TemporalAggregationFunction"),
        _f("emission_filtering_policy", "union", "ProbeEmissionFilteringPolicy")],
    "StopProbeEvent": [_f("probe_id", "str")],
    "ResetProbeEvent": [_f("probe_id", "str"), _f("new_value", "f64")],
    "TriggerProbeEvent": [_f("probe_id", "str"), _f("force_data_emission", "bool", default=True)],
    "AggregatedProbeData": [_f("data", "f64")],
    "VectorialProbeData": [_f("data", "[f64]")],
    "ProbeDataEmittedEvent": [_f("probe_id", "str"), _f("resources", "union", "Resources"),
                              _f("metrics", "u8", "Metrics"), _f("data", "union", "ProbeData"),
                              _f("manually_triggered", "bool"), _f("nb_emitted", "u32"), _f("nb_triggered", "u32")],
    # time
    "OneShot": [_f("time", "u64"), _f("time_unit", "u8", "TimeUnit")],
    "Infinite": _EMPTY,
    "FinitePeriodNumber": [_f("nb_periods", "u32")],
    "Periodic": [_f("period", "u64"), _f("offset", "u64"), _f("time_unit", "u8", "TimeUnit"),
                 _f("mode", "union", "PeriodicMode")],
    "TemporalTriggerWrapper": [_f("temporal_trigger", "union", "TemporalTrigger")],
    "CallMeLaterEvent": [_req("call_me_later_id", "str"), _req("when", "union", "TemporalTrigger")],
    "RequestedCallEvent": [_req("call_me_later_id", "str"), _f("last_periodic_call", "bool")],
    "StopCallMeLaterEvent": [_req("call_me_later_id", "str")],
    # simulation
    "BatsimHelloEvent": [_req("batprotocol_version", "str"), _req("batsim_version", "str"), _f("batsim_commit", "str")],
    "EDCRequestedSimulationFeatures": [
        _f("dynamic_registration", "bool"), _f("profile_reuse", "bool"), _f("acknowledge_dynamic_jobs", "bool"),
        _f("forward_profiles_on_job_submission", "bool"), _f("forward_profiles_on_jobs_killed", "bool"),
        _f("forward_profiles_on_simulation_begins", "bool"), _f("forward_unknown_external_events", "bool")],
    "EDCSchedulingConstraints": [_f("compute_sharing", "bool"), _f("storage_sharing", "bool", default=True),
                                 _f("job_allocation_validation_strategy", "u8", "JobAllocationValidationStrategy",
                                    default=1)],
    "EDCHelloEvent": [_req("batprotocol_version", "str"), _req("decision_component_name", "str"),
                      _req("decision_component_version", "str"), _f("decision_component_commit", "str"),
                      _f("requested_simulation_features", "table", "EDCRequestedSimulationFeatures"),
                      _f("scheduling_constraints", "table", "EDCSchedulingConstraints")],
    "HostProperty": [_req("key", "str"), _req("value", "str")],
    "Host": [_f("id", "u32"), _req("name", "str"), _f("pstate", "u32"), _f("pstate_count", "u32", default=1),
             _f("state", "u8", "HostState"), _f("properties", "[table]", "HostProperty"),
             _f("zone_properties", "[table]", "HostProperty"), _f("core_count", "u32", default=1),
             _f("computation_speed", "[f64]")],
    "WorkloadAndFilename": [_req("name", "str"), _req("filename", "str")],
    "SimulationBeginsEvent": [
        _f("host_number", "u32"), _f("computation_host_number", "u32"), _f("computation_hosts", "[table]", "Host"),
        _f("storage_host_number", "u32"), _f("storage_hosts", "[table]", "Host"), _f("batsim_arguments", "[str]"),
        _req("batsim_execution_context_json", "str"), _f("workloads", "[table]", "WorkloadAndFilename"),
        _f("profiles", "[table]", "ProfileAndId")],
    "SimulationEndsEvent": _EMPTY,
    "AllStaticJobsHaveBeenSubmittedEvent": _EMPTY,
    "AllStaticExternalEventsHaveBeenInjectedEvent": _EMPTY,
    "FinishRegistrationEvent": _EMPTY,
    "ForceSimulationStopEvent": _EMPTY,
    # Batsim 5.0.0-rc2's revision (JSON_ONLY_MEMBERS): fields as pybatsim's batprotocol API
    # writes and reads them (pybatsim/batsim/events.py), the pstate being a pstate index
    "ChangeHostsPStateEvent": [_f("host_ids", "str", required=True), _f("pstate", "u32")],
    "TurnOnOffHostsEvent": [_f("host_ids", "str", required=True), _f("state", "u32")],
    "HostsPStateChangedEvent": [_f("host_ids", "str", required=True), _f("pstate", "u32")],
    "HostsTurnedOnOffEvent": [_f("host_ids", "str", required=True), _f("state", "u32")],
    # (an external event of the events file: its id, "ee0!N", and its data as the file gives it,
    # as pybatsim's API and rc2's test EDC external-event-check read them)
    "ExternalEventOccurredEvent": [_f("id", "str", required=True), _f("external_event", "union", "ExternalEvent")],
    "GenericExternalEvent": [_f("data", "str")],
    # the envelope
    "EventAndTimestamp": [_f("timestamp", "f64"), _f("event", "union", "Event")],
    "Message": [_f("now", "f64"), _f("events", "[table]", "EventAndTimestamp")],
}
ROOT = "Message"

#: Union members of Batsim 5.0.0-rc2's batprotocol revision that the 2024-11 schema lacks, whose
#: fields are public (pybatsim's batprotocol API) but not their binary numbering: read and
#: written in the JSON format only (the binary format refuses them by name).
JSON_ONLY_MEMBERS = {"Event": ("ChangeHostsPStateEvent", "TurnOnOffHostsEvent", "HostsPStateChangedEvent",
                               "HostsTurnedOnOffEvent", "ExternalEventOccurredEvent")}

#: Events of that revision whose fields are not public here either: refused by name.
LATER_EVENTS = ("SimulationErrorEvent",)


def slots(table: str) -> list[tuple[Field, int]]:
    """Each field of `table` with its vtable slot (a union's member kind is at slot - 1)."""
    laid, slot = [], 0
    for field in TABLES[table]:
        if field.kind == "union":
            slot += 1
        laid.append((field, slot))
        slot += 1
    return laid


def _check_layout() -> None:
    """Every name a field refers to exists (a typo here would only show on some message)."""
    for table, fields in TABLES.items():
        for field in fields:
            catalogue = {"table": TABLES, "[table]": TABLES, "union": UNIONS, "u8": ENUMS}.get(field.kind)
            if catalogue is not None and field.of not in catalogue:
                raise AssertionError(f"{table}.{field.name} refers to unknown {field.of!r}")
    for union, members in UNIONS.items():
        for member in members:
            if member not in TABLES:
                raise AssertionError(f"union {union} names unknown table {member!r}")


_check_layout()
