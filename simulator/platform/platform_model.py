"""The simulated platform as the engine sees it, whatever file format it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from joulesim.inputs.input_error import InputError
    from joulesim.simulator.platform.network_topology import NetworkTopology
    from joulesim.simulator.platform.node_hierarchy import NodeHierarchy


@dataclass(frozen=True)
class SleepPstate:
    """A sleep power state and the two virtual pstates used to enter and leave it."""

    sleep: int
    switch_off: int
    switch_on: int


@dataclass
class Host:
    """One machine. Compute hosts are numbered 0..n-1 in the string order of their names, as
    Batsim 4.2.1 numbers them (platform_checks.build_platform), storage hosts after them; IRMaSim
    platforms' cores in their platform's order."""

    id: int
    name: str
    speeds: list[float]  # flop/s, one per pstate
    pstate: int  # initial pstate
    role: str = "compute_node"  # compute_node | storage | master
    properties: dict[str, str] = field(default_factory=dict)
    zone_properties: dict[str, str] = field(default_factory=dict)
    # (idle watts, max watts) per pstate, or None when the platform gives no power model.
    wattage_per_state: list[tuple[float, float]] | None = None
    # SimGrid's epsilon watts per pstate ("idle:epsilon:max": a host that computes at load L
    # draws epsilon + L x (max - epsilon), an idle one idle), or None when every pstate gives
    # idle:max (epsilon = idle).
    wattage_epsilon: list[float] | None = None
    wattage_off: float | None = None
    sleep_pstates: list[SleepPstate] = field(default_factory=list)
    # Id of the host's cluster (a <cluster>, or a <zone routing="Cluster">); "" outside clusters.
    zone: str = ""
    # SimGrid's core count: under ptask_L07 a host's CPU offers cores x speed, each executor
    # at most one core's speed; the energy plugin's load is the used speed / (cores x speed).
    cores: int = 1

    @property
    def speed(self) -> float:
        return self.speeds[self.pstate]

    def power_range(self, pstate: int) -> tuple[float, float, float]:
        """(idle, epsilon, max) watts in `pstate`, as SimGrid's energy plugin keeps them."""
        idle, peak = self.wattage_per_state[pstate]
        return idle, (idle if self.wattage_epsilon is None else self.wattage_epsilon[pstate]), peak


@dataclass
class Platform:
    """Hosts of one platform file. The master host is kept apart: deciders never see it."""

    source: str
    master: Host
    compute_hosts: list[Host]
    storage_hosts: list[Host] = field(default_factory=list)
    # Links and routes between compute hosts; None when the file describes no network.
    network: NetworkTopology | None = None
    # Without a network, the zone tree of a file of several zones: every route is empty, but
    # SimGrid has none between hosts of two zones that no zoneRoute joins (and no zoneRoute can
    # be declared without links), so a message between them is refused as Batsim aborts on it.
    zone_routes: NetworkTopology | None = None
    # IRMaSim's node model: compute hosts are cores of these processors and nodes; None otherwise.
    nodes: NodeHierarchy | None = None
    # What joulesim runs but another reader of the file refuses (Batsim 4.2.1): one line each,
    # printed when a simulation starts (with the verbosity's warnings).
    warnings: list[str] = field(default_factory=list)
    # Power properties (wattage_per_state, wattage_off, sleep_pstates) that energy accounting
    # (-E) would refuse, in the order Batsim 4.2.1 stops on them; their hosts run without them.
    # platform_checks.check_energy_properties raises the first when -E is given.
    energy_refusals: list[InputError] = field(default_factory=list)

    @property
    def nb_compute(self) -> int:
        return len(self.compute_hosts)
