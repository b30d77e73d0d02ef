"""`joulesim learn`: seed 003's scheduling functions found by simulation and regression."""

from __future__ import annotations

import os

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.number_options import IntegerRange
from joulesim.learn.generation_limits import MAX_PAIRS, MAX_PERMUTATIONS, MAX_SEED, MAX_WORKERS


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def learn() -> None:
    """Score jobs by simulating permutations of a queue (seed 003), then fit utility functions."""


@learn.command()
@click.option("--pairs", type=IntegerRange(1, MAX_PAIRS), required=True,
              help=f"(S, Q) job pairs to score (at most {MAX_PAIRS:,}).")
@click.option("--permutations", type=IntegerRange(1, MAX_PERMUTATIONS), default=250_000, show_default=True,
              help=f"Random orders of Q simulated per pair (the paper: 250,000; at most {MAX_PERMUTATIONS:,}, "
                   "16 bytes of memory each per pair being scored).")
@click.option("--seed", type=IntegerRange(0, MAX_SEED), default=0, show_default=True,
              help="Seed of the Lublin trace the pairs are cut from and of the permutations (0 to 2**63-1: the "
                   "table stores it as an int64).")
@click.option("-o", "--out", "out", default="scores.parquet", show_default=True,
              help="Output table (parquet; .csv for CSV). Pairs are kept in OUT.parts/ as they finish: "
                   "rerunning the command goes on where it stopped.")
@click.option("--workers", type=IntegerRange(1, MAX_WORKERS), default=None,
              help=f"Worker processes of the local pool (default: the cores available; at most {MAX_WORKERS:,}, "
                   "use --dask beyond one machine).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Run on a running dask.distributed scheduler (tcp://HOST:PORT) instead of the local pool.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show progress on stderr: a bar on a terminal, a line every 5 s in a log.")
@reports_errors
def generate(pairs: int, permutations: int, seed: int, out: str, workers: int | None, dask_address: str | None,
             progress: bool) -> None:
    """Simulate PERMUTATIONS random orders of Q for each pair and score Q's jobs (eqs. 2-3)."""
    from joulesim.learn.score_generation import generate_scores

    summary = generate_scores(out, pairs, permutations, seed, workers, dask_address, progress=progress)
    done = summary.computed * permutations
    rate = f", {done / summary.wall_s:,.0f} permutations/s" if summary.computed and summary.wall_s > 0 else ""
    click.echo(f"{summary.pairs} pair(s) x {permutations:,} permutations: {summary.computed} scored now, "
               f"{summary.pairs - summary.computed} already done; {summary.wall_s:.1f} s{rate}")
    click.echo(f"scores: {out}")


@learn.command()
@click.argument("scores", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "directory", default=None, metavar="DIR",
              help="Where ranking.csv, best.json and one JSON per form go (default: SCORES without its "
                   "extension + _functions).")
@click.option("--top", type=IntegerRange(1), default=10, show_default=True, help="Forms printed.")
@reports_errors
def fit(scores: str, directory: str | None, top: int) -> None:
    """Fit every candidate form to SCORES by least squares; rank by mean absolute distance."""
    from joulesim.learn.function_fit import fit_forms, read_scores, write_fit
    from joulesim.learn.output_paths import make_output_folder

    table = read_scores(scores)
    directory = directory or os.path.splitext(scores)[0] + "_functions"
    make_output_folder(directory, "output folder (-o)")
    result = fit_forms(table)
    best = write_fit(result, directory, scores)
    click.echo(f"{result.rows:,} scored jobs; forms ranked by mean absolute distance:")
    click.echo(f"{'form':<26} {'':>3} {'c1':>12} {'c2':>12} {'c3':>12} {'mean abs dist':>14} {'rmse':>12}")
    _echo_forms(result.ranking.head(top))
    click.echo("the paper's table 1 on the same data:")
    _echo_forms(result.paper)
    click.echo(f"best: {best} (use it with -d utility --option function={best})")


def _echo_forms(forms) -> None:
    for row in forms.itertuples():
        click.echo(f"{row.form:<26} {row.alias:>3} {row.c1:>12.6g} {row.c2:>12.6g} {row.c3:>12.6g} "
                   f"{row.mad:>14.6g} {row.rmse:>12.6g}")
