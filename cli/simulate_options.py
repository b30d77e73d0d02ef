"""Options shared by `joulesim simulate` and `joulesim run`, with Batsim's flag names."""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import click

from joulesim.cli.number_options import DecimalRange, IntegerRange
from joulesim.simulator.engine.simulation_config import DEFAULT_TIMEOUT_S, EVENT_GROUPINGS, VERBOSITY_LEVELS
from joulesim.simulator.models.core_task_runner import IDLE_POWER_RULES


def simulate_options(platform_default: str | None, workload_default: tuple[str, ...] | None,
                     numbered_runs: bool = False) -> Callable:
    """The options `simulate` and `run` share; with `numbered_runs`, no `-e` means the next free
    runs/NNN prefix (numbered_run_prefix.py) instead of Batsim's `out`."""
    def decorate(command: Callable) -> Callable:
        options = [
            # No `default=` at all when the option is required: click >= 8.3 takes an explicit
            # default=None as a value, and a required option would then go missing silently.
            click.option("-p", "--platform", required=platform_default is None,
                         **({"default": platform_default, "show_default": True} if platform_default else {}),
                         help="Platform file (SimGrid XML, joulesim JSON or IRMaSim JSON), or a shipped platform name."),
            click.option("--platform-name", default=None,
                         help="Which platform of an IRMaSim platform file that holds several."),
            click.option("--idle-power", type=click.Choice(IDLE_POWER_RULES), default="irmasim",
                         show_default=True,
                         help="IRMaSim node platforms: when an idle processor draws min power: "
                              "'irmasim' from its first task on (IRMaSim's accounting), 'always' from t=0."),
            # (no click default: the command's default workload applies only without -W/--WS)
            click.option("-w", "--workload", "workloads", multiple=True,
                         help="Workload file (Batsim JSON or IRMaSim JSON), or a shipped workload name. Repeatable: "
                              "workload i is named w<i>."
                              + (f" [default: {', '.join(workload_default)}, unless -W or --WS gives a workflow]"
                                 if workload_default else "")),
            click.option("-e", "--export", "export_prefix",
                         **({"default": None} if numbered_runs else {"default": "out", "show_default": True}),
                         help="Output prefix: writes PREFIX_jobs.csv, PREFIX_schedule.csv, ... and replaces "
                              "what an older run wrote under PREFIX"
                              + (". [default: the next free runs/NNN: runs/001, runs/002...; no run replaces "
                                 "another's]" if numbered_runs else " (Batsim's default).")),
            click.option("-m", "--master-host", default=None,
                         help="Name of the master host, when no host has role=master."),
            click.option("--enable-compute-sharing", is_flag=True,
                         help="Let several jobs run on one compute host at once, sharing it (Batsim's flag)."),
            click.option("--disable-storage-sharing", is_flag=True,
                         help="A storage host serves one running job at a time (Batsim's flag)."),
            click.option("--enable-profile-reuse", is_flag=True,
                         help="Dynamic jobs may name the profiles of jobs that ended (Batsim removes them otherwise; "
                              "needs --enable-dynamic-jobs)."),
            click.option("-W", "--workflow", "workflows", multiple=True, metavar="DAX",
                         help="A DAX workflow (Pegasus XML) whose tasks become jobs as their parents complete "
                              "(Batsim's -W; workloads wf0, wf1, ...). Repeatable."),
            click.option("--WS", "--workflow-start", "workflow_starts", multiple=True, nargs=2, metavar="DAX START",
                         help="A DAX workflow starting at START seconds (Batsim's --WS; workloads wfc0, ...). Repeatable."),
            click.option("--workflow-jobs-limit", default=0, show_default=True, type=IntegerRange(0),
                         help="At most this many jobs of each workflow in flight (0: no limit)."),
            click.option("--ignore-beyond-last-workflow", is_flag=True,
                         help="Jobs submitted after every workflow ended are ignored (Batsim's flag)."),
            click.option("--no-sched", is_flag=True,
                         help="No decider: every job starts at t=0 on hosts 0..res-1, the jobs sharing them "
                              "(Batsim's --no-sched; its help says 'one after the other', its code starts them all at once)."),
            click.option("-r", "--add-role-to-hosts", "add_role_to_hosts", multiple=True, metavar="HOSTS:ROLE",
                         help="Give hosts a role, as Batsim's -r: HOSTS is host1,host2,... and ROLE master, storage "
                              "or compute_node (repeatable), e.g. -r io0,io1:storage."),
            click.option("--mmax", default=0, show_default=True, type=IntegerRange(0),
                         help="Use only the first N compute hosts (0: all)."),
            click.option("--mmax-workload", is_flag=True,
                         help="Use only as many compute hosts as the workloads' largest nb_res (at most --mmax)."),
            click.option("--sched-cfg", "sched_cfg", default=None, metavar="TEXT",
                         help="A string forwarded to the decider in SIMULATION_BEGINS (config.sched-config), as Batsim's."),
            click.option("--sched-cfg-file", "sched_cfg_file", default=None, metavar="FILE",
                         help="Same as --sched-cfg, with the text of FILE."),
            click.option("--events", "--ee", "--external-events", "events_path", multiple=True,
                         help="External events file (JSON lines), e.g. machines becoming unavailable (Batsim 5: "
                              "--ee/--external-events). Repeatable: several files are merged by time."),
            click.option("--forward-unknown-events", is_flag=True,
                         help="Send external events of other types to the decider, whole, as NOTIFY (with --events)."),
            click.option("--disable-machine-state-tracing", is_flag=True,
                         help="Write no PREFIX_machine_states.csv (out_schedule.csv's time_* columns stay)."),
            click.option("--disable-schedule-tracing", is_flag=True,
                         help="Write no PREFIX_schedule.trace (the Pajé trace of the schedule)."),
            click.option("-E", "--energy", "--energy-host", "energy", is_flag=True,
                         help="Enable energy accounting: energy columns, PREFIX_consumed_energy.csv and PREFIX_pstate_changes.csv; "
                              "QUERY consumed_energy; Batsim 5's energy probes (Batsim 5: -E or --energy-host)."),
            click.option("--energy-link", is_flag=True, expose_value=False, callback=_refuse_energy_link,
                         help="Batsim 5's link energy (SimGrid's link_energy plugin): joulesim accounts hosts' energy "
                              "only, so this is refused."),
            click.option("--trace-machine-state", is_flag=True, expose_value=False,
                         help="Batsim 5's switch for PREFIX_machine_states.csv, which joulesim writes unless "
                              "--disable-machine-state-tracing: accepted, changes nothing."),
            click.option("--trace-pstate-changes", is_flag=True, expose_value=False,
                         help="Batsim 5's switch for PREFIX_pstate_changes.csv, which joulesim writes with -E: "
                              "accepted, changes nothing."),
            click.option("--trace-probe-data", type=click.Choice(("always", "never", "auto"), case_sensitive=False),
                         default=None, expose_value=False,
                         help="Batsim 5's probe tracing strategy, which Batsim 5.0.0-rc2 reads and never applies: "
                              "accepted, changes nothing."),
            click.option("--enable-dynamic-jobs", is_flag=True,
                         help="Let the decider register jobs and profiles during the run."),
            click.option("--acknowledge-dynamic-jobs", is_flag=True,
                         help="Send JOB_SUBMITTED back for each job the decider registers."),
            click.option("--forward-profiles-on-submission", is_flag=True,
                         help="Put each job's profile in its JOB_SUBMITTED event."),
            click.option("--timeout", "timeout_s", default=DEFAULT_TIMEOUT_S, show_default=True,
                         type=DecimalRange(), callback=check_timeout,
                         help=f"Seconds to wait for each decider reply before giving up (at most {MAX_TIMEOUT_S:g})."),
            click.option("--event-grouping", type=click.Choice(EVENT_GROUPINGS), default="batsim",
                         show_default=True,
                         help="Which events reach the decider together: 'batsim' sends the messages Batsim "
                              "4.2.1 sends (same-time events often in separate messages; times the decider "
                              "reads rounded to the microsecond, as Batsim prints them); 'per-time' puts every "
                              "event of one simulated time in one message, with full-precision times."),
            click.option("-v", "--verbosity", type=click.Choice(VERBOSITY_LEVELS), default="information",
                         show_default=True,
                         help="As Batsim's: quiet (errors only), network-only (every message to and from the "
                              "decider on stderr, nothing else), information (warnings and the summary), debug (both)."),
            click.option("-q", "--quiet", is_flag=True, help="Same as --verbosity quiet."),
            click.option("--sg-cfg", "sg_cfg", multiple=True, metavar="NAME:VALUE",
                         help="Batsim's SimGrid option: accepted; a value other than the one joulesim replicates "
                              "changes nothing (a warning says so). Repeatable."),
            click.option("--sg-log", "sg_log", multiple=True, metavar="OPTION",
                         help="Batsim's SimGrid logging option: accepted, changes nothing (a warning says so)."),
            click.option("--progress/--no-progress", default=None,
                         help="Show progress on stderr (default: a bar on a terminal, otherwise a line "
                              "every 5 s once a run has lasted 5 s)."),
        ]
        if workload_default:
            command = _default_workload_without_workflows(command, workload_default)
        for option in reversed(options):
            command = option(command)
        return command
    return decorate


def _default_workload_without_workflows(command: Callable, default: tuple[str, ...]) -> Callable:
    """`command` given `default` as its workloads when neither -w, -W nor --WS is given: with a
    workflow, as with Batsim's -W, no static workload is added beside it."""
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not (kwargs["workloads"] or kwargs["workflows"] or kwargs["workflow_starts"]):
            kwargs["workloads"] = default
        return command(*args, **kwargs)

    return wrapper


def _refuse_energy_link(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        raise click.BadParameter("joulesim accounts the hosts' energy only, not the links' (SimGrid's link_energy "
                                 "plugin): drop --energy-link (-E and --energy-host give the hosts' energy)",
                                 ctx=ctx, param=param)


# A day: far longer than any decider should think, and within ZeroMQ's millisecond timeouts (int).
MAX_TIMEOUT_S = 86400.0


def check_timeout(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A finite number of seconds in (0, MAX_TIMEOUT_S]: `nan`, `inf` and `1e308` parse as floats."""
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise click.BadParameter(f"{value!r} is not a number of seconds in (0, {MAX_TIMEOUT_S:g}]; "
                                 "give e.g. --timeout 120", ctx=ctx, param=param)
    return value


def check_endpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse an endpoint no socket could use before anything starts (None: not given)."""
    from joulesim.protocol.endpoint import EndpointError, parse_endpoint

    if value is None:
        return None
    try:
        parse_endpoint(value)
    except EndpointError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return value


def curve_keys_option() -> Callable:
    return click.option("--curve-keys", "curve_keys", default=None, metavar="DIR",
                        help="Authenticate and encrypt the simulator-decider link with the CURVE keys of "
                             "DIR (from `joulesim keys generate DIR`); give both sides the same DIR.")


SIMULATE_KEYS = ("platform", "platform_name", "idle_power", "workloads", "export_prefix", "master_host", "add_role_to_hosts", "mmax",
                 "mmax_workload", "sched_cfg", "sched_cfg_file", "events_path", "forward_unknown_events",
                 "disable_machine_state_tracing", "disable_schedule_tracing", "verbosity", "quiet", "sg_cfg", "sg_log", "energy",
                 "enable_dynamic_jobs", "enable_compute_sharing", "disable_storage_sharing", "no_sched", "enable_profile_reuse", "workflows", "workflow_starts", "workflow_jobs_limit",
                 "ignore_beyond_last_workflow", "acknowledge_dynamic_jobs", "forward_profiles_on_submission",
                 "timeout_s", "progress", "event_grouping")


def split_simulate_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    simulate = {k: kwargs.pop(k) for k in SIMULATE_KEYS}
    return simulate, kwargs


def parse_key_values(pairs: tuple[str, ...]) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            # (-o names an output file in the workload, plot, report and learn commands; here it is
            # a decider option: say where outputs go)
            raise click.BadParameter(f"{pair!r} is not key=value (e.g. --option t_idle=300): -o/--option passes an "
                                     "option to the decider here; the outputs' prefix is -e/--export",
                                     param_hint="-o/--option")
        result[key] = value
    return result


