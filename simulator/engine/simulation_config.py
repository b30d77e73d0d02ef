"""Everything one simulation run needs besides the decider link."""

from __future__ import annotations

from dataclasses import dataclass, field

from joulesim.simulator.platform.platform_model import Platform
from joulesim.simulator.workload.dax_workflow import Workflow
from joulesim.simulator.workload.external_events import ExternalEvent
from joulesim.simulator.workload.workload_model import Workload

DEFAULT_TIMEOUT_S = 120.0
EVENT_GROUPINGS = ("batsim", "per-time")
#: Batsim's -v/--verbosity levels: quiet (errors only), network-only (the messages exchanged with
#: the decider, on stderr), information (warnings, and the CLI's summary), debug (both).
VERBOSITY_LEVELS = ("quiet", "network-only", "information", "debug")


@dataclass
class SimulationConfig:
    platform: Platform
    workloads: list[Workload]
    external_events: list[ExternalEvent] = field(default_factory=list)
    has_events_file: bool = False
    export_prefix: str | None = "out"  # None: outputs kept in memory (SimulationResult.texts)
    energy: bool = False
    mmax: int = 0  # 0: every compute host
    dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    forward_profiles: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S
    progress: bool = False
    # Node-model platforms: "irmasim" (a processor draws nothing before its first task, as
    # IRMaSim accounts) or "always" (min power from t=0).
    idle_power: str = "irmasim"
    # Which events reach the decider together: "batsim", as Batsim 4.2.1 sends them (its
    # actors and their nanosecond messages, see simulator/engine/batsim_actors.py), or "per-time",
    # every event of one simulated time in one message (faster, not Batsim's). IRMaSim node
    # platforms always use "per-time", as IRMaSim has no such actors.
    event_grouping: str = "batsim"
    # Batsim's --sched-cfg: a string forwarded to the decider in SIMULATION_BEGINS' config.
    sched_config: str = ""
    # Batsim's --forward-unknown-events: external events of other types go to the decider
    # (the events were loaded accordingly; SIMULATION_BEGINS' config says so).
    forward_unknown_events: bool = False
    # Batsim's --disable-machine-state-tracing: False writes no machine_states output.
    machine_state_tracing: bool = True
    # Batsim's --disable-schedule-tracing: False writes no Pajé trace (PREFIX_schedule.trace).
    schedule_tracing: bool = True
    # Batsim's -v/--verbosity (VERBOSITY_LEVELS).
    verbosity: str = "information"
    # Batsim's --enable-compute-sharing: several jobs may run on one compute host at once,
    # sharing its CPU (and everything else) under the fair-bottleneck rule.
    compute_sharing: bool = False
    # Batsim's --disable-storage-sharing (False): a storage host serves one running job at a time.
    storage_sharing: bool = True
    # Batsim's --no-sched (its "batexec" mode): no decider; every job of every workload starts
    # at t=0 on hosts 0..res-1, whatever its submission time, the jobs sharing those hosts.
    no_sched: bool = False
    # Batsim's --enable-profile-reuse (with dynamic jobs): a job's profile stays registered after
    # the job ends. Without it Batsim removes the profile once the message reporting the job's
    # end is sent, so a dynamic job registered later cannot name it.
    profile_reuse: bool = False
    # Batsim's -W / --WS: DAX workflows whose tasks become jobs as their parents complete
    # (engine/workflow_runs.py); --workflow-jobs-limit (0: none) and --ignore-beyond-last-workflow
    # (the other submitters' jobs after the last workflow ended are not submitted).
    workflows: list[Workflow] = field(default_factory=list)
    workflow_jobs_limit: int = 0
    ignore_beyond_last_workflow: bool = False
