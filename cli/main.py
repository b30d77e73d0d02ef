"""`joulesim`: simulate an RJMS with a decider in its own process (Batsim 4 protocol)."""

from __future__ import annotations

import shutil
import sys
import traceback
from typing import Any, Callable

import click

from joulesim.cli.build_simulation import build_config
from joulesim.cli.decider_process import DeciderProcess, free_ipc_endpoint
from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.lazy_group import LazyGroup
from joulesim.cli.simulate_options import parse_key_values, simulate_options, split_simulate_kwargs
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
})
@click.version_option(package_name="joulesim")
def main() -> None:
    """joulesim: a fast, Batsim-4-compatible simulator of HPC job and resource management."""


def _simulate(options: dict[str, Any], transport_factory: Callable[[Any], Any]) -> None:
    from joulesim.simulator.decider_link import DeciderLink
    from joulesim.simulator.simulation import Simulation

    config = build_config(options)
    link = DeciderLink(transport_factory(config))
    try:
        simulation = Simulation(config, link)
        try:
            result = simulation.run()
        except JoulesimError as exc:
            kept = ", ".join(p for k, p in simulation.paths.items() if k != "schedule")
            raise type(exc)(f"{exc}\n(outputs written so far are kept: {kept})") from None
    finally:
        link.close()
    print_summary(result)


@main.command()
@simulate_options(platform_default=None, workload_default=None)
@click.option("-s", "--socket-endpoint", "endpoint", default=DEFAULT_ENDPOINT, show_default=True,
              help="ZeroMQ endpoint of the decider (the decider binds, the simulator connects).")
@reports_errors
def simulate(endpoint: str, **kwargs: Any) -> None:
    """Run the simulator; a decider must serve ENDPOINT (start it with `joulesim decide`)."""
    from joulesim.protocol.transport_zmq import ZmqRequester

    options, _ = split_simulate_kwargs(kwargs)
    _simulate(options, lambda config: ZmqRequester(endpoint, config.timeout_s))


@main.command()
@simulate_options(platform_default=DEFAULT_PLATFORM, workload_default=DEFAULT_WORKLOAD)
@click.option("-d", "--decider", default=DEFAULT_DECIDER, show_default=True,
              help="Decider name (see `joulesim decide --list`) or package.module:Class.")
@click.option("-o", "--option", "decider_options", multiple=True, metavar="KEY=VALUE",
              help="Option passed to the decider. Repeatable.")
@click.option("--in-process", is_flag=True,
              help="Run the decider inside the simulator process (same messages, no sockets: faster).")
@reports_errors
def run(decider: str, decider_options: tuple[str, ...], in_process: bool, **kwargs: Any) -> None:
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
        _simulate(options, lambda config: InProcessRequester(instance))
        return

    from joulesim.protocol.transport_zmq import ZmqRequester

    endpoint, directory = free_ipc_endpoint()
    process = DeciderProcess(decider, endpoint, decider_kv, options["timeout_s"])
    try:
        _simulate(options, lambda config: ZmqRequester(endpoint, config.timeout_s, process.why_gone))
        status = process.wait()
        if status not in (0, None):
            raise JoulesimError(f"the decider process ({process.description}) exited with status {status}")
    finally:
        process.stop()
        shutil.rmtree(directory, ignore_errors=True)


@main.command()
@click.argument("name", required=False)
@click.option("-s", "--socket-endpoint", "endpoint", default=DEFAULT_ENDPOINT, show_default=True,
              help="ZeroMQ endpoint to bind (the simulator connects to it).")
@click.option("-o", "--option", "decider_options", multiple=True, metavar="KEY=VALUE",
              help="Option passed to the decider. Repeatable.")
@click.option("--timeout", "timeout_s", default=600.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Give up when the simulator sends nothing for this many seconds.")
@click.option("--list", "list_deciders", is_flag=True, help="List the shipped deciders and exit.")
@reports_errors
def decide(name: str | None, endpoint: str, decider_options: tuple[str, ...], timeout_s: float,
           list_deciders: bool) -> None:
    """Serve decisions of decider NAME on ENDPOINT until the simulation ends."""
    from joulesim.deciders import describe_deciders, load_decider
    from joulesim.protocol.decider_server import serve

    if list_deciders or not name:
        for decider_name, text in describe_deciders().items():
            click.echo(f"{decider_name:14} {text}")
        return
    decider = load_decider(name, parse_key_values(decider_options))
    try:
        serve(decider, endpoint, timeout_s)
    except (JoulesimError, KeyboardInterrupt):
        raise
    except Exception:  # a bug in the decider's own code: show where, with a readable header
        click.echo(f"joulesim: error: decider {name} raised an exception at simulated time "
                   f"t={decider.now:g}; the simulator will stop too. Its traceback:", err=True)
        traceback.print_exc()
        sys.exit(6)


if __name__ == "__main__":
    main()
