"""`joulesim slurm forecast`: when will the jobs pending on a live Slurm start?

Reads the cluster's state (adapters/slurm/slurm_state.py), simulates forward from it with a
decider in this process, running jobs pinned to their nodes (adapters/slurm/forecast.py), and
prints each pending job's predicted start; `--what-if` adds a column per other decider, and
`--what-if-drain` a column per node drained now (with -d's decider).
"""

from __future__ import annotations

import csv
import dataclasses
import time

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.simulate_options import parse_key_values
from joulesim.inputs.output_file import refuse_non_regular_file, write_whole

_OUTPUT = "forecast output (PREFIX_forecast.csv of -e)"
_FIX = "choose another export prefix"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--slurm-conf", default=None, help="slurm.conf of the cluster (default: Slurm's own lookup, SLURM_CONF).")
@click.option("-d", "--decider", default="easy", show_default=True,
              help="The decider that stands for Slurm's scheduler: a queue decider (fcfs, sjf, easy, conservative, "
                   "wfp, unicef, utility) or package.module:Class of one.")
@click.option("-o", "--option", "decider_options", multiple=True, metavar="KEY=VALUE",
              help="Option of -d's decider. Repeatable.")
@click.option("--what-if", "what_if", multiple=True, metavar="DECIDER",
              help="Also forecast with this decider (its default options): one more column. Repeatable.")
@click.option("--what-if-drain", "drains", multiple=True, metavar="NODE",
              help="Also forecast with -d's decider as if NODE were drained now (a job running there ends there "
                   "first; no other job goes on it): one more column. Repeatable, a column each.")
@click.option("-e", "--export", "export_prefix", default=None,
              help="Also write PREFIX_forecast.csv: each pending job, its predicted start per decider (epoch "
                   "seconds, date, seconds from now).")
@reports_errors
def forecast(slurm_conf: str | None, decider: str, decider_options: tuple[str, ...], what_if: tuple[str, ...],
             drains: tuple[str, ...], export_prefix: str | None) -> None:
    """Predict when each job pending on a live Slurm starts: its state now (nodes, running jobs
    with their start times and limits, pending jobs in priority order), simulated forward with
    DECIDER, running jobs pinned to their nodes, every job lasting its time limit."""
    from joulesim.adapters.slurm.forecast import check_forecast_decider, forecast_inputs, forecast_starts
    from joulesim.adapters.slurm.slurm_commands import SlurmCommands
    from joulesim.adapters.slurm.slurm_state import read_state
    from joulesim.deciders import load_decider

    options = parse_key_values(decider_options)
    deciders = list(dict.fromkeys([decider, *what_if]))
    for name in deciders:  # every refusal before Slurm is asked anything
        check_forecast_decider(name)
        load_decider(name, options if name == decider else {})
    path = None
    if export_prefix is not None:
        from joulesim.simulator.output.output_files import check_output_prefix

        check_output_prefix(export_prefix)
        path = f"{export_prefix}_forecast.csv"
        refuse_non_regular_file(path, _OUTPUT, _FIX, "remove it, or " + _FIX)

    state = read_state(SlurmCommands(slurm_conf))
    unknown = [node for node in drains if node not in state.nodes]
    if unknown:
        raise click.UsageError(f"--what-if-drain {unknown[0]}: Slurm has no such node (its nodes: "
                               f"{', '.join(state.nodes)})")
    inputs = forecast_inputs(state)
    # A column each: (its title, its CSV columns' prefix, the inputs, the decider and its options).
    columns = [(name, name, inputs, name, options if name == decider else {}) for name in deciders]
    for node in dict.fromkeys(drains):
        drained = [n for n in state.nodes if n in state.unavailable or n == node]
        columns.append((f"{decider}, {node} drained", f"{decider}_drain_{node}",
                        forecast_inputs(dataclasses.replace(state, unavailable=drained)), decider, options))
    # The simulator's and pandas' first import (~0.6 s) is no part of the forecast's own time.
    import joulesim.run_result  # noqa: F401
    import joulesim.run_simulation  # noqa: F401

    began = time.perf_counter()
    starts = {title: forecast_starts(column_inputs, name, column_options)
              for title, _, column_inputs, name, column_options in columns}
    took = time.perf_counter() - began

    unavailable = f" ({len(state.unavailable)} unavailable: {', '.join(state.unavailable)})" if state.unavailable else ""
    click.echo(f"Slurm at {_date(state.now)}: {len(state.nodes)} nodes{unavailable}, {len(state.running)} running "
               f"job(s) pinned to their nodes, {len(state.pending)} pending")
    rows = [[job.slurm_id, str(job.nodes), _minutes(job.limit_s)] for job in state.pending]
    header = ["job", "nodes", "limit"]
    for title, *_ in columns:
        header += [f"{title} start", "from now"]
        for row, job in zip(rows, state.pending):
            start = starts[title][job.slurm_id]
            row += ["never", "-"] if start is None else [_date(state.now + start), f"{start:,.0f} s"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    if state.held:
        click.echo(f"held (not forecast: they start only once released): {', '.join(state.held)}")
    click.echo(f"simulated with {', '.join(deciders)} in {took:.2f} s (every job lasting its time limit)")
    if path is not None:
        _write_csv(path, state, [(title, prefix) for title, prefix, *_ in columns], starts)
        click.echo(f"outputs   {path}")


def _date(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(round(epoch)))


def _minutes(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60}:{minutes % 60:02d}:00"


def _write_csv(path: str, state, columns: list[tuple[str, str]], starts: dict[str, dict[str, float | None]]) -> None:
    """`columns`: each forecast's title (the key of `starts`) and its CSV columns' prefix."""
    import os

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)

    def write(temporary: str) -> None:
        with open(temporary, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["slurm_id", "nodes", "time_limit_s", "priority", "submit_time", "now",
                             *(f"{prefix}_{column}" for _, prefix in columns for column in ("start", "start_date", "in_s"))])
            for job in state.pending:
                row = [job.slurm_id, job.nodes, f"{job.limit_s:g}", job.priority, f"{job.submit:.0f}", f"{state.now:.3f}"]
                for title, _ in columns:
                    start = starts[title][job.slurm_id]
                    row += ["", "never", ""] if start is None else [
                        f"{state.now + start:.3f}", _date(state.now + start), f"{start:.3f}"]
                writer.writerow(row)

    # Whole, by a rename (inputs/output_file.py), as `joulesim slurm` writes its CSV.
    write_whole(path, _OUTPUT, write, _FIX)
