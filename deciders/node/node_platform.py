"""The decider's view of an IRMaSim platform: nodes of processors of cores, and who uses them.

Built from SIMULATION_BEGINS' `hierarchy` (the protocol extension of IRMaSim platforms, where
every resource is a core); a plain Batsim platform has none, and the deciders that need it
stop with an error saying so. Updated only by the decider's own starts and by the
completions and availability notifications it receives: nothing here reads the simulator.

Per node (index = platform order):

- its cores (resource ids, processors in order, each processor's cores in core order); a
  core is known by its position in that list, and a node's free/busy/down cores are
  bitmasks of positions, so taking "the first idle cores in core order" is a bit operation;
- `idle[node]`: free cores (not busy, not unavailable); `nodes_with_idle[k]` is the set of
  nodes with exactly k idle cores, so finding the nodes able to take k tasks never scans
  cores;
- `memory[node]`: memory in use, IRMaSim's `current_memory` (the job's `mem` added once per
  task started there, removed once per task ended, in that order, as IRMaSim does);
- `bandwidth[node]`: the memory bandwidth the running tasks ask of the node's FIRST processor
  (IRMaSim's `requested_memory_bandwidth` of `children[0]`), the sum over its cores in core
  order of mem_vol / (ops / (mops * 1e6)); kept only with `track_bandwidth`.

Static values IRMaSim's policies read, computed the way IRMaSim computes them (same float
operations in the same order, so that ties and near-ties fall the same way): the first
processor's `mops` (clock_rate * dpflops_per_cycle * 1e3), the node's maximum power (per
processor: the sum over its cores of dynamic_power + static_power / cores; summed over the
processors) and its static power as PCBE sums it (static_power / cores over every core).

Listeners (`listeners`, callables taking a node index) are told after every change of a
node's idle cores, memory or bandwidth; the node orders keep their buckets up to date that way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from procset import ProcSet

from joulesim.deciders.common.machine_masks import lowest_bits
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.interval_set import procset_from_canonical_runs, runs_of_sorted_ids

__all__ = ["NodeInfo", "NodePlatform", "NodeRun", "hierarchy_required_error"]


def hierarchy_required_error(decider: str) -> JoulesimError:
    return JoulesimError(
        f"decider {decider}: the platform has no node hierarchy (SIMULATION_BEGINS carries no 'hierarchy'): "
        "this decider places tasks on the cores of IRMaSim nodes (cluster -> node -> processor -> core); "
        "run it on an IRMaSim platform file, not a plain Batsim platform")


@dataclass(slots=True)
class NodeInfo:
    """What does not change about a node."""

    index: int  # platform order
    name: str
    id: str  # IRMaSim's node id (unique within its cluster only)
    cluster: str
    cores: list[int]  # resource ids, processors in order, each in core order
    first_processor_cores: int  # positions 0 .. this - 1 belong to the first processor
    clock_rate: float  # of the first processor (GHz)
    dpflops_per_cycle: float  # of the first processor
    dynamic_power: float  # of the first processor, W per busy core
    mops: float  # of a first-processor core: clock_rate * dpflops_per_cycle * 1e3
    max_power: float  # sum over processors of (cores x dynamic_power + static_power), as IRMaSim sums it
    static_power: float  # sum over the node's cores of static_power / cores, as PCBE sums it
    idle_power: float  # sum over processors of min_power x static_power: the node's draw with no busy core
    mean_clock_rate: float  # over the node's cores (GHz)

    @property
    def size(self) -> int:
        return len(self.cores)


@dataclass(slots=True)
class NodeRun:
    """Where a running job's tasks are: (node, bitmask of core positions, tasks) per node."""

    parts: list[tuple[int, int, int]]
    memory: float  # the job's mem, per task


class NodePlatform:
    """Nodes, their idle cores, memory and first-processor bandwidth in use."""

    def __init__(self, decider: str, data: dict[str, Any], *, track_bandwidth: bool = False):
        hierarchy = data.get("hierarchy")
        if hierarchy is None:
            raise hierarchy_required_error(decider)
        self.decider = decider
        self.track_bandwidth = track_bandwidth
        resources = data.get("compute_resources") or []
        compute_ids = {r["id"] for r in resources if isinstance(r, dict)}
        down_ids = {r["id"] for r in resources if isinstance(r, dict) and r.get("state", "idle") != "idle"}
        self.nodes: list[NodeInfo] = _read_nodes(decider, hierarchy, compute_ids)
        n = len(self.nodes)
        #: resource id -> (node, position)
        self.where: dict[int, tuple[int, int]] = {}
        for info in self.nodes:
            for position, core in enumerate(info.cores):
                self.where[core] = (info.index, position)
        self.max_size = max(info.size for info in self.nodes)
        self._size_at_least = [0] * (self.max_size + 2)  # [k]: nodes with at least k cores
        for info in self.nodes:
            self._size_at_least[info.size] += 1
        for k in range(self.max_size - 1, -1, -1):
            self._size_at_least[k] += self._size_at_least[k + 1]
        self.free: list[int] = [(1 << info.size) - 1 for info in self.nodes]
        self.busy: list[int] = [0] * n
        self.down: list[int] = [0] * n
        for core in down_ids:
            if core in self.where:
                node, position = self.where[core]
                self.down[node] |= 1 << position
                self.free[node] &= ~(1 << position)
        self.idle: list[int] = [mask.bit_count() for mask in self.free]
        self.nodes_with_idle: list[set[int]] = [set() for _ in range(self.max_size + 1)]
        for node, count in enumerate(self.idle):
            self.nodes_with_idle[count].add(node)
        self._top = self.max_size  # no node has more idle cores than this
        self.memory: list[float] = [0] * n  # IRMaSim starts current_memory at int 0
        self.bandwidth: list[float] = [0.0] * n
        self._core_bandwidth: list[list[float]] = ([[0.0] * info.first_processor_cores for info in self.nodes]
                                                   if track_bandwidth else [])
        self.runs: dict[str, NodeRun] = {}
        self.listeners: list[Callable[[int], None]] = []

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self.nodes)

    def max_idle(self) -> int:
        """The most idle cores any node has now."""
        top = self._top
        sets = self.nodes_with_idle
        while top > 0 and not sets[top]:
            top -= 1
        self._top = top
        return top

    def count_nodes_with_idle(self, need: int) -> int:
        """How many nodes have at least `need` idle cores."""
        sets = self.nodes_with_idle
        return sum(len(sets[k]) for k in range(max(need, 0), self.max_idle() + 1))

    def nodes_with_at_least(self, need: int) -> list[int]:
        """The nodes with at least `need` idle cores, in platform order."""
        sets = self.nodes_with_idle
        found: list[int] = []
        for k in range(max(need, 0), self.max_idle() + 1):
            found.extend(sets[k])
        found.sort()
        return found

    def capacity_count(self, need: int) -> int:
        """How many nodes have at least `need` cores in all (busy or not)."""
        if need > self.max_size:
            return 0
        return self._size_at_least[max(need, 0)]

    # ------------------------------------------------------------------ changes
    def start(self, job_id: str, placement: list[tuple[int, int]], memory: float,
              ops: int | None = None, mem_vol: float | None = None) -> ProcSet:
        """Give each (node, tasks) of `placement` that many of its first idle cores (in core order).

        `memory` is the job's mem per task; with `track_bandwidth`, `ops` (per task) and
        `mem_vol` give the bandwidth each task asks. Returns the cores (resource ids)."""
        parts: list[tuple[int, int, int]] = []
        cores: list[int] = []
        for node, tasks in placement:
            taken = lowest_bits(self.free[node], tasks)
            if taken.bit_count() != tasks:
                raise ValueError(f"node {self.nodes[node].name} has {self.idle[node]} idle cores, not {tasks}")
            self.free[node] &= ~taken
            self.busy[node] |= taken
            self._set_idle(node, self.idle[node] - tasks)
            used = self.memory[node]
            for _ in range(tasks):  # one addition per task, as IRMaSim's Node.schedule
                used += memory
            self.memory[node] = used
            info = self.nodes[node]
            bits = taken
            positions = []
            while bits:
                low = bits & -bits
                positions.append(low.bit_length() - 1)
                bits ^= low
            cores.extend(info.cores[p] for p in positions)
            if self.track_bandwidth and ops is not None and mem_vol is not None:
                per_core = self._core_bandwidth[node]
                task_bandwidth = task_memory_bandwidth(mem_vol, ops, info.mops)
                touched = False
                for p in positions:
                    if p < info.first_processor_cores:
                        per_core[p] = task_bandwidth
                        touched = True
                if touched:
                    self.bandwidth[node] = sum(per_core)  # IRMaSim: sum over the processor's cores
            parts.append((node, taken, tasks))
            self._changed(node)
        self.runs[job_id] = NodeRun(parts, memory)
        return procset_from_canonical_runs(runs_of_sorted_ids(sorted(cores)))

    def finish(self, job_id: str) -> NodeRun | None:
        """Free the cores of a job this platform started (None for a job it does not know)."""
        run = self.runs.pop(job_id, None)
        if run is None:
            return None
        for node, taken, tasks in run.parts:
            self.busy[node] &= ~taken
            self.free[node] |= taken & ~self.down[node]
            self._set_idle(node, self.free[node].bit_count())
            used = self.memory[node]
            for _ in range(tasks):  # one subtraction per task, as IRMaSim's Node.reap
                used -= run.memory
            self.memory[node] = used
            if self.track_bandwidth:
                per_core = self._core_bandwidth[node]
                first = self.nodes[node].first_processor_cores
                bits = taken & ((1 << first) - 1)
                if bits:
                    while bits:
                        low = bits & -bits
                        per_core[low.bit_length() - 1] = 0.0
                        bits ^= low
                    self.bandwidth[node] = sum(per_core)
            self._changed(node)
        return run

    def set_unavailable(self, resources: ProcSet, unavailable: bool) -> None:
        """Cores made unavailable (or available again) by the simulator; a busy core made
        unavailable stays out once its job ends."""
        touched: dict[int, int] = {}
        for core in resources:
            place = self.where.get(core)
            if place is not None:
                touched[place[0]] = touched.get(place[0], 0) | (1 << place[1])
        for node, bits in touched.items():
            if unavailable:
                self.down[node] |= bits
                self.free[node] &= ~bits
            else:
                self.down[node] &= ~bits
                self.free[node] |= bits & ~self.busy[node]
            self._set_idle(node, self.free[node].bit_count())
            self._changed(node)

    def _set_idle(self, node: int, count: int) -> None:
        old = self.idle[node]
        if old != count:
            self.nodes_with_idle[old].discard(node)
            self.nodes_with_idle[count].add(node)
            self.idle[node] = count
            if count > self._top:
                self._top = count

    def _changed(self, node: int) -> None:
        for listener in self.listeners:
            listener(node)


def task_memory_bandwidth(mem_vol: float, ops: int, mops: float) -> float:
    """The memory bandwidth a task of `ops` operations asks on a core of `mops` Mop/s
    (IRMaSim modelV1: mem_vol / (ops / (mops * 1e6))); 0 for a task without operations."""
    if ops == 0:
        return 0.0
    return mem_vol / (ops / (mops * 1e6))


# ---------------------------------------------------------------------- reading the hierarchy
def _number(decider: str, where: str, value: Any, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (positive and value <= 0) or value < 0:
        raise JoulesimError(f"decider {decider}: SIMULATION_BEGINS hierarchy: {where} is {value!r}: expected a "
                            f"finite number {'> 0' if positive else '>= 0'} (is the simulator a joulesim with IRMaSim "
                            "platforms?)")
    return value


def _read_nodes(decider: str, hierarchy: Any, compute_ids: set) -> list[NodeInfo]:
    def bad(where: str, problem: str) -> JoulesimError:
        return JoulesimError(f"decider {decider}: SIMULATION_BEGINS hierarchy: {where} {problem}")

    nodes_in = hierarchy.get("nodes") if isinstance(hierarchy, dict) else None
    if not isinstance(nodes_in, list) or not nodes_in:
        raise bad("field 'nodes'", "must be a non-empty list of nodes")
    seen: set[int] = set()
    nodes: list[NodeInfo] = []
    for index, node in enumerate(nodes_in):
        where = f"nodes[{index}]"
        processors = node.get("processors") if isinstance(node, dict) else None
        if not isinstance(processors, list) or not processors:
            raise bad(where, "must be an object with a non-empty list 'processors'")
        cores: list[int] = []
        max_power = 0  # IRMaSim: sum([processor.max_power_consumption ...]) starts at int 0
        static_power = 0  # PCBE: static_fraction = 0, then += core.static_power for every core
        idle_power = 0.0
        clock_sum = 0.0
        first = None
        for p_index, processor in enumerate(processors):
            p_where = f"{where}.processors[{p_index}]"
            p_cores = processor.get("cores") if isinstance(processor, dict) else None
            if not isinstance(p_cores, list) or not p_cores:
                raise bad(p_where, "must be an object with a non-empty list 'cores' (resource ids)")
            for core in p_cores:
                if type(core) is not int or core not in compute_ids:
                    raise bad(f"{p_where}.cores", f"names {core!r}, which is not a compute resource id")
                if core in seen:
                    raise bad(f"{p_where}.cores", f"names core {core} a second time")
                seen.add(core)
            values = {key: _number(decider, f"{p_where}.{key}", processor.get(key), key in ("clock_rate",
                                                                                          "dpflops_per_cycle"))
                      for key in ("clock_rate", "dpflops_per_cycle", "static_power", "dynamic_power")}
            count = len(p_cores)
            per_core_static = values["static_power"] / count  # IRMaSim's Core.static_power
            processor_max = 0.0  # IRMaSim's Processor.max_power_consumption, one core at a time
            for _ in range(count):
                processor_max += values["dynamic_power"] + per_core_static
                static_power += per_core_static
            max_power += processor_max
            idle_power += _number(decider, f"{p_where}.min_power", processor.get("min_power", 0.0)) \
                * values["static_power"]
            clock_sum += values["clock_rate"] * count
            if first is None:
                first = (values, count)
            cores.extend(p_cores)
        values, first_count = first  # type: ignore[misc]
        nodes.append(NodeInfo(
            index=index, name=str(node.get("name", f"node{index}")), id=str(node.get("id", node.get("name", index))),
            cluster=str(node.get("cluster", "")), cores=cores, first_processor_cores=first_count,
            clock_rate=values["clock_rate"], dpflops_per_cycle=values["dpflops_per_cycle"],
            dynamic_power=values["dynamic_power"],
            mops=values["clock_rate"] * values["dpflops_per_cycle"] * 1e3,
            max_power=max_power, static_power=static_power, idle_power=idle_power,
            mean_clock_rate=clock_sum / len(cores)))
    return nodes
