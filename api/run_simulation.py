"""`joulesim.simulate`: one simulation from Python, the decider in-process by default.

Every flag of `joulesim simulate` / `joulesim run` has a keyword here. The messages are the
same whichever way the decider is reached:
- in-process (a shipped name, "module:Class", a Decider class or instance): no sockets;
- `in_process=False`: a shipped or "module:Class" decider in its own `joulesim decide` process;
- a command line (a list of strings, one of them holding "{endpoint}"): any program serving
  the Batsim protocol, started on a private ipc:// endpoint;
- `socket_endpoint=...`: a decider somebody else already serves there.
"""

from __future__ import annotations

import inspect
import os
import shutil
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from joulesim.inputs.input_error import InputError
from joulesim.protocol.decider import Decider
from joulesim.protocol.errors import DeciderUnavailableError, JoulesimError
from joulesim.run_interrupted import RunInterrupted
from joulesim.simulation_options import Batsim5Decider, BatsimFlags, Workflows, merged_keywords
from joulesim.simulation_inputs import (
    PlatformSource,
    WorkloadSource,
    simulation_config,
)
from joulesim.simulator.engine.decider_link import DeciderLink, WallClockLimit
from joulesim.simulator.engine.simulation import Simulation, SimulationResult
from joulesim.simulator.engine.simulation_config import (
    DEFAULT_TIMEOUT_S,
    SimulationConfig,
)

if TYPE_CHECKING:  # pandas is imported only when a result is built: the CLI needs none of it
    from joulesim.run_checkpoint import RunCheckpoints
    from joulesim.run_result import RunResult

#: The placeholder a decider command line holds for the endpoint it must serve.
ENDPOINT_PLACEHOLDER = "{endpoint}"


def simulate(platform: PlatformSource = "cluster32",
             workload: WorkloadSource | Sequence[WorkloadSource] | None = None,
             decider: str | Decider | type | Sequence[str] | None = None,
             *,
             options: Mapping[str, Any] | None = None,
             energy: bool = False,
             export: str | os.PathLike | None = None,
             master_host: str | None = None,
             add_role_to_hosts: Mapping[str, str] | Sequence[str] | None = None,
             platform_name: str | None = None,
             idle_power: str = "irmasim",
             event_grouping: str = "batsim",
             mmax: int = 0,
             mmax_workload: bool = False,
             sched_config: str | None = None,
             sched_config_file: str | os.PathLike | None = None,
             events: str | os.PathLike | Sequence[dict] | Sequence[str | os.PathLike] | None = None,
             forward_unknown_events: bool = False,
             disable_machine_state_tracing: bool = False,
             disable_schedule_tracing: bool = False,
             verbosity: str = "information",
             enable_dynamic_jobs: bool = False,
             enable_compute_sharing: bool = False,
             disable_storage_sharing: bool = False,
             no_sched: bool = False,
             enable_profile_reuse: bool = False,
             workflows: Sequence[str | os.PathLike] = (),
             workflow_starts: Sequence[tuple[str | os.PathLike, float]] = (),
             workflow_jobs_limit: int = 0,
             ignore_beyond_last_workflow: bool = False,
             acknowledge_dynamic_jobs: bool = False,
             forward_profiles_on_submission: bool = False,
             timeout: float = DEFAULT_TIMEOUT_S,
             time_limit: float | None = None,
             progress: bool = False,
             in_process: bool = True,
             socket_endpoint: str | None = None,
             curve_keys: str | os.PathLike | None = None,
             decider_log: Any = None,
             edc_library: str | os.PathLike | None = None,
             edc_socket: str | None = None,
             edc_init: str | bytes = b"",
             edc_isolated: bool = False,
             batsim: BatsimFlags | None = None,
             workflow: Workflows | None = None,
             edc: Batsim5Decider | None = None) -> RunResult:
    """Run one simulation and return its outputs as DataFrames (see `RunResult`).

    Every flag of `joulesim simulate` is a keyword of the same name (docs/guide/running.md has
    each one); those not listed below are Batsim's flags, also grouped in `batsim=`.

    Args:
        platform: a platform file (SimGrid XML, joulesim JSON or IRMaSim JSON), a shipped platform
            name, a JSON platform dict, or a loaded Platform.
        workload: a Batsim workload file, a shipped workload name, a workload dict, or a list of
            those (workloads w0, w1, ...). Default: the shipped "default" workload, or none when
            `workflows` or `workflow_starts` are given (Batsim's -w is optional with -W).
        decider: a shipped decider name, "package.module:Class", a Decider subclass or instance,
            or a command line (list of strings) with "{endpoint}" where the endpoint goes.
            Default: "easy", or none with `socket_endpoint`.
        options: decider options (as `-o KEY=VALUE`), for a name or a class.
        energy: account energy (`-E`): power states, joules, `consumed_energy`.
        export: write the Batsim output files under this prefix; by default nothing is written.
        platform_name: which platform of an IRMaSim file that holds several.
        idle_power: `--idle-power` (IRMaSim node platforms).
        add_role_to_hosts: Batsim's `-r`: {"host": "storage", ...}, or its strings ["h1,h2:storage"].
        no_sched: Batsim's --no-sched: no decider; every job starts at t=0 on hosts 0..res-1.
        sched_config: `--sched-cfg`, the string the decider gets in SIMULATION_BEGINS
            (`sched_config_file`: `--sched-cfg-file`).
        workflows: DAX files (Batsim's -W); `workflow_starts`: (DAX file, start time) pairs (--WS).
        timeout: seconds to wait for each decider reply.
        time_limit: stop with RunTimeLimitError after this many seconds of wall-clock time, counted
            from this call (loading the inputs included), checked at each decider call.
        progress: show the jobs ended so far on stderr.
        in_process: run a named decider in this process (default) rather than in its own
            `joulesim decide` process.
        socket_endpoint: use a decider already serving this ZeroMQ endpoint.
        curve_keys: the folder of CURVE keys (`joulesim keys generate`) for the decider link.
        decider_log: where a decider process's stdout and stderr go (a file object); default: ours.
        edc_library: a Batsim 5 External Decision Component (batprotocol) instead of a decider, as
            a shared library loaded in this process (in a child process with `edc_isolated=True`);
            `edc_socket`: a process EDC serving at a ZeroMQ endpoint; `edc_init`: its init data
            (bytes, or a string: UTF-8). Its hello sets what the dynamic-job, profile-forwarding
            and sharing flags set. A library in this process that crashes ends this process, and
            one whose call never returns hangs this call (`timeout` cannot apply to it): with
            `edc_isolated=True` both are a DeciderUnavailableError.
        batsim: Batsim's flags grouped in a `joulesim.BatsimFlags`, built once for every run.
        workflow: the workflow keywords grouped in a `joulesim.Workflows`.
        edc: the EDC keywords grouped in a `joulesim.Batsim5Decider`. A setting given both as a
            keyword and in one of these objects, with two values, is refused.

    Returns:
        The run's outputs (`RunResult`).

    Raises:
        JoulesimError: a bad input, option or decision, with the CLI's messages (its subclasses
            say which: InputError, DeciderUnavailableError, RunTimeLimitError...).
    """
    if batsim is not None or workflow is not None or edc is not None:
        groups = {"batsim": batsim, "workflow": workflow, "edc": edc}
        flat = {name: value for name, value in locals().items() if name not in groups and name != "groups"}
        defaults = {name: parameter.default for name, parameter in inspect.signature(simulate).parameters.items()}
        return simulate(**merged_keywords(flat, defaults, groups))
    if time_limit is not None:  # (counted from now: loading the inputs takes part of it)
        time_limit = WallClockLimit(time_limit)
    if edc_library is not None or edc_socket is not None:
        return _with_edc(locals(), time_limit)
    config = simulation_config(
        platform, workload, export_prefix=os.fspath(export) if export is not None else None, energy=energy,
        master_host=master_host, add_role_to_hosts=add_role_to_hosts, platform_name=platform_name, idle_power=idle_power, event_grouping=event_grouping,
        mmax=mmax, mmax_workload=mmax_workload, sched_config=sched_config, sched_config_file=sched_config_file,
        events=events, forward_unknown_events=forward_unknown_events,
        disable_machine_state_tracing=disable_machine_state_tracing,
        disable_schedule_tracing=disable_schedule_tracing, verbosity=verbosity,
        enable_dynamic_jobs=enable_dynamic_jobs, enable_compute_sharing=enable_compute_sharing,
        disable_storage_sharing=disable_storage_sharing, no_sched=no_sched, enable_profile_reuse=enable_profile_reuse,
        workflows=workflows, workflow_starts=workflow_starts, workflow_jobs_limit=workflow_jobs_limit,
        ignore_beyond_last_workflow=ignore_beyond_last_workflow, acknowledge_dynamic_jobs=acknowledge_dynamic_jobs,
        forward_profiles_on_submission=forward_profiles_on_submission, timeout=timeout, progress=progress)
    options = {str(k): option_text(v) for k, v in (options or {}).items()}
    keys = _curve_keys(curve_keys)
    if no_sched:
        if decider is not None or socket_endpoint is not None:
            raise JoulesimError("no_sched=True runs without a decider (every job starts at t=0 on hosts 0..res-1, "
                                "as Batsim's --no-sched): drop decider / socket_endpoint")
        from joulesim.protocol.transport_inprocess import InProcessRequester

        return _result(run_configured(config, InProcessRequester(Decider()), time_limit), config)
    if socket_endpoint is not None:
        if decider is not None:
            raise JoulesimError("give either decider or socket_endpoint, not both (socket_endpoint is for a "
                                "decider already serving there)")
        return _with_zmq(config, socket_endpoint, keys, time_limit)
    if decider is None:
        decider = "easy"
    if isinstance(decider, (list, tuple)):
        return _with_command(config, list(decider), keys, time_limit, decider_log)
    if in_process or isinstance(decider, Decider):
        instance = _decider_instance(decider, options)
        from joulesim.protocol.transport_inprocess import InProcessRequester

        return _result(run_configured(config, InProcessRequester(instance), time_limit), config)
    if not isinstance(decider, str):
        raise JoulesimError("in_process=False needs a decider name or 'package.module:Class' (a class or an "
                            "instance runs in this process)")
    from joulesim.decider_process import joulesim_decide_command

    return _with_process(config, lambda endpoint: joulesim_decide_command(
        decider, endpoint, options, timeout, os.fspath(curve_keys) if curve_keys is not None else None),
        f"joulesim decide {decider}", keys, time_limit, decider_log, reports_start=True)


def _with_edc(arguments: dict[str, Any], time_limit: "WallClockLimit | None") -> RunResult:
    """A run whose decisions come from a Batsim 5 EDC (protocol.batprotocol)."""
    from joulesim.decider_process import start_reporting_process
    from joulesim.protocol.batprotocol.edc_connection import EdcFeatures, errors_naming, init_data_bytes, open_edc

    for other in ("decider", "socket_endpoint"):
        if arguments[other] is not None:
            raise JoulesimError(f"give either an EDC (edc_library / edc_socket) or {other}, not both")
    if arguments["no_sched"]:
        raise JoulesimError("no_sched runs without any decider: drop the EDC")
    given = [name for name in EdcFeatures.flag_names() if arguments[name]]
    if given:
        raise JoulesimError(f"with an EDC, its hello (requested_simulation_features, scheduling_constraints) sets "
                            f"what {', '.join(given)} set for a Batsim 4 decider: drop {', '.join(given)}")
    # (a library in this process that never returns hangs this call: Python cannot take a call
    # into C back without ending the caller's process, which the command line does; with
    # edc_isolated=True the library is a process, stopped after `timeout` like any decider)
    edc = open_edc(os.fspath(arguments["edc_library"]) if arguments["edc_library"] is not None else None,
                   arguments["edc_socket"], arguments["edc_isolated"], init_data_bytes(arguments["edc_init"]),
                   arguments["timeout"], start_process=start_reporting_process)
    keywords = {name: arguments[name] for name in (
        "master_host", "add_role_to_hosts", "platform_name", "idle_power", "event_grouping", "mmax",
        "mmax_workload", "sched_config", "sched_config_file", "events", "disable_machine_state_tracing",
        "disable_schedule_tracing", "verbosity", "workflows", "workflow_starts", "workflow_jobs_limit",
        "ignore_beyond_last_workflow", "timeout", "progress", "energy")}
    export = arguments["export"]
    config = configured_edc_run(edc, lambda flags: simulation_config(
        arguments["platform"], arguments["workload"], export_prefix=os.fspath(export) if export is not None else None,
        no_sched=False, **flags, **keywords))
    with errors_naming(edc):
        return _result(run_configured(config, edc, time_limit), config)


def configured_edc_run(edc: Any, build: Callable[[dict[str, bool]], SimulationConfig]) -> SimulationConfig:
    """The configuration of a run decided by `edc` (an EdcRequester), `build(flags)` given the
    flags its hello sets; the EDC told the platform's hosts and Batsim 5's ids of the generic
    external events it will get (the command line's and the API's runs both come here)."""
    from joulesim.protocol.batprotocol.edc_connection import configured
    from joulesim.simulator.workload.external_events import batsim5_event_ids

    def build_and_tell(flags: dict[str, bool]) -> SimulationConfig:
        config = build(flags)
        edc.set_external_events(batsim5_event_ids(config.external_events))
        return config

    return configured(edc, build_and_tell)


def run_configured(config: SimulationConfig, transport: Any, time_limit: "float | WallClockLimit | None" = None,
                   checkpoints: "RunCheckpoints | None" = None) -> SimulationResult:
    """Run a configured simulation over `transport`; on an error or Ctrl-C (RunInterrupted), the
    message says which output files were written so far (they are kept). `checkpoints`: the run
    writes checkpoints, or is one resumed (joulesim.run_checkpoint)."""
    if checkpoints is not None:
        transport = checkpoints.recording(transport)
    link = DeciderLink(transport)
    link.limit_wall_time(time_limit)
    simulation = None
    try:
        if checkpoints is not None:
            simulation = checkpoints.simulation_for(config, link)
            return checkpoints.run(simulation)
        simulation = Simulation(config, link)
        watch = getattr(transport, "watch_outputs", None)
        if watch is not None:  # (an EDC library's watchdog flushes these outputs if it ends the run)
            watch(simulation)
        return simulation.run()
    except JoulesimError as exc:
        kept = ", ".join(simulation.opened_outputs) if simulation is not None else ""
        if kept:  # the same error (its class and exit status), its message completed
            exc.args = (f"{exc}\n(outputs written so far are kept: {kept})",)
        raise
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted(simulation.opened_outputs if simulation is not None else []) from None
    finally:
        link.close()


def _result(result: SimulationResult, config: SimulationConfig) -> "RunResult":
    from joulesim.run_result import RunResult

    return RunResult(result, config.export_prefix or "<in-memory run>", config.platform)


def option_text(value: Any) -> str:
    """Decider options travel as text, as on the command line (True -> "true")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _decider_instance(decider: str | Decider | type, options: dict[str, str]) -> Decider:
    if isinstance(decider, Decider):
        if options:
            raise JoulesimError("options= are for a decider name or class; this decider instance was "
                                "already built with its options")
        return decider
    if isinstance(decider, type) and issubclass(decider, Decider):
        from joulesim.deciders import check_options

        check_options(decider, decider.__name__, options)
        return decider(options)
    if isinstance(decider, str):
        from joulesim.deciders import load_decider

        return load_decider(decider, options)
    raise JoulesimError(f"decider is a {type(decider).__name__}: give a shipped decider name, "
                        "'package.module:Class', a Decider subclass or instance, or a command line (list of strings)")


def _curve_keys(directory: str | os.PathLike | None):
    if directory is None:
        return None
    from joulesim.protocol.curve_keys import load_keys

    return load_keys(os.fspath(directory))


def _with_zmq(config: SimulationConfig, endpoint: str, keys: Any, time_limit: "WallClockLimit | None",
              is_alive: Callable[[], str | None] | None = None) -> RunResult:
    from joulesim.protocol.endpoint import parse_endpoint
    from joulesim.protocol.transport_zmq import ZmqRequester

    parse_endpoint(endpoint)  # a clear EndpointError for a malformed one
    requester = ZmqRequester(endpoint, config.timeout_s, is_alive, curve=keys)
    return _result(run_configured(config, requester, time_limit), config)


def _with_command(config: SimulationConfig, command: list[str], keys: Any, time_limit: "WallClockLimit | None",
                  log: Any) -> RunResult:
    if not command or not all(isinstance(word, str) for word in command):
        raise JoulesimError("a decider command line is a non-empty list of strings, e.g. "
                            "['batsched', '-v', 'easy_bf', '-s', '{endpoint}']")
    if not any(ENDPOINT_PLACEHOLDER in word for word in command):
        raise InputError("decider", "command line", f"has no {ENDPOINT_PLACEHOLDER} placeholder",
                         "put {endpoint} where the program takes the endpoint to bind, e.g. "
                         "['batsched', '-s', '{endpoint}']")
    return _with_process(config, lambda endpoint: [w.replace(ENDPOINT_PLACEHOLDER, endpoint) for w in command],
                         " ".join(command), keys, time_limit, log)


def _with_process(config: SimulationConfig, command_for: Callable[[str], list[str]], description: str,
                  keys: Any, time_limit: "WallClockLimit | None", log: Any, reports_start: bool = False) -> RunResult:
    """Start the decider on a private ipc:// endpoint, run, and make sure it is gone after.
    With `reports_start` (a `joulesim decide`), no output is written before it accepted its
    name and options."""
    from joulesim.decider_process import DeciderProcess, free_ipc_endpoint

    endpoint, directory = free_ipc_endpoint()
    process = DeciderProcess(command_for(endpoint), description, log, reports_start)
    try:
        process.wait_started(config.timeout_s)
        result = _with_zmq(config, endpoint, keys, time_limit, process.why_gone)
        status = process.wait()
        if status not in (0, None):
            raise DeciderUnavailableError(f"the decider process ({description}) exited with status {status}")
        return result
    finally:
        process.stop()
        shutil.rmtree(directory, ignore_errors=True)
