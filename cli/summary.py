"""The short summary `joulesim run` and `joulesim simulate` print at the end."""

from __future__ import annotations

import os
from importlib.resources import files

import click

from joulesim.simulator.engine.simulation import SimulationResult
from joulesim.simulator.engine.simulation_config import SimulationConfig
from joulesim.simulator.output.output_files import output_path


def print_summary(result: SimulationResult, config: SimulationConfig, decider: str) -> None:
    """What ran (platform, workloads, decider, the options that change results), what came out,
    and warnings about results that would mislead."""
    stats = result.stats
    export_prefix = config.export_prefix
    workloads = ", ".join(f"{_shown(w.path, 'joulesim.workloads')} ({len(w.jobs)} job{'' if len(w.jobs) == 1 else 's'})"
                          for w in config.workloads) or "none"
    settings = [f"event grouping {config.event_grouping}", "energy on (-E)" if config.energy else "energy off"]
    lines = [
        f"platform              {_shown(config.platform.source, 'joulesim.platforms')} ({result.nb_hosts} compute hosts)",
        f"workloads             {workloads}",
        f"decider               {decider}",
        f"settings              {', '.join(settings)}",
        f"jobs                  {stats.nb_jobs} ({stats.nb_success} succeeded, {stats.nb_killed} killed, "
        f"{stats.nb_rejected} rejected)",
        f"makespan              {stats.makespan:.1f} s",
        f"mean waiting time     {stats.mean_waiting:.1f} s",
        f"mean bounded slowdown {stats.mean_bounded_slowdown:.2f} (tau = 10 s)",
    ]
    if result.energy_enabled:
        schedule = result.schedule
        lines.append(f"energy                {float(schedule['consumed_joules']) / 3.6e6:.3f} kWh "
                     f"({float(schedule['consumed_joules']):.0f} J), {schedule['nb_machine_switches']} "
                     "machine switches")
        joules = float(schedule["consumed_joules"])
        lines.append(f"energy x makespan     {joules:.6g} J x {stats.makespan:.6g} s = {joules * stats.makespan:.6g} J s (EDP)")
    if result.energy_cost_cents is not None:
        lines.append(f"energy cost           {result.energy_cost_cents:,.2f} US cents (per cluster and job: "
                     f"{output_path(export_prefix, 'energy_cost')}, joulesim analyze {export_prefix})")
    if result.node_model:
        lines.append(f"node model            {result.node_model}")
    if result.energy_enabled and stats.nb_finished and not result.jobs_not_delays:
        lines.append("warning               every job was a delay, which leaves its hosts at idle power (Batsim's "
                     "rule): this energy is that of idle machines; jobs that compute (e.g. parallel_homogeneous "
                     "profiles, the shipped workload default_compute) draw computing power")
    if stats.nb_finished and 2 * stats.nb_walltime_reached > stats.nb_finished:
        lines.append(f"warning               {stats.nb_walltime_reached} of {stats.nb_finished} jobs were killed at their "
                     "walltime: a job ends when it reaches its walltime, even one equal to its run time (Batsim's "
                     "rule); give walltimes above the run times (workload generate --walltime-factor, from-swf "
                     "--missing-walltime)")
    lines += [
        f"decider calls         {result.decider_calls} in {result.wall_time:.2f} s of wall-clock time",
        "outputs               " + (", ".join(result.outputs) + f" (joulesim analyze {export_prefix})"
                                     if result.outputs else "none"),
    ]
    click.echo("\n".join(lines))


def _shown(path: str, package: str) -> str:
    """A shipped platform or workload by its name ("cluster32, shipped"), any other by its path."""
    try:
        shipped = os.path.realpath(str(files(package))) == os.path.realpath(os.path.dirname(os.path.abspath(path)))
    except (OSError, TypeError, ValueError, ModuleNotFoundError):  # (a dict given to the API has no file)
        shipped = False
    return f"{os.path.splitext(os.path.basename(path))[0]}, shipped" if shipped else path
