"""`joulesim`: simulate an RJMS with a decider in its own process (Batsim 4 protocol)."""

from __future__ import annotations

# First of all, before the imports below (libraries, schema compilation): Ctrl-C from now on
# prints one line, never a traceback (see joulesim.cli.interruption).
from joulesim.cli import interruption

THE_PROGRAM = interruption.started_as_joulesim(__name__)  # (not pytest's CliRunner, nor a notebook)
if THE_PROGRAM:
    interruption.install()

import gc  # noqa: E402
import math  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from typing import Any, Callable  # noqa: E402

import click  # noqa: E402

from joulesim.cli.error_reporting import after_the_report, report_and_exit_now, reports_errors  # noqa: E402
from joulesim.cli.lazy_group import LazyGroup  # noqa: E402
from joulesim.cli.number_options import DecimalRange  # noqa: E402
from joulesim.cli.numbered_run_prefix import next_run_prefix  # noqa: E402
from joulesim.cli.simulate_options import (  # noqa: E402
    check_endpoint,
    check_timeout,
    curve_keys_option,
    parse_key_values,
    simulate_options,
    split_simulate_kwargs,
)
from joulesim.protocol.errors import DeciderUnavailableError, JoulesimError  # noqa: E402
from joulesim.protocol.endpoint import DEFAULT_ENDPOINT  # noqa: E402
from joulesim.run_interrupted import RunInterrupted  # noqa: E402
from joulesim.protocol.start_handshake import reports_failure, reports_start  # noqa: E402

# The simulator's modules (numpy, numba's kernels...) are imported by the commands that run it,
# not by `joulesim --help` or `joulesim decide`.
def build_config(options: dict[str, Any]) -> Any:
    from joulesim.cli.build_simulation import build_config as build

    return build(options)


def print_summary(result: Any, config: Any, decider: str) -> None:
    from joulesim.cli.summary import print_summary as summary

    summary(result, config, decider)


DEFAULT_PLATFORM = "cluster32"
DEFAULT_WORKLOAD = ("default",)
DEFAULT_DECIDER = "easy"


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, lazy_commands={
    "workload": "joulesim.cli.workload_command:workload",
    "analyze": "joulesim.cli.analyze_command:analyze",
    "plot": "joulesim.cli.plot_command:plot",
    "report": "joulesim.cli.report_command:report",
    "keys": "joulesim.cli.keys_command:keys",
    "campaign": "joulesim.cli.campaign_command:campaign",
    "slurm": "joulesim.cli.slurm_command:slurm",
    "rl": "joulesim.cli.rl_command:rl",
    "learn": "joulesim.cli.learn_command:learn",
    "platform": "joulesim.cli.platform_command:platform",
})
@click.version_option(package_name="joulesim")
def main() -> None:
    """joulesim: a fast, Batsim-4-compatible simulator of HPC job and resource management."""


def _simulate(config: Any, transport: Any, decider: str, after_run: Callable[[], None] = lambda: None,
              checkpoints: Any = None) -> None:
    """Run, check what `after_run` checks (the decider process's exit), print the summary (which
    names `decider`: what decided, and how). Ctrl-C at any moment ends in RunInterrupted, which
    names the outputs kept. `checkpoints`: the run's (joulesim.run_checkpoint), if any."""
    from joulesim.run_simulation import run_configured

    result = run_configured(config, transport, checkpoints=checkpoints)  # raises RunInterrupted itself while it runs
    try:
        after_run()
        if config.verbosity in ("information", "debug"):
            print_summary(result, config, decider)
    except KeyboardInterrupt:
        raise RunInterrupted(result.outputs) from None
    if THE_PROGRAM:
        # The process ends here: the run's objects (its jobs, platform, kernel) need no last walk
        # of the cycle collector at the interpreter's exit, which took 80-100 ms after 20,000 jobs
        # (BENCHMARKS.md, "The whole command"); frozen, they are skipped, and the exit frees all.
        # (A process that goes on after the command, pytest's, keeps its collector whole.)
        gc.freeze()


def _curve_keys(directory: str | None):
    """The CURVE keys of `directory`, or None (no authentication)."""
    if directory is None:
        return None
    from joulesim.protocol.curve_keys import load_keys

    return load_keys(directory)


def _warn_if_exposed(endpoint: str, keys) -> None:
    from joulesim.protocol.endpoint import exposure_warning, parse_endpoint

    warning = exposure_warning(parse_endpoint(endpoint), keys is not None)
    if warning:
        click.echo(warning, err=True)


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """A wall-clock duration: a number of seconds, or one followed by s, m or h (90s, 30m, 1h)."""
    if value is None:
        return None
    text = value.strip().lower()
    scale = {"s": 1.0, "m": 60.0, "h": 3600.0}.get(text[-1:], None)
    number = text[:-1] if scale is not None else text
    try:
        seconds = float(number) * (scale or 1.0)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise click.BadParameter(f"{value!r} is not a duration: give seconds, or a number followed by s, m or h "
                                 "(90s, 30m, 1h)", ctx=ctx, param=param)
    return seconds


def _check_load_method(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None and value.lower() == "dlmopen":
        raise click.BadParameter("joulesim loads EDC libraries with dlopen (as Batsim 5 does by default); for a "
                                 "library kept apart from the simulator, use --edc-isolated (a child process)",
                                 ctx=ctx, param=param)


@main.command()
@simulate_options(platform_default=None, workload_default=None)
@click.option("-s", "--socket-endpoint", "endpoint", default=DEFAULT_ENDPOINT, show_default=True,
              callback=check_endpoint,
              help="ZeroMQ endpoint of the decider (the decider binds, the simulator connects).")
@curve_keys_option()
@click.option("--dump-execution-context", is_flag=True,
              help="Print the execution context (endpoint, export prefix) as JSON, as Batsim does, and exit.")
@click.option("--protocol", type=click.Choice(["batsim4", "batprotocol"]), default=None,
              help="The decider's protocol: Batsim 4's JSON (a decider at -s ENDPOINT; the default), or Batsim 5's "
                   "batprotocol (an EDC: --edc-library or --edc-socket; the default when one is given).")
@click.option("--edc-library", default=None, metavar="PATH",
              help="A Batsim 5 EDC shared library (exporting batsim_edc_init, batsim_edc_take_decisions, "
                   "batsim_edc_deinit), loaded in this process and called as Batsim 5 calls it.")
@click.option("--edc-socket", default=None, metavar="ENDPOINT", callback=check_endpoint,
              help="A Batsim 5 process EDC serving batprotocol on this ZeroMQ endpoint (it binds, we connect).")
@click.option("--edc-init", default=None, metavar="STRING",
              help="The EDC's initialisation data (default: empty), its bytes passed as they are, as Batsim 5 does.")
@click.option("--edc-init-file", default=None, metavar="FILE",
              help="Read the EDC's initialisation data from FILE (a regular file of at most 64 MiB).")
@click.option("--edc-library-str", nargs=2, default=None, metavar="PATH STRING",
              help="Batsim 5's spelling: --edc-library PATH --edc-init STRING.")
@click.option("--edc-library-file", nargs=2, default=None, metavar="PATH FILE",
              help="Batsim 5's spelling: --edc-library PATH --edc-init-file FILE.")
@click.option("--edc-socket-str", nargs=2, default=None, metavar="ENDPOINT STRING",
              help="Batsim 5's spelling: --edc-socket ENDPOINT --edc-init STRING.")
@click.option("--edc-socket-file", nargs=2, default=None, metavar="ENDPOINT FILE",
              help="Batsim 5's spelling: --edc-socket ENDPOINT --edc-init-file FILE.")
@click.option("--edc-isolated", is_flag=True,
              help="Load --edc-library in a child process: a crash in it ends the run with a decider error "
                   "(outputs kept) instead of ending the simulator.")
@click.option("--edc-library-load-method", type=click.Choice(("dlopen", "dlmopen"), case_sensitive=False),
              default=None, expose_value=False, callback=_check_load_method,
              help="Batsim 5's choice of how to load an EDC library: dlopen (its default, and joulesim's); "
                   "dlmopen is refused (--edc-isolated gives a library a process of its own).")
@reports_errors
def simulate(endpoint: str, curve_keys: str | None, dump_execution_context: bool, protocol: str | None,
             edc_library: str | None, edc_socket: str | None, edc_init: str | None, edc_init_file: str | None,
             edc_library_str: tuple[str, str] | None, edc_library_file: tuple[str, str] | None,
             edc_socket_str: tuple[str, str] | None, edc_socket_file: tuple[str, str] | None,
             edc_isolated: bool, **kwargs: Any) -> None:
    """Run the simulator; a decider must serve ENDPOINT (start it with `joulesim decide`), or a
    Batsim 5 EDC decides (--edc-library, --edc-socket)."""
    from joulesim.protocol.transport_zmq import ZmqRequester

    batsim5 = [(flag, value) for flag, value in (("--edc-library-str", edc_library_str), ("--edc-library-file", edc_library_file),
                                                 ("--edc-socket-str", edc_socket_str), ("--edc-socket-file", edc_socket_file))
               if value]
    if batsim5:  # (Batsim 5's spellings: one EDC, its init data given with it)
        if len(batsim5) > 1 or edc_library or edc_socket or edc_init is not None or edc_init_file is not None:
            raise click.UsageError("give one EDC: one of --edc-library-str, --edc-library-file, --edc-socket-str, "
                                   "--edc-socket-file, or --edc-library / --edc-socket with --edc-init[-file]")
        flag, (where, init) = batsim5[0]
        edc_library, edc_socket = (where, None) if "library" in flag else (None, check_endpoint(None, None, where))
        edc_init, edc_init_file = (init, None) if flag.endswith("-str") else (None, init)

    if dump_execution_context:  # before anything is read, as Batsim
        from joulesim.cli.execution_context import execution_context

        click.echo(execution_context(endpoint, kwargs["export_prefix"]))
        return
    edc = edc_library is not None or edc_socket is not None
    if protocol == "batprotocol" and not edc:
        raise click.UsageError("--protocol batprotocol needs an EDC: --edc-library PATH or --edc-socket ENDPOINT")
    if protocol == "batsim4" and edc:
        raise click.UsageError("--edc-library and --edc-socket speak batprotocol: drop --protocol batsim4")
    if not edc and (edc_init is not None or edc_init_file is not None or edc_isolated):
        raise click.UsageError("--edc-init, --edc-init-file and --edc-isolated go with --edc-library or --edc-socket")
    if edc_init is not None and edc_init_file is not None:
        raise click.UsageError("give --edc-init or --edc-init-file, not both")
    if edc and kwargs.get("no_sched"):
        raise click.UsageError("--no-sched runs without any decider (every job starts at t=0 on hosts 0..res-1, as "
                               "Batsim's --no-sched): drop --no-sched, or the EDC")
    try:
        keys = _curve_keys(curve_keys)
        options, _ = split_simulate_kwargs(kwargs)
        if edc:
            _simulate_with_edc(options, edc_library, edc_socket, _edc_init_data(edc_init, edc_init_file), edc_isolated)
            return
        _warn_if_exposed(endpoint, keys)
        config = build_config(options)  # inputs and output prefix checked: nothing written yet
        if config.no_sched:  # Batsim's batexec: no decider to connect to
            _simulate_without_decider(config)
            return
        _simulate(config, ZmqRequester(endpoint, config.timeout_s, curve=keys), f"the decider at {endpoint}")
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted() from None


def _edc_init_data(text: str | None, path: str | None) -> bytes:
    """The EDC's init data. --edc-init's bytes are passed as the command line holds them, UTF-8 or
    not (Batsim 5 passes its argument's bytes to batsim_edc_init); a file is checked first."""
    from joulesim.protocol.batprotocol.edc_connection import init_data_bytes, read_init_file

    if path is not None:
        return read_init_file(path)
    return init_data_bytes(text or "", "--edc-init")


def _simulate_with_edc(options: dict[str, Any], library: str | None, socket: str | None, init: bytes,
                       isolated: bool) -> None:
    """A run decided by a Batsim 5 EDC: its hello first (it sets what Batsim 4's flags set).

    An EDC library in this process: a watchdog ends the run (exit 5, outputs kept) when one of
    its calls lasts --timeout; Python's fault handler names the call a crash happened in (the
    crash still ends the process, as in Batsim 5); batsim_edc_deinit comes last, after the
    summary or the error line, when every output is complete."""
    from joulesim.protocol.batprotocol.edc_connection import EdcFeatures, errors_naming, open_edc
    from joulesim.run_simulation import configured_edc_run

    given = [name for name in EdcFeatures.flag_names() if options[name]]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise click.UsageError(f"with an EDC, its hello sets what {flags} set for a Batsim 4 decider: drop {flags}")
    in_process = library is not None and not isolated
    if in_process:
        _enable_fault_handler()
    from joulesim.decider_process import start_reporting_process  # (its subprocess, tempfile: runs that start one)

    edc = open_edc(library, socket, isolated, init, options["timeout_s"],
                   on_hang=(lambda text: report_and_exit_now(DeciderUnavailableError(text))) if in_process else None,
                   start_process=start_reporting_process)
    edc.keep_open = True  # (not closed at the run's end: last, below)

    def close_edc() -> None:
        with errors_naming(edc):
            edc.close_now()

    after_the_report(close_edc)
    config = configured_edc_run(edc, lambda flags: build_config({**options, **flags}))
    with errors_naming(edc):
        _simulate(config, edc, f"the EDC {library or socket}" + (" (in its own process)" if isolated else ""))


@main.command()
@simulate_options(platform_default=DEFAULT_PLATFORM, workload_default=DEFAULT_WORKLOAD, numbered_runs=True)
@click.option("-d", "--decider", default=DEFAULT_DECIDER, show_default=True,
              help="Decider name (see `joulesim decide --list`) or package.module:Class.")
@click.option("-o", "--option", "decider_options", multiple=True, metavar="KEY=VALUE",
              help="Option passed to the decider. Repeatable.")
@click.option("--in-process", is_flag=True,
              help="Run the decider inside the simulator process (same messages, no sockets: faster).")
@curve_keys_option()
@click.option("--checkpoint-at", "checkpoint_at", multiple=True, type=DecimalRange(0.0), metavar="SECONDS",
              help="Write a checkpoint once every event up to this simulated time is handled (repeatable; "
                   "`joulesim resume PREFIX_checkpoint.jsck` carries on from the last one written).")
@click.option("--checkpoint-every", "checkpoint_every", default=None, metavar="DURATION", callback=_duration,
              help="Write a checkpoint every DURATION of wall-clock time (e.g. 90s, 30m, 1h; a number: seconds).")
@reports_errors
def run(decider: str, decider_options: tuple[str, ...], in_process: bool, curve_keys: str | None,
        checkpoint_at: tuple[float, ...], checkpoint_every: float | None, **kwargs: Any) -> None:
    """Simulate with a decider started automatically (in its own process by default).

    With no arguments: the shipped default workload on the shipped cluster32 platform,
    scheduled by EASY backfilling.
    """
    try:
        options, _ = split_simulate_kwargs(kwargs)
        if options["export_prefix"] is None:
            options["export_prefix"] = next_run_prefix()
        recipe = None
        if checkpoint_at or checkpoint_every is not None:
            import os

            recipe = {"decider": decider, "decider_options": parse_key_values(decider_options),
                      "in_process": in_process, "curve_keys": curve_keys, "options": options, "cwd": os.getcwd(),
                      "checkpoint_at": sorted(checkpoint_at), "checkpoint_every": checkpoint_every}
        _run(decider, parse_key_values(decider_options), in_process, curve_keys, options, _checkpoints_of(recipe))
    except RunInterrupted:
        raise
    except KeyboardInterrupt:  # before the run started writing (starting the decider, reading inputs)
        raise RunInterrupted() from None


@main.command()
@click.argument("checkpoint", metavar="CHECKPOINT")
@reports_errors
def resume(checkpoint: str) -> None:
    """Carry on a run from its checkpoint (`joulesim run --checkpoint-at` / `--checkpoint-every`
    wrote it, PREFIX_checkpoint.jsck), killed or not since.

    The run's inputs and options are the ones it was started with, read again from the folder it
    ran in, and must not have changed; its outputs are cut back to where they were at the
    checkpoint and continued, and end byte for byte as an uninterrupted run's. The decider is
    started again and given the run's messages so far; one that answers otherwise than it did
    cannot be resumed, and the command says so. Further checkpoints are written as the run asked.
    """
    import os

    from joulesim.run_checkpoint import read_run_checkpoint

    try:
        saved = read_run_checkpoint(os.path.abspath(checkpoint))
        recipe = saved.recipe
        try:
            os.chdir(recipe["cwd"])  # (its paths are as the run was given them, from there)
        except OSError as exc:
            raise JoulesimError(f"{checkpoint}: the run's folder {recipe['cwd']} cannot be entered ({exc.strerror}): "
                                "resume needs the run's inputs and outputs where they were") from None
        _run(recipe["decider"], recipe["decider_options"], recipe["in_process"], recipe["curve_keys"],
             recipe["options"], _checkpoints_of(recipe, saved))
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted() from None


def _checkpoints_of(recipe: dict[str, Any] | None, saved: Any = None) -> Callable[[Any], Any]:
    """What makes a run's checkpoints, given its config: none without a recipe; the resumed run's
    when `saved` (a checkpoint read back)."""
    def make(config: Any) -> Any:
        if recipe is None:
            return None
        from joulesim.run_checkpoint import CheckpointPlan, ResumedRun, RunCheckpoints
        from joulesim.simulator.output.output_files import output_path

        plan = CheckpointPlan(output_path(recipe["options"]["export_prefix"], "checkpoint"),
                              list(recipe["checkpoint_at"]), recipe["checkpoint_every"], recipe)
        return RunCheckpoints(plan, config) if saved is None else ResumedRun(saved, plan, config)

    return make


def _run(decider: str, decider_kv: dict[str, str], in_process: bool, curve_keys: str | None,
         options: dict[str, Any], checkpoints_for: Callable[[Any], Any] = lambda config: None) -> None:
    """`joulesim run` (and `joulesim resume`). Everything that can be refused up front is checked
    before any output file is opened (and an older run's are removed): the decider's name and
    options, the inputs, the output prefix, whether the run can be checkpointed."""
    if options["no_sched"]:  # no decider is started: every job runs at t=0 on hosts 0..res-1
        config = build_config(options)
        checkpoints_for(config)  # (refuses checkpoints: such a run has nothing to resume)
        _simulate_without_decider(config)
        return
    if in_process:
        from joulesim.deciders import load_decider
        from joulesim.protocol.transport_inprocess import InProcessRequester

        instance = load_decider(decider, decider_kv)
        config = build_config(options)
        checkpoints = checkpoints_for(config)
        try:
            _simulate(config, InProcessRequester(instance), _decider_text(decider, decider_kv, "in this process"),
                      checkpoints=checkpoints)
        except (JoulesimError, KeyboardInterrupt):
            raise
        except Exception:  # a bug in the decider's own code (the simulator's are JoulesimErrors)
            _report_decider_bug(decider, instance)
        return

    from joulesim.decider_process import DeciderProcess, free_ipc_endpoint, joulesim_decide_command
    from joulesim.protocol.transport_zmq import ZmqRequester

    keys = _curve_keys(curve_keys)  # checked before the decider starts (ipc:// needs no warning)
    endpoint, directory = free_ipc_endpoint()
    process = DeciderProcess(joulesim_decide_command(decider, endpoint, decider_kv, options["timeout_s"], curve_keys),
                             f"joulesim decide {decider}", reports_start=True)
    try:
        config = build_config(options)  # while the decider starts
        checkpoints = checkpoints_for(config)
        process.wait_started(config.timeout_s)  # its refusal of its name or options is ours

        def decider_exit() -> None:
            status = process.wait()
            if status not in (0, None):
                # (it ended with an error once the run was over: a decider crashing, exit status 5)
                raise DeciderUnavailableError(f"the decider process ({process.description}) exited with status {status}")

        _simulate(config, ZmqRequester(endpoint, config.timeout_s, process.why_gone, keys),
                  _decider_text(decider, decider_kv, "in its own process"), decider_exit, checkpoints)
    finally:
        process.stop()
        shutil.rmtree(directory, ignore_errors=True)


def _enable_fault_handler() -> None:
    """Python's fault handler, so that a library crashing this process says where (docs/reference/reliability.md): on
    sys.stderr, or on the process's own stderr when sys.stderr has no file descriptor (click's
    CliRunner, an application embedding joulesim: faulthandler.enable then raises
    io.UnsupportedOperation); without either, the run goes on without it."""
    import faulthandler

    for stream in (sys.stderr, sys.__stderr__):
        try:
            faulthandler.enable(file=stream, all_threads=False)
            return
        except (AttributeError, OSError, RuntimeError, ValueError):  # (no fileno(), or None)
            continue


def _simulate_without_decider(config: Any) -> None:
    from joulesim.protocol.decider import Decider
    from joulesim.protocol.transport_inprocess import InProcessRequester

    _simulate(config, InProcessRequester(Decider()), "none (--no-sched: every job starts at its submission)")


def _decider_text(decider: str, options: dict[str, str], where: str) -> str:
    given = ", ".join(f"{key}={value}" for key, value in options.items())
    return f"{decider} {where}" + (f", options {given}" if given else "")


def _report_decider_bug(name: str, decider: Any) -> None:
    """A decider's own exception: where it happened, with a readable header, then exit 6."""
    click.echo(f"joulesim: error: decider {name} raised an exception at simulated time "
               f"t={decider.now:g}; the simulator will stop too. Its traceback:", err=True)
    traceback.print_exc()
    sys.exit(6)


@main.command()
@click.argument("name", required=False)
@click.option("-s", "--socket-endpoint", "endpoint", default=DEFAULT_ENDPOINT, show_default=True,
              callback=check_endpoint,
              help="ZeroMQ endpoint to bind (the simulator connects to it).")
@click.option("-o", "--option", "decider_options", multiple=True, metavar="KEY=VALUE",
              help="Option passed to the decider. Repeatable.")
@click.option("--timeout", "timeout_s", default=600.0, show_default=True, type=DecimalRange(), callback=check_timeout,
              help="Give up when the simulator sends nothing for this many seconds.")
@click.option("--list", "list_deciders", is_flag=True, help="List the shipped deciders and exit.")
@curve_keys_option()
@click.option("--parent-pid", type=int, default=None, hidden=True,
              help="Set by `joulesim run`: exit when that process is gone.")
@click.option("--ready-fd", type=int, default=None, hidden=True,
              help="Set by `joulesim run`: a pipe to report on once built (protocol/start_handshake.py).")
@reports_errors
def decide(name: str | None, endpoint: str, decider_options: tuple[str, ...], timeout_s: float,
           list_deciders: bool, curve_keys: str | None, parent_pid: int | None, ready_fd: int | None) -> None:
    """Serve decisions of decider NAME on ENDPOINT until the simulation ends."""
    from joulesim.deciders import describe_deciders, load_decider
    from joulesim.protocol.decider_server import serve

    if list_deciders or not name:
        for decider_name, text in describe_deciders().items():
            click.echo(f"{decider_name:14} {text}")
        return
    if parent_pid is not None:
        from joulesim.protocol.parent_death import die_with_parent

        die_with_parent(parent_pid)
    with reports_start(ready_fd):  # to `joulesim run`, which opens no output before we are built
        keys = _curve_keys(curve_keys)
        _warn_if_exposed(endpoint, keys)
        decider = load_decider(name, parse_key_values(decider_options))
    with reports_failure(ready_fd):  # a later error too: `joulesim run` reports it, once
        try:
            serve(decider, endpoint, timeout_s, curve=keys, parent_pid=parent_pid)
        except (JoulesimError, KeyboardInterrupt):
            raise
        except Exception:  # a bug in the decider's own code: show where, with a readable header
            _report_decider_bug(name, decider)


if __name__ == "__main__":
    main()
