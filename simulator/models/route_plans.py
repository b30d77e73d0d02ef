"""What a flow between two hosts puts its bytes on, per host pair, cached for the network runner.

A *route plan* (src, dst): the solver indices of the shared resources its route crosses (links
after the CPUs), the capacities of its FATPIPE links (they bound a flow without being shared),
the route's latency, and whether no shared resource is crossed twice. The runner's Python path
reads plans as tuples; its compiled launch (activity_table_kernel.launch) reads the same plans
from arrays, found through a numba typed dict keyed by src x nb_hosts + dst, filled on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from joulesim.simulator.models import int_index_kernel
from joulesim.simulator.models.activity_table_kernel import P_COUNT, P_DISTINCT, P_FAT_COUNT, P_FAT_START, P_START

if TYPE_CHECKING:
    from joulesim.simulator.platform.network_topology import NetworkTopology

# Plans kept at most (a million host pairs: ~200 MB at worst; cleared when full).
_PLAN_CACHE_LIMIT = 1 << 20

Plan = tuple[tuple[int, ...], tuple[float, ...], float, bool]


class RoutePlans:
    def __init__(self, network: "NetworkTopology", nb_hosts: int):
        self.network = network
        self.nb_hosts = nb_hosts  # resources 0..nb_hosts-1 are the hosts' CPUs
        self._plans: dict[tuple[int, int], Plan] = {}
        # The arrays of the compiled launch.
        self.ids = int_index_kernel.new_index()  # src * nb_hosts + dst -> row
        self.integers = np.zeros((0, 5), dtype=np.int64)  # P_START, P_COUNT, P_FAT_START, P_FAT_COUNT, P_DISTINCT
        self.latency = np.zeros(0)
        self.resources = np.zeros(0, dtype=np.int64)
        self.fat = np.zeros(0)
        self.longest = 1  # the most elements one launch command can add (a compute adds one)
        self._rows = self._nb_resources = self._nb_fat = 0

    def plan(self, src: int, dst: int) -> Plan:
        plan = self._plans.get((src, dst))
        if plan is None:
            # SimGrid routes a host's bytes to itself too (up its link and down again, in a cluster).
            network = self.network
            route_resources, latency = network.route(src, dst) if src != dst else network.self_route(src)
            if len(self._plans) >= _PLAN_CACHE_LIMIT:
                self._plans.clear()
            plan = self._plans[(src, dst)] = self.of_route(route_resources, latency)
        return plan

    def of_route(self, route_resources: tuple[int, ...], latency: float) -> Plan:
        """The plan of a route given as its links (indices in the network description): also a
        route to or from the master host (Batsim's messages), which no host pair names."""
        network = self.network
        fatpipe = network.fatpipe
        shared = tuple(self.nb_hosts + r for r in route_resources if not fatpipe[r])
        fat = tuple(float(network.capacity[r]) for r in route_resources if fatpipe[r])
        return shared, fat, latency, len(set(shared)) == len(shared)

    def add_compiled(self, src: int, dst: int) -> None:
        """Put the plan of (src, dst) in the arrays."""
        if self._rows >= _PLAN_CACHE_LIMIT:  # start again
            self.ids = int_index_kernel.new_index()
            self._rows = self._nb_resources = self._nb_fat = 0
        shared, fat, latency, distinct = self.plan(src, dst)
        row = self._rows
        if row == self.integers.shape[0]:
            self.integers = _grown(self.integers, 2 * row + 64)
            self.latency = _grown(self.latency, 2 * row + 64)
        self.resources = _room(self.resources, self._nb_resources + len(shared))
        self.fat = _room(self.fat, self._nb_fat + len(fat))
        integers = self.integers[row]
        integers[P_START], integers[P_COUNT] = self._nb_resources, len(shared)
        integers[P_FAT_START], integers[P_FAT_COUNT] = self._nb_fat, len(fat)
        integers[P_DISTINCT] = distinct
        self.latency[row] = latency
        self.resources[self._nb_resources:self._nb_resources + len(shared)] = shared
        self.fat[self._nb_fat:self._nb_fat + len(fat)] = fat
        self._nb_resources += len(shared)
        self._nb_fat += len(fat)
        self.longest = max(self.longest, len(shared))
        self.ids = int_index_kernel.room(self.ids, row + 1)
        int_index_kernel.put(self.ids, src * self.nb_hosts + dst, row)
        self._rows += 1


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    grown = np.zeros((size,) + array.shape[1:], dtype=array.dtype)
    grown[:array.shape[0]] = array
    return grown


def _room(array: np.ndarray, size: int) -> np.ndarray:
    return array if size <= array.shape[0] else _grown(array, max(size, 2 * array.shape[0] + 256))
