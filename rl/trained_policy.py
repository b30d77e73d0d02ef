"""Decider `rl`: a policy trained by `joulesim rl train` (seed 002's Energy scheduler), as an
ordinary decider process.

`--option model=FILE` names the model; the observation (jobs in view, features, wait action
and its interval, actions per time step) is the one the model was trained with, read from the file. The platform
must have the node count the model was trained for: another size is refused before the first
decision. `mode=greedy` (default) takes the highest-scored valid pair; `mode=sample` draws
from the policy as the thesis's test runs do, reproducibly for a given `seed`.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from joulesim.deciders.common.decider_options import choice_option, int_option
from joulesim.deciders.learned.pair_decider import PairDecider
from joulesim.deciders.learned.pair_observation import NORMALISATIONS, check_features
from joulesim.protocol.errors import JoulesimError

# torch is the rl extra's: its absence makes this module fail to import (the decider registry then
# says which extra to install), but it is imported only when a model is loaded, so that listing
# the deciders does not load it.
if importlib.util.find_spec("torch") is None:
    raise ImportError("No module named 'torch'", name="torch")

__all__ = ["RLPolicy"]


class RLPolicy(PairDecider):
    """A trained Energy-scheduler policy (seed 002): one (job, node) pair at a time, on IRMaSim nodes."""

    NAME = "rl"
    OPTIONS: dict[str, str] = {
        "model": "the model file written by joulesim rl train (required)",
        "mode": "greedy (the best valid pair, default) or sample (drawn from the policy)",
        "seed": "seed of the draws in mode=sample (default 0)",
    }

    def __init__(self, options: dict[str, str] | None = None, loaded: tuple[Any, dict] | None = None):
        """loaded: (agent, metadata) of `model`, already read (load_agent) and seeded with `seed`
        (agent.reseed), for many runs of one model without reading the file each time."""
        super().__init__({})
        self.options = dict(options or {})
        path = self.options.get("model")
        if not path:
            raise JoulesimError("decider rl: option model=FILE is required (a model written by "
                                "`joulesim rl train CONFIG`, e.g. OUT/model.pt)")
        self.mode = choice_option(self.NAME, self.options, "mode", ("greedy", "sample"), "greedy")
        seed = int_option(self.NAME, self.options, "seed", 0, minimum=0)
        from joulesim.rl.model_file import ModelFileError, load_agent
        from joulesim.rl.ppo import PPOSettings

        self.agent, self.metadata = loaded or load_agent(path, settings=PPOSettings(seed=seed or 0))
        self.model_path = path
        meta = self.metadata
        try:
            self.num_jobs = int(meta["num_jobs"])
            self.wait_action = bool(meta["wait_action"])
            self.wait_interval = float(meta.get("wait_interval", 1.0))
            self.step_rule.one_per_step = meta.get("per_step", "one") == "one"
            self.max_waits = meta.get("max_waits")
            self.features = check_features(meta["features"], f"model file {path}")
            # Models written before the choice existed saw the thesis's normalisation.
            self.normalisation = str(meta.get("normalisation", "matrix"))
            if self.normalisation not in NORMALISATIONS:
                raise ValueError(f"normalisation {self.normalisation!r}")
            self.trained_nodes = int(meta["num_nodes"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"decider rl: model file {path} lacks the observation's description ({exc}); "
                                "train it again with joulesim rl train") from None

    def setup(self) -> None:
        assert self.platform is not None
        if len(self.platform) != self.trained_nodes:
            raise JoulesimError(
                f"decider rl: model file {self.model_path} was trained for a platform of {self.trained_nodes} "
                f"nodes ({self.metadata.get('platform', '?')}), but this platform has {len(self.platform)}: "
                "train a model on this platform, or simulate the platform the model was trained on")
        super().setup()

    def choose(self, features: np.ndarray, mask: np.ndarray) -> int:
        action, _, _ = self.agent.act({"features": features, "mask": mask}, greedy=self.mode == "greedy",
                                      value=False)
        return int(action)
