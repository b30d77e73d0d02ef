"""`joulesim rl`: train seed 002's Energy scheduler (PPO) and test a trained model."""

from __future__ import annotations

import os
import tempfile

import click

from joulesim.cli.error_reporting import reports_errors
from joulesim.cli.number_options import IntegerRange
from joulesim.console.install_hint import install_hint
from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.models.core_task_runner import IDLE_POWER_RULES


def _needs_rl_extra() -> None:
    # find_spec, not an import: torch takes seconds to import, and what is refused before the
    # work (an output path, a configuration) should be refused at once.
    from importlib.util import find_spec

    missing = [module for module in ("torch", "gymnasium", "greenlet") if find_spec(module) is None]
    if missing:
        raise JoulesimError(f"joulesim rl needs {', '.join(missing)}: install the rl extra "
                            f"({install_hint('rl')})")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def rl() -> None:
    """Reinforcement learning on IRMaSim node platforms (seed 002): train, then test a policy."""


@rl.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "out_dir", default=None, metavar="DIR",
              help="Output folder: model.pt, training.csv, training.png, checkpoints/ (default: CONFIG's name "
                   "without .toml, beside it, + _training).")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress on stderr: a bar on a terminal, a line every 5 s in a log.")
@reports_errors
def train(config: str, out_dir: str | None, progress: bool) -> None:
    """Train a PPO agent as CONFIG (TOML: [environment], [training], [ppo]) says."""
    _needs_rl_extra()  # joulesim.rl imports them
    from joulesim.rl.training import train as run_training
    from joulesim.rl.training_config import load_training_config

    settings = load_training_config(config)

    if out_dir is None:
        out_dir = os.path.splitext(config)[0] + "_training"
    outcome = run_training(settings, out_dir, progress=progress)  # checks out_dir before training
    last = outcome.rows[-1]
    click.echo(f"trained {settings.simulations} simulation(s) x {settings.trajectories} trajectory(ies) in "
               f"{outcome.wall_s:.1f} s; last simulation: mean reward {last['reward']:.6g}, mean energy "
               f"{last['energy']:.6g} J, mean EDP {last['edp']:.6g} J s")
    click.echo(f"model: {outcome.model}")
    click.echo(f"curves: {outcome.csv}" + (f", {outcome.plot}" if outcome.plot else ""))


@rl.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-p", "--platform", required=True, help="The IRMaSim platform file the model was trained for.")
@click.option("-w", "--workload", required=True, help="The workload to schedule (IRMaSim or Batsim JSON).")
@click.option("--platform-name", default=None, help="The platform of a file that holds several.")
@click.option("--runs", type=IntegerRange(1), default=100, show_default=True,
              help="Test simulations (the thesis runs 100).")
@click.option("--mode", type=click.Choice(["sample", "greedy"]), default="sample", show_default=True,
              help="Draw actions from the policy (seeds SEED, SEED+1, ...) or take the best valid pair.")
@click.option("--seed", type=IntegerRange(0), default=0, show_default=True)
@click.option("--idle-power", type=click.Choice(IDLE_POWER_RULES), default="irmasim", show_default=True)
@click.option("-o", "--out", "out_csv", default=None, metavar="CSV", help="Write one row per run here.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Progress on stderr: a bar on a terminal, a line every 5 s in a log.")
@reports_errors
def evaluate(model: str, platform: str, workload: str, platform_name: str | None, runs: int, mode: str, seed: int,
             idle_power: str, out_csv: str | None, progress: bool) -> None:
    """Run MODEL on a workload RUNS times; print min / mean / max energy, makespan and EDP."""
    if out_csv:
        _check_writable_file(out_csv, "-o/--out")  # before the runs (and torch's import), not after them
    _needs_rl_extra()
    from joulesim.rl.evaluation import evaluate_model

    result = evaluate_model(model, platform, workload, runs, mode, seed, platform_name, idle_power,
                            progress=progress)
    click.echo(f"{runs} run(s), mode {mode}:")
    click.echo(f"{'metric':<10} {'min':>16} {'mean':>16} {'max':>16}")
    for metric, unit in (("energy", "J"), ("makespan", "s"), ("edp", "J s")):
        s = result.stats(metric)
        click.echo(f"{metric + ' ' + unit:<10} {s['min']:>16.6f} {s['avg']:>16.6f} {s['max']:>16.6f}")
    if out_csv:
        _write_runs(out_csv, result.runs)
        click.echo(f"runs: {out_csv}")


def _check_writable_file(path: str, option: str) -> None:
    """Refuse an output file that could not be written, without touching an existing one: its
    folder must take a new file (the runs are written beside it, then renamed over it)."""
    from joulesim.inputs.output_file import refuse_non_regular_file

    folder = os.path.dirname(os.path.abspath(path))
    refuse_non_regular_file(path, option, "give the path of a CSV file")  # a folder, device, FIFO
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InputError(path, option, f"cannot be written in folder {folder}: {exc.strerror or exc}",
                         "give a path in an existing, writable folder") from None


def _write_runs(path: str, runs: list[dict[str, float]]) -> None:
    """The CSV of the runs, written whole or not at all (a new file renamed over it)."""
    import csv

    from joulesim.inputs.output_file import write_whole

    def write(temporary: str) -> None:
        with open(temporary, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["run", "energy", "makespan", "edp"])
            writer.writeheader()
            writer.writerows(runs)

    write_whole(path, "-o/--out", write, "give a path in an existing, writable folder")
