"""`joulesim`: simulate an RJMS with a decider in its own process (Batsim 4 protocol)."""

from __future__ import annotations

import shutil
import sys
import traceback
from typing import Any, Callable

import click

from joulesim.cli.build_simulation import build_config
from joulesim.cli.decider_process import DeciderProcess, free_ipc_endpoint, joulesim_decide_command
from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.lazy_group import LazyGroup
from joulesim.cli.simulate_options import (
    check_endpoint, check_timeout, curve_keys_option, parse_key_values, simulate_options, split_simulate_kwargs,
)
from joulesim.cli.summary import print_summary
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.transport_zmq import DEFAULT_ENDPOINT

DEFAULT_PLATFORM = "cluster32"
DEFAULT_WORKLOAD = ("default",)
DEFAULT_DECIDER = "easy"


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, lazy_commands={
    "workload": "joulesim.cli.workload_command:workload",
    "analyze": "joulesim.cli.analyze_command:analyze",
    "plot": "joulesim.cli.plot_command:plot",
    "keys": "joulesim.cli.keys_command:keys",
    "campaign": "joulesim.cli.campaign_command:campaign",
    "slurm": "joulesim.cli.slurm_command:slurm",
    "rl": "joulesim.cli.rl_command:rl",
    "learn": "joulesim.cli.learn_command:learn",
})
@click.version_option(package_name="joulesim")
def main() -> None:
    """joulesim: a fast, Batsim-4-compatible simulator of HPC job and resource management."""


def _simulate(options: dict[str, Any], transport_factory: Callable[[Any], Any]) -> None:
    from joulesim.run_simulation import run_configured

    config = build_config(options)
    print_summary(run_configured(config, transport_factory(config)))


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


@main.command()
@simulate_options(platform_default=None, workload_default=None)
@click.option("-s", "--socket-endpoint", "endpoint", default=DEFAULT_ENDPOINT, show_default=True,
              callback=check_endpoint,
              help="ZeroMQ endpoint of the decider (the decider binds, the simulator connects).")
@curve_keys_option()
@reports_errors
def simulate(endpoint: str, curve_keys: str | None, **kwargs: Any) -> None:
    """Run the simulator; a decider must serve ENDPOINT (start it with `joulesim decide`)."""
    from joulesim.protocol.transport_zmq import ZmqRequester

    keys = _curve_keys(curve_keys)
    _warn_if_exposed(endpoint, keys)
    options, _ = split_simulate_kwargs(kwargs)
    _simulate(options, lambda config: ZmqRequester(endpoint, config.timeout_s, curve=keys))


@main.command()
@simulate_options(platform_default=DEFAULT_PLATFORM, workload_default=DEFAULT_WORKLOAD)
@click.option("-d", "--decider", default=DEFAULT_DECIDER, show_default=True,
              help="Decider name (see `joulesim decide --list`) or package.module:Class.")
@click.option("-o", "--option", "decider_options", multiple=True, metavar="KEY=VALUE",
              help="Option passed to the decider. Repeatable.")
@click.option("--in-process", is_flag=True,
              help="Run the decider inside the simulator process (same messages, no sockets: faster).")
@curve_keys_option()
@reports_errors
def run(decider: str, decider_options: tuple[str, ...], in_process: bool, curve_keys: str | None,
        **kwargs: Any) -> None:
    """Simulate with a decider started automatically (in its own process by default).

    With no arguments: the shipped default workload on the shipped cluster32 platform,
    scheduled by EASY backfilling.
    """
    options, _ = split_simulate_kwargs(kwargs)
    decider_kv = parse_key_values(decider_options)
    if in_process:
        from joulesim.deciders import load_decider
        from joulesim.protocol.transport_inprocess import InProcessRequester

        instance = load_decider(decider, decider_kv)
        try:
            _simulate(options, lambda config: InProcessRequester(instance))
        except (JoulesimError, KeyboardInterrupt):
            raise
        except Exception:  # a bug in the decider's own code (the simulator's are JoulesimErrors)
            _report_decider_bug(decider, instance)
        return

    from joulesim.protocol.transport_zmq import ZmqRequester

    keys = _curve_keys(curve_keys)  # checked before the decider starts (ipc:// needs no warning)
    endpoint, directory = free_ipc_endpoint()
    process = DeciderProcess(joulesim_decide_command(decider, endpoint, decider_kv, options["timeout_s"], curve_keys),
                             f"joulesim decide {decider}")
    try:
        _simulate(options, lambda config: ZmqRequester(endpoint, config.timeout_s, process.why_gone, keys))
        status = process.wait()
        if status not in (0, None):
            raise JoulesimError(f"the decider process ({process.description}) exited with status {status}")
    finally:
        process.stop()
        shutil.rmtree(directory, ignore_errors=True)


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
@click.option("--timeout", "timeout_s", default=600.0, show_default=True, type=float, callback=check_timeout,
              help="Give up when the simulator sends nothing for this many seconds.")
@click.option("--list", "list_deciders", is_flag=True, help="List the shipped deciders and exit.")
@curve_keys_option()
@click.option("--parent-pid", type=int, default=None, hidden=True,
              help="Set by `joulesim run`: exit when that process is gone.")
@reports_errors
def decide(name: str | None, endpoint: str, decider_options: tuple[str, ...], timeout_s: float,
           list_deciders: bool, curve_keys: str | None, parent_pid: int | None) -> None:
    """Serve decisions of decider NAME on ENDPOINT until the simulation ends."""
    from joulesim.deciders import describe_deciders, load_decider
    from joulesim.protocol.decider_server import serve

    if list_deciders or not name:
        for decider_name, text in describe_deciders().items():
            click.echo(f"{decider_name:14} {text}")
        return
    if parent_pid is not None:
        from joulesim.cli.parent_death import die_with_parent

        die_with_parent(parent_pid)
    keys = _curve_keys(curve_keys)
    _warn_if_exposed(endpoint, keys)
    decider = load_decider(name, parse_key_values(decider_options))
    try:
        serve(decider, endpoint, timeout_s, curve=keys, parent_pid=parent_pid)
    except (JoulesimError, KeyboardInterrupt):
        raise
    except Exception:  # a bug in the decider's own code: show where, with a readable header
        _report_decider_bug(name, decider)


if __name__ == "__main__":
    main()
