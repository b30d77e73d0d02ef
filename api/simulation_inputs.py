"""What `joulesim.simulate` accepts as a platform, a workload or events: names, paths or objects,
and the SimulationConfig built from them (`simulation_config`, for `simulate` and the CLI alike).

Objects built in Python (a platform or workload dict) are encoded to JSON and go through the
same loaders as files, so they get exactly the same checks and error messages; the messages
name them "<platform dict>", "<workload dict w0>", "<events list>".
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Sequence

import orjson

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import shown
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.time_range import MAX_SIMULATED_TIME, TIME_RANGE_TEXT
from joulesim.simulator.engine.simulation_config import (
    EVENT_GROUPINGS,
    VERBOSITY_LEVELS,
    SimulationConfig,
)
from joulesim.simulator.models.core_task_runner import IDLE_POWER_RULES
from joulesim.simulator.output.output_files import check_output_prefix
from joulesim.inputs.input_file import read_text_file
from joulesim.simulator.platform.host_roles import host_roles
from joulesim.simulator.platform.platform_checks import check_energy_properties
from joulesim.simulator.platform.platform_json import load_json_platform
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.platform.platform_model import Platform
from joulesim.simulator.workload.dax_workflow import Workflow, load_workflow
from joulesim.simulator.workload.external_events import (ExternalEvent, events_from_bytes, load_external_events,
                                                          merged_event_files)
from joulesim.simulator.workload.workload_loader import load_workload, workload_from_bytes
from joulesim.simulator.workload.workload_model import Workload, workload_machine_limit

#: What a platform may be given as.
PlatformSource = str | os.PathLike | dict | Platform
#: What one workload may be given as (a list of these gives several workloads).
WorkloadSource = str | os.PathLike | dict


def _encoded(label: str, value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError as exc:
        raise InputError(label, "value", f"cannot be written as JSON: {exc}",
                         "use only dicts with string keys, lists, strings, numbers, booleans and None") from None


def _kind(value: Any) -> str:
    return type(value).__name__


def platform_from(value: PlatformSource, master_host: str | None = None,
                  platform_name: str | None = None, added_roles: Mapping[str, str] | None = None,
                  energy: bool = False) -> Platform:
    """A loaded platform from a path, a shipped name, a JSON platform dict (native or IRMaSim),
    or a Platform. With `energy` (-E), its power properties must be readable (as with Batsim,
    only then are they read)."""
    if isinstance(value, Platform):
        if added_roles:
            raise InputError("platform", "add_role_to_hosts", "roles cannot be added to a platform already loaded",
                             "pass added_roles to load_platform, or give the platform as a path or a dict")
        if energy:
            check_energy_properties(value)
        return value
    if isinstance(value, dict):
        label = "<platform dict>"
        loaded = load_json_platform(label, master_host, _encoded(label, value), platform_name, added_roles)
        if energy:
            check_energy_properties(loaded)
        return loaded
    if isinstance(value, (str, os.PathLike)):
        return load_platform(os.fspath(value), master_host, platform_name, added_roles, energy=energy)
    raise InputError("platform", "argument", f"is a {_kind(value)}",
                     "give a platform file path, a shipped platform name, a JSON platform dict, "
                     "or a Platform from joulesim.simulator.platform.platform_loader.load_platform")


def workloads_from(value: WorkloadSource | Sequence[WorkloadSource]) -> list[Workload]:
    """Workloads w0, w1, ... from one source or a list of them."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    workloads = []
    for index, item in enumerate(items):
        name = f"w{index}"
        if isinstance(item, dict):
            label = f"<workload dict {name}>"
            workloads.append(workload_from_bytes(label, _encoded(label, item), name))
        elif isinstance(item, (str, os.PathLike)):
            workloads.append(load_workload(os.fspath(item), name))
        else:
            raise InputError("workload", f"argument {index}", f"is a {_kind(item)}",
                             "give a workload file path, a shipped workload name or a Batsim workload "
                             "dict (or a list of those)")
    return workloads


def workflows_from(workflows: Sequence[str | os.PathLike], workflow_starts: Sequence[tuple[Any, Any]]) -> list[Workflow]:
    """Batsim's -W files (workflows wf0, wf1... starting at t=0) and --WS (file, start) pairs
    (wfc0, wfc1...)."""
    loaded = [load_workflow(os.fspath(path), f"wf{i}") for i, path in enumerate(workflows)]
    for i, pair in enumerate(workflow_starts):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InputError("--workflow-start", shown(pair), "must be a FILE START pair", "give --WS FILE START, e.g. --WS cut.dax 3600")
        path, start = pair
        try:
            start_time = float(start)
        except (TypeError, ValueError):
            start_time = math.nan
        if not math.isfinite(start_time) or not 0 <= start_time < MAX_SIMULATED_TIME:
            raise InputError("--workflow-start", f"{shown(os.fspath(path))} {shown(start)}", "the start time is not a number of seconds >= 0",
                             f"give a start time in seconds, {TIME_RANGE_TEXT}")
        loaded.append(load_workflow(os.fspath(path), f"wfc{i}", start_time))
    return loaded


def events_from(value: str | os.PathLike | Sequence[dict] | Sequence[str | os.PathLike], nb_compute_hosts: int,
                forward_unknown: bool = False) -> list[ExternalEvent]:
    """External events from a JSON-lines file, several files (Batsim's `--events` given more
    than once: merged by time, ties in file order), or a list of event dicts (`forward_unknown`:
    `--forward-unknown-events`)."""
    if isinstance(value, (str, os.PathLike)):
        return load_external_events(os.fspath(value), nb_compute_hosts, forward_unknown)
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, (str, os.PathLike)) for item in value):
        return merged_event_files([load_external_events(os.fspath(path), nb_compute_hosts, forward_unknown)
                                   for path in value])
    if isinstance(value, (list, tuple)):
        label = "<events list>"
        lines = b"\n".join(_encoded(label, event) for event in value)
        return events_from_bytes(label, lines, nb_compute_hosts, forward_unknown)
    raise InputError("events", "argument", f"is a {_kind(value)}",
                     "give an events file path, a list of paths, or a list of event dicts like "
                     "{'timestamp': 10, 'type': 'machine_unavailable', 'resources': '0-1'}")


def sched_config_from(text: str | None, path: str | os.PathLike | None) -> str:
    """Batsim's `--sched-cfg TEXT` / `--sched-cfg-file FILE`: the string SIMULATION_BEGINS forwards
    to the decider (config.sched-config), "" without either; both at once are refused, as by Batsim."""
    if text is not None and path is not None:
        raise InputError("--sched-cfg-file", "option", "given together with --sched-cfg",
                         "give the scheduler configuration once: as text, or as a file")
    if path is not None:
        return read_text_file(os.fspath(path), "a scheduler configuration file")
    return text or ""


def _check_choice(keyword: str, value: Any, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise JoulesimError(f"{keyword}={value!r}: use one of {', '.join(allowed)}")


#: The workload of a run given none: the shipped default workload, unless it runs workflows.
DEFAULT_WORKLOAD = "default"


def simulation_config(platform: PlatformSource, workload: WorkloadSource | Sequence[WorkloadSource] | None, *,
                      export_prefix: str | None, energy: bool, master_host: str | None,
                      add_role_to_hosts: Mapping[str, str] | Sequence[str] | None, platform_name: str | None,
                      idle_power: str, event_grouping: str, mmax: int, mmax_workload: bool,
                      sched_config: str | None, sched_config_file: str | os.PathLike | None,
                      events: str | os.PathLike | Sequence[dict] | Sequence[str | os.PathLike] | None,
                      forward_unknown_events: bool,
                      disable_machine_state_tracing: bool, verbosity: str, enable_dynamic_jobs: bool,
                      enable_compute_sharing: bool, disable_storage_sharing: bool, no_sched: bool,
                      enable_profile_reuse: bool, workflows: Sequence[str | os.PathLike],
                      workflow_starts: Sequence[tuple[Any, Any]], workflow_jobs_limit: int,
                      ignore_beyond_last_workflow: bool,
                      acknowledge_dynamic_jobs: bool, forward_profiles_on_submission: bool, timeout: float,
                      progress: bool, disable_schedule_tracing: bool = False) -> SimulationConfig:
    """Every input loaded and checked, the output prefix first (it costs nothing; loading may),
    before anything is written. The keywords are `joulesim.simulate`'s. `workload` None: the
    shipped default workload, or none with `workflows` or `workflow_starts` (as Batsim's -w is
    optional with -W/--WS: the workflows alone)."""
    _check_choice("event_grouping", event_grouping, EVENT_GROUPINGS)
    _check_choice("verbosity", verbosity, VERBOSITY_LEVELS)
    _check_choice("idle_power", idle_power, IDLE_POWER_RULES)
    if not isinstance(workflow_jobs_limit, int) or isinstance(workflow_jobs_limit, bool) or workflow_jobs_limit < 0:
        raise JoulesimError(f"workflow_jobs_limit={workflow_jobs_limit!r}: give an integer >= 0 (0: no limit)")
    if enable_profile_reuse and not enable_dynamic_jobs:  # as Batsim (batsim.cpp, parse_main_args)
        raise JoulesimError("--enable-profile-reuse lets dynamic jobs reuse the profiles of ended jobs: it needs "
                            "--enable-dynamic-jobs")
    if no_sched and (events is not None or enable_dynamic_jobs):
        raise JoulesimError("--no-sched runs the workloads' jobs without a decider: external events and dynamic jobs "
                            "need one (Batsim's --no-sched starts no server to take them): drop "
                            + ("--events" if events is not None else "--enable-dynamic-jobs"))
    if export_prefix is not None:
        check_output_prefix(export_prefix)  # see simulator/output/output_files.py
    platform_model = platform_from(platform, master_host, platform_name, host_roles(add_role_to_hosts), energy)
    if workload is None:
        workload = [] if workflows or workflow_starts else DEFAULT_WORKLOAD
    workloads = workloads_from(workload)
    forwarded = sched_config_from(sched_config, sched_config_file)
    if mmax_workload:
        mmax = workload_machine_limit(workloads, mmax, platform_model.nb_compute, platform_model.source)
    nb_hosts = mmax or platform_model.nb_compute
    # Batsim forwards unknown events only when there are events (batsim.cpp, parse_main_args).
    forward_unknown = forward_unknown_events and events is not None
    return SimulationConfig(
        platform=platform_model,
        workloads=workloads,
        external_events=events_from(events, nb_hosts, forward_unknown) if events is not None else [],
        has_events_file=events is not None,
        export_prefix=export_prefix,
        energy=energy,
        mmax=mmax,
        dynamic_jobs=enable_dynamic_jobs,
        acknowledge_dynamic_jobs=acknowledge_dynamic_jobs,
        forward_profiles=forward_profiles_on_submission,
        timeout_s=timeout,
        progress=progress,
        idle_power=idle_power,
        event_grouping=event_grouping,
        sched_config=forwarded,
        forward_unknown_events=forward_unknown,
        machine_state_tracing=not disable_machine_state_tracing,
        schedule_tracing=not disable_schedule_tracing,
        verbosity=verbosity,
        compute_sharing=enable_compute_sharing,
        storage_sharing=not disable_storage_sharing,
        no_sched=no_sched,
        profile_reuse=enable_profile_reuse,
        workflows=workflows_from(workflows, workflow_starts),
        workflow_jobs_limit=workflow_jobs_limit,
        ignore_beyond_last_workflow=ignore_beyond_last_workflow,
    )
