"""The decision structure of seed 002's Energy scheduler, with the policy left open.

At every time step where at least one of the first `num_jobs` pending jobs fits some node, the
decider builds the (job, node) observation (`PairObservation`) and asks `choose` for one
action: a pair, whose job then runs all its tasks on that node's first idle cores, or (with
the wait action) "wait", which asks to be called again `wait_interval` seconds later and ends
the step; after `max_waits` waits in a run, waiting is no longer offered (a policy that
learns that waiting is free, before any processor has started, would otherwise never end its
run: the thesis observed it). A time step is an instant where the simulator reports something (submissions,
completions, a requested call): as in the thesis's IRMaSim, one action per step
(`per_step=one`, the default), so that a job that fits now may still go to a node that frees
later; `per_step=all` asks again at the same instant until nothing more fits or it waits.

The thesis's environment handles a simulator step in this order: new submissions join the
queue, ended jobs free their cores, then the scheduler decides; so does this decider. A
wake-up requested by a wait is cancelled by any later decision (as IRMaSim unsets its alarm):
a cancelled wake-up that arrives alone is answered with nothing.

Subclasses implement `choose` (a trained policy, or the Gymnasium environment handing the
observation to an agent). Jobs larger than every node are rejected at submission.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import numpy as np

from joulesim.deciders.common.decider_options import bool_option, choice_option, float_option, int_option
from joulesim.deciders.learned.pair_observation import FEATURES, NORMALISATIONS, PairObservation
from joulesim.deciders.node.node_decider import NodeDecider
from joulesim.deciders.node.node_jobs import NodeJob
from joulesim.deciders.node.node_platform import NodeRun
from joulesim.deciders.node.step_rule import StepRule, per_step_option_text
from joulesim.protocol.errors import JoulesimError

__all__ = ["PairDecider", "PAIR_OPTIONS"]

PAIR_OPTIONS: dict[str, str] = {
    "num_jobs": "how many jobs from the front of the queue the observation holds (default: 10)",
    "wait": "true to offer the wait action (default false)",
    "wait_interval": "seconds until a wait ends (default 1, as the thesis's timer)",
    "per_step": per_step_option_text("one"),
    "max_waits": "waits allowed in a run before waiting is no longer offered (default: no limit)",
    "normalisation": "columns (each feature over its largest value, default) or matrix (the whole matrix over "
                     "its Frobenius norm, as the thesis)",
}


class PairDecider(NodeDecider):
    NAME = "pairs"
    OPTIONS = PAIR_OPTIONS

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.num_jobs = int_option(self.NAME, self.options, "num_jobs", 10, minimum=1)
        self.wait_action = bool_option(self.NAME, self.options, "wait", False)
        self.wait_interval = float_option(self.NAME, self.options, "wait_interval", 1.0, minimum=0.0,
                                          minimum_excluded=True)
        self.step_rule = StepRule(self.NAME, self.options, "one")
        self.max_waits = int_option(self.NAME, self.options, "max_waits", None, minimum=0)
        self.waits = 0
        self.normalisation = choice_option(self.NAME, self.options, "normalisation", NORMALISATIONS, "columns")
        self.features: tuple[str, ...] = FEATURES
        self.observation: PairObservation | None = None
        self._alarm: float | None = None  # time of the wake-up still wanted
        self._woken = False
        self._last: tuple[np.ndarray, np.ndarray, list[NodeJob]] | None = None
        # The pending jobs' observation rows, in queue order (grown by doubling).
        self._rows = np.empty((64, 4))

    # ------------------------------------------------------------------ hooks
    def choose(self, features: np.ndarray, mask: np.ndarray) -> int:
        """The action for this observation (an index into its rows)."""
        raise NotImplementedError

    def job_needs(self) -> dict[str, str]:
        return {"req_time": f"{self.NAME} (the req_time feature and the energy estimate)"}

    def setup(self) -> None:
        assert self.platform is not None
        self.observation = PairObservation(self.platform, self.num_jobs, self.wait_action, self.features,
                                           self.normalisation)

    def fits_ever(self, job: NodeJob) -> bool:
        assert self.platform is not None
        return 1 <= job.ntasks <= self.platform.max_size

    def admit(self, job: NodeJob) -> None:
        count = len(self.pending) - 1  # the base class has already added the job
        if count == len(self._rows):
            self._rows = np.concatenate([self._rows, np.empty_like(self._rows)])
        self._rows[count] = PairObservation.job_row(job)

    def released(self, job_id: str, run: NodeRun) -> None:
        if self.observation is not None:
            self.observation.assigned[run.parts[0][0]] -= 1  # every job runs on one node

    # ------------------------------------------------------------------ the step
    def on_requested_call(self) -> None:
        if self._alarm is not None and self.reached(self._alarm):
            self._alarm = None
            self._woken = True

    def decide(self) -> None:
        platform = self.platform
        if platform is None:
            return
        changed = self._submitted or self._woken or self._availability_changed or bool(self._completed)
        self._submitted = self._woken = self._availability_changed = False
        completed, self._completed = self._completed, []
        for job_id in completed:
            run = platform.finish(job_id)
            if run is not None:
                self.released(job_id, run)
        if changed:
            self.schedule()

    def can_schedule(self) -> bool:
        """Whether one of the first num_jobs pending jobs fits a node now (its size only)."""
        assert self.platform is not None
        top = self.platform.max_idle()
        for count, job in enumerate(self.pending.values()):
            if count == self.num_jobs:
                return False
            if job.ntasks <= top:
                return True
        return False

    def schedule(self) -> None:
        observation = self.observation
        assert observation is not None
        wait_index = observation.n_actions - 1 if self.wait_action else -1
        while self.can_schedule():
            if not self.step_rule.may_start(self.now):
                return
            count = min(len(self.pending), self.num_jobs)
            jobs = list(islice(self.pending.values(), count))  # not a copy of the whole queue
            features, mask = observation.build(self.now, self._rows[:count],
                                               self.max_waits is None or self.waits < self.max_waits)
            if not mask[: observation.num_jobs * observation.num_nodes].any():
                return  # fits by size, but every pair is over its job's max_energy
            self._last = (features, mask, jobs)
            action = self.choose(features, mask)
            if action == wait_index and mask[wait_index]:
                self.waits += 1
                self._alarm = self.now + self.wait_interval
                self.call_me_later(self._alarm)
                return
            self.apply(action, mask, jobs)

    def invalid_reason(self, action: Any, mask: np.ndarray, jobs: list[NodeJob]) -> str | None:
        """Why `action` cannot be taken on the observation whose mask is `mask` (None: it can)."""
        observation = self.observation
        assert observation is not None
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) \
                or not 0 <= int(action) < observation.n_actions:
            return (f"decider {self.NAME}: action {action!r} is not an integer in [0, {observation.n_actions}) "
                    f"(the (job, node) pairs{' and wait' if self.wait_action else ''})")
        if not mask[int(action)]:
            return (f"decider {self.NAME}: {observation.describe(int(action), jobs)} is not valid at t={self.now:g}: "
                    "the job is absent, the node lacks idle cores or the estimate exceeds the job's max_energy "
                    "(choose among the actions the mask allows)")
        return None

    def apply(self, action: Any, mask: np.ndarray, jobs: list[NodeJob]) -> None:
        """Start the pair `action` names; an invalid action is an error naming it."""
        reason = self.invalid_reason(action, mask, jobs)
        if reason is not None:
            raise JoulesimError(reason)
        observation = self.observation
        assert observation is not None
        job_index, node = divmod(int(action), observation.num_nodes)
        job = jobs[job_index]
        self.start(job, [(node, job.ntasks)])
        rows, last = self._rows, len(self.pending)  # the queue's rows close up behind the job
        rows[job_index:last] = rows[job_index + 1:last + 1]
        observation.assigned[node] += 1
        self._alarm = None  # a decision cancels the pending wake-up
        self.step_rule.started(self.now)
