"""Training the Energy scheduler: seed 002's simulation loop (§3.3.1, figure 3.4) on the environment.

A training "simulation" schedules `trajectories` trajectories with the current policy, then
updates the actor and the critic once (PPO, `joulesim.rl.ppo`). Written to the output folder:

- `model.pt`, the final agent (with its metadata: platform size, observation, objective);
- `checkpoints/simulation_NNNN.pt` every `checkpoint_every` simulations;
- `training.csv`, one row per simulation: mean trajectory reward, energy, makespan and EDP of
  its trajectories, the losses and entropy of the update, decisions taken, wall time;
- `training.png`, the thesis's three curves (reward, policy loss, value loss), with matplotlib.

A training into the folder of an earlier one first removes that one's files (never a mix of two runs).

The same configuration and seed give the same model (torch runs single-threaded by default).
"""

from __future__ import annotations

import csv
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from joulesim.inputs.input_error import InputError
from joulesim.inputs.output_file import non_regular_kind, write_whole
from joulesim.rl import cpu_kernels
from joulesim.rl.environment import NodeSchedulingEnv
from joulesim.rl.training_config import TrainingConfig

__all__ = ["train", "TrainingOutcome", "make_environment", "prepare_output_folder", "check_memory", "COLUMNS"]

COLUMNS = ["simulation", "reward", "energy", "makespan", "edp", "policy_loss", "value_loss", "entropy",
           "decisions", "wall_s"]


@dataclass
class TrainingOutcome:
    model: str
    csv: str
    plot: str | None
    rows: list[dict[str, Any]]
    wall_s: float
    # With self-imitation: the total reward of the best whole episode played (None: none kept).
    best_episode_total: float | None = None
    # With [ppo] keep_best_steps: the Adam steps after the last update that made the greedy policy
    # repeat the best episode (0: it already did), or None when it still departs from it.
    keep_best_steps_taken: int | None = None


def make_environment(config: TrainingConfig, **overrides: Any) -> NodeSchedulingEnv:
    settings = {**config.environment, **overrides}
    return NodeSchedulingEnv(settings.pop("platform"), settings.pop("workload"), **settings)


def model_metadata(config: TrainingConfig, env: NodeSchedulingEnv) -> dict[str, Any]:
    """What a decider needs to rebuild the observation, and to refuse another platform."""
    return {"num_nodes": env.num_nodes, "num_jobs": env.num_jobs, "n_actions": env.n_actions,
            "n_features": len(env.features), "features": list(env.features), "normalisation": env.normalisation,
            "wait_action": env.wait_action,
            "wait_interval": env.wait_interval, "per_step": env.per_step, "max_waits": env.max_waits,
            "objective": env.objective,
            "platform": os.path.basename(env.platform.source), "node_names": [n.name for n in env.platform.nodes.nodes],
            "seed": config.seed, "simulations": config.simulations, "trajectories": config.trajectories,
            "exploring_starts": config.exploring_starts,
            "cpu_kernels": cpu_kernels.capability()}  # (a model depends on them: cpu_kernels.py)


def prepare_output_folder(out_dir: str, checkpoints: bool) -> None:
    """Create the output folder (and its checkpoints/) and write a file in it, before any work:
    a path under a file, in /proc or without permission fails here rather than after training."""
    folders = [out_dir] + ([os.path.join(out_dir, "checkpoints")] if checkpoints else [])
    try:
        for folder in folders:
            os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folders[-1]):
            pass
    except OSError as exc:
        if isinstance(exc, FileExistsError):  # makedirs on an existing file
            problem = f"{exc.filename} is a file, not a folder"
        else:
            where = f" ({exc.filename})" if exc.filename and os.fspath(exc.filename) != out_dir else ""
            problem = f"cannot be created or written: {exc.strerror or exc}{where}"
        raise InputError(out_dir, "output folder", problem,
                         "give rl train -o a folder that can be created and written") from None
    refuse_special_outputs(out_dir)


_OUTPUT_NAMES = ("model.pt", "training.csv", "training.png")


def _earlier_outputs(out_dir: str) -> list[str]:
    """The files an earlier training may have left in `out_dir` (remove_earlier_outputs removes them)."""
    names = [os.path.join(out_dir, name) for name in _OUTPUT_NAMES]
    checkpoints = os.path.join(out_dir, "checkpoints")
    if os.path.isdir(checkpoints):
        names += [os.path.join(checkpoints, name) for name in sorted(os.listdir(checkpoints))
                  if name.startswith("simulation_") and name.endswith(".pt")]
    return names


def refuse_special_outputs(out_dir: str) -> None:
    """Refuse, before any work, an output name of the folder (model.pt, training.csv,
    training.png, a checkpoint) that is an existing folder, FIFO, device or socket, or a symbolic
    link to one: the training would remove it and write a regular file in its place (or, opening
    a FIFO, wait for a reader for ever). One line, exit status 2; nothing is opened."""
    for path in _earlier_outputs(out_dir):
        kind = non_regular_kind(path)
        if kind is not None:
            raise InputError(out_dir, "output folder", f"{path} is {kind}, not a regular file: a training removes "
                             "the earlier run's outputs and writes new ones, which would replace it",
                             "remove it, or give rl train -o another folder")


def remove_earlier_outputs(out_dir: str) -> None:
    """Remove what an earlier training left in the folder (its model, curves and checkpoints),
    so that the folder never mixes two runs: a run with fewer simulations or checkpoints would
    otherwise leave the earlier run's later checkpoints beside its own."""
    refuse_special_outputs(out_dir)  # (checked before the work too: prepare_output_folder)
    for path in _earlier_outputs(out_dir):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise InputError(out_dir, "output folder", f"cannot remove an earlier run's {path}: "
                             f"{exc.strerror or exc}", "give rl train -o a folder you can write") from None


def check_memory(config: TrainingConfig, env: NodeSchedulingEnv) -> None:
    """Refuse a configuration whose trajectories could not fit in memory, before allocating them.

    An update keeps every step of its trajectories: at most `trajectories` x `max_steps` steps
    of n_actions rows (features float32, mask int8); the critic's first state layer has
    n_actions x 128 weights, kept four times (values, gradients, Adam's two moments).
    """
    per_step = env.n_actions * (4 * len(env.features) + 1)
    needed = config.trajectories * env.max_steps * per_step + 4 * 4 * 128 * env.n_actions
    available = physical_memory()
    if available is not None and needed > available:
        raise InputError(config.path, "[training] trajectories x [environment] max_steps",
                         f"{config.trajectories} trajectories of up to {env.max_steps:,} steps of {env.n_actions:,} "
                         f"actions x {len(env.features)} features may need {needed / 2**30:,.1f} GiB, more than "
                         f"this machine's {available / 2**30:,.1f} GiB",
                         "lower trajectories, max_steps or max_waits, which bound the steps, or num_jobs")


def physical_memory() -> int | None:
    """Bytes of RAM of this machine; None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def train(config: TrainingConfig, out_dir: str | os.PathLike, progress: bool = True,
          log: Any = None) -> TrainingOutcome:
    """Train as `config` says into `out_dir`; progress on `log` (default: sys.stderr at the call)."""
    started = time.perf_counter()
    out_dir = os.fspath(out_dir)
    env = make_environment(config)
    check_memory(config, env)
    prepare_output_folder(out_dir, checkpoints=bool(config.checkpoint_every))
    # torch after the inputs and the output folder are checked: its import takes seconds, and a
    # refusal should not wait for it.
    import torch

    from joulesim.rl.model_file import save_agent
    from joulesim.rl.ppo import PPOAgent, PPOSettings

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    settings = PPOSettings(seed=config.seed, **config.ppo)
    agent = PPOAgent(env.n_actions, len(env.features), settings, total_updates=config.simulations)
    metadata = model_metadata(config, env)
    csv_path = os.path.join(out_dir, "training.csv")
    rows: list[dict[str, Any]] = []
    bar = None
    if progress:
        from joulesim.console.progress_bar import progress_bar
        bar = progress_bar(config.simulations, "training", "sim", file=log)
    remove_earlier_outputs(out_dir)
    env.reset(seed=config.seed)  # seeds the trajectory sampler; every later reset continues its stream
    opening_rng = np.random.default_rng([config.seed, 1])  # the random openings' own stream
    try:  # a new file ("x": never a FIFO or device put there since remove_earlier_outputs)
        handle = open(csv_path, "x", newline="")
    except OSError as exc:
        raise InputError(out_dir, "output folder", f"cannot write {csv_path}: {exc.strerror or exc}",
                         "give rl train -o a folder you can write") from None
    with handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for simulation in range(1, config.simulations + 1):
            tick = time.perf_counter()
            rewards, energies, makespans, decisions = [], [], [], 0
            for _ in range(config.trajectories):
                observation, _ = env.reset()
                played: list[tuple[Any, int, float, bool]] | None = [] if agent.best_episode is not None else None
                opening = random_opening(env, observation, config.exploring_starts, opening_rng, played)
                if opening is None:  # the whole trajectory was drawn at random: nothing to train on
                    if played and played[-1][3]:  # (but an episode to imitate, if it is the best)
                        agent.offer_episode([step[:3] for step in played])
                    continue
                observation, whole = opening
                while True:
                    action, value, logp = agent.act(observation)
                    following, reward, terminated, truncated, info = env.step(action)
                    agent.record(observation, action, value, logp, reward)
                    decisions += 1
                    observation = following
                    if terminated or truncated:
                        break
                if terminated and played is not None:
                    agent.offer_episode([step[:3] for step in played])
                rewards.append(agent.end_trajectory(0.0))
                if terminated and whole:  # (the policy's own trajectories: none of it drawn at random)
                    energies.append(info["energy"])
                    makespans.append(info["makespan"])
            losses = agent.update()
            row = {"simulation": simulation, "reward": float(np.mean(rewards)) if rewards else float("nan"),
                   "energy": float(np.mean(energies)) if energies else float("nan"),
                   "makespan": float(np.mean(makespans)) if makespans else float("nan"),
                   "edp": float(np.mean([e * m for e, m in zip(energies, makespans)])) if energies else float("nan"),
                   "policy_loss": float(losses["policy_loss"]), "value_loss": float(losses["value_loss"]),
                   "entropy": float(losses["entropy"]), "decisions": decisions,
                   "wall_s": round(time.perf_counter() - tick, 3)}
            rows.append(row)
            writer.writerow(row)
            handle.flush()
            if config.checkpoint_every and simulation % config.checkpoint_every == 0 \
                    and simulation != config.simulations:
                folder = os.path.join(out_dir, "checkpoints")  # made by prepare_output_folder
                save_agent(os.path.join(folder, f"simulation_{simulation:04d}.pt"), agent,
                           {**metadata, "trained_simulations": simulation})
            if bar is not None:
                bar.update(1)
                bar.set_postfix(reward=f"{row['reward']:.4g}", energy=f"{row['energy']:.6g}")
    if bar is not None:
        bar.close()
    env.close()
    kept = agent.keep_best()
    model_path = os.path.join(out_dir, "model.pt")
    save_agent(model_path, agent, {**metadata, "trained_simulations": config.simulations})
    plot = plot_training(rows, os.path.join(out_dir, "training.png"), env.objective)
    best = agent.best_episode.total if agent.best_episode is not None else None
    return TrainingOutcome(model_path, csv_path, plot, rows, time.perf_counter() - started, best, kept)


def random_opening(env: Any, observation: dict[str, Any], probability: float,
                   rng: np.random.Generator, played: list[tuple[Any, int, float, bool]] | None = None,
                   ) -> tuple[dict[str, Any], bool] | None:
    """Exploring starts: while a draw falls below `probability`, the next decision is drawn
    uniformly among the valid ones and played, not trained on; then the policy takes over.
    Returns (the observation it takes over at, whether nothing was drawn), or None when the
    trajectory ended during the opening. `played`: each decision drawn is appended to it as
    (observation, action, reward, whether the episode terminated there), for self-imitation.
    A policy that has settled still sees the states that other openings lead to, and learns
    what to do there; on the small cases of experiments/rl_energy (known_optimum.py) the
    optimum's first decision is often one a policy stops sampling early."""
    whole = True
    while probability > 0 and rng.random() < probability:
        valid = np.flatnonzero(observation["mask"])
        action = int(valid[rng.integers(len(valid))])
        following, reward, terminated, truncated, _ = env.step(action)
        if played is not None:  # (a copy: the environment may reuse its arrays)
            kept = {"features": np.array(observation["features"]), "mask": np.array(observation["mask"])}
            played.append((kept, action, float(reward), bool(terminated)))
        observation = following
        whole = False
        if terminated or truncated:
            return None
    return observation, whole


def plot_training(rows: list[dict[str, Any]], path: str, objective: str) -> str | None:
    """The thesis's loss and reward plots (figures 4.2, 4.12...) as one PNG; None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    x = [r["simulation"] for r in rows]
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for axis, key, title in zip(axes, ("reward", "policy_loss", "value_loss"),
                                (f"mean trajectory reward ({objective})", "policy loss", "value loss")):
        axis.plot(x, [r[key] for r in rows], linewidth=1.2)
        axis.set_title(title)
        axis.set_xlabel("simulation")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    try:  # whole, by a rename: a FIFO or device at the path is refused, never opened (inputs/output_file.py)
        write_whole(path, "training plot", lambda temporary: figure.savefig(temporary, dpi=110, format="png"))
    finally:
        plt.close(figure)
    return path
