"""PCBE (seed 000, chapter 3): IRMaSim's Energy workload manager, as at commit 36e1891."""

from __future__ import annotations

import heapq
import math

from joulesim.deciders.common.decider_options import choice_option, float_option
from joulesim.deciders.node.job_order import Entry, PendingByNeed
from joulesim.deciders.node.node_decider import NodeDecider
from joulesim.deciders.node.node_jobs import NodeJob
from joulesim.deciders.node.node_order import NodeBuckets
from joulesim.deciders.node.node_platform import NodeRun
from joulesim.deciders.node.pcbe_estimates import CRITERIA, PRIORITIES, NodeClass, job_key, node_estimate

__all__ = ["PCBE"]


class PCBE(NodeDecider):
    """PCBE: energy- or EDP-ordered jobs on the node of lowest estimate, greedy, with a starvation guard.

    Pending jobs are sorted by req_energy x ntasks (`criterion=energy`) or req_energy x
    req_time x ntasks (`edp`), lowest first (`job_prio=hi_first`: highest first); ties:
    submission order. A job goes to the node with the lowest estimate (`node_prio=hi_first`:
    highest; ties: platform order) among those with at least its ntasks idle cores, all its
    tasks on that node's first idle cores; the estimates are IRMaSim's (see
    `joulesim.deciders.node.pcbe_estimates`), counting the jobs assigned to each node (+1 at
    start, -1 at completion; IRMaSim counts them per node id). Each pass (after the
    submissions of a message, and after its completions) first places the jobs waiting for at
    least `starvation` seconds (default 60), in order, then every remaining job; a job that
    fits nowhere is skipped (no blocking).

    Needs a platform with a node hierarchy (an IRMaSim platform file). Jobs larger than
    every node are rejected at submission.
    """

    NAME = "pcbe"
    OPTIONS: dict[str, str] = {
        "criterion": "what jobs and nodes are ranked by: energy or edp (default energy)",
        "job_prio": "lo_first or hi_first: lowest or highest job estimate first (default lo_first)",
        "node_prio": "lo_first or hi_first: node of lowest or highest estimate (default lo_first)",
        "starvation": "seconds of waiting after which a job is placed before the others (default 60; "
                      "'inf' disables the guard)",
    }

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.criterion = choice_option(self.NAME, self.options, "criterion", CRITERIA, "energy")
        self.job_prio = choice_option(self.NAME, self.options, "job_prio", PRIORITIES, "lo_first")
        self.node_prio = choice_option(self.NAME, self.options, "node_prio", PRIORITIES, "lo_first")
        self.starvation = float_option(self.NAME, self.options, "starvation", 60.0, minimum=0.0, allow_inf=True)
        self.young = PendingByNeed()  # waiting for less than `starvation` seconds
        self.starving = PendingByNeed()
        self._subtimes: list[tuple[float, int, str]] = []  # young jobs by subtime
        self._entries: dict[str, tuple[Entry, int, PendingByNeed]] = {}  # pending job -> (entry, need, pool)
        self.assigned: dict[str, int] = {}  # node id -> jobs assigned (started, not ended)
        self.started_on: dict[str, int] = {}  # running job -> the node it runs on
        self.min_freq = 0.0

    def job_needs(self) -> dict[str, str]:
        return {"req_time": "pcbe (its job order and node estimates)"}

    def setup(self) -> None:
        platform = self.platform
        assert platform is not None
        nodes = platform.nodes
        self.min_freq = min(node.clock_rate for node in nodes)
        classes: dict[NodeClass, int] = {}
        self.classes: list[NodeClass] = []
        self.class_of = []
        for node in nodes:
            node_class = NodeClass.of(node)
            if node_class not in classes:
                classes[node_class] = len(self.classes)
                self.classes.append(node_class)
            self.class_of.append(classes[node_class])
        self.node_ids = [node.id for node in nodes]
        self.nodes_by_id: dict[str, list[int]] = {}
        for node in nodes:
            self.nodes_by_id.setdefault(node.id, []).append(node.index)
            self.assigned[node.id] = 0
        class_of, ids, assigned = self.class_of, self.node_ids, self.assigned
        self.buckets = NodeBuckets(platform, lambda node: (class_of[node], assigned[ids[node]]))

    @staticmethod
    def cores_needed(job: NodeJob) -> int:
        """PCBE puts every task of a job on one node."""
        return max(job.ntasks_per_node, job.ntasks)

    def fits_ever(self, job: NodeJob) -> bool:
        assert self.platform is not None
        return job.ntasks >= 1 and self.cores_needed(job) <= self.platform.max_size

    def admit(self, job: NodeJob) -> None:
        entry = (job_key(self.criterion, self.job_prio, job), job.seq, job.id)
        need = self.cores_needed(job)
        self.young.add(entry, need)
        self._entries[job.id] = (entry, need, self.young)
        heapq.heappush(self._subtimes, (job.subtime, job.seq, job.id))

    # ------------------------------------------------------------------ the pass
    def schedule(self) -> None:
        now = self.now
        threshold = self.starvation
        subtimes = self._subtimes
        while subtimes and now - subtimes[0][0] >= threshold:
            _, _, job_id = heapq.heappop(subtimes)
            found = self._entries.get(job_id)
            if found is not None and found[2] is self.young:
                entry, need, _ = found
                self.young.remove(entry, need)
                self.starving.add(entry, need)
                self._entries[job_id] = (entry, need, self.starving)
        if self.starving:
            self._place([self.starving])
        self._place([self.starving, self.young])

    def _place(self, pools: list[PendingByNeed]) -> None:
        platform = self.platform
        assert platform is not None
        if platform.max_idle() == 0:
            return
        placed = []
        for entry, need in PendingByNeed.walk(pools, platform.max_idle):
            job = self.pending[entry[2]]
            node = self.select_node(job, need)
            if node is not None:
                self._start_on(job, node)
                placed.append(entry[2])
        for job_id in placed:
            entry, need, pool = self._entries.pop(job_id)
            pool.remove(entry, need)

    def select_node(self, job: NodeJob, need: int) -> int | None:
        """The node of lowest estimate among those with `need` idle cores (first in platform
        order among equals; None when no estimate is below infinity, as in IRMaSim)."""
        best_value = math.inf
        best: int | None = None
        values: dict[tuple[int, int], float] = {}
        for _, group, members in self.buckets.buckets(need):
            value = values.get(group)
            if value is None:
                value = node_estimate(self.criterion, self.node_prio, job, self.classes[group[0]], group[1],
                                      self.min_freq)
                values[group] = value
            if value < best_value:
                best_value, best = value, min(members)
            elif value == best_value and best is not None:
                first = min(members)
                if first < best:
                    best = first
        return best

    def _start_on(self, job: NodeJob, node: int) -> None:
        self.start(job, [(node, job.ntasks)])
        self.started_on[job.id] = node
        self._count(self.node_ids[node], +1)

    def released(self, job_id: str, run: NodeRun) -> None:
        node = self.started_on.pop(job_id, None)
        if node is not None:
            self._count(self.node_ids[node], -1)

    def _count(self, node_id: str, change: int) -> None:
        self.assigned[node_id] += change
        for node in self.nodes_by_id[node_id]:
            self.buckets.refresh(node)
