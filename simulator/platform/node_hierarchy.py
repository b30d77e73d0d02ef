"""IRMaSim's heterogeneous node model: cluster -> node -> processor -> core.

In this model the platform's resources are cores: compute host i of the `Platform` is core i,
and `NodeHierarchy` says which processor (and node) each core belongs to. A processor holds
the parameters of execution (clock, flops per cycle, memory-contention parameters of modelV1)
and of power (static watts for the whole processor, dynamic watts per busy core, and the
fraction of static power drawn when none of its cores is busy).

Deciders learn the hierarchy from SIMULATION_BEGINS (`to_protocol`), so that they can place
tasks core by core; Batsim deciders that ignore it still see one resource per core.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The processor fields of modelV1's contention formula (see memory_contention).
CONTENTION_KEYS = ("b", "c", "da", "db", "dc", "dd")


@dataclass
class Processor:
    name: str  # "node0.processor0"
    type: str  # the processor type it was built from
    node: int  # index in NodeHierarchy.nodes
    cores: list[int]  # resource ids of its cores, in core order
    clock_rate: float  # GHz
    dpflops_per_cycle: float
    static_power: float  # W, for the whole processor while any core is busy
    dynamic_power: float  # W, per busy core
    min_power: float  # fraction of static_power drawn when no core is busy
    contention: dict[str, float] = field(default_factory=dict)  # b, c, da, db, dc, dd

    @property
    def mops(self) -> float:
        """Millions of operations per second of one core (IRMaSim's definition)."""
        return self.clock_rate * self.dpflops_per_cycle * 1e3

    def to_protocol(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "cores": list(self.cores),
                "clock_rate": self.clock_rate, "dpflops_per_cycle": self.dpflops_per_cycle,
                "static_power": self.static_power, "dynamic_power": self.dynamic_power,
                "min_power": self.min_power, **self.contention}


@dataclass
class Node:
    name: str  # unique on the platform ("node0", or "cluster1.node0" with several clusters)
    id: str  # IRMaSim's own node id, unique within its cluster ("node0")
    cluster: str
    type: str
    memory: float | None  # as the platform file gives it (GB in IRMaSim's files), or None
    processors: list[int]  # indexes in NodeHierarchy.processors

    def to_protocol(self, processors: list[Processor]) -> dict[str, Any]:
        return {"name": self.name, "id": self.id, "cluster": self.cluster, "type": self.type,
                "memory": self.memory, "processors": [processors[p].to_protocol() for p in self.processors]}


@dataclass
class NodeHierarchy:
    model: str  # "modelV1"
    nodes: list[Node]
    processors: list[Processor]
    core_processor: list[int]  # core (resource id) -> processor index

    @property
    def nb_cores(self) -> int:
        return len(self.core_processor)

    def to_protocol(self) -> dict[str, Any]:
        """The `hierarchy` entry of SIMULATION_BEGINS (protocol extension; see docs/reference/protocol.md)."""
        return {"model": self.model, "nodes": [node.to_protocol(self.processors) for node in self.nodes]}
