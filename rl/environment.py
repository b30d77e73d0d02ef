"""A Gymnasium environment over joulesim's node model: seed 002's Energy scheduler (§3.3).

Each episode is one trajectory (`TrajectorySampler`) simulated in this process, with no
socket: the simulation runs in a greenlet and talks to an ordinary protocol decider
(`PairDecider`); when that decider must choose, it hands the observation over to `step()`'s
caller and waits for the action. The environment thus sees only protocol messages, as any
decider does: the energy it rewards comes from the protocol's QUERY consumed_energy, asked
whenever simulated time has moved since the last reading and once more when the last job ends.

- observation: {"features": float32 (A, F), "mask": int8 (A,)} with A = num_jobs x nodes
  (+1 for wait), each feature over its largest value in the matrix (`normalisation="columns"`)
  or the matrix over its Frobenius norm (`"matrix"`, the thesis's); `action_masks()` gives the
  mask as booleans (the MaskablePPO convention);
- action: Discrete(A), row `job * nodes + node`, the last one "wait" when enabled; one action
  per time step of the simulator (an instant with submissions, completions or a wake-up), as
  the thesis's IRMaSim, or `per_step="all"`: as many as fit at that instant;
- reward of an action: minus the energy consumed until the next decision (objective
  `energy`), times the time elapsed for `edp`, as the thesis's reward functions;
- terminated when the trajectory's last job ends. Waiting is offered `max_waits` times per
  episode (default 10 x the trajectory's jobs), then masked: before any processor starts,
  waiting costs no energy, and a policy that learnt to wait forever would never end its
  episode (seed 002 §3.3.3 warns of it). Truncated after `max_steps` steps (invalid actions
  ignored count too);
- an action the mask forbids is not applied: the same decision is asked again with reward
  `-invalid_penalty` and `info["invalid_action"]` set (`invalid_action="raise"` makes it an error).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from greenlet import GreenletExit, greenlet

from joulesim.deciders.learned.pair_decider import PairDecider
from joulesim.deciders.learned.pair_observation import FEATURES, NORMALISATIONS, check_features
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.transport_inprocess import InProcessRequester
from joulesim.rl.trajectories import TrajectorySampler
from joulesim.simulation_inputs import platform_from, workloads_from
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.engine.simulation import Simulation
from joulesim.simulator.engine.simulation_config import SimulationConfig

__all__ = ["NodeSchedulingEnv", "OBJECTIVES", "MAX_ACTIONS"]

OBJECTIVES = ("energy", "edp")

#: Actions (job, node pairs) an observation may have: 1,000,000 rows of 9 float32 features are
#: 36 MB per step, and the critic's first state layer 512 MB (four times that with Adam and
#: gradients); seed 002's largest platform has 3,600.
MAX_ACTIONS = 1_000_000


class _Invalid(Exception):
    """An action the mask forbids, sent back to the environment to be asked again."""


class _AgentBridge(PairDecider):
    """The protocol decider of an episode: its choices come from the environment's caller."""

    NAME = "rl environment"

    def __init__(self, env: "NodeSchedulingEnv"):
        super().__init__({"num_jobs": str(env.num_jobs), "wait": str(env.wait_action).lower(),
                          "wait_interval": repr(env.wait_interval), "per_step": env.per_step,
                          "max_waits": str(env.max_waits), "normalisation": env.normalisation})
        self.env = env
        self.features = env.features
        self.energy = 0.0  # joules consumed since t=0, as last answered (nothing before t=0)
        self.energy_time = 0.0
        self._answered = False
        self._static_done = False

    def on_no_more_static_job_to_submit(self) -> None:
        self._static_done = True

    def on_answer(self, data: dict[str, Any]) -> None:
        self.energy = float(data["consumed_energy"])
        self.energy_time = self.now
        self._answered = True

    def decide(self) -> None:
        if self._answered:
            self._answered = False
            self._woken = True  # decide now that the energy is known
        super().decide()
        if self._static_done and not self.pending and not self.platform.runs and self.energy_time < self.now:
            self.query_consumed_energy()  # the last job has ended: the episode's final reading

    def schedule(self) -> None:
        if self.energy_time < self.now and self.can_schedule():
            self.query_consumed_energy()  # the reward needs the energy at this instant; ANSWER comes now
            return
        super().schedule()

    def choose(self, features: np.ndarray, mask: np.ndarray) -> int:
        return self.env._ask(features, mask, self.now, self.energy)


class NodeSchedulingEnv(gym.Env):
    """Schedule a trajectory's jobs on the nodes of an IRMaSim-model platform, one pair at a time."""

    metadata = {"render_modes": []}

    def __init__(self, platform: Any, workload: Any, *, platform_name: str | None = None,
                 objective: str = "energy", num_jobs: int | None = None,
                 trajectory_length: int | None = None, trajectory_origin: int | str = 0,
                 wait_action: bool = False, wait_interval: float = 1.0, per_step: str = "one",
                 features: Sequence[str] = FEATURES, normalisation: str = "columns", idle_power: str = "irmasim",
                 max_waits: int | None = None, max_steps: int | None = None, invalid_action: str = "ignore",
                 invalid_penalty: float = 0.0):
        if objective not in OBJECTIVES:
            raise JoulesimError(f"objective {objective!r}: use one of {', '.join(OBJECTIVES)}")
        if per_step not in ("one", "all"):
            raise JoulesimError(f"per_step {per_step!r}: use one (one action per time step, as the thesis) or all")
        if invalid_action not in ("ignore", "raise"):
            raise JoulesimError(f"invalid_action {invalid_action!r}: use ignore or raise")
        if not (isinstance(wait_interval, (int, float)) and wait_interval > 0 and math.isfinite(wait_interval)):
            raise JoulesimError(f"wait_interval {wait_interval!r}: give a number of seconds > 0")
        self.platform = platform_from(platform, None, platform_name)
        if self.platform.nodes is None:
            raise JoulesimError(f"platform {self.platform.source}: it has no node hierarchy; the energy scheduler "
                                "places jobs on IRMaSim nodes (give an IRMaSim platform file)")
        self.workload = workloads_from(workload)[0]
        self.sampler = TrajectorySampler(self.workload, trajectory_length, trajectory_origin)
        self.objective = objective
        self.num_nodes = len(self.platform.nodes.nodes)
        self.num_jobs = int(num_jobs) if num_jobs else self.sampler.length
        if self.num_jobs < 1:
            raise JoulesimError(f"num_jobs {num_jobs!r}: give an integer >= 1")
        self.wait_action = bool(wait_action)
        self.wait_interval = float(wait_interval)
        self.per_step = per_step
        self.features = check_features(features, "environment")
        if normalisation not in NORMALISATIONS:
            raise JoulesimError(f"normalisation {normalisation!r}: use one of {', '.join(NORMALISATIONS)}")
        self.normalisation = normalisation
        self.idle_power = idle_power
        self.max_waits = max_waits if max_waits is not None else 10 * self.sampler.length
        self.max_steps = max_steps if max_steps is not None else 4 * (self.sampler.length + self.max_waits) + 100
        self.invalid_action = invalid_action
        self.invalid_penalty = float(invalid_penalty)
        self.n_actions = self.num_jobs * self.num_nodes + (1 if self.wait_action else 0)
        if self.n_actions > MAX_ACTIONS:
            raise JoulesimError(f"num_jobs {self.num_jobs} x {self.num_nodes} nodes = {self.n_actions:,} actions: "
                                f"at most {MAX_ACTIONS:,} fit (each is a row of every observation and a weight "
                                "column of the critic); give a smaller num_jobs")
        n_features = len(self.features)
        self.action_space = gym.spaces.Discrete(self.n_actions)
        self.observation_space = gym.spaces.Dict({
            "features": gym.spaces.Box(0.0, 1.0, (self.n_actions, n_features), np.float32),
            "mask": gym.spaces.MultiBinary(self.n_actions),
        })
        self._sim: greenlet | None = None
        self._marker: tuple[float, float] | None = None  # (energy, time) at the last decision
        self._steps = 0
        self._bridge: _AgentBridge | None = None

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._stop_simulation()
        trajectory = self.sampler.sample(self.np_random)
        config = SimulationConfig(platform=self.platform, workloads=[trajectory], export_prefix=None,
                                  energy=True, idle_power=self.idle_power)
        self._bridge = _AgentBridge(self)
        self._marker = None
        self._steps = 0
        self._sim = greenlet(self._simulate)
        outcome = self._sim.switch(config)
        if self._sim.dead:
            raise JoulesimError(f"workload {self.workload.path}: the trajectory of {self.sampler.length} job(s) "
                                "gave no decision to take (no job fits any node?)")
        features, mask, _ = outcome
        return {"features": features, "mask": mask}, {"time": self._bridge.now}

    def step(self, action: Any):
        if self._sim is None or self._sim.dead:
            raise JoulesimError("step() called on a finished episode: call reset() first")
        self._steps += 1
        outcome = self._sim.switch(action)
        if isinstance(outcome, _Invalid):
            if self.invalid_action == "raise":
                self._stop_simulation()
                raise JoulesimError(str(outcome))
            truncated = self._steps >= self.max_steps
            if truncated:
                self._stop_simulation()
            features, mask, _ = self._bridge._last  # type: ignore[union-attr,misc]
            observation = {"features": features.copy(), "mask": mask.copy()}
            return observation, -self.invalid_penalty, False, truncated, {"invalid_action": True,
                                                                           "reason": str(outcome)}
        bridge = self._bridge
        assert bridge is not None
        if self._sim.dead:  # the trajectory's last job has ended
            reward = self._reward(bridge.energy, bridge.energy_time)
            info = {"time": bridge.energy_time, "energy": bridge.energy, "makespan": bridge.energy_time,
                    "edp": bridge.energy * bridge.energy_time}
            self._sim = None
            zeros = np.zeros(self.observation_space["features"].shape, np.float32)
            return {"features": zeros, "mask": np.zeros(self.n_actions, np.int8)}, reward, True, False, info
        features, mask, reward = outcome
        truncated = self._steps >= self.max_steps
        if truncated:
            self._stop_simulation()
        return {"features": features, "mask": mask}, reward, False, truncated, {"time": bridge.now}

    def action_masks(self) -> np.ndarray:
        """The valid actions of the current observation, as booleans."""
        last = self._bridge._last if self._bridge is not None else None
        if last is None:
            return np.zeros(self.n_actions, dtype=bool)
        return last[1].astype(bool)

    def close(self) -> None:
        self._stop_simulation()

    # ------------------------------------------------------------------ the simulation side
    def _simulate(self, config: SimulationConfig):
        assert self._bridge is not None
        return Simulation(config, DeciderLink(InProcessRequester(self._bridge))).run()

    def _ask(self, features: np.ndarray, mask: np.ndarray, now: float, energy: float) -> int:
        """Called by the bridge inside the simulation: hand the observation out, get an action."""
        reward = self._reward(energy, now) if self._marker is not None else None  # moves the marker
        self._marker = (energy, now)  # (the first decision of an episode sets it)
        payload: Any = (features, mask, reward)
        assert self._sim is not None and self._bridge is not None and self._bridge._last is not None
        jobs = self._bridge._last[2]
        while True:
            action = self._sim.parent.switch(payload)
            reason = self._bridge.invalid_reason(action, mask, jobs)
            if reason is None:
                return int(action)
            payload = _Invalid(reason)

    def _reward(self, energy: float, now: float) -> float:
        assert self._marker is not None
        last_energy, last_time = self._marker
        self._marker = (energy, now)
        reward = -(energy - last_energy)
        if self.objective == "edp":
            reward *= now - last_time
        return reward

    def _stop_simulation(self) -> None:
        if self._sim is not None and not self._sim.dead:
            self._sim.throw(GreenletExit)
        self._sim = None

