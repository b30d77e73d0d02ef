"""The Energy scheduler's observation: one feature row per (job, node) pair (seed 002, §3.3.3).

Rows are `job * num_nodes + node` for the first `num_jobs` pending jobs (submission order) and
every node; with the wait action, one more row, last, stands for "wait". A row holds (table 3.1):

- job: wait time, requested time, submit time, requested cores;
- node: availability (idle cores / cores), mean clock rate, static power (the node's static
  power while any core is busy, its idle power otherwise), dynamic power (of its busy cores);
- both: the energy estimate of eq. 3.6, t_req x (f_min / f) x (P_s / (j + 1) + n x P_d), with j
  the jobs running on the node and n the job's tasks.

A pair is valid when the node has enough idle cores for all the job's tasks and the estimate
does not exceed the job's `max_energy` (when it gives one). Invalid rows are all zero, and the
mask says which actions are valid (the wait row too, unless the decider's wait budget is spent).

Every value is a non-negative quantity, brought into [0, 1] in one of two ways (`NORMALISATIONS`):
- "columns" (default): each feature is divided by its largest value among the rows, so that
  each feature spans [0, 1] whatever its unit;
- "matrix": the whole matrix is divided by its Frobenius norm, as the thesis's environment does.
  The largest feature then hides the others: on experiment 2's first observation the energy
  estimate is 0.41-0.58 and every other feature below 0.04 (availability 0.0015, clock rate
  0.004-0.006), so the rows a policy must tell apart differ by a few hundredths.

Nodes whose processors differ in dynamic power use their first processor's (every platform of
the thesis has one processor type per node). With numba (the rl extra) the matrix is filled in
one compiled pass (`pair_features_kernel`); the numpy passes below give the same values and
serve without it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from joulesim.deciders.learned.pair_features_kernel import AVAILABLE as KERNEL_AVAILABLE
from joulesim.deciders.learned.pair_features_kernel import fill_pairs, scale_columns
from joulesim.deciders.node.node_jobs import NodeJob
from joulesim.deciders.node.node_platform import NodePlatform
from joulesim.protocol.errors import JoulesimError

__all__ = ["FEATURES", "ENERGY_FEATURES", "NORMALISATIONS", "PairObservation", "check_features"]

#: Table 3.1, in the thesis's column order.
FEATURES = ("wait_time", "req_time", "submit_time", "requested_cores",
            "availability", "clock_rate", "static_power", "dynamic_power", "energy_estimate")
#: The energy-related features the thesis removes in its experiment 2 variant.
ENERGY_FEATURES = ("static_power", "dynamic_power", "energy_estimate")
#: How the feature matrix is scaled into [0, 1]: per feature (default) or as the thesis, as a whole.
NORMALISATIONS = ("columns", "matrix")


def check_features(names: Sequence[str], where: str) -> tuple[str, ...]:
    """The chosen features, in table 3.1's order (the order they are given in does not matter)."""
    given = names
    names = tuple(names)
    unknown = [n for n in names if n not in FEATURES]
    if isinstance(given, str) or unknown or not names or len(set(names)) != len(names):
        raise JoulesimError(f"{where}: features {list(names)!r}: give a non-empty list of distinct names among "
                            f"{', '.join(FEATURES)}")
    return tuple(name for name in FEATURES if name in names)


class PairObservation:
    """Builds the feature matrix and the action mask from the decider's view of the platform."""

    def __init__(self, platform: NodePlatform, num_jobs: int, wait_action: bool,
                 features: Sequence[str] = FEATURES, normalisation: str = "columns"):
        if normalisation not in NORMALISATIONS:
            raise JoulesimError(f"observation: normalisation {normalisation!r}: use one of {', '.join(NORMALISATIONS)}")
        self.normalisation = normalisation
        self.platform = platform
        self.num_jobs = num_jobs
        self.num_nodes = len(platform)
        self.wait_action = wait_action
        self.features = check_features(features, "observation")
        self.n_actions = num_jobs * self.num_nodes + (1 if wait_action else 0)
        nodes = platform.nodes
        self.size = np.array([n.size for n in nodes], dtype=np.float64)
        self.clock = np.array([n.mean_clock_rate for n in nodes], dtype=np.float64)
        self.static = np.array([n.static_power for n in nodes], dtype=np.float64)
        self.idle_power = np.array([n.idle_power for n in nodes], dtype=np.float64)
        self.dynamic = np.array([n.dynamic_power for n in nodes], dtype=np.float64)
        self.speed_factor = self.clock.min() / self.clock  # f_min / f
        self.assigned = np.zeros(self.num_nodes, dtype=np.float64)  # jobs running per node
        self._job_columns = [i for i, name in enumerate(FEATURES[:4]) if name in self.features]
        self._node_columns = [i for i, name in enumerate(FEATURES[4:8]) if name in self.features]
        self._with_estimate = "energy_estimate" in self.features
        self._chosen = np.array([FEATURES.index(name) for name in self.features], dtype=np.int64)
        #: The compiled one-pass build (numba) when available, else the numpy passes below.
        self.compiled = KERNEL_AVAILABLE
        self._node_part = np.empty((self.num_nodes, 4))
        self._node_part[:, 1] = self.clock

    @staticmethod
    def job_row(job: NodeJob) -> tuple[float, float, float, float]:
        """What the observation reads of a job: (subtime, req_time, ntasks, max_energy or inf)."""
        return (job.subtime, job.req_time, job.ntasks, math.inf if job.max_energy is None else job.max_energy)  # type: ignore[return-value]

    def build(self, now: float, job_rows: np.ndarray, wait_allowed: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(features float32 (n_actions, F), mask int8 (n_actions,)) for the queue's first jobs,
        given as `job_row`s (an array (jobs, 4), queue order); the wait action (when there is
        one) is valid when `wait_allowed`."""
        job_rows = job_rows[: self.num_jobs]
        count = len(job_rows)
        n_nodes = self.num_nodes
        out = np.zeros((self.n_actions, len(self.features)), dtype=np.float32)
        mask = np.zeros(self.n_actions, dtype=np.int8)
        if self.wait_action and wait_allowed:
            mask[-1] = 1
        if not count:
            return out, mask
        idle = np.array(self.platform.idle, dtype=np.float64)
        if self.compiled:
            fill_pairs(out, mask, float(now), job_rows, idle, self.size, self.clock, self.static, self.idle_power,
                       self.dynamic, self.speed_factor, self.assigned, self._chosen)
            if self.normalisation == "columns":
                scale_columns(out, count * n_nodes)
            return out, mask
        subtime, req_time, tasks, limit = job_rows.T
        valid = tasks[:, None] <= idle
        estimate = np.multiply.outer(req_time, self.speed_factor)
        estimate *= self.static / (self.assigned + 1.0) + np.multiply.outer(tasks, self.dynamic)
        if limit.min() < math.inf:
            valid &= estimate <= limit[:, None]
        if not valid.any():
            return out, mask
        # Columns of the job part (one row per job) and of the node part (one row per node),
        # in table order; the matrix is their broadcast, masked, over its Frobenius norm, whose
        # square is summed here from the parts rather than over the whole matrix.
        busy = self.size - idle
        job_part = np.empty((count, 4))
        job_part[:, 0] = now - subtime
        job_part[:, 1:4] = job_rows[:, [1, 0, 2]]
        node_part = self._node_part
        node_part[:, 0] = idle / self.size
        node_part[:, 2] = np.where(busy > 0, self.static, self.idle_power)
        node_part[:, 3] = busy * self.dynamic
        if len(self._job_columns) < 4:
            job_part = job_part[:, self._job_columns]
        if len(self._node_columns) < 4:
            node_part = node_part[:, self._node_columns]
        squares = (job_part * job_part).sum(axis=1) @ valid.sum(axis=1) \
            + (node_part * node_part).sum(axis=1) @ valid.sum(axis=0)
        if self._with_estimate:
            squares += np.einsum("ij,ij->", estimate * estimate, valid)
        rows = count * n_nodes
        if squares > 0:
            scale = 1.0 / np.sqrt(squares)
            view = out[:rows].reshape(count, n_nodes, -1)
            n_job, n_node = job_part.shape[1], node_part.shape[1]
            view[:, :, :n_job] = (job_part * scale)[:, None, :]
            view[:, :, n_job:n_job + n_node] = (node_part * scale)[None, :, :]
            if self._with_estimate:
                view[:, :, -1] = estimate * scale
            view *= valid[:, :, None]
            if self.normalisation == "columns":
                # Over the Frobenius-normalised matrix: a positive factor per column does not
                # change which value is largest (float32 quotients, as scale_columns gives).
                top = out[:rows].max(axis=0)
                np.divide(out[:rows], top, out=out[:rows], where=top > 0)
        mask[:rows] = valid.reshape(-1)
        return out, mask

    def describe(self, action: int, jobs: Sequence[NodeJob]) -> str:
        """What action `action` means, given the queue's jobs, for error messages."""
        if self.wait_action and action == self.n_actions - 1:
            return f"action {action} (wait)"
        job, node = divmod(action, self.num_nodes)
        name = self.platform.nodes[node].name if node < self.num_nodes else str(node)
        what = jobs[job].id if job < len(jobs) else f"queue position {job} (the queue holds {len(jobs)} job(s))"
        return f"action {action} (job {what} on node {name})"
