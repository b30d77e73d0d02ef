"""The job model of Batsim's parallel-task profiles: its leaf tasks one after another.

A job of a `delay`, `parallel`, `parallel_homogeneous`, `parallel_homogeneous_total`,
`parallel_homogeneous_pfs` or `data_staging` profile, or of a `composed` profile of those
(unrolled, `repeat` times), runs one leaf task at a time, each one SimGrid parallel task;
the job ends with its last task. The amounts of each leaf are spread as Batsim does
(task_execution.cpp): `parallel_homogeneous` gives every executor `cpu` flops and every
ordered pair of distinct executors `com` bytes; `..._total` divides them by the executors and
the pairs; `parallel_homogeneous_pfs` makes every executor read `bytes_to_read` from its
storage host and write `bytes_to_write` to it (each divided by the executors when its
`generation_strategy`, from a Batsim 5 profile, is DefinedAmountsSpreadUniformly, as Batsim 5
does); `data_staging` moves `nb_bytes` from one storage
host to another (the job's own hosts take no part).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from joulesim.simulator.workload.storage_labels import PFS_DEFAULT_LABEL

if TYPE_CHECKING:
    from joulesim.simulator.models.job_activity import ActivityContext, ActivityHandle

Flow = tuple[int, int, float]


class LeafSequence:
    """JobModel: the job's leaf tasks in order."""

    def __init__(self, root: str, profiles: dict[str, dict[str, Any]], storages: dict[str, int]):
        self.root = root
        self.storages = storages  # label -> host id, resolved when the job started
        self.sequence = unroll(root, profiles)
        # Its leaves as they are now: a profile registered again under the same name later
        # (after Batsim's garbage collection) must not change a running job.
        self.leaves = [profiles[name] for name in self.sequence]
        self.index = 0
        self.current: "ActivityHandle | None" = None
        self.context: "ActivityContext | None" = None

    def start(self, context: "ActivityContext") -> None:
        self.context = context
        self._begin()

    def _begin(self) -> None:
        context = self.context
        if self.index >= len(self.sequence):
            self.current = None
            context.finish()
            return
        profile = self.leaves[self.index]
        if profile["type"] == "delay":
            self.current = context.sleep(float(profile["delay"]), self._task_done)
        else:
            cpu, flows = self._amounts(profile, context.hosts)
            self.current = context.execute(cpu, flows, self._task_done)

    def _task_done(self) -> None:
        self.index += 1
        self._begin()

    def progress(self) -> dict[str, Any]:
        name = self.sequence[self.index] if self.index < len(self.sequence) else self.root
        leaf = {"profile_name": name, "progress": self.current.progress() if self.current is not None else 0.0}
        if len(self.sequence) == 1 and self.sequence[0] == self.root:  # not a composed profile
            return leaf
        return {"profile_name": self.root, "current_task_index": self.index, "current_task": leaf}

    def _amounts(self, profile: dict[str, Any], hosts: list[int]) -> tuple[list[tuple[int, float]], list[Flow]]:
        kind = profile["type"]
        n = len(hosts)
        if kind == "parallel":
            com = profile["com"]
            cpu = list(zip(hosts, (float(c) for c in profile["cpu"])))
            return cpu, [(hosts[i], hosts[j], float(com[i * n + j])) for i in range(n) for j in range(n)]
        if kind == "parallel_homogeneous":
            flops, pair = float(profile["cpu"]), float(profile["com"])
        elif kind == "parallel_homogeneous_total":
            flops = float(profile["cpu"]) / n if n else 0.0
            pair = float(profile["com"]) / (n * (n - 1)) if n > 1 else 0.0
        elif kind == "parallel_homogeneous_pfs":
            storage = self.storages[profile.get("storage", profile.get("host", PFS_DEFAULT_LABEL))]
            read, write = float(profile.get("bytes_to_read", 0)), float(profile.get("bytes_to_write", 0))
            if profile.get("generation_strategy") == "DefinedAmountsSpreadUniformly" and n:
                read, write = read / n, write / n  # (Batsim 5's: the bytes shared between the hosts)
            flows = []
            for host in hosts:  # Batsim's matrix, row by row: host -> storage, then storage -> hosts
                flows.append((host, storage, write))
            flows.extend((storage, host, read) for host in hosts)
            return [], flows
        elif kind == "data_staging":
            return [], [(self.storages[profile["from"]], self.storages[profile["to"]], float(profile["nb_bytes"]))]
        else:
            raise ValueError(f"profile type {kind!r} is not a parallel task")
        cpu = [(host, flops) for host in hosts]
        return cpu, [(hosts[i], hosts[j], pair) for i in range(n) for j in range(n) if i != j]


def unroll(name: str, profiles: dict[str, dict[str, Any]]) -> list[str]:
    """The leaf profiles a job runs, in order (composed profiles expanded, `repeat` times)."""
    profile = profiles[name]
    if profile["type"] != "composed":
        return [name]
    once = [leaf for sub in profile["seq"] for leaf in unroll(sub, profiles)]
    return once * int(profile.get("repeat", 1))
