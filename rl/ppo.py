"""The Energy scheduler's agent: PPO-clip, actor-critic, GAE advantages, optional SWA.

Seed 002 (thesis "Intelligent Energy-Aware Task Scheduler for HPC Systems", 2023), §3.2.1
(PPO-clip, equation 3.1; GAE, equations 3.3-3.5), §3.2.2 (Adam, stochastic weight averaging)
and §3.3.4 (the agent, its buffer and its training step).

- `PPOSettings`: the hyperparameters (thesis defaults, table 4.5).
- `TrajectoryBuffer`: observations, actions, values, log-probabilities and rewards of every
  step; advantages (GAE) and returns-to-go are computed at the end of each trajectory, whose
  length is free (wait actions make it longer than the number of jobs).
- `PPOAgent`: `act` at every step, `record` its outcome, `end_trajectory` after each
  trajectory, `update` after a simulation (a batch of trajectories): `epochs` passes over the
  minibatches, one Adam step on the actor (clipped surrogate) and one on the critic (MSE to the
  returns) per minibatch. With SWA, the actor's weights are averaged over the last epochs of the
  whole training (torch.optim.swa_utils), and the average is what a model file keeps. With
  self-imitation, `offer_episode` after each episode that terminates, and each update ends with
  `epochs` steps towards the best episode's decisions (`joulesim.rl.best_episode`); with
  keep_best_steps, `keep_best` after the last update makes the greedy policy repeat that episode
  where a few more such steps can.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.distributions import Categorical
from torch.optim.swa_utils import SWALR, AveragedModel

from joulesim.protocol.errors import JoulesimError
from joulesim.rl.best_episode import BestEpisode
from joulesim.rl.networks import ACTOR_WIDTHS, MAX_ACTOR_LAYERS, MAX_ACTOR_WIDTH, NETWORKS, Critic, PairScorer

__all__ = ["PPOSettings", "TrajectoryBuffer", "PPOAgent"]

Observation = dict[str, np.ndarray]


@dataclass
class PPOSettings:
    """PPO hyperparameters; the defaults are the thesis's (seed 002, table 4.5, §3.3.4)."""

    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.1  # epsilon of PPO-clip
    lr_actor: float = 1e-3
    lr_critic: float = 1e-3
    minibatch_size: int = 32
    epochs: int = 50
    entropy_coef: float = 0.0
    # The entropy coefficient of the last update, reached linearly from entropy_coef over the
    # training (None: constant): a policy kept broad while its later decisions are learnt, and
    # narrowed at the end. On the small cases of experiments/rl_energy/README.md ("Training on
    # cases with a known optimum") it reaches the optimum no more often than a constant bonus.
    entropy_end: float | None = None
    # The weight of self-imitation (0: none): after each update, `epochs` steps raise the
    # probability of the best whole episode's decisions so far (joulesim.rl.best_episode).
    self_imitation: float = 0.0
    # The most Adam steps taken after the last update to make the greedy policy repeat the best
    # whole episode played, stopping as soon as it does (0: none; keep_best). A training that
    # played its best schedule and drifted from it ends on it, where the policy can express it.
    keep_best_steps: int = 0
    swa: bool = False
    swa_start: float = 0.75  # fraction of all training epochs after which the actor is averaged
    swa_anneal: float = 0.15  # fraction of all training epochs over which SWALR anneals
    shuffle: bool = False  # the thesis takes the minibatches in order
    seed: int = 0
    network: str = "snn"  # initialisation, see joulesim.rl.networks ("thesis": IRMaSim's N(0, 1))
    # The actor's hidden layers' widths (the thesis's by default); an output layer of width 1
    # follows. A layer of 4 SELUs can saturate on every row of a decision, and then no update
    # moves that decision (experiments/rl_energy/README.md, "Training on cases with a known
    # optimum"); wider layers make that unlikely.
    actor_widths: tuple[int, ...] = ACTOR_WIDTHS
    # Rewards are divided by this before GAE and the critic's targets: "auto" takes the magnitude
    # of the first trajectory's total reward, so that returns stay of order 1 for the whole
    # training (the critic, whose output starts of order 1, cannot fit experiment 2's returns of
    # -25,000 J at learning rate 1e-3); 1.0 is the thesis's (unscaled) rewards. The actor sees
    # normalised advantages either way: the scale only matters through what the critic learns.
    reward_scale: float | str = "auto"

    def __post_init__(self) -> None:
        def bad(name: str, rule: str) -> JoulesimError:
            return JoulesimError(f"PPO setting {name}={getattr(self, name)!r}: it must be {rule}")

        # Plain Python values (numpy scalars from a config would not survive a model file).
        for name in ("minibatch_size", "epochs", "seed", "keep_best_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise bad(name, "an integer")
            setattr(self, name, int(value))
        for name in ("swa", "shuffle"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise bad(name, "true or false")
            setattr(self, name, bool(getattr(self, name)))
        optional = ("entropy_end",) if self.entropy_end is not None else ()
        for name in ("gamma", "lam", "clip", "lr_actor", "lr_critic", "entropy_coef", "self_imitation", "swa_start",
                     "swa_anneal", *optional):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise bad(name, "a finite number")
            setattr(self, name, float(value))
        if self.entropy_end is not None and self.entropy_end < 0:
            raise bad("entropy_end", "None or a number >= 0")
        if self.self_imitation < 0:
            raise bad("self_imitation", "a number >= 0")
        if self.keep_best_steps < 0:
            raise bad("keep_best_steps", "an integer >= 0")
        if self.keep_best_steps and self.swa:  # (the model file keeps the average, which these steps do not move)
            raise bad("keep_best_steps", "0 with swa")
        if self.network not in NETWORKS:
            raise bad("network", f"one of {', '.join(NETWORKS)}")
        widths = self.actor_widths
        if not isinstance(widths, (list, tuple)) or not widths \
                or len(widths) > MAX_ACTOR_LAYERS \
                or any(isinstance(w, bool) or not isinstance(w, numbers.Integral) or not 1 <= w <= MAX_ACTOR_WIDTH
                       for w in widths):
            raise bad("actor_widths", f"a list of 1 to {MAX_ACTOR_LAYERS} integers in [1, {MAX_ACTOR_WIDTH}]")
        self.actor_widths = tuple(int(w) for w in widths)
        if self.reward_scale != "auto":
            value = self.reward_scale
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
                    or not math.isfinite(value) or value <= 0:
                raise bad("reward_scale", '"auto" or a positive finite number')
            self.reward_scale = float(value)
        if self.minibatch_size < 1 or self.epochs < 1:
            raise bad("minibatch_size" if self.minibatch_size < 1 else "epochs", "at least 1")
        if self.seed < 0:
            raise bad("seed", "at least 0")
        for name in ("gamma", "lam", "swa_start", "swa_anneal"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise bad(name, "in [0, 1]")
        for name in ("clip", "lr_actor", "lr_critic"):
            if getattr(self, name) <= 0:
                raise bad(name, "positive")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any], ignore_unknown: bool = False) -> PPOSettings:
        """Settings from a plain dict; unknown names are an error unless `ignore_unknown`."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown and not ignore_unknown:
            raise JoulesimError(f"unknown PPO setting(s) {', '.join(unknown)}: the settings are "
                                f"{', '.join(sorted(known))}")
        return cls(**{name: value for name, value in values.items() if name in known})


class TrajectoryBuffer:
    """Steps of the trajectories of one update, with GAE advantages and returns-to-go.

    Arrays grow by doubling (the thesis reserves a fixed multiple of the expected length, which
    fails when the agent waits more than expected): the update then reads them without copying.
    """

    def __init__(self, n_actions: int, n_features: int):
        self.n_actions = n_actions
        self.n_features = n_features
        self.size = 0
        self.trajectory_start = 0  # first step of the trajectory being recorded
        self._arrays = self._empty(0)

    def _empty(self, capacity: int) -> dict[str, np.ndarray]:
        a, f = self.n_actions, self.n_features
        return {
            "features": np.empty((capacity, a, f), np.float32),
            "masks": np.empty((capacity, a), np.int8),
            **{name: np.empty(capacity, np.int64 if name == "actions" else np.float64)
               for name in ("actions", "values", "logps", "rewards", "advantages", "returns")},
        }

    def __len__(self) -> int:
        return self.size

    @property
    def advantages(self) -> np.ndarray:
        """GAE advantages of the stored steps (not normalised; a view)."""
        return self._arrays["advantages"][:self.trajectory_start]

    @property
    def returns(self) -> np.ndarray:
        """Returns-to-go of the stored steps (a view)."""
        return self._arrays["returns"][:self.trajectory_start]

    @property
    def pending(self) -> int:
        """Steps recorded since the last `finish_trajectory`."""
        return self.size - self.trajectory_start

    def add(self, features: np.ndarray, mask: np.ndarray, action: int, value: float, logp: float,
            reward: float) -> None:
        if self.size == len(self._arrays["actions"]):
            grown = self._empty(max(16, 2 * self.size))
            for name, array in self._arrays.items():
                grown[name][:self.size] = array[:self.size]
            self._arrays = grown
        arrays, i = self._arrays, self.size
        arrays["features"][i] = features  # a copy: the environment may reuse its arrays
        arrays["masks"][i] = mask
        arrays["actions"][i] = action
        arrays["values"][i] = value
        arrays["logps"][i] = logp
        arrays["rewards"][i] = reward
        self.size += 1

    def pending_decisions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The features, masks and actions of the steps recorded since the last
        `finish_trajectory` (views)."""
        arrays, start, stop = self._arrays, self.trajectory_start, self.size
        return arrays["features"][start:stop], arrays["masks"][start:stop], arrays["actions"][start:stop]

    def pending_reward(self) -> float:
        """The total reward of the steps recorded since the last `finish_trajectory`."""
        return float(self._arrays["rewards"][self.trajectory_start:self.size].sum())

    def finish_trajectory(self, last_value: float, gamma: float, lam: float, scale: float = 1.0) -> float:
        """GAE advantages and returns of the steps since the last call; their total reward.

        The rewards are first divided by `scale` (in place). delta_t = r_t + gamma V_{t+1} - V_t
        with V_T = last_value, A_t = sum_l (gamma lam)^l delta_{t+l} (seed 002, equations 3.3
        and 3.4), ret_t = r_t + gamma ret_{t+1} with ret_T = last_value (0 when the episode
        terminated). The total returned is of the rewards as recorded (unscaled).
        """
        start, end = self.trajectory_start, self.size
        rewards = self._arrays["rewards"][start:end]
        total = float(rewards.sum())
        if scale != 1.0:
            rewards /= scale
        values = self._arrays["values"][start:end]
        advantages = self._arrays["advantages"][start:end]
        returns = self._arrays["returns"][start:end]
        next_values = np.append(values[1:], last_value)
        deltas = rewards + gamma * next_values - values
        advantage, ret = 0.0, float(last_value)
        for t in range(end - start - 1, -1, -1):
            advantage = deltas[t] + gamma * lam * advantage
            ret = rewards[t] + gamma * ret
            advantages[t] = advantage
            returns[t] = ret
        self.trajectory_start = end
        return total

    def tensors(self) -> dict[str, torch.Tensor]:
        """The steps of ended trajectories as tensors (features (N, A, F), masks (N, A), ...).

        Advantages are normalised over all of them: (A - mean) / (std + 1e-8).
        """
        n = self.trajectory_start
        arrays = self._arrays
        advantages = arrays["advantages"][:n]
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        return {
            "features": torch.from_numpy(arrays["features"][:n]),  # no copy
            "masks": torch.from_numpy(arrays["masks"][:n]),
            "actions": torch.from_numpy(arrays["actions"][:n]),
            "logps": torch.from_numpy(arrays["logps"][:n].copy()),  # float64, see PPOAgent.act
            "advantages": torch.from_numpy(advantages),
            "returns": torch.from_numpy(arrays["returns"][:n].astype(np.float32)),
        }

    def clear(self) -> None:
        """Forget every step; the arrays are kept for the next update (same sizes, likely)."""
        self.size = 0
        self.trajectory_start = 0


def _seeds(seed: int, count: int) -> list[int]:
    """Independent seeds for network initialisation, sampling and shuffling."""
    return [int(child.generate_state(1, np.uint64)[0] >> 1) for child in np.random.SeedSequence(seed).spawn(count)]


class PPOAgent:
    """PPO actor-critic scoring every (job, node) pair (seed 002 §3.3.4).

    `total_updates` (the number of `update` calls of the whole training) only matters with SWA,
    whose schedule counts epochs over the whole training. `use_swa`: decide with the averaged
    actor once there is one (for evaluation; training samples with the raw actor).
    """

    def __init__(self, n_actions: int, n_features: int, settings: PPOSettings | None = None,
                 total_updates: int = 1, use_swa: bool = False):
        for name, value in (("n_actions", n_actions), ("n_features", n_features), ("total_updates", total_updates)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        self.n_actions = n_actions
        self.n_features = n_features
        self.settings = settings = settings if settings is not None else PPOSettings()
        self.total_updates = total_updates
        self.use_swa = use_swa

        init_seed, sample_seed, shuffle_seed = _seeds(settings.seed, 3)
        init_rng = torch.Generator().manual_seed(init_seed)
        self.actor = PairScorer(n_features, init_rng, settings.network, settings.actor_widths)
        self.critic = Critic(n_actions, n_features, init_rng, settings.network)
        #: What rewards are divided by (see PPOSettings.reward_scale); None until the first
        #: trajectory ends when "auto".
        self.reward_scale: float | None = None if settings.reward_scale == "auto" else float(settings.reward_scale)
        self._sample_rng = torch.Generator().manual_seed(sample_seed)
        self._shuffle_rng = torch.Generator().manual_seed(shuffle_seed)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=settings.lr_actor)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=settings.lr_critic)
        self.buffer = TrajectoryBuffer(n_actions, n_features)
        # With self-imitation: the best whole episode so far (offer_episode), imitated at each update.
        # keep_best needs it too.
        self.best_episode: BestEpisode | None = (BestEpisode() if settings.self_imitation > 0 or settings.keep_best_steps
                                                 else None)
        self.epochs_done = 0  # over the whole training, for the SWA schedule

        self.swa_actor: AveragedModel | None = None
        self.swa_scheduler: SWALR | None = None
        if settings.swa:
            total_epochs = total_updates * settings.epochs
            # The thesis: averaging starts after 75 % of all epochs; the learning rate is annealed
            # linearly over 15 % of them to swa_lr (= lr_actor), then stays constant.
            self._swa_start_epoch = int(settings.swa_start * total_epochs)
            self.swa_actor = AveragedModel(self.actor)
            self.swa_scheduler = SWALR(self.actor_optimizer, swa_lr=settings.lr_actor,
                                       anneal_epochs=max(1, int(settings.swa_anneal * total_epochs)),
                                       anneal_strategy="linear")

    # -- deciding ---------------------------------------------------------------------------

    @property
    def has_swa(self) -> bool:
        """True once the SWA average holds at least one snapshot of the actor."""
        return self.swa_actor is not None and int(self.swa_actor.n_averaged) > 0

    def decision_actor(self) -> PairScorer:
        """The actor that decides: the SWA average if `use_swa` and there is one, else the actor."""
        if self.use_swa and self.has_swa:
            assert self.swa_actor is not None
            return self.swa_actor.module  # type: ignore[return-value]
        return self.actor

    def saved_actor(self) -> PairScorer:
        """The actor a model file keeps: the SWA average if there is one (as the thesis saves it)."""
        if self.has_swa:
            assert self.swa_actor is not None
            return self.swa_actor.module  # type: ignore[return-value]
        return self.actor

    def _dtype(self) -> torch.dtype:
        """The networks' precision: float32 as built, float64 once converted with .double()
        (the tests check the sparse passes there, tighter than float32 rounding allows)."""
        return self.actor.net.layers[0].weight.dtype

    def _observation(self, obs: Observation) -> tuple[np.ndarray, np.ndarray]:
        features = np.asarray(obs["features"], dtype=np.float32)
        mask = np.asarray(obs["mask"])
        if features.shape != (self.n_actions, self.n_features) or mask.shape != (self.n_actions,):
            raise ValueError(f"observation of shape features {features.shape}, mask {mask.shape}: this agent "
                             f"takes features ({self.n_actions}, {self.n_features}) and mask ({self.n_actions},)")
        return features, mask

    def _valid_rows(self, features: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, torch.Tensor]:
        valid = np.flatnonzero(mask)
        if valid.size == 0:
            raise ValueError("observation without any valid action (its mask is all 0)")
        return valid, torch.from_numpy(features[valid]).to(self._dtype())

    def act(self, obs: Observation, greedy: bool = False, value: bool = True) -> tuple[int, float, float]:
        """(action, value, log-probability) for one observation, without gradient; the value is
        NaN with `value=False` (a decider that only acts need not run the critic).

        Sampled from the masked categorical distribution (seeded generator), or the action of
        highest masked logit when `greedy`. Invalid rows have probability exactly 0 and all-zero
        features, so only the valid rows go through the actor and phase 1 of the critic
        (`Critic.forward_sparse`); the result equals the dense forward pass.
        """
        features, mask = self._observation(obs)
        valid, rows = self._valid_rows(features, mask)
        with torch.inference_mode():
            logits = self.decision_actor()(rows)
            # float64: logits can be large (the thesis's N(0, 1) weights, or once trained), and float32
            # log-probabilities near 0 would only be as precise as the float32 spacing at the largest logit.
            logps = torch.log_softmax(logits.double(), 0)
            if greedy:
                choice = int(torch.argmax(logits))  # the first of equal maxima, as on the dense vector
            else:
                # Inverse CDF (cheaper than multinomial on thousands of rows); an action of
                # probability 0 is never the first whose cumulative probability exceeds u.
                cdf = torch.cumsum(logps.exp(), 0)
                u = torch.rand(1, generator=self._sample_rng, dtype=torch.float64) * cdf[-1]
                choice = min(int(torch.searchsorted(cdf, u, right=True)), len(valid) - 1)
            estimate = float(self.critic.forward_sparse(rows, torch.from_numpy(valid))) if value else math.nan
        return int(valid[choice]), estimate, float(logps[choice])

    def probabilities(self, obs: Observation) -> np.ndarray:
        """The policy's probability of every action (A,) for one observation (0 where masked)."""
        features, mask = self._observation(obs)
        valid, rows = self._valid_rows(features, mask)
        with torch.inference_mode():
            probs = torch.softmax(self.decision_actor()(rows).double(), 0).numpy()
        dense = np.zeros(self.n_actions, np.float64)
        dense[valid] = probs
        return dense

    def reseed(self, seed: int) -> None:
        """Restart the sampling generator as a new agent of settings.seed = `seed` starts it."""
        self._sample_rng.manual_seed(_seeds(seed, 3)[1])

    # -- collecting -------------------------------------------------------------------------

    def record(self, obs: Observation, action: int, value: float, logp: float, reward: float) -> None:
        """Store one step of the current trajectory (the arrays are copied)."""
        features, mask = self._observation(obs)
        if not 0 <= action < self.n_actions or not mask[action]:
            raise ValueError(f"recorded action {action} is not a valid action of its observation")
        self.buffer.add(features, mask, action, value, logp, reward)

    def offer_episode(self, opening: list[tuple[Observation, int, float]] = ()) -> bool:
        """With self-imitation, offer the episode that just terminated: the steps of its opening
        played before the recorded ones (observation, action, reward; not trained on), then the
        steps recorded since the last end_trajectory. Call it before end_trajectory, only for an
        episode that terminated (a truncated one has no total). Whether it is the best so far."""
        if self.best_episode is None:
            return False
        buffer = self.buffer
        total = sum(reward for _, _, reward in opening) + (buffer.pending_reward() if buffer.pending else 0.0)
        if not self.best_episode.beats(total):  # (most episodes: nothing to gather)
            return False
        features, masks, actions = [], [], []
        for obs, action, _ in opening:
            obs_features, obs_mask = self._observation(obs)
            features.append(obs_features)
            masks.append(obs_mask)
            actions.append(action)
        recorded_features, recorded_masks, recorded_actions = buffer.pending_decisions()
        features += list(recorded_features)
        masks += list(recorded_masks)
        actions += [int(a) for a in recorded_actions]
        return self.best_episode.offer(total, features, masks, actions)

    def end_trajectory(self, last_value: float = 0.0) -> float:
        """Close the current trajectory (GAE, returns); `last_value` = 0 when it terminated.

        Returns its total (undiscounted, unscaled) reward; an empty trajectory changes nothing.
        `last_value` is the critic's, in the scaled units the critic learns.
        """
        if self.reward_scale is None and self.buffer.pending:
            magnitude = abs(self.buffer.pending_reward())
            self.reward_scale = magnitude if magnitude > 0 and math.isfinite(magnitude) else 1.0
        return self.buffer.finish_trajectory(last_value, self.settings.gamma, self.settings.lam,
                                             self.reward_scale or 1.0)

    # -- training ---------------------------------------------------------------------------

    def entropy_coefficient(self) -> float:
        """The entropy coefficient of the next update: entropy_coef, or with entropy_end, the
        point between them that the updates done so far reach (entropy_end at the last of
        `total_updates`)."""
        settings = self.settings
        if settings.entropy_end is None:
            return settings.entropy_coef
        done = self.epochs_done // settings.epochs
        progress = min(1.0, done / max(1, self.total_updates - 1))
        return settings.entropy_coef + (settings.entropy_end - settings.entropy_coef) * progress

    def update(self) -> dict[str, float]:
        """Train on every stored step, then clear the buffer (seed 002 §3.3.4, training_step).

        Returns the means over all minibatch steps of policy_loss (the actor's loss, entropy
        term included), value_loss and entropy, and the number of samples.
        """
        if self.buffer.pending:
            raise RuntimeError(f"{self.buffer.pending} steps were recorded after the last end_trajectory: "
                               "end the trajectory before update")
        n = len(self.buffer)
        if n == 0:
            self._imitate()
            return {"policy_loss": math.nan, "value_loss": math.nan, "entropy": math.nan, "samples": 0}
        settings = self.settings
        data = self.buffer.tensors()
        size = settings.minibatch_size
        totals = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0}
        steps = 0
        entropy_coef = self.entropy_coefficient()
        for _ in range(settings.epochs):
            order = torch.randperm(n, generator=self._shuffle_rng) if settings.shuffle else None
            for start in range(0, n, size):
                # In order, a minibatch is a view of the buffer; shuffled, a gathered copy.
                pick = slice(start, start + size) if order is None else order[start:start + size]
                valid = data["masks"][pick].bool()
                # Invalid rows are zero and masked: left out.
                rows = data["features"][pick][valid].to(self._dtype())

                dist = Categorical(logits=self.actor.forward_sparse(rows, valid))
                ratio = torch.exp(dist.log_prob(data["actions"][pick]) - data["logps"][pick])
                advantages = data["advantages"][pick]
                clipped = torch.clamp(ratio, 1.0 - settings.clip, 1.0 + settings.clip)
                entropy = dist.entropy().mean()
                policy_loss = -torch.min(ratio * advantages, clipped * advantages).mean() \
                    - entropy_coef * entropy
                self.actor_optimizer.zero_grad()
                policy_loss.backward()
                self.actor_optimizer.step()

                value_loss = F.mse_loss(self.critic.forward_sparse(rows, valid), data["returns"][pick].to(rows.dtype))
                self.critic_optimizer.zero_grad()
                value_loss.backward()
                self.critic_optimizer.step()

                totals["policy_loss"] += policy_loss.item()
                totals["value_loss"] += value_loss.item()
                totals["entropy"] += entropy.item()
                steps += 1
            self.epochs_done += 1
            if self.swa_actor is not None and self.epochs_done > self._swa_start_epoch:
                assert self.swa_scheduler is not None
                self.swa_actor.update_parameters(self.actor)
                self.swa_scheduler.step()
        self.buffer.clear()
        self._imitate()
        stats: dict[str, float] = {name: total / steps for name, total in totals.items()}
        stats["samples"] = n
        return stats

    def _imitate(self) -> None:
        """Self-imitation: `epochs` Adam steps of the actor on the best episode's decisions, each
        minimising self_imitation x their mean negative log-probability (one batch: an episode)."""
        best = self.best_episode
        weight = self.settings.self_imitation
        if best is None or not len(best) or weight == 0:
            return
        batch = self._best_batch()
        for _ in range(self.settings.epochs):
            self._imitation_step(batch, weight)

    def _best_batch(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        best = self.best_episode
        assert best is not None and best.masks is not None and best.features is not None
        valid = torch.from_numpy(best.masks).bool()
        rows = torch.from_numpy(best.features)[valid].to(self._dtype())
        return rows, valid, torch.from_numpy(best.actions)

    def _imitation_step(self, batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor], weight: float) -> None:
        rows, valid, actions = batch
        dist = Categorical(logits=self.actor.forward_sparse(rows, valid))
        loss = -weight * dist.log_prob(actions).mean()
        self.actor_optimizer.zero_grad()
        loss.backward()
        self.actor_optimizer.step()

    def repeats_best(self) -> bool:
        """Whether the greedy policy takes the best episode's action at each of its observations
        (through `act`, as a greedy decider does): the environment's episodes being deterministic
        for a fixed workload, its greedy episode is then that one, step by step."""
        best = self.best_episode
        if best is None or not len(best):
            return False
        assert best.features is not None and best.masks is not None and best.actions is not None
        return all(self.act({"features": features, "mask": mask}, greedy=True, value=False)[0] == action
                   for features, mask, action in zip(best.features, best.masks, best.actions.tolist()))

    def keep_best(self) -> int | None:
        """After the last update: Adam steps of the actor on the best episode's decisions (weight
        1) until the greedy policy repeats it, at most keep_best_steps. Returns the steps taken (0:
        it already did); None when there is no best episode (or no keep_best), or when the policy
        still departs from it after them: the actor and its optimiser are then put back as the
        training left them (a policy pushed towards an episode it cannot repeat could be worse)."""
        limit = self.settings.keep_best_steps
        if limit == 0 or self.best_episode is None or not len(self.best_episode):
            return None
        if self.repeats_best():
            return 0
        actor_before = copy.deepcopy(self.actor.state_dict())
        optimiser_before = copy.deepcopy(self.actor_optimizer.state_dict())
        batch = self._best_batch()
        for taken in range(1, limit + 1):
            self._imitation_step(batch, 1.0)
            if self.repeats_best():
                return taken
        self.actor.load_state_dict(actor_before)
        self.actor_optimizer.load_state_dict(optimiser_before)
        return None
