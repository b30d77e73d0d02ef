"""A yardstick for the Energy scheduler: sb3-contrib's MaskablePPO on the same environment.

Issue 25 asks whether the environment is learnable at all, independently of this project's PPO
(`joulesim.rl.ppo`): a maintained implementation of masked PPO, trained on the same
`NodeSchedulingEnv`, with the same hyperparameters (learning rate, clip, gamma, lambda, epochs,
minibatch) and the same budget (one rollout of `trajectories` x the trajectory's jobs steps per
training simulation), then tested like the thesis's agent: `runs` whole-workload episodes with
sampled actions.

Its observation is the same (job, node) matrix. `RowFeatures` applies one small MLP to every
row (as the thesis's actor does), and MaskablePPO's usual heads (two layers of 64) map the
flattened rows to the action logits and to the value. Rewards are normalised by
stable-baselines3's VecNormalize (a running estimate of the discounted return's spread), the
library's counterpart of `PPOSettings.reward_scale`. Needs the `rl-baselines` extra.
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import nn

from joulesim.console.install_hint import install_hint
from joulesim.protocol.errors import JoulesimError
from joulesim.rl.ppo import PPOSettings
from joulesim.rl.training import make_environment
from joulesim.rl.training_config import TrainingConfig

__all__ = ["RowFeatures", "POLICY_KWARGS", "train_maskable", "evaluate_maskable"]

try:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise JoulesimError(f"the MaskablePPO baseline needs the rl-baselines extra ({exc.name} is missing): "
                        f"{install_hint('rl-baselines')}") from None


class RowFeatures(BaseFeaturesExtractor):
    """One MLP (F -> 32 -> 16, tanh) on every (job, node) row; the rows side by side."""

    ROW_WIDTH = 16

    def __init__(self, observation_space: Any):
        actions, features = observation_space["features"].shape
        super().__init__(observation_space, features_dim=actions * self.ROW_WIDTH)
        self.rows = nn.Sequential(nn.Linear(features, 32), nn.Tanh(), nn.Linear(32, self.ROW_WIDTH), nn.Tanh())

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.rows(observations["features"]).flatten(1)


#: The policy of every MaskablePPO built here: the row extractor, one for the actor and one for the critic.
POLICY_KWARGS = {"features_extractor_class": RowFeatures, "share_features_extractor": False}


def train_maskable(config: TrainingConfig, seed: int, path: str | os.PathLike) -> str:
    """Train MaskablePPO as `config` trains the thesis's agent (same budget); save it at `path`."""
    torch.set_num_threads(config.threads)
    env = make_environment(config)
    env.reset(seed=seed)
    steps = config.trajectories * env.sampler.length  # one training simulation's decisions (no waits)
    ppo = PPOSettings(**config.ppo)  # the configuration's values, the thesis's defaults where it is silent
    vector = VecNormalize(DummyVecEnv([lambda: env]), norm_obs=False, norm_reward=True, gamma=ppo.gamma)
    model = MaskablePPO("MultiInputPolicy", vector, learning_rate=ppo.lr_actor, n_steps=steps,
                        batch_size=min(ppo.minibatch_size, steps), n_epochs=ppo.epochs, gamma=ppo.gamma,
                        gae_lambda=ppo.lam, clip_range=ppo.clip, seed=seed, device="cpu", policy_kwargs=POLICY_KWARGS)
    model.learn(total_timesteps=config.simulations * steps)
    model.save(os.fspath(path))
    env.close()
    return os.fspath(path)


def evaluate_maskable(model_path: str | os.PathLike, config: TrainingConfig, runs: int = 100,
                      untrained_seed: int | None = None, workload: str | os.PathLike | None = None
                      ) -> list[dict[str, float]]:
    """`runs` episodes of the whole workload with actions sampled (torch seeded 0, 1, ... per run):
    energy, makespan and EDP of each, as the environment's last step reports them. With
    `untrained_seed`, the MaskablePPO agent as built with that seed, before any training. With
    `workload`, that workload instead of the configuration's (of as many jobs: one the agent never saw)."""
    overrides: dict = {"workload": os.fspath(workload)} if workload is not None else {}
    env = make_environment(config, trajectory_length=None, trajectory_origin=0, **overrides)
    if untrained_seed is not None:
        model = MaskablePPO("MultiInputPolicy", DummyVecEnv([lambda: env]), seed=untrained_seed, device="cpu",
                            policy_kwargs=POLICY_KWARGS)
    else:
        model = MaskablePPO.load(os.fspath(model_path), device="cpu")
    results = []
    for run in range(runs):
        torch.manual_seed(run)
        observation, _ = env.reset(seed=run)
        while True:
            action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=False)
            observation, _, terminated, truncated, info = env.step(int(action))
            if terminated or truncated:
                break
        if not terminated:
            raise JoulesimError(f"MaskablePPO test run {run} was truncated after {env.max_steps} steps")
        results.append({"energy": float(info["energy"]), "makespan": float(info["makespan"]),
                        "edp": float(info["edp"])})
    env.close()
    return results
