"""Orders of nodes: which nodes take a job, as IRMaSim's Heuristic ("Policy") manager picks them.

IRMaSim lists the viable nodes (idle cores >= the job's ntasks_per_node) in platform order and
sorts them stably by the resource selection's key (or shuffles them, for `random`), then
takes the first ones. `NodeOrder.select(need, count)` returns those first `count` nodes (None
when fewer than `count` are viable) without listing every node: nodes sit in buckets by
(idle cores, a group value), and only the buckets of viable nodes are looked at.

Keys (lowest first; ties keep platform order):

- `first`: the node's IRMaSim id as text ("node10" before "node2");
- `high_gflops`: -(first processor's clock_rate x dpflops_per_cycle x 1e3);
- `low_power`: the node's maximum power (cores x dynamic + static, over its processors);
- `high_power`: minus that: IRMaSim's `low_power` before January 2024 (commit fffb0b9), which
  the PCBE thesis's table 5.3 ran;
- `high_cores` / `low_cores`: -idle cores / idle cores;
- `high_mem`: -(memory in use: the mem of every task running there);
- `high_mem_bw`: the bandwidth asked of the node's first processor by the tasks running on it;
- `random`: the viable nodes in platform order, shuffled by the seeded generator (at every
  attempt, as IRMaSim does, even one that fails).
"""

from __future__ import annotations

import heapq
import random
from typing import Callable, Hashable, Iterator

from joulesim.deciders.node.node_platform import NodePlatform

__all__ = ["RESOURCE_SELECTIONS", "RESOURCE_SELECTION_NEEDS", "NodeBuckets", "NodeOrder", "RankedOrder",
           "RandomOrder", "node_order"]

RESOURCE_SELECTIONS = ("random", "first", "high_gflops", "high_cores", "low_cores", "high_mem", "high_mem_bw",
                       "low_power", "high_power")
#: The job fields (see JobReader) a resource selection reads.
RESOURCE_SELECTION_NEEDS: dict[str, str] = {"high_mem_bw": "ops"}


class NodeBuckets:
    """The platform's nodes by (idle cores, group), each bucket a set of members (ints).

    `group_of(node)` gives a node's group, `member_of[node]` the int standing for it in its
    bucket (its platform index by default). Kept up to date as a listener of the platform;
    `refresh(node)` also re-reads a node whose group changed for another reason."""

    def __init__(self, platform: NodePlatform, group_of: Callable[[int], Hashable],
                 member_of: list[int] | None = None):
        self.platform = platform
        self.group_of = group_of
        self.member_of = member_of if member_of is not None else list(range(len(platform)))
        self.levels: list[dict[Hashable, set[int]]] = [{} for _ in range(platform.max_size + 1)]
        self._place: list[tuple[int, Hashable]] = []
        for node in range(len(platform)):
            place = (platform.idle[node], group_of(node))
            self._place.append(place)
            self.levels[place[0]].setdefault(place[1], set()).add(self.member_of[node])
        platform.listeners.append(self.refresh)

    def refresh(self, node: int) -> None:
        place = (self.platform.idle[node], self.group_of(node))
        old = self._place[node]
        if place == old:
            return
        member = self.member_of[node]
        level = self.levels[old[0]]
        bucket = level[old[1]]
        bucket.discard(member)
        if not bucket:
            del level[old[1]]
        self.levels[place[0]].setdefault(place[1], set()).add(member)
        self._place[node] = place

    def buckets(self, need: int) -> Iterator[tuple[int, Hashable, set[int]]]:
        """(idle cores, group, members) of every non-empty bucket of nodes with at least `need` idle cores."""
        levels = self.levels
        for idle in range(max(need, 0), self.platform.max_idle() + 1):
            for group, members in levels[idle].items():
                yield idle, group, members


class NodeOrder:
    """The nodes a job goes to under one resource selection."""

    def select(self, need: int, count: int) -> list[int] | None:
        """The first `count` nodes, in this order, of those with at least `need` idle cores
        (None when fewer than `count` have)."""
        raise NotImplementedError


class RankedOrder(NodeOrder):
    """Nodes ordered by (value, rank): `value(idle, group)` from the node's bucket, `rank` a
    fixed order of the nodes (a stable sort of the platform order by a fixed key)."""

    def __init__(self, platform: NodePlatform, group_of: Callable[[int], Hashable],
                 value: Callable[[int, Hashable], float], rank_key: Callable[[int], object] | None = None):
        self.platform = platform
        order = list(range(len(platform)))
        if rank_key is not None:
            order.sort(key=rank_key)  # stable: ties keep platform order
        self.node_at_rank = order
        rank = [0] * len(order)
        for r, node in enumerate(order):
            rank[node] = r
        self.value = value
        self.buckets = NodeBuckets(platform, group_of, rank)

    def select(self, need: int, count: int) -> list[int] | None:
        if count < 1 or self.platform.count_nodes_with_idle(need) < count:
            return None
        value = self.value
        if count == 1:
            best = min((value(idle, group), min(members)) for idle, group, members in self.buckets.buckets(need))
            return [self.node_at_rank[best[1]]]
        candidates = []
        for idle, group, members in self.buckets.buckets(need):
            v = value(idle, group)
            candidates.extend((v, r) for r in heapq.nsmallest(count, members))
        candidates.sort()
        return [self.node_at_rank[r] for _, r in candidates[:count]]


class RandomOrder(NodeOrder):
    """The viable nodes in platform order, shuffled (IRMaSim: `random.shuffle(viable_nodes)`)."""

    def __init__(self, platform: NodePlatform, rng: random.Random):
        self.platform = platform
        self.rng = rng

    def select(self, need: int, count: int) -> list[int] | None:
        viable = self.platform.nodes_with_at_least(need)
        self.rng.shuffle(viable)  # even when too few: IRMaSim shuffles before it counts
        if count < 1 or len(viable) < count:
            return None
        return viable[:count]


def _zero(node: int) -> int:
    return 0


def node_order(name: str, platform: NodePlatform, rng: random.Random) -> NodeOrder:
    """The NodeOrder of resource selection `name` (one of RESOURCE_SELECTIONS)."""
    nodes = platform.nodes
    if name == "random":
        return RandomOrder(platform, rng)
    if name == "first":
        return RankedOrder(platform, _zero, lambda idle, group: 0, lambda node: nodes[node].id)
    if name == "high_gflops":
        return RankedOrder(platform, _zero, lambda idle, group: 0, lambda node: -nodes[node].mops)
    if name == "low_power":
        return RankedOrder(platform, _zero, lambda idle, group: 0, lambda node: nodes[node].max_power)
    if name == "high_power":
        return RankedOrder(platform, _zero, lambda idle, group: 0, lambda node: -nodes[node].max_power)
    if name == "high_cores":
        return RankedOrder(platform, _zero, lambda idle, group: -idle)
    if name == "low_cores":
        return RankedOrder(platform, _zero, lambda idle, group: idle)
    if name == "high_mem":
        memory = platform.memory
        return RankedOrder(platform, lambda node: -memory[node], lambda idle, group: group)  # type: ignore[arg-type]
    if name == "high_mem_bw":
        if not platform.track_bandwidth:
            raise ValueError("resource selection high_mem_bw needs a platform that tracks bandwidth")
        bandwidth = platform.bandwidth
        return RankedOrder(platform, lambda node: bandwidth[node], lambda idle, group: group)  # type: ignore[arg-type]
    raise ValueError(f"unknown resource selection {name!r}: use one of {', '.join(RESOURCE_SELECTIONS)}")
