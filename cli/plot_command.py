"""`joulesim plot`: PNG plots of a run's outputs, or a trade-off scatter of several runs."""

from __future__ import annotations

import os

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.number_options import DecimalRange

METRIC_CHOICES = [
    "nb_jobs", "nb_jobs_finished", "nb_jobs_success", "nb_jobs_killed", "nb_jobs_rejected", "makespan",
    "mean_waiting_time", "max_waiting_time", "mean_bounded_slowdown", "max_bounded_slowdown",
    "utilization", "consumed_joules", "nb_machine_switches",
]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("prefixes", nargs=-1, required=True, metavar="OUT_PREFIX [OUT_PREFIX ...]")
@click.option("-o", "--output", default=None,
              help="Directory of the PNGs (default: beside the outputs, named PREFIX_gantt.png, ...); "
                   "with --compare, the PNG file (default: compare.png).")
@click.option("--compare", is_flag=True,
              help="One scatter plot of the runs OUT_PREFIX... (a point per run) instead of per-run plots.")
@click.option("--x", "x_metric", default="mean_waiting_time", show_default=True,
              type=click.Choice(METRIC_CHOICES), help="Metric on the x axis of --compare.")
@click.option("--y", "y_metric", default="makespan", show_default=True,
              type=click.Choice(METRIC_CHOICES), help="Metric on the y axis of --compare.")
@click.option("-p", "--platform", default=None,
              help="The run's platform: with an IRMaSim node platform, the Gantt chart separates and "
                   "names the nodes (a row per core).")
@click.option("--platform-name", default=None, help="Which platform of an IRMaSim file that holds several.")
@click.option("--tau", default=10.0, show_default=True, type=DecimalRange(0, min_open=True),
              help="Bound of the bounded slowdown, in seconds (for --compare).")
@reports_errors
def plot(prefixes: tuple[str, ...], output: str | None, compare: bool, x_metric: str, y_metric: str,
         platform: str | None, platform_name: str | None, tau: float) -> None:
    """Plot the outputs of the run(s) exported with prefix OUT_PREFIX.

    Per run: a Gantt chart of jobs on hosts, machine states over time and, when the run had
    energy on, power over time. With --compare: a trade-off scatter of the runs, x and y
    chosen among the metrics of `joulesim analyze`.
    """
    if compare:
        _compare(list(prefixes), output or "compare.png", x_metric, y_metric, tau)
    else:
        groups = _node_groups(platform, platform_name) if platform else None
        for prefix in prefixes:
            _plot_run(prefix, output, groups)


def _compare(prefixes: list[str], path: str, x: str, y: str, tau: float) -> None:
    from joulesim.analysis.compare_plot import plot_compare
    from joulesim.analysis.metrics import metrics_of
    from joulesim.analysis.plotting import pyplot

    pyplot()  # a missing matplotlib is reported before any work
    if not path.lower().endswith(".png"):
        path += ".png"
    click.echo(f"wrote {plot_compare(metrics_of(prefixes, tau), x, y, path, tau)}")


def _node_groups(platform: str, platform_name: str | None) -> list[tuple[str, int, int]] | None:
    """(node name, first core, last core) per node of a node-model platform; None otherwise."""
    from joulesim.simulator.platform.platform_loader import load_platform

    hierarchy = load_platform(platform, platform_name=platform_name).nodes
    if hierarchy is None:
        return None
    groups = []
    for node in hierarchy.nodes:
        cores = [core for p in node.processors for core in hierarchy.processors[p].cores]
        groups.append((node.name, min(cores), max(cores)))
    return groups


def _plot_run(prefix: str, directory: str | None, groups: list[tuple[str, int, int]] | None = None) -> None:
    from joulesim.analysis.gantt import plot_gantt
    from joulesim.analysis.machine_state_plot import plot_machine_states
    from joulesim.analysis.plotting import pyplot
    from joulesim.analysis.power_plot import plot_power
    from joulesim.analysis.run_outputs import RunOutputs

    pyplot()
    run = RunOutputs(prefix)
    base = run.prefix if directory is None else os.path.join(directory, _file_stem(run.prefix))
    click.echo(f"wrote {plot_gantt(run, base + '_gantt.png', groups=groups)}")
    click.echo(f"wrote {plot_machine_states(run, base + '_machine_states.png')}")
    written = plot_power(run, base + "_power.png")
    if written:
        click.echo(f"wrote {written}")
    else:
        click.echo(f"no power plot: {run.path('consumed_energy')} is absent (run with energy on: -E)")


def _file_stem(prefix: str) -> str:
    """`runs/easy/out` -> `easy_out`: the last folder is kept so that runs named out differ."""
    parent, name = os.path.split(os.path.normpath(prefix))
    folder = os.path.basename(parent)
    return f"{folder}_{name}" if folder and folder not in (".", "..") else name or "out"
