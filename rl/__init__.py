"""Reinforcement learning on IRMaSim node platforms (seed 002): a Gymnasium environment, a PPO
agent, training and evaluation. Needs the `rl` extra (`pip install '.[rl]'` in the joulesim checkout).

    from joulesim.rl import NodeSchedulingEnv
    env = NodeSchedulingEnv("platform.json", "workload.json", objective="energy")

The environment is also registered with Gymnasium as "joulesim/NodeScheduling-v0"
(gymnasium.make("joulesim/NodeScheduling-v0", platform=..., workload=...)).
"""

from joulesim.rl import cpu_kernels

cpu_kernels.pin()  # (before any module of this package imports torch: cpu_kernels.py says why)

import gymnasium  # noqa: E402

from joulesim.rl.environment import OBJECTIVES, NodeSchedulingEnv  # noqa: E402

__all__ = ["NodeSchedulingEnv", "OBJECTIVES"]

if "joulesim/NodeScheduling-v0" not in gymnasium.registry:
    gymnasium.register(id="joulesim/NodeScheduling-v0", entry_point="joulesim.rl.environment:NodeSchedulingEnv",
                       disable_env_checker=True)
