"""`joulesim slurm`: a real Slurm cluster driven by a protocol decider (adapters/slurm)."""

from __future__ import annotations

import csv
import os
import shutil
from typing import Any

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.lazy_group import LazyGroup
from joulesim.cli.number_options import DecimalRange, IntegerRange
from joulesim.cli.simulate_options import check_timeout, parse_key_values
from joulesim.inputs.output_file import refuse_non_regular_file, write_whole


# A group that runs itself when no subcommand is given: `joulesim slurm -w WORKLOAD ...` drives the
# cluster as it always did, and `joulesim slurm forecast ...` is a command of its own options.
@click.group(cls=LazyGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]},
             lazy_commands={"forecast": "joulesim.cli.slurm_forecast_command:forecast"})
@click.option("-w", "--workload", default=None,
              help="Workload (Batsim JSON; delay profiles run as `sleep DELAY`). Required without a command.")
@click.option("--slurm-conf", default=None, help="slurm.conf of the cluster (default: Slurm's own lookup, SLURM_CONF).")
@click.option("--local-nodes", type=IntegerRange(1, 64), default=None,
              help="Start a Slurm of N fake one-CPU nodes on this machine for the run (root, slurm-wlm and munge "
                   "needed), instead of using an existing cluster.")
@click.option("-d", "--decider", default="easy", show_default=True,
              help="Decider name or package.module:Class, started in its own process.")
@click.option("-o", "--option", "decider_options", multiple=True, metavar="KEY=VALUE", help="Decider option. Repeatable.")
@click.option("-s", "--socket-endpoint", "endpoint", default=None,
              help="Use a decider already serving this ZeroMQ endpoint instead of starting one.")
@click.option("-e", "--export", "export_prefix", default=None,
              help="Writes PREFIX_slurm_jobs.csv: each job's real submission, start and end times and nodes. "
                   "[default: the next free runs/NNN: runs/001, runs/002...; no run replaces another's]")
@click.option("--timeout", "timeout_s", default=120.0, show_default=True, type=DecimalRange(), callback=check_timeout,
              help="Seconds to wait for each decider reply.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Show the jobs ended so far on stderr (a bar on a terminal, otherwise a line every 5 s once "
                   "the run has lasted 5 s).")
@click.pass_context
@reports_errors
def slurm(ctx: click.Context, workload: str | None, slurm_conf: str | None, local_nodes: int | None, decider: str,
          decider_options: tuple[str, ...], endpoint: str | None, export_prefix: str | None, timeout_s: float,
          progress: bool) -> None:
    """Run WORKLOAD's jobs on a real Slurm cluster, scheduled by a protocol decider; or, with
    the command `forecast`, predict when the jobs pending on a live Slurm will start.

    Jobs are submitted held at their submission times (wall clock from now), pinned to the
    nodes the decider chooses and released; their ends come back from squeue. Any decider
    that runs in simulation runs here unchanged.
    """
    import signal
    import sys

    if ctx.invoked_subcommand is not None:
        given = [f"--{name.replace('_', '-')}" for name in ctx.params
                 if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
        if given:  # (they would be silently ignored: the command has its own)
            raise click.UsageError(f"{', '.join(given)} belong(s) to `joulesim slurm -w WORKLOAD`, not to "
                                   f"`joulesim slurm {ctx.invoked_subcommand}`: give the command's own options after "
                                   "its name")
        return
    if workload is None:
        raise click.UsageError("Missing option '-w' / '--workload'.")

    from joulesim.simulator.workload.workload_loader import load_workload

    # A TERM (kill, a container stopping) unwinds like Ctrl-C: jobs left on Slurm are cancelled
    # and a local cluster is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if export_prefix is None:
        from joulesim.cli.numbered_run_prefix import next_run_prefix

        export_prefix = next_run_prefix()
    jobs = load_workload(workload, "w0")
    if local_nodes is not None:
        import tempfile

        from joulesim.adapters.slurm.local_cluster import LocalSlurm, slurm_available

        if slurm_conf is not None:
            raise click.UsageError("give --slurm-conf or --local-nodes, not both")
        reason = slurm_available()
        if reason is not None:
            raise click.UsageError(f"--local-nodes: cannot start a local Slurm: {reason}")
        with tempfile.TemporaryDirectory(prefix="joulesim-slurm-") as directory, \
                LocalSlurm(directory, nodes=local_nodes) as cluster:
            _run(jobs, cluster.conf, decider, decider_options, endpoint, export_prefix, timeout_s, progress)
        return
    _run(jobs, slurm_conf, decider, decider_options, endpoint, export_prefix, timeout_s, progress)


def _run(jobs, slurm_conf: str | None, decider: str, decider_options: tuple[str, ...], endpoint: str | None,
         export_prefix: str, timeout_s: float, progress: bool) -> None:
    from joulesim.adapters.slurm.adapter import SlurmAdapter
    from joulesim.adapters.slurm.slurm_commands import SlurmCommands
    from joulesim.decider_process import DeciderProcess, free_ipc_endpoint, joulesim_decide_command
    from joulesim.protocol.transport_zmq import ZmqRequester
    from joulesim.simulator.engine.decider_link import DeciderLink

    path = f"{export_prefix}_slurm_jobs.csv"
    _check_output(export_prefix, path)  # before any job reaches Slurm, not after the whole run
    commands = SlurmCommands(slurm_conf)
    process = directory = None
    why_gone: Any = None
    if endpoint is None:
        endpoint, directory = free_ipc_endpoint()
        process = DeciderProcess(joulesim_decide_command(decider, endpoint, parse_key_values(decider_options),
                                                         timeout_s), f"joulesim decide {decider}", reports_start=True)
        why_gone = process.why_gone
    try:
        if process is not None:
            process.wait_started(timeout_s)  # a mistyped decider or option stops us before Slurm sees a job
        link = DeciderLink(ZmqRequester(endpoint, timeout_s, why_gone))
    except BaseException:
        if process is not None:
            process.stop()
            shutil.rmtree(directory, ignore_errors=True)
        raise
    try:
        real = SlurmAdapter(jobs, link, commands, progress=progress).run()
    finally:
        link.close()
        if process is not None:
            process.stop()
            shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)

    def write(temporary: str) -> None:
        with open(temporary, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["job_id", "slurm_id", "state", "submission_time", "starting_time", "finish_time",
                             "allocated_resources", "slurm_nodes"])
            for job in real.values():
                writer.writerow([job.id.split("!", 1)[1], job.slurm_id, job.state, f"{job.submitted:.3f}",
                                 "" if job.started is None else f"{job.started:.3f}",
                                 "" if job.finished is None else f"{job.finished:.3f}", job.alloc,
                                 ",".join(job.nodes)])

    # Whole, by a rename (inputs/output_file.py): a FIFO or device put at the path during the run
    # is refused, never opened (a FIFO without a reader would block) nor replaced.
    write_whole(path, _OUTPUT, write, _FIX)
    done = sum(1 for j in real.values() if j.state == "COMPLETED_SUCCESSFULLY")
    click.echo(f"jobs      {len(real)} ({done} completed on Slurm)\noutputs   {path}")


_OUTPUT = "Slurm jobs output (PREFIX_slurm_jobs.csv of -e)"
_FIX = "choose another export prefix"


def _check_output(export_prefix: str, path: str) -> None:
    """The prefix, and its PREFIX_slurm_jobs.csv: not a folder, FIFO, device or socket (refused
    before any job reaches Slurm, with one line, exit status 2; nothing is opened)."""
    from joulesim.simulator.output.output_files import check_output_prefix

    check_output_prefix(export_prefix)
    refuse_non_regular_file(path, _OUTPUT, _FIX, "remove it, or " + _FIX)
