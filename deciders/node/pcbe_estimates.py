"""PCBE's estimates (seed 000, eqs 3.1-3.4), computed as IRMaSim's Energy manager computes them.

Job key (lowest first; `hi_first` negates it):

- energy: req_energy x ntasks;
- edp: req_energy x req_time x ntasks.

Estimate of running job j on node n, which has a_n jobs assigned (started and not ended):

- T = req_time x (F_min / F_n) x ((F_n x 1e3) / mops_n), i.e. req_time x (F_min / F_n) / dpflops_n,
  with F_n the clock rate of the node's first core, mops_n = F_n x dpflops_n x 1e3, and F_min
  the lowest F_n of the platform;
- energy = T x (Pd + Ps / (a_n + 1)), where Pd adds the first core's dynamic power once per task
  of the job and Ps adds static_power / cores over every core of the node;
- edp = energy x T.

The float operations are IRMaSim's, in its order (Pd by repeated addition, not a product):
estimates that tie there tie here, and the node chosen is the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from joulesim.deciders.node.node_jobs import NodeJob
from joulesim.deciders.node.node_platform import NodeInfo

__all__ = ["CRITERIA", "PRIORITIES", "NodeClass", "job_key", "dynamic_power", "node_estimate"]

CRITERIA = ("energy", "edp")
PRIORITIES = ("lo_first", "hi_first")


def job_key(criterion: str, priority: str, job: NodeJob) -> float:
    """The job's place in PCBE's queue (lowest first)."""
    if criterion == "energy":
        key = job.req_energy * job.ntasks
    else:
        key = job.req_energy * job.req_time * job.ntasks  # type: ignore[operator]
    return -key if priority == "hi_first" else key


@dataclass(frozen=True, slots=True)
class NodeClass:
    """What a node's estimate depends on, besides its assigned jobs: nodes with equal classes
    have equal estimates."""

    clock_rate: float
    mops: float
    dynamic_power: float
    static_power: float

    @classmethod
    def of(cls, node: NodeInfo) -> "NodeClass":
        return cls(node.clock_rate, node.mops, node.dynamic_power, node.static_power)


_DYNAMIC: dict[tuple[float, int], float] = {}


def dynamic_power(per_core: float, ntasks: int) -> float:
    """Pd: `per_core` added once per task (IRMaSim's loop), cached."""
    key = (per_core, ntasks)
    value = _DYNAMIC.get(key)
    if value is None:
        value = 0
        for _ in range(ntasks):
            value += per_core
        if len(_DYNAMIC) < 100_000:
            _DYNAMIC[key] = value
    return value


def node_estimate(criterion: str, priority: str, job: NodeJob, node: NodeClass, assigned: int,
                  min_freq: float) -> float:
    """The estimate of `job` on a node of class `node` with `assigned` jobs (lowest is chosen)."""
    dynamic = dynamic_power(node.dynamic_power, job.ntasks)
    static = node.static_power / (assigned + 1)
    node_time = job.req_time * ((min_freq / node.clock_rate) * ((node.clock_rate * 1e3) / node.mops))  # type: ignore[operator]
    value = node_time * (dynamic + static)
    if criterion == "edp":
        value = value * node_time
    return -value if priority == "hi_first" else value
