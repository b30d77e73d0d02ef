"""Turn command-line options into a SimulationConfig: what only the command line has (-q,
--sg-cfg's answers, progress by default), then the API's `simulation_config`, which loads and
checks every input file and the output prefix (before anything is written)."""

from __future__ import annotations

import sys
from typing import Any

from joulesim.cli.simgrid_options import simgrid_warnings
from joulesim.simulation_inputs import simulation_config
from joulesim.simulator.engine.simulation_config import SimulationConfig


def build_config(options: dict[str, Any]) -> SimulationConfig:
    verbosity = "quiet" if options["quiet"] else options["verbosity"]
    warnings = simgrid_warnings(options["sg_cfg"], options["sg_log"])  # refuses a malformed one at any verbosity
    if verbosity in ("information", "debug"):
        for warning in warnings:
            print(warning, file=sys.stderr)
    # By default a bar on a terminal, and in a log a line every few seconds once a run has
    # lasted a few seconds (short runs print nothing): see joulesim.console.progress_bar. Quiet
    # and network-only print nothing else: no progress unless asked for (--progress).
    progress = options["progress"] is True or (options["progress"] is None and verbosity in ("information", "debug"))
    return simulation_config(
        options["platform"], list(options["workloads"]), export_prefix=options["export_prefix"],
        energy=options["energy"], master_host=options["master_host"],
        add_role_to_hosts=list(options["add_role_to_hosts"]), platform_name=options["platform_name"],
        idle_power=options["idle_power"], event_grouping=options["event_grouping"], mmax=options["mmax"],
        mmax_workload=options["mmax_workload"], sched_config=options["sched_cfg"],
        sched_config_file=options["sched_cfg_file"], events=list(options["events_path"]) or None,
        forward_unknown_events=options["forward_unknown_events"],
        disable_machine_state_tracing=options["disable_machine_state_tracing"],
        disable_schedule_tracing=options["disable_schedule_tracing"], verbosity=verbosity,
        enable_dynamic_jobs=options["enable_dynamic_jobs"], enable_compute_sharing=options["enable_compute_sharing"],
        disable_storage_sharing=options["disable_storage_sharing"], no_sched=options["no_sched"],
        enable_profile_reuse=options["enable_profile_reuse"], workflows=list(options["workflows"]),
        workflow_starts=list(options["workflow_starts"]), workflow_jobs_limit=options["workflow_jobs_limit"],
        ignore_beyond_last_workflow=options["ignore_beyond_last_workflow"], acknowledge_dynamic_jobs=options["acknowledge_dynamic_jobs"],
        forward_profiles_on_submission=options["forward_profiles_on_submission"], timeout=options["timeout_s"],
        progress=progress)
