"""The Energy scheduler's two networks: a pair scorer (actor) and a two-phase critic.

Seed 002 (thesis "Intelligent Energy-Aware Task Scheduler for HPC Systems", 2023), §3.2.2 and
§3.3.4. Both are self-normalizing networks (SNN, Klambauer et al. 2017, the thesis's [41]): SELU
activations and zero biases. An observation is a matrix of shape (A, F): one row of F features
per (job, node) pair, plus a last all-zero row for the wait action when it is enabled. Rows of
invalid pairs are all zero and masked out.

Two initialisations (`NETWORKS`):
- "snn" (default): weights from N(0, 1/fan_in), as the SNN paper prescribes (each neuron's
  weights sum to ~0 and their squares to ~1, so a layer keeps unit variance), and the actor's
  last layer linear: its output is a logit.
- "thesis": IRMaSim's code, weights from N(0, 1) and SELU after the actor's last layer too. The
  variance then grows ~fan_in-fold per layer (pre-activation std 0.5, 2.3, 7.6, 15, 28, 40
  through the actor on experiment 2's first observation), and the last SELU maps every row
  whose pre-activation is below about -5 to the same -1.7581 with a zero gradient: 37 of 100
  seeds start with every valid row there, a uniform policy that no update can move
  (experiments/rl_energy/README.md, "Why the thesis's agent collapses").

- `PairScorer` applies one MLP to every row (F -> 16 -> 16 -> 8 -> 8 -> 4 -> 4 -> 1, SELU between
  layers, the thesis's; other hidden widths with `[ppo] actor_widths`) and gives one logit per
  action.
- `Critic` scores every row the same way (F -> 32 -> 16 -> 8 -> 4 -> 1, SELU) and then maps the
  A scores to the state value (A -> 128 -> 64 -> 32 -> 16 -> 8 -> 1, no activation at the end):
  its size depends on A, so a trained model is tied to a platform size and a number of jobs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ACTOR_WIDTHS", "MASK_PENALTY", "NETWORKS", "SeluStack", "PairScorer", "Critic", "masked_logits"]

#: Added (negated) to the logit of every invalid action: exp(-1e6) is exactly 0 in float32, so
#: masked actions have probability 0 (seed 002 §3.3.4, "a mask is applied").
MASK_PENALTY = 1e6

#: The actor's hidden layers (the thesis's); its output layer of width 1 follows them.
ACTOR_WIDTHS = (16, 16, 8, 8, 4, 4)
#: Bounds on `[ppo] actor_widths`: past them a network is far beyond what a pair scorer needs,
#: and the memory check of training does not count the actor.
MAX_ACTOR_LAYERS = 16
MAX_ACTOR_WIDTH = 1024
CRITIC_PAIR_WIDTHS = (32, 16, 8, 4, 1)
CRITIC_STATE_WIDTHS = (128, 64, 32, 16, 8, 1)

#: Initialisations: "snn" (N(0, 1/fan_in), linear logits) or "thesis" (IRMaSim's N(0, 1), SELU logits).
NETWORKS = ("snn", "thesis")


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """logits + (mask - 1) * 1e6: invalid actions (mask 0) are pushed to probability 0."""
    return logits + (mask.to(logits.dtype) - 1.0) * MASK_PENALTY


class SeluStack(nn.Module):
    """Linear layers of the given widths with SELU between them (and after the last if asked).

    The forward pass calls the layers' functions directly: per-module call overhead is most of
    the cost of one decision on a small platform.
    """

    def __init__(self, n_in: int, widths: tuple[int, ...], last_activation: bool, generator: torch.Generator,
                 network: str = "snn"):
        super().__init__()
        if network not in NETWORKS:
            raise ValueError(f"network {network!r}: use one of {', '.join(NETWORKS)}")
        self.last_activation = last_activation
        self.layers = nn.ModuleList()
        for n_out in widths:
            # skip_init: no default (Kaiming) initialisation, which would draw from torch's global RNG.
            linear = nn.utils.skip_init(nn.Linear, n_in, n_out)
            std = 1.0 if network == "thesis" else n_in ** -0.5
            nn.init.normal_(linear.weight, 0.0, std, generator=generator)
            nn.init.zeros_(linear.bias)
            self.layers.append(linear)
            n_in = n_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = F.linear(x, layer.weight, layer.bias)
            if i < last or self.last_activation:
                x = torch.selu(x)
        return x


class PairScorer(nn.Module):
    """The actor: one logit per row, shape (..., A, F) -> (..., A)."""

    def __init__(self, n_features: int, generator: torch.Generator, network: str = "snn",
                 widths: tuple[int, ...] = ACTOR_WIDTHS):
        super().__init__()
        self.n_features = n_features
        self.net = SeluStack(n_features, (*widths, 1), last_activation=network == "thesis", generator=generator,
                             network=network)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.net(features).squeeze(-1)

    def forward_sparse(self, rows: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """Float64 masked logits (..., A) from the valid rows only: `rows` = features[valid].

        Invalid actions get -1e6 instead of their score - 1e6: either way their probability is
        exactly 0 and their gradient 0, so the distribution, log-probabilities, entropy and
        gradients equal those of `masked_logits(self(features), mask)`, for a fraction of the
        work. Float64 because logits can be large (with the thesis's N(0, 1) weights, or once
        trained), and float32 log-probabilities near 0 would only be as precise as the float32
        spacing at the largest logit.
        """
        logits = torch.full(valid.shape, -MASK_PENALTY, dtype=torch.float64)
        logits[valid] = self.net(rows).squeeze(-1).double()
        return logits


class Critic(nn.Module):
    """The critic: per-row scores (phase 1), then the state value from all A of them (phase 2)."""

    def __init__(self, n_actions: int, n_features: int, generator: torch.Generator, network: str = "snn"):
        super().__init__()
        self.n_actions = n_actions
        self.n_features = n_features
        self.pair_net = SeluStack(n_features, CRITIC_PAIR_WIDTHS, last_activation=True, generator=generator,
                                  network=network)
        self.state_net = SeluStack(n_actions, CRITIC_STATE_WIDTHS, last_activation=False, generator=generator,
                                   network=network)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """(..., A, F) -> (...,): the value of each observation."""
        return self.state_net(self.pair_net(features).squeeze(-1)).squeeze(-1)

    def forward_sparse(self, rows: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
        """The values of observations whose rows outside `where` are all zero.

        `where` is a bool mask (..., A) and `rows` (k, F) = features[where], or, for one
        observation, an index (k,) and its rows. Phase 1 maps an all-zero row to a constant
        (it depends only on the biases), so it runs on the k given rows plus one zero row
        instead of all of them; equal to `forward` on the dense observations (gradients too).
        """
        padded = torch.cat((rows, rows.new_zeros(1, self.n_features)))
        scores = self.pair_net(padded).squeeze(-1)
        shape = (*where.shape[:-1], self.n_actions) if where.dtype == torch.bool else (self.n_actions,)
        dense = scores[-1].expand(shape).clone()
        dense[where] = scores[:-1]
        return self.state_net(dense).squeeze(-1)
