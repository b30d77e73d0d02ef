"""`joulesim workload generate MODEL [options] -o WORKLOAD.json`: seeded synthetic workloads.

Models (see each module's docstring for the parameters and their sources):

* lublin       -- Lublin & Feitelson 2003 rigid batch jobs (joulesim.workload_tools.lublin)
* batsim-eval  -- the Batsim thesis §4.7.2 generator (joulesim.workload_tools.batsim_eval)
* grid-stream  -- the broker job stream of seed 004 (joulesim.workload_tools.grid_stream)

Same model, options and seed => byte-identical output.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from joulesim.cli.number_options import DecimalRange, IntegerRange
from joulesim.protocol.errors import JoulesimError
from joulesim.workload_tools.generators import MODELS

# The largest workload generated in one go: the whole document is built in memory (about 1 kB
# a job), and the largest Parallel Workloads Archive traces hold a few million jobs.
MAX_GENERATED_JOBS = 10_000_000

# option name (as the function parameter) -> models it applies to
APPLIES: dict[str, tuple[str, ...]] = {
    "jobs": MODELS,
    "nb_res": MODELS,
    "walltime_factor": MODELS,
    "no_walltime": MODELS,
    "runtime_min": ("batsim-eval",),
    "runtime_max": ("batsim-eval",),
    "jobs_per_day": ("grid-stream",),
    "days": ("grid-stream",),
    "day_start": ("grid-stream",),
    "day_end": ("grid-stream",),
    "single_fraction": ("grid-stream",),
    "night_weight": ("grid-stream",),
    "compute_speed": ("grid-stream",),
}


class _ReportingCommand(click.Command):
    """A click command that reports usage and joulesim errors as one `joulesim: error:` line."""

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            click.echo(f"joulesim: error: {exc.format_message()}", err=True)
            raise click.exceptions.Exit(2) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            click.echo(f"joulesim: error: {exc.format_message()}", err=True)
            raise click.exceptions.Exit(2) from None
        except JoulesimError as exc:
            click.echo(f"joulesim: error: {exc}", err=True)
            raise click.exceptions.Exit(exc.exit_code) from None


_OUTPUT = "workload output (-o)"


@click.command("generate", cls=_ReportingCommand,
               context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model", metavar="MODEL", type=click.Choice(MODELS))
@click.option("-o", "--output", required=True, metavar="WORKLOAD.json",
              help="Output file ('-' for standard output).")
@click.option("--seed", default=0, show_default=True, type=IntegerRange(0),
              help="Seed of numpy.random.default_rng: same seed, same bytes.")
@click.option("--jobs", type=IntegerRange(1, MAX_GENERATED_JOBS), default=None,
              help="Number of jobs [all models; default: lublin 1000, batsim-eval 800; "
                   "grid-stream: give --jobs or --days].")
@click.option("--nb-res", type=IntegerRange(1), default=None,
              help="Machine size written as nb_res [default: lublin 128 (sets the largest job), "
                   "batsim-eval 32, grid-stream 10].")
@click.option("--walltime-factor", type=DecimalRange(0, min_open=True), default=None,
              help="walltime = ceil(runtime * FACTOR) [all models; default 2. With 1 (exact estimates) "
                   "every job is killed at its walltime, as Batsim kills a job that reaches it].")
@click.option("--no-walltime", is_flag=True, default=None, help="Write jobs without a walltime.")
@click.option("--runtime-min", type=DecimalRange(1), default=None,
              help="[batsim-eval] Smallest runtime (s) of the log-uniform stand-in [10].")
@click.option("--runtime-max", type=DecimalRange(1), default=None,
              help="[batsim-eval] Largest runtime (s) of the log-uniform stand-in [600].")
@click.option("--jobs-per-day", type=DecimalRange(0, min_open=True), default=None,
              help="[grid-stream] Mean density in jobs per day [1000].")
@click.option("--days", type=DecimalRange(0, min_open=True), default=None,
              help="[grid-stream] Length of the stream in days (instead of --jobs).")
@click.option("--day-start", type=DecimalRange(0, 24), default=None,
              help="[grid-stream] Hour the day begins; day arrivals are twice as likely [8].")
@click.option("--day-end", type=DecimalRange(0, 24), default=None,
              help="[grid-stream] Hour the day ends [20].")
@click.option("--single-fraction", type=DecimalRange(0, 1), default=None,
              help="[grid-stream] Share of single-processor jobs [0.8].")
@click.option("--night-weight", type=DecimalRange(0, min_open=True), default=None,
              help="[grid-stream] Night arrival rate / day rate [0.5]; 1 for a uniform stream.")
@click.option("--compute-speed", type=DecimalRange(0, min_open=True), default=None, metavar="FLOPS",
              help="[grid-stream] The hosts' flop/s: jobs become computations of their duration, "
                   "loading their hosts fully (default: delay profiles, hosts at idle power).")
def generate(model: str, output: str, seed: int, **options: Any) -> None:
    """Generate a synthetic Batsim workload from MODEL (lublin, batsim-eval, grid-stream)."""
    from joulesim.inputs.output_file import refuse_non_regular_file, write_bytes_whole
    from joulesim.workload_tools.generators import generator
    from joulesim.workload_tools.synthetic import dumps

    given = {name: value for name, value in options.items() if value is not None}
    wrong = sorted(name for name in given if model not in APPLIES[name])
    if wrong:
        flags = ", ".join("--" + name.replace("_", "-") for name in wrong)
        raise click.UsageError(f"{flags} {'does' if len(wrong) == 1 else 'do'} not apply to model "
                               f"'{model}'")
    if given.pop("no_walltime", False):
        if "walltime_factor" in given:
            raise click.UsageError("--no-walltime and --walltime-factor exclude each other")
        given["walltime_factor"] = None
    if model == "grid-stream":
        expected = given.get("days", 0) * given.get("jobs_per_day", 1000.0)  # grid_stream's default density
        if expected > MAX_GENERATED_JOBS:
            raise click.UsageError(f"--days x --jobs-per-day asks for about {expected:.3g} jobs, more than joulesim's "
                                   f"limit of {MAX_GENERATED_JOBS:,} per workload: generate fewer days")
        if "jobs" in given and "days" in given:
            raise click.UsageError("grid-stream takes --jobs or --days, not both")
        if "jobs" not in given and "days" not in given:
            raise click.UsageError("grid-stream needs --days D or --jobs N")
    if model == "batsim-eval" and "runtime_min" in given and "runtime_max" in given \
            and given["runtime_min"] > given["runtime_max"]:
        raise click.UsageError("--runtime-min must not exceed --runtime-max")

    if output != "-":
        # An existing folder, FIFO or device at -o: one line, exit status 2, before the work (a FIFO
        # is never opened: without a reader, the write would block for ever).
        refuse_non_regular_file(output, _OUTPUT)
    workload = generator(model)(seed=seed, **given)
    data = dumps(workload)
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return

    write_bytes_whole(output, _OUTPUT, data)  # a new file renamed over -o (inputs/output_file.py)
    click.echo(f"{output}: {len(workload['jobs'])} jobs, {len(workload['profiles'])} profiles, "
               f"nb_res {workload['nb_res']} ({model}, seed {seed})", err=True)
