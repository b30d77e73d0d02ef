"""`joulesim analyze`: the metrics of one or several runs, side by side."""

from __future__ import annotations

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.number_options import DecimalRange


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("prefixes", nargs=-1, required=True, metavar="OUT_PREFIX [OUT_PREFIX ...]")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects, one per run.")
@click.option("--tau", default=10.0, show_default=True, type=DecimalRange(0, min_open=True),
              help="Bound of the bounded slowdown, in seconds.")
@reports_errors
def analyze(prefixes: tuple[str, ...], as_json: bool, tau: float) -> None:
    """Metrics of the runs exported with prefix OUT_PREFIX (e.g. `out` for out_jobs.csv).

    Several prefixes print one column per run. Waiting times, bounded slowdown
    max(turnaround / max(execution, tau), 1) and utilization (allocated machine-seconds /
    (machines x makespan)) are over the jobs that started.
    """
    from joulesim.analysis.metrics import format_json, format_table, metrics_of

    rows = metrics_of(list(prefixes), tau)
    click.echo(format_json(rows) if as_json else format_table(rows))
