"""`joulesim workload from-swf TRACE.swf -o WORKLOAD.json`: a PWA trace -> a Batsim workload."""

from __future__ import annotations

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.number_options import DecimalRange, IntegerRange
from joulesim.protocol.errors import JoulesimError


def _speed(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    from joulesim.simulator.platform.platform_checks import parse_speed

    try:
        return parse_speed("--speed", "option", value)
    except JoulesimError as exc:
        raise click.BadParameter(str(exc)) from None


def _missing_walltime(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from joulesim.workload_tools.swf import parse_missing_walltime

    try:
        parse_missing_walltime(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@click.command("from-swf", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Batsim JSON workload to write.")
@click.option("--profile", "profile", type=click.Choice(["delay", "compute"]), default="delay", show_default=True,
              help="delay: run time as a delay; compute: parallel_homogeneous, cpu = run time x --speed per host.")
@click.option("--speed", callback=_speed, metavar="FLOPS",
              help="Host speed for --profile compute (a number or a SimGrid speed like 1Gf).")
@click.option("--missing-walltime", default="2x", show_default=True, callback=_missing_walltime,
              metavar="runtime|none|Fx",
              help="Walltime of jobs whose requested time is -1: run time x F (e.g. 2x), none (-1), or the run "
                   "time (such a job is killed when it reaches it, as in Batsim).")
@click.option("--fix-walltime", is_flag=True,
              help="Raise requested times below the run time to the run time (else the job is killed).")
@click.option("--procs-per-node", type=IntegerRange(1), default=1, show_default=True,
              help="Processors per host: res = ceil(processors / K).")
@click.option("--nb-res", type=IntegerRange(1), default=None,
              help="Machine size (hosts); default from the header (MaxNodes, else MaxProcs).")
@click.option("--from", "time_from", type=DecimalRange(), default=None, metavar="T0",
              help="Keep jobs submitted at or after T0 (seconds, the trace's time).")
@click.option("--to", "time_to", type=DecimalRange(), default=None, metavar="T1",
              help="Keep jobs submitted before T1 (seconds, the trace's time).")
@click.option("--week", type=IntegerRange(0), default=None, metavar="N",
              help="Keep the N-th 7-day window (0-based) from the first submission.")
@click.option("--max-jobs", "mmax", type=IntegerRange(0), default=None, metavar="N",
              help="Keep at most the first N jobs after cleaning.")
@click.option("--mmax", "mmax_jobs_old", type=IntegerRange(0), default=None, hidden=True,
              help="The former name of --max-jobs (in run and simulate, --mmax counts hosts, as in Batsim).")
@click.option("--keep-submit-times", is_flag=True,
              help="Keep the trace's submit times (default: shift so that the first job is at 0).")
@click.option("--lenient", is_flag=True,
              help="Skip bad lines (wrong field count, a field not a number or out of range) and count them, "
                   "instead of failing.")
@click.option("--report-json", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the conversion report as JSON.")
@reports_errors
def from_swf(trace: str, output: str, profile: str, speed: float | None, missing_walltime: str,
             fix_walltime: bool, procs_per_node: int, nb_res: int | None, time_from: float | None,
             time_to: float | None, week: int | None, mmax: int | None, mmax_jobs_old: int | None, keep_submit_times: bool,
             lenient: bool, report_json: str | None) -> None:
    """Convert a Parallel Workloads Archive trace (SWF, plain or .gz) to a Batsim JSON workload.

    Drops (and counts) jobs with run time < 0, cancelled jobs (run time 0, no processors),
    size <= 0, submit time < 0, jobs larger than the machine and duplicate ids; sorts by submit
    time and shifts it so that the first job is at 0.
    """
    if mmax_jobs_old is not None:
        if mmax is not None:
            raise click.UsageError("--mmax is the former name of --max-jobs: give --max-jobs alone")
        click.echo("joulesim: warning: from-swf's --mmax is now --max-jobs (--mmax counts hosts in run and simulate, "
                   "as in Batsim); it still works here", err=True)
        mmax = mmax_jobs_old
    _run(trace, output, report_json, dict(
        profile=profile, speed=speed, missing_walltime=missing_walltime, fix_walltime=fix_walltime,
        procs_per_node=procs_per_node, nb_res=nb_res, time_from=time_from, time_to=time_to,
        week=week, mmax=mmax, keep_submit_times=keep_submit_times, lenient=lenient))


def _run(trace: str, output: str, report_json: str | None, options: dict) -> None:
    import orjson

    from joulesim.inputs.input_error import InputError
    from joulesim.inputs.output_file import refuse_non_regular_file, write_bytes_whole
    from joulesim.workload_tools.swf import convert_swf, format_report, write_workload

    if options["profile"] == "compute" and options["speed"] is None:
        raise InputError(trace, "option --speed", "--profile compute needs the host speed",
                         "pass --speed FLOPS, e.g. --speed 1Gf")
    # An existing folder, FIFO or device at -o or --report-json: one line, exit status 2, before
    # the conversion; both are written whole by a rename, never opened in place (inputs/output_file.py).
    refuse_non_regular_file(output, "output file")
    if report_json:
        refuse_non_regular_file(report_json, "report file")
    workload, report = convert_swf(trace, **options)
    write_workload(workload, output)
    report["output"] = str(output)
    if report_json:
        write_bytes_whole(report_json, "report file", orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n",
                          "check the directory exists and is writable")
    click.echo(format_report(report))
    click.echo(f"  written: {output}")
