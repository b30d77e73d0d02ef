"""A decider made of one decider per cluster (the two-level scheme of seed 004 §3-§4: a broker
sends each job to one cluster, and each cluster schedules its own queue).

`ClusterRouter` splits the platform announced in SIMULATION_BEGINS into clusters (the hosts'
`cluster` property; see `clusters_of`), builds one sub-decider per cluster (`make_decider`),
and feeds each the protocol as if it were alone on its cluster:

- SIMULATION_BEGINS with `compute_resources` restricted to the cluster's hosts (ids stay the
  platform's: queue policies build their machine masks from the listed ids);
- JOB_SUBMITTED of the jobs assigned to it (`assign`, which subclasses implement), and the
  JOB_COMPLETED / JOB_KILLED of those jobs;
- RESOURCE_STATE_CHANGED and NOTIFY machine (un)availability restricted to its hosts;
- REQUESTED_CALL when a call it asked for (CALL_ME_LATER, read from its replies) is due;
- SIMULATION_ENDS, ANSWER and the other NOTIFYs to every cluster.

Each sub-decider's `handle()` gets a message with the router's `now`; the replies' events keep
their order and are merged by timestamp (stable sort). The router reads them to learn which of
its jobs started (EXECUTE_JOB) or were rejected (hooks `job_started`, `job_left`), which is all
the broker's algorithms need. The router's own Decider base checks the messages (a job
submitted twice, unknown resources...) before anything is routed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from joulesim.deciders.common.machine_masks import mask_to_procset, procset_to_mask
from joulesim.protocol.decider import Decider, SubmittedJob
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.interval_set import format_interval_set

__all__ = ["Cluster", "ClusterRouter", "clusters_of"]

_CALL_EPSILON = 1e-9  # a REQUESTED_CALL at t serves the calls asked for at t (float noise)


@dataclass
class Cluster:
    """One cluster: its hosts (in platform order), their properties, and its sub-decider."""

    name: str
    resources: list[dict[str, Any]]
    mask: int
    properties: dict[str, str]  # of its first host (the cluster-wide ones: price, utc_offset...)
    decider: Decider | None = None
    outbox: list[dict[str, Any]] = field(default_factory=list)  # events for its next message
    calls: list[float] = field(default_factory=list)  # CALL_ME_LATER times not served yet

    @property
    def size(self) -> int:
        return len(self.resources)


def clusters_of(resources: list[dict[str, Any]], who: str) -> list[Cluster]:
    """The clusters of SIMULATION_BEGINS' compute_resources, in order of first appearance.

    No host with a `cluster` property: one cluster of every host (named "all"). Some with it,
    some without: a JoulesimError naming the first host without it.
    """
    named = [r for r in resources if "cluster" in (r.get("properties") or {})]
    if not named:
        return [_cluster("all", resources)]
    if len(named) != len(resources):
        bare = next(r for r in resources if "cluster" not in (r.get("properties") or {}))
        raise JoulesimError(f"decider {who}: host {bare.get('name', bare.get('id'))!r} has no 'cluster' property "
                            f"while {len(named)} other hosts have one: give every compute host a 'cluster' "
                            "property (e.g. in the platform's cluster \"properties\"), or none to make the "
                            "whole platform one cluster")
    groups: dict[str, list[dict[str, Any]]] = {}
    for resource in resources:
        groups.setdefault(str(resource["properties"]["cluster"]), []).append(resource)
    return [_cluster(name, members) for name, members in groups.items()]


def _cluster(name: str, resources: list[dict[str, Any]]) -> Cluster:
    mask = 0
    for resource in resources:
        mask |= 1 << int(resource["id"])
    properties = dict(resources[0].get("properties") or {}) if resources else {}
    return Cluster(name, resources, mask, {str(k): str(v) for k, v in properties.items()})


class ClusterRouter(Decider):
    """Base of deciders made of one decider per cluster; subclasses choose the cluster of each
    job (`assign`) and build the sub-deciders (`make_decider`)."""

    def __init__(self, options: dict[str, str] | None = None):
        super().__init__(options)
        self.clusters: list[Cluster] = []
        self.job_cluster: dict[str, int] = {}  # job id -> index in self.clusters (until it ends)

    # ---------------------------------------------------------------- to implement
    def make_decider(self, cluster: Cluster) -> Decider:
        raise NotImplementedError

    def assign(self, job: SubmittedJob) -> int | None:
        """The index of the cluster for `job`, or None to reject it."""
        raise NotImplementedError

    def job_started(self, index: int, job_id: str) -> None:
        """A sub-decider executed one of its jobs."""

    def job_left(self, index: int, job_id: str) -> None:
        """One of the cluster's jobs left it without starting (rejected, or killed while queued)."""

    def setup_clusters(self) -> None:
        """Called once the clusters are known (SIMULATION_BEGINS), before the sub-deciders get it."""

    # ---------------------------------------------------------------- dispatch
    def on_simulation_begins(self, data: dict[str, Any]) -> None:
        resources = self.compute_resources or [{"id": i, "name": str(i), "state": "idle", "properties": {}}
                                               for i in range(self.nb_resources)]
        self.clusters = clusters_of(resources, type(self).__name__)
        self.setup_clusters()
        for cluster in self.clusters:
            cluster.decider = self.make_decider(cluster)

    def on_job_submitted(self, job: SubmittedJob) -> None:
        index = self.assign(job)
        if index is None:
            self.reject_job(job.id)  # no cluster can ever run it
        else:
            self.job_cluster[job.id] = index

    def _dispatch(self, event: dict[str, Any]) -> None:
        # The base class checks the event and runs the callbacks (assign); then it is routed.
        super()._dispatch(event)
        self._route(event)

    def _route(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        data = event["data"]
        if kind == "SIMULATION_BEGINS":
            for cluster in self.clusters:
                sub = dict(data, compute_resources=cluster.resources) if self.compute_resources else data
                cluster.outbox.append(dict(event, data=sub))
        elif kind == "JOB_SUBMITTED":
            index = self.job_cluster.get(data["job_id"])
            if index is not None:
                self.clusters[index].outbox.append(event)
        elif kind == "JOB_COMPLETED":
            index = self._cluster_of_job(data["job_id"], data.get("alloc", ""))
            if data.get("job_state") != "COMPLETED_KILLED":  # (a kill's JOB_KILLED follows: routed there)
                self.job_cluster.pop(data["job_id"], None)
            if index is not None:
                self.clusters[index].outbox.append(event)
        elif kind == "JOB_KILLED":
            self._route_killed(event)
        elif kind == "REQUESTED_CALL":
            for cluster in self.clusters:
                due = [t for t in cluster.calls if t <= self.now + _CALL_EPSILON]
                if due:
                    cluster.calls = [t for t in cluster.calls if t > self.now + _CALL_EPSILON]
                    cluster.outbox.append(event)
        elif kind == "RESOURCE_STATE_CHANGED":
            self._route_split(event, "resources")
        elif kind == "NOTIFY" and data.get("type") in ("event_machine_unavailable", "event_machine_available"):
            self._route_split(event, "resources")
        else:  # SIMULATION_ENDS, ANSWER, the other NOTIFYs
            for cluster in self.clusters:
                cluster.outbox.append(event)

    def _cluster_of_job(self, job_id: str, alloc: str) -> int | None:
        index = self.job_cluster.get(job_id)
        if index is not None or not alloc:
            return index
        # A job the router never assigned (a dynamic one): the cluster of its first machine.
        first = min(self._resources(alloc))
        return next((i for i, c in enumerate(self.clusters) if c.mask >> first & 1), None)

    def _route_killed(self, event: dict[str, Any]) -> None:
        data = event["data"]
        per_cluster: dict[int, list[str]] = {}
        for job_id in data["job_ids"]:
            index = self.job_cluster.pop(job_id, None)
            if index is not None:
                per_cluster.setdefault(index, []).append(job_id)
        progress = data.get("job_progress", {})
        for index, job_ids in per_cluster.items():
            sub = dict(data, job_ids=job_ids, job_progress={j: progress[j] for j in job_ids if j in progress})
            self.clusters[index].outbox.append(dict(event, data=sub))

    def _route_split(self, event: dict[str, Any], key: str) -> None:
        mask = procset_to_mask(self._resources(event["data"][key]))
        for cluster in self.clusters:
            part = mask & cluster.mask
            if part:
                sub = dict(event["data"], **{key: format_interval_set(mask_to_procset(part))})
                cluster.outbox.append(dict(event, data=sub))

    # ---------------------------------------------------------------- one message
    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        reply = super().handle(message)  # checks, assigns and fills the outboxes
        events = list(reply["events"])
        now = reply["now"]
        for index, cluster in enumerate(self.clusters):
            if not cluster.outbox:
                continue
            sub_message = {"now": message["now"], "events": cluster.outbox}
            cluster.outbox = []
            sub_reply = cluster.decider.handle(sub_message)  # type: ignore[union-attr]
            self._read_reply(index, sub_reply["events"])
            events.extend(sub_reply["events"])
            now = max(now, sub_reply["now"])
        events.sort(key=_timestamp)  # stable: each reply keeps its order
        return {"now": now, "events": events}

    def _read_reply(self, index: int, events: list[dict[str, Any]]) -> None:
        cluster = self.clusters[index]
        for event in events:
            kind = event["type"]
            if kind == "EXECUTE_JOB":
                self.job_started(index, event["data"]["job_id"])
            elif kind == "REJECT_JOB":
                job_id = event["data"]["job_id"]
                self.job_left(index, job_id)
                self.job_cluster.pop(job_id, None)
                self.jobs.pop(job_id, None)  # ended for the router too: it cannot come back
                self._rejected.add(job_id)
            elif kind == "CALL_ME_LATER":
                cluster.calls.append(float(event["data"]["timestamp"]))


def _timestamp(event: dict[str, Any]) -> float:
    return event["timestamp"]

