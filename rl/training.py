"""Training the Energy scheduler: seed 002's simulation loop (§3.3.1, figure 3.4) on the environment.

A training "simulation" schedules `trajectories` trajectories with the current policy, then
updates the actor and the critic once (PPO, `joulesim.rl.ppo`). Written to the output folder:

- `model.pt`, the final agent (with its metadata: platform size, observation, objective);
- `checkpoints/simulation_NNNN.pt` every `checkpoint_every` simulations;
- `training.csv`, one row per simulation: mean trajectory reward, energy, makespan and EDP of
  its trajectories, the losses and entropy of the update, decisions taken, wall time;
- `training.png`, the thesis's three curves (reward, policy loss, value loss), with matplotlib.

The same configuration and seed give the same model (torch runs single-threaded by default).
"""

from __future__ import annotations

import csv
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from joulesim.rl.environment import NodeSchedulingEnv
from joulesim.rl.training_config import TrainingConfig

__all__ = ["train", "TrainingOutcome", "make_environment", "COLUMNS"]

COLUMNS = ["simulation", "reward", "energy", "makespan", "edp", "policy_loss", "value_loss", "entropy",
           "decisions", "wall_s"]


@dataclass
class TrainingOutcome:
    model: str
    csv: str
    plot: str | None
    rows: list[dict[str, Any]]
    wall_s: float


def make_environment(config: TrainingConfig, **overrides: Any) -> NodeSchedulingEnv:
    settings = {**config.environment, **overrides}
    return NodeSchedulingEnv(settings.pop("platform"), settings.pop("workload"), **settings)


def model_metadata(config: TrainingConfig, env: NodeSchedulingEnv) -> dict[str, Any]:
    """What a decider needs to rebuild the observation, and to refuse another platform."""
    return {"num_nodes": env.num_nodes, "num_jobs": env.num_jobs, "n_actions": env.n_actions,
            "n_features": len(env.features), "features": list(env.features), "wait_action": env.wait_action,
            "wait_interval": env.wait_interval, "per_step": env.per_step, "max_waits": env.max_waits,
            "objective": env.objective,
            "platform": os.path.basename(env.platform.source), "node_names": [n.name for n in env.platform.nodes.nodes],
            "seed": config.seed, "simulations": config.simulations, "trajectories": config.trajectories}


def train(config: TrainingConfig, out_dir: str | os.PathLike, progress: bool = True,
          log: Any = sys.stderr) -> TrainingOutcome:
    import torch

    from joulesim.rl.model_file import save_agent
    from joulesim.rl.ppo import PPOAgent, PPOSettings

    started = time.perf_counter()
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    env = make_environment(config)
    settings = PPOSettings(seed=config.seed, **config.ppo)
    agent = PPOAgent(env.n_actions, len(env.features), settings, total_updates=config.simulations)
    metadata = model_metadata(config, env)
    csv_path = os.path.join(out_dir, "training.csv")
    rows: list[dict[str, Any]] = []
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=config.simulations, unit="sim", desc="training", file=log, leave=False)
    env.reset(seed=config.seed)  # seeds the trajectory sampler; every later reset continues its stream
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for simulation in range(1, config.simulations + 1):
            tick = time.perf_counter()
            rewards, energies, makespans, decisions = [], [], [], 0
            for _ in range(config.trajectories):
                observation, _ = env.reset()
                while True:
                    action, value, logp = agent.act(observation)
                    following, reward, terminated, truncated, info = env.step(action)
                    agent.record(observation, action, value, logp, reward)
                    decisions += 1
                    observation = following
                    if terminated or truncated:
                        break
                rewards.append(agent.end_trajectory(0.0))
                if terminated:
                    energies.append(info["energy"])
                    makespans.append(info["makespan"])
            losses = agent.update()
            row = {"simulation": simulation, "reward": float(np.mean(rewards)),
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
                folder = os.path.join(out_dir, "checkpoints")
                os.makedirs(folder, exist_ok=True)
                save_agent(os.path.join(folder, f"simulation_{simulation:04d}.pt"), agent,
                           {**metadata, "trained_simulations": simulation})
            if bar is not None:
                bar.update(1)
                bar.set_postfix(reward=f"{row['reward']:.4g}", energy=f"{row['energy']:.6g}")
    if bar is not None:
        bar.close()
    env.close()
    model_path = os.path.join(out_dir, "model.pt")
    save_agent(model_path, agent, {**metadata, "trained_simulations": config.simulations})
    plot = plot_training(rows, os.path.join(out_dir, "training.png"), env.objective)
    return TrainingOutcome(model_path, csv_path, plot, rows, time.perf_counter() - started)


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
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
