"""`joulesim report`: an interactive HTML page of one or several runs (Bokeh, the report extra)."""

from __future__ import annotations

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.number_options import DecimalRange


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("prefixes", nargs=-1, required=True, metavar="OUT_PREFIX [OUT_PREFIX ...]")
@click.option("-o", "--output", default="report.html", show_default=True, help="The HTML file to write.")
@click.option("--title", default=None, help="The page's title (default: joulesim report).")
@click.option("--tau", default=10.0, show_default=True, type=DecimalRange(0, min_open=True),
              help="Bound of the bounded slowdown, in seconds.")
@click.option("-p", "--platform", default=None,
              help="The runs' platform file (or shipped name): the Gantt groups cores by node and processor "
                   "(IRMaSim node platforms) or machines by cluster.")
@click.option("--platform-name", default=None, help="Which platform of an IRMaSim platform file that holds several.")
@click.option("--label", "labels", multiple=True, metavar="TEXT",
              help="A run's name on the page (e.g. its decider and options: 'easy t_idle=600'), once per "
                   "OUT_PREFIX in their order (default: the prefix; the outputs do not record the decider).")
@click.option("--start-time", default=None, metavar="DATE|UNIX|WORKLOAD.json",
              help="When simulated time 0 was, for a date axis: an ISO 8601 date (UTC unless it has a zone), "
                   "a Unix time, or a workload that `joulesim workload from-swf` wrote from a trace whose "
                   "header has UnixStartTime (default: the axis counts days and hours from the start).")
@reports_errors
def report(prefixes: tuple[str, ...], output: str, title: str | None, tau: float, platform: str | None,
           platform_name: str | None, labels: tuple[str, ...], start_time: str | None) -> None:
    """One self-contained HTML page of the runs exported with prefix OUT_PREFIX: Gantt chart,
    machine states, power and energy, queue length and utilisation on one zoomable time axis
    (shared by all the runs), distributions, metrics, and with several runs each job's start
    against the first run's. Opens from disk in a browser, without a server or a network.
    Needs Bokeh: pip install 'joulesim[report]'.
    """
    from joulesim.analysis.html_report import bokeh_version
    from joulesim.analysis.run_outputs import AnalysisError, as_report_input_error

    bokeh_version()  # a missing extra is reported before any reading (exit status 1, not a bad file)
    try:
        _report(prefixes, output, title, tau, platform, platform_name, labels, start_time)
    except AnalysisError as exc:  # a missing, damaged or unreadable output file: bad input, 2
        raise as_report_input_error(exc) from None


def _report(prefixes: tuple[str, ...], output: str, title: str | None, tau: float, platform: str | None,
            platform_name: str | None, labels: tuple[str, ...], start_time: str | None) -> None:
    from joulesim.analysis.html_report import write_report
    from joulesim.analysis.machine_groups import check_platform_fits, machine_groups
    from joulesim.analysis.run_outputs import RunOutputs
    from joulesim.analysis.time_axis import parse_start_time
    from joulesim.simulator.platform.platform_loader import load_platform

    if platform_name is not None and platform is None:
        raise click.UsageError("--platform-name chooses a platform of the file --platform gives: give --platform")
    if labels and len(labels) != len(prefixes):
        raise click.UsageError(f"--label was given {len(labels)} times for {len(prefixes)} OUT_PREFIX: give one "
                               "per run, in the same order")
    origin = None if start_time is None else parse_start_time(start_time)
    runs = [RunOutputs(p, label=labels[i] if labels else None) for i, p in enumerate(prefixes)]
    groups = None
    if platform is not None:
        loaded = load_platform(platform, platform_name=platform_name)
        for run in runs:
            check_platform_fits(loaded.source, len(loaded.compute_hosts), run.name, run.nb_machines)
        groups = machine_groups(loaded)
        if groups is None:
            click.echo(f"note: {platform} has one cluster of plain machines: the Gantt is not grouped", err=True)
    click.echo(f"wrote {write_report(runs, output, tau, title, groups=groups, start_time=origin)}")
