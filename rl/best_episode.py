"""The best whole episode a training has played: what self-imitation trains the policy to repeat.

Self-imitation learning (Oh et al., "Self-Imitation Learning", ICML 2018) trains a policy to
repeat its own past decisions where they led to more than it now gets. `PPOAgent` keeps the
episode of highest total reward played so far (its random opening included, see
`joulesim.rl.training.random_opening`) and, after each PPO update, raises the probability of
its decisions (a cross-entropy term of weight `[ppo] self_imitation`). The paper's value gate
is left out: an environment whose episodes all schedule the same fixed workload gives every
schedule an exact total, so the best one played is a target in itself. A workload that varies
between episodes (trajectory_origin = "random") would make the best episode a lucky draw, and
the training configuration refuses self-imitation there.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BestEpisode"]


class BestEpisode:
    """The decisions of the episode of highest total reward offered so far (the first of equal
    totals stays): the observation's features (steps, A, F) and mask (steps, A), and the action
    taken at each step."""

    __slots__ = ("total", "features", "masks", "actions")

    def __init__(self) -> None:
        self.total: float | None = None
        self.features: np.ndarray | None = None
        self.masks: np.ndarray | None = None
        self.actions: np.ndarray | None = None

    def __len__(self) -> int:
        return 0 if self.actions is None else len(self.actions)

    def beats(self, total: float) -> bool:
        """Whether an episode of this total would be kept (so that a caller gathers its steps only then)."""
        return bool(np.isfinite(total)) and (self.total is None or total > self.total)

    def offer(self, total: float, features: list[np.ndarray], masks: list[np.ndarray], actions: list[int]) -> bool:
        """Keep this episode if its total beats the kept one's (arrays copied); whether it was kept."""
        if not actions or not self.beats(total):
            return False
        self.total = float(total)
        self.features = np.stack(features).astype(np.float32)
        self.masks = np.stack(masks).astype(np.int8)
        self.actions = np.asarray(actions, dtype=np.int64)
        return True
