"""IRMaSim's Heuristic workload manager (the "Policy" grid of seed 002, table 4.1)."""

from __future__ import annotations

import random

from joulesim.deciders.common.decider_options import choice_option, int_option
from joulesim.deciders.node.job_order import (
    JOB_SELECTION_NEEDS,
    JOB_SELECTIONS,
    HeadQueue,
    job_selection_key,
)
from joulesim.deciders.node.node_decider import NodeDecider
from joulesim.deciders.node.node_jobs import NodeJob
from joulesim.deciders.node.node_order import RESOURCE_SELECTION_NEEDS, RESOURCE_SELECTIONS, NodeOrder, node_order
from joulesim.deciders.node.step_rule import StepRule, per_step_option_text

__all__ = ["IrmasimHeuristic", "layout"]


def layout(job: NodeJob, nodes: list[int]) -> list[tuple[int, int]]:
    """(node, tasks) for a job laid out on `nodes` (its `nodes` first viable nodes), as
    IRMaSim's Heuristic.layout_job does: task i goes to nodes[i % len(nodes)]."""
    count = len(nodes)
    return [(node, (job.ntasks - j + count - 1) // count) for j, node in enumerate(nodes[:job.ntasks])]


def cores_needed_per_node(job: NodeJob) -> int:
    """The idle cores a node needs to be viable: ntasks_per_node (never fewer than the tasks
    the layout puts on the first node, so that an inconsistent job cannot overfill a node)."""
    return max(job.ntasks_per_node, -(-job.ntasks // job.nodes))


class IrmasimHeuristic(NodeDecider):
    """IRMaSim's Heuristic grid: strict head of queue, jobs by a selection key, nodes by a resource key.

    Pending jobs are kept sorted by the job selection's key (ties: submission order):
    `random` (a uniform draw per job at submission, from the generator seeded by `seed`),
    `first` (subtime), `shortest` / `longest` (req_time, lowest / highest), `smallest`
    (res), `low_mem` (mem), `low_mem_ops` (the profile's mem_vol). After the submissions of a
    message, and again after its completions, the head job starts while it fits: the viable
    nodes (idle cores >= its ntasks_per_node) are ordered by the resource selection (see
    `joulesim.deciders.node.node_order`; `random` shuffles them with the same generator); with
    fewer viable nodes than the job's `nodes` the pass stops (no backfilling). Task i goes to
    the (i mod nodes)-th chosen node, on its first idle core in core order. With `per_step=one`
    at most one job starts per time step, as the learned scheduler acts (seed 002's step rule;
    IRMaSim's heuristics start all that fit, the default).

    Needs a platform with a node hierarchy (an IRMaSim platform file). Jobs no node set
    could ever take are rejected at submission.
    """

    NAME = "heuristic"
    OPTIONS: dict[str, str] = {
        "job_selection": "pending job order: " + ", ".join(JOB_SELECTIONS) + " (default first)",
        "resource_selection": "node order: " + ", ".join(RESOURCE_SELECTIONS) + " (default first)",
        "seed": "seed of the random job and resource selections (integer, default 0)",
        "per_step": per_step_option_text("all"),
    }

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.job_selection = choice_option(self.NAME, self.options, "job_selection", JOB_SELECTIONS, "first")
        self.resource_selection = choice_option(self.NAME, self.options, "resource_selection",
                                                RESOURCE_SELECTIONS, "first")
        self.seed = int_option(self.NAME, self.options, "seed", 0)
        self.step_rule = StepRule(self.NAME, self.options, "all")
        self.rng = random.Random(self.seed)  # IRMaSim seeds Python's generator the same way
        self.track_bandwidth = self.resource_selection == "high_mem_bw"
        self.queue = HeadQueue()
        self._key = job_selection_key(self.job_selection)
        self.order: NodeOrder | None = None

    def job_needs(self) -> dict[str, str]:
        needs = {}
        if self.job_selection in JOB_SELECTION_NEEDS:
            needs[JOB_SELECTION_NEEDS[self.job_selection]] = f"job_selection={self.job_selection}"
        if self.resource_selection in RESOURCE_SELECTION_NEEDS:
            needs[RESOURCE_SELECTION_NEEDS[self.resource_selection]] = f"resource_selection={self.resource_selection}"
        return needs

    def setup(self) -> None:
        assert self.platform is not None
        self.order = node_order(self.resource_selection, self.platform, self.rng)

    def before_admission(self, job: NodeJob) -> None:
        job.rand = self.rng.random()  # IRMaSim draws for every submitted job, whatever the selection

    def fits_ever(self, job: NodeJob) -> bool:
        assert self.platform is not None
        if job.ntasks < 1 or job.nodes < 1 or job.ntasks_per_node < 1:
            return False
        return self.platform.capacity_count(cores_needed_per_node(job)) >= job.nodes

    def admit(self, job: NodeJob) -> None:
        self.queue.push(job, self._key(job))

    def schedule(self) -> None:
        queue = self.queue
        order = self.order
        assert order is not None
        step_rule = self.step_rule
        while step_rule.may_start(self.now):
            job = queue.head()
            if job is None:
                return
            nodes = order.select(cores_needed_per_node(job), job.nodes)
            if nodes is None:
                return
            queue.pop()
            self.start(job, layout(job, nodes))
            step_rule.started(self.now)
