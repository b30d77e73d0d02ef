"""Conservative backfilling, with the five placement variants of the Batsim thesis (section 5.5.2)."""

from __future__ import annotations

import math
from typing import Any

from procset import ProcSet

from joulesim.deciders.common.decider_options import choice_option, int_option
from joulesim.deciders.common.machine_masks import mask_to_procset, procset_to_mask
from joulesim.deciders.common.pinned_jobs import PINNED_OPTION
from joulesim.deciders.common.placement import (
    LOCAL_PLACEMENTS,
    PLACEMENTS,
    clusters_from_labels,
    clusters_of_size,
    longest_run,
    placement_rule,
)
from joulesim.deciders.common.queue_policy import QueuePolicy
from joulesim.protocol.decider import SubmittedJob
from joulesim.protocol.errors import JoulesimError


class ConservativeBackfilling(QueuePolicy):
    """Conservative backfilling: every waiting job gets a reservation that later jobs never delay.

    At each call the availability profile is rebuilt from the running jobs (freed at their
    estimated end, start + walltime, at least `now`; never for jobs without walltime, nor
    machines that became unavailable); then every waiting job, in queue order, is inserted
    at the earliest time where enough machines stay free for its whole walltime (until
    infinity without walltime) and the placement accepts that hole. Within the hole,
    `choose_machines` picks the machines. Jobs whose reservation starts now are started.

    Option `placement` (`joulesim.deciders.common.placement`, thesis section 5.5.2):
    `basic` (default: the lowest ids), `best_effort_contiguous` (the lowest block of
    consecutive ids, else as basic), `best_effort_local` (the lowest ids of the first
    cluster able to take the job, else as basic), `contiguous` and `local` (the same, but a
    hole without such a block / cluster is refused and the search goes on later in the
    profile). The local variants read each compute resource's cluster from SIMULATION_BEGINS:
    its `zone_properties["cluster"]`, else its `properties["cluster"]`; option
    `cluster_size=N` overrides them (ids 0..N-1 are cluster 0, N..2N-1 cluster 1, ...).
    Jobs that no hole could ever take under the placement (wider than every cluster for
    `local`, than every run of consecutive ids for `contiguous`) are rejected at submission,
    as are jobs wider than the platform.

    The profile is machine-level: `self.times[k]` is the start of slice k (slice k ends at
    `self.times[k + 1]`, the last one never ends) and `self.masks[k]` the set of machines
    free during it, as a bitmask (see `profile()` for ProcSets). Slice 0 always starts now.

    Subclasses may override `choose_machines(hole, n)` (ProcSet in, ProcSet or None out);
    the default applies the placement option on bitmasks directly.

    When only submissions happened since the last call (no job ended, no availability
    change, no reservation became due), the previous plan is kept and only the new jobs are
    inserted: a rebuild would give the same reservations. `incremental = False` disables
    this.
    """

    NAME = "conservative"
    OPTIONS: dict[str, str] = {
        "placement": "where a job goes in its hole: " + ", ".join(PLACEMENTS) + " (default basic)",
        "cluster_size": "machines per cluster for the local placements (ids 0..N-1 are cluster 0, ...); "
                        "default: the compute resources' 'cluster' zone property",
        **PINNED_OPTION,
    }

    incremental = True

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self._default_choice = type(self).choose_machines is ConservativeBackfilling.choose_machines
        self.times: list[float] = []
        self.masks: list[int] = []
        # job id -> (start time, machines bitmask) of the jobs reserved later than now, as
        # computed by the last call (once too few machines are left free now for any waiting
        # job, the remaining jobs are not inserted: they could not start now; see schedule()).
        self.reservations: dict[str, tuple[float, int]] = {}
        # The plan (profile + reservations) of the last call, and the first waiting job not
        # in it. The plan is reused when only submissions happened since (see schedule()).
        self._plan_valid = False
        self._unplanned: str | None = None
        self.placement = choice_option(self.NAME, self.options, "placement", PLACEMENTS, "basic")
        self.cluster_size = int_option(self.NAME, self.options, "cluster_size", None, minimum=1)
        #: Cluster masks, ordered by lowest id (local placements only; set at SIMULATION_BEGINS).
        self.clusters: list[int] = []
        # The rule on bitmasks, (hole, n) -> mask or None; the local rules get theirs once
        # the clusters are known.
        self._place = placement_rule(self.placement) if self.placement not in LOCAL_PLACEMENTS else None
        # Jobs wider than this can never be placed (set at SIMULATION_BEGINS).
        self._widest_job: float = math.inf

    # ---------------------------------------------------------------- placement hook
    def choose_machines(self, hole: ProcSet, n: int) -> ProcSet | None:
        """The machines a job needing `n` gets in `hole` (free machines for its whole duration).

        `hole` has at least `n` machines. Return exactly `n` of them, or None to refuse this
        hole (the search then tries the next start time). Default: the `placement` option's
        rule (basic: the n lowest ids).
        """
        chosen = self._place(procset_to_mask(hole), n)
        return None if chosen is None else mask_to_procset(chosen)

    def _choose_mask(self, hole: int, n: int) -> int | None:
        chosen = self.choose_machines(mask_to_procset(hole), n)
        if chosen is None:
            return None
        mask = procset_to_mask(chosen)
        if mask.bit_count() != n or mask & ~hole:
            raise ValueError(
                f"{type(self).__name__}.choose_machines returned {chosen} for {n} machines in hole "
                f"{mask_to_procset(hole)}: it must return exactly {n} machines of the hole"
            )
        return mask

    # ---------------------------------------------------------------- profile
    def build_profile(self) -> None:
        """Rebuild the profile from the free machines and the running jobs' estimated ends."""
        now = self.now
        usable = self.all_mask & ~self.unavailable_mask
        releases = sorted(
            (max(record.estimated_end, now), record.mask & usable)
            for record in self.running.values()
            if record.estimated_end != math.inf
        )
        times = [now]
        masks = [self.free_mask]
        current = self.free_mask
        for end, mask in releases:
            current |= mask
            if end == times[-1] and len(times) > 1:
                masks[-1] = current
            else:  # slice 0 (now) stays apart even when a release is due now
                times.append(end)
                masks.append(current)
        self.times = times
        self.masks = masks

    def profile(self) -> list[tuple[float, float, ProcSet]]:
        """The current profile as (start, end, free machines) slices."""
        times = self.times
        ends = times[1:] + [math.inf]
        return [(t, e, mask_to_procset(m)) for t, e, m in zip(times, ends, self.masks)]

    def insert(self, n: int, walltime: float) -> tuple[int, int] | None:
        """Reserve `n` machines for `walltime` at the earliest possible slice.

        Returns (slice index of the start, machines mask), or None when no hole exists.
        """
        times = self.times
        masks = self.masks
        nb = len(times)
        place = self._place if self._default_choice else self._choose_mask
        k = 0
        while k < nb:
            hole = masks[k]
            if hole.bit_count() < n:
                k += 1
                continue
            end = times[k] + walltime
            j = k + 1
            while j < nb and times[j] < end:
                hole &= masks[j]
                if hole.bit_count() < n:
                    break
                j += 1
            else:
                chosen = place(hole, n)
                if chosen is None:
                    k += 1
                    continue
                # Occupy slices k .. j-1; split at `end` when it falls inside a slice.
                if walltime <= 0:
                    j = k + 1
                elif end != math.inf and (j == nb or times[j] != end):
                    times.insert(j, end)
                    masks.insert(j, masks[j - 1])
                keep = ~chosen
                for i in range(k, j):
                    masks[i] &= keep
                return k, chosen
            # Slice j cut the hole. If it alone is too small, no start up to j can work.
            k = j + 1 if masks[j].bit_count() < n else k + 1
        return None

    # ---------------------------------------------------------------- scheduling
    def schedule(self) -> None:
        queue = self.queue
        if (self.incremental and not self.resources_changed and self._plan_valid
                and (len(self.times) == 1 or self.times[1] > self.now)):
            # Only submissions since the last call: rebuilding would give every job already
            # in the plan the same reservation, so keep them and insert the others. (A job
            # reserved later than now had its hole at now refused; today's hole at now lies
            # inside that one, and the placements refuse monotonically: refused again.)
            self.times[0] = self.now
            if self._unplanned is None:
                return
            jobs = queue.iter_from(self._unplanned)
        else:
            self.build_profile()
            self.reservations = {}
            jobs = iter(queue)
        masks = self.masks
        to_start = []
        self._unplanned = None
        # Once fewer machines are free now than any waiting job needs, no later job can
        # start now whatever its reservation: stop there (the decisions are the same).
        smallest = queue.min_res()
        for job in jobs:
            if masks[0].bit_count() < smallest:
                self._unplanned = job.id
                break
            walltime = job.walltime if job.walltime >= 0 else math.inf
            placed = self.insert(job.res, walltime)
            if placed is None:
                continue  # no hole now or ever (unavailable machines): wait
            k, mask = placed
            if k == 0:
                to_start.append((job, mask))
            else:
                self.reservations[job.id] = (self.times[k], mask)
        self._plan_valid = True
        for job, mask in to_start:
            self.start_job(job, mask)

    # ---------------------------------------------------------------- callbacks
    def on_simulation_begins(self, data: dict[str, Any]) -> None:
        super().on_simulation_begins(data)
        if self.placement in LOCAL_PLACEMENTS:
            self.clusters = self._find_clusters()
            self._place = placement_rule(self.placement, self.clusters)
            self._widest_job = max(c.bit_count() for c in self.clusters) if self.placement == "local" else math.inf
        elif self.placement == "contiguous":
            self._widest_job = longest_run(self.all_mask)

    def _find_clusters(self) -> list[int]:
        """The cluster masks: from option cluster_size, else from the compute resources'
        `cluster` zone property (or host property), as SIMULATION_BEGINS gives them."""
        if self.cluster_size is not None:
            return clusters_of_size(self.all_mask, self.cluster_size)
        labels = []
        unlabelled = []
        for resource in self.compute_resources:
            label = (resource.get("zone_properties") or {}).get("cluster")
            if label is None:
                label = (resource.get("properties") or {}).get("cluster")
            if label is None:
                unlabelled.append(int(resource["id"]))
            else:
                labels.append((int(resource["id"]), str(label)))
        what = f"decider {self.NAME}: option placement={self.placement} needs each machine's cluster"
        if not labels:
            raise JoulesimError(f"{what}, but no compute resource has a 'cluster' zone property (nor host "
                                "property): give option cluster_size=N (ids 0..N-1 form cluster 0, "
                                "N..2N-1 cluster 1, ...)")
        if unlabelled:
            raise JoulesimError(f"{what}, but compute resource(s) {mask_to_procset(sum(1 << i for i in unlabelled))} "
                                "have no 'cluster' zone property (nor host property) while others do: add it "
                                "to the platform, or give option cluster_size=N")
        return clusters_from_labels(labels)

    def on_job_submitted(self, job: SubmittedJob) -> None:
        if job.res > self._widest_job:
            # No hole of this placement can ever take it: reject rather than wait forever.
            self.reject_job(job.id)
            return
        super().on_job_submitted(job)
        if job.id in self.queue and self._unplanned is None:
            self._unplanned = job.id  # the first job not in the plan yet
