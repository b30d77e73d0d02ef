"""Turn command-line options into a SimulationConfig: load and check every input file, and the
output prefix (before anything is written)."""

from __future__ import annotations

import sys
from typing import Any

from joulesim.cli.simgrid_options import simgrid_warnings
from joulesim.simulation_inputs import sched_config_from
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.output.output_files import check_output_prefix
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.workload.external_events import load_external_events
from joulesim.simulator.workload.workload_loader import load_workload
from joulesim.simulator.workload.workload_model import workload_machine_limit


def build_config(options: dict[str, Any]) -> SimulationConfig:
    check_output_prefix(options["export_prefix"])  # first: it costs nothing, loading inputs may
    platform = load_platform(options["platform"], options["master_host"], options["platform_name"])
    workloads = [load_workload(path, f"w{i}") for i, path in enumerate(options["workloads"])]
    sched_config = sched_config_from(options["sched_cfg"], options["sched_cfg_file"])
    mmax = options["mmax"]
    if options["mmax_workload"]:
        mmax = workload_machine_limit(workloads, mmax, platform.nb_compute, platform.source)
    nb_hosts = mmax or platform.nb_compute
    # Batsim forwards unknown events only when there are events (batsim.cpp, parse_main_args).
    forward_unknown = bool(options["forward_unknown_events"] and options["events_path"])
    events = load_external_events(options["events_path"], nb_hosts, forward_unknown) if options["events_path"] else []
    # By default a bar on a terminal, and in a log a line every few seconds once a run has
    # lasted a few seconds (short runs print nothing): see joulesim.console.progress_bar.
    verbosity = "quiet" if options["quiet"] else options["verbosity"]
    if verbosity in ("information", "debug"):
        for warning in simgrid_warnings(options["sg_cfg"], options["sg_log"]):
            print(warning, file=sys.stderr)
    else:
        simgrid_warnings(options["sg_cfg"], options["sg_log"])  # still refuses a malformed one
    # Quiet and network-only print nothing else: no progress unless asked for (--progress).
    progress = options["progress"] is True or (options["progress"] is None and verbosity in ("information", "debug"))
    return SimulationConfig(
        platform=platform,
        workloads=workloads,
        external_events=events,
        has_events_file=bool(options["events_path"]),
        export_prefix=options["export_prefix"],
        energy=options["energy"],
        mmax=mmax,
        dynamic_jobs=options["enable_dynamic_jobs"],
        acknowledge_dynamic_jobs=options["acknowledge_dynamic_jobs"],
        forward_profiles=options["forward_profiles_on_submission"],
        timeout_s=options["timeout_s"],
        progress=progress,
        idle_power=options["idle_power"],
        event_grouping=options["event_grouping"],
        sched_config=sched_config,
        forward_unknown_events=forward_unknown,
        machine_state_tracing=not options["disable_machine_state_tracing"],
        verbosity=verbosity,
    )
