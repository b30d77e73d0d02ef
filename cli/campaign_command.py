"""`joulesim campaign`: run a whole study from one TOML file, and draw its results."""

from __future__ import annotations

import sys

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.number_options import DecimalRange, IntegerRange

#: Processes of one machine's pool; beyond, a Dask cluster (--dask).
MAX_LOCAL_WORKERS = 1024


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def campaign() -> None:
    """Studies of many simulations: platforms x workloads x deciders x option grids."""


def _where(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, list[str]]:
    where: dict[str, list[str]] = {}
    for text in values:
        key, sep, accepted = text.partition("=")
        if not sep or not key or not accepted:
            raise click.BadParameter(f"{text!r} is not PARAMETER=VALUE[,VALUE...] (e.g. week=3,5 or "
                                     "decider=easy)", ctx=ctx, param=param)
        where.setdefault(key, []).extend(accepted.split(","))
    return where


def _where_option():
    return click.option("--where", "where", multiple=True, callback=_where, metavar="PARAMETER=VALUES",
                        help="Only the instances whose PARAMETER is one of VALUES (comma-separated), e.g. "
                             "--where workload=blue --where week=3,5. Repeatable.")


def _positive_float(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if not 0 < value <= 3600:
        raise click.BadParameter(f"{value!r} is not a number of seconds in (0, 3600]", ctx=ctx, param=param)
    return value


@campaign.command()
@click.argument("study", type=click.Path(dir_okay=False))
@click.option("--out", "directory", default=None, metavar="DIR",
              help="Results folder (default: NAME_results in the current directory, NAME from [campaign]).")
@click.option("--workers", type=IntegerRange(1, MAX_LOCAL_WORKERS), default=None,
              help="Worker processes of the local pool (default: the cores available; at most "
                   f"{MAX_LOCAL_WORKERS:,}: a Dask cluster for more).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Run on a running dask.distributed scheduler (tcp://HOST:PORT, as it prints when it starts) "
                   "instead of the local pool.")
@click.option("--connect-timeout", default=10.0, show_default=True, type=DecimalRange(), callback=_positive_float,
              help="Seconds to wait for the Dask scheduler to answer (nothing answering, or not a scheduler: an "
                   "error then).")
@click.option("--retry-failed/--keep-failed", default=True, show_default=True,
              help="Rerun the instances that failed or timed out in an earlier run.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress on stderr: a bar on a terminal, a line every 5 s in a log (not a terminal).")
@_where_option()
@reports_errors
def run(study: str, directory: str | None, workers: int | None, dask_address: str | None,
        connect_timeout: float, retry_failed: bool, progress: bool, where: dict[str, list[str]]) -> None:
    """Run every instance of STUDY that has no result yet; write the results table.

    Exit status: 0 when every instance succeeded, 100 + the number of failed instances
    (at most 199) otherwise, 2 for a bad campaign file (nothing runs then).
    """
    from joulesim.campaign.runner import run_campaign

    summary = run_campaign(study, directory, workers, dask_address, connect_timeout, retry_failed, progress, where)
    per_instance = f" ({summary.wall_time / summary.nb_run:.3f} s per instance)" if summary.nb_run else ""
    lines = [
        f"campaign {summary.study.name}: {summary.nb_instances} instances, {summary.nb_run} run now, "
        f"{summary.nb_already_done} already done, {len(summary.failed)} failed",
        f"wall time {summary.wall_time:.1f} s{per_instance}",
        "results: " + ", ".join(summary.tables),
    ]
    if summary.failed:
        lines.append("failed (see their records in " + f"{summary.directory}/instances/): "
                     + ", ".join(summary.failed[:10]) + (", ..." if len(summary.failed) > 10 else ""))
    click.echo("\n".join(lines))
    sys.exit(summary.exit_status)


@campaign.command("list")
@click.argument("study", type=click.Path(dir_okay=False))
@_where_option()
@reports_errors
def list_instances(study: str, where: dict[str, list[str]]) -> None:
    """Check STUDY and print its instances (id and parameters) without running anything."""
    from joulesim.campaign.runner import instances_of

    _, instances, _ = instances_of(study, where)
    for instance in instances:
        parameters = instance.parameters()
        text = " ".join(f"{k}={v}" for k, v in parameters.items() if v is not None)
        click.echo(f"{instance.id} {text}")
    click.echo(f"{len(instances)} instances", err=True)


@campaign.command()
@click.argument("results", type=click.Path())
@click.option("-o", "--output", "out_dir", default="campaign_plots", show_default=True, metavar="DIR",
              help="Folder of the PNG files.")
@click.option("-x", "--x", "x_columns", multiple=True, metavar="PARAMETER",
              help="Parameter on the x axis (repeatable; default: every parameter that varies).")
@click.option("-y", "--y", "y_columns", multiple=True, metavar="METRIC",
              help="Metric on the y axis (repeatable; default: the main metrics).")
@click.option("--tradeoff", "tradeoffs", multiple=True, metavar="METRIC_X,METRIC_Y",
              help="A trade-off plot of two metrics (repeatable; default: energy or makespan vs mean "
                   "waiting time).")
@click.option("--html", "pages", is_flag=True,
              help="Also write an interactive page per instance (as `joulesim report` does; the study must "
                   "keep outputs: 'outputs = true') and DIR/index.html linking them (needs the report extra).")
@click.option("--compare", is_flag=True,
              help="With --html: also a page per group of instances that ran the same jobs (platform, workload, "
                   "week, seed...), comparing their schedules, linked from the index (up to 8 a page).")
@reports_errors
def report(results: str, out_dir: str, x_columns: tuple[str, ...], y_columns: tuple[str, ...],
           tradeoffs: tuple[str, ...], pages: bool, compare: bool) -> None:
    """Draw metric-vs-parameter and trade-off plots of a campaign's RESULTS (folder or table)."""
    from joulesim.campaign.report import draw_report, plan_report
    from joulesim.inputs.output_file import make_output_folder

    make_output_folder(out_dir, "output folder (-o)")  # -o a file, /proc...: refused before any reading
    # The table and its columns checked before any page or plot is written (a damaged header:
    # one line naming the file, exit status 2).
    plan = plan_report(results, list(x_columns), list(y_columns), list(tradeoffs))
    if compare and not pages:
        raise click.UsageError("--compare draws interactive pages: give it with --html")
    if pages:  # (checked first: a campaign without kept outputs fails before any drawing)
        from joulesim.analysis.html_report import bokeh_version
        from joulesim.analysis.run_outputs import AnalysisError, as_report_input_error
        from joulesim.campaign.instance_pages import write_instance_pages

        bokeh_version()  # a missing extra: exit status 1, not a bad file
        try:
            written = write_instance_pages(results, out_dir, compare=compare)
        except AnalysisError as exc:  # an instance's output file missing or damaged: bad input, 2
            raise as_report_input_error(exc) from None
    else:
        written = []
    for path in draw_report(results, out_dir, list(x_columns), list(y_columns), list(tradeoffs), plan) + written:
        click.echo(path)
