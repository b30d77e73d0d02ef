"""How a platform's machines group, for the report's Gantt (read from the platform file, since
Batsim's outputs only number the machines).

On an IRMaSim node platform (simulator/platform/node_hierarchy.py) the machines are cores: the
Gantt groups them by node, and within a node by processor. On another platform with several
clusters (SimGrid <cluster> or zones, joulesim JSON clusters), it groups them by cluster. Each
group is a contiguous range of machine numbers: the loaders number a processor's cores, a
node's processors and a cluster's hosts one after the other, and a group that is not contiguous
is split where it breaks (so nothing is ever drawn in the wrong group).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from joulesim.analysis.run_outputs import AnalysisError
from joulesim.simulator.platform.platform_model import Platform


@dataclass(frozen=True)
class MachineGroups:
    """`outer` (nodes, or clusters) and `inner` (processors, or none): each a list of
    (name, first machine, last machine), in machine order, covering every machine."""

    source: str
    outer_kind: str  # "node" or "cluster"
    outer: list[tuple[str, int, int]]
    inner_kind: str | None  # "processor", or None
    inner: list[tuple[str, int, int]]
    machine_names: list[str]

    @property
    def nb_machines(self) -> int:
        return len(self.machine_names)

    @property
    def finest(self) -> list[tuple[str, int, int]]:
        """The groups a job's rectangle is cut at: processors, else nodes or clusters."""
        return self.inner if self.inner else self.outer


def machine_groups(platform: Platform, machines: int | None = None) -> MachineGroups | None:
    """The platform's grouping, or None when it has none (one cluster, or none, of plain hosts).
    `machines`: of its first machines only (a run cut by --mmax)."""
    hosts = platform.compute_hosts[:machines]
    names = [host.name for host in hosts]
    hierarchy = platform.nodes
    if hierarchy is not None and len(hosts) == hierarchy.nb_cores:  # (--mmax cannot cut a node platform)
        node_of_core = np.empty(hierarchy.nb_cores, dtype=np.int64)
        processor_of_core = np.asarray(hierarchy.core_processor, dtype=np.int64)
        for processor in hierarchy.processors:
            node_of_core[processor.cores] = processor.node
        node_names = [node.name for node in hierarchy.nodes]
        processor_names = [processor.name for processor in hierarchy.processors]
        return MachineGroups(platform.source, "node", _ranges(node_of_core, node_names), "processor",
                             _ranges(processor_of_core, processor_names), names)
    zones = [host.zone for host in hosts]
    if len(set(zones)) < 2:
        return None
    labels = sorted(set(zones))
    codes = np.array([labels.index(zone) for zone in zones], dtype=np.int64)
    return MachineGroups(platform.source, "cluster", _ranges(codes, [zone or "(no cluster)" for zone in labels]),
                         None, [], names)


def check_platform_fits(source: str, platform_machines: int, run_name: str, nb_machines: int) -> None:
    """A platform of another size than the run's is not the run's platform."""
    if platform_machines != nb_machines:
        raise AnalysisError(f"{source}: the platform has {platform_machines} machines but the run "
                            f"{run_name} used {nb_machines}: give the platform the run was simulated on")


def _ranges(codes: np.ndarray, names: list[str]) -> list[tuple[str, int, int]]:
    """The runs of equal codes, each as (its group's name, first, last)."""
    if codes.size == 0:
        return []
    starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
    ends = np.concatenate([starts[1:] - 1, [codes.size - 1]])
    return [(names[codes[s]], int(s), int(e)) for s, e in zip(starts.tolist(), ends.tolist())]
