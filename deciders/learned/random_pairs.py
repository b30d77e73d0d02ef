"""Decider `random-pairs`: seed 002's step structure with a uniformly random valid action.

The yardstick of the Energy scheduler's learning (experiments/rl_energy): the same observation,
mask and one action per time step as the trained policy (`PairDecider`), but each action drawn
uniformly among the valid ones (the wait action included when offered), reproducibly for a
given `seed`. Options as decider `rl` trains with: num_jobs, wait, wait_interval, per_step,
max_waits.
"""

from __future__ import annotations

import numpy as np

from joulesim.deciders.common.decider_options import int_option
from joulesim.deciders.learned.pair_decider import PAIR_OPTIONS, PairDecider

__all__ = ["RandomPairs"]


class RandomPairs(PairDecider):
    NAME = "random-pairs"
    OPTIONS = {**PAIR_OPTIONS, "seed": "seed of the draws (default 0)"}

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.rng = np.random.default_rng(int_option(self.NAME, self.options, "seed", 0, minimum=0))

    def choose(self, features: np.ndarray, mask: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(mask)))
