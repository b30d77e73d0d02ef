"""How long Batsim's messages between its actors take: a 1-byte transfer to the master host.

Batsim's actors send each other messages with `mailbox->put(message, 1)` (src/ipp.cpp): a
1-byte communication on the ptask_L07 network model. Alone on its route, such a transfer first
waits the route's latency, then moves its byte at the rate SimGrid's solver gives it: the
smallest bandwidth on the route, bounded by TCP-gamma / (2 x latency) once there is latency
(L07Action::calculate_network_bound). A route without links has nothing to move: it ends once
its latency has passed (a Vivaldi zone's coordinates give one), at once without latency (a Full
zone's undeclared route).
"""

from __future__ import annotations

from typing import Any, Final

from joulesim.simulator.engine.simgrid_kernel import UNBOUNDED_RATE, Route
from joulesim.simulator.platform.platform_model import Platform
from joulesim.simulator.platform.simgrid_config_keys import TCP_GAMMA

MASTER: Final = "master"  # the host of Batsim's server, submitters and REQ-REP actors
FREE = Route(0.0, UNBOUNDED_RATE)
LOOPBACK = Route(0.0, 10e9)


class IpcRoutes:
    """Route of a message between two actors' hosts (MASTER or a compute host's id)."""

    def __init__(self, platform: Platform):
        self._platform = platform
        self._network = platform.network

    def _name(self, host: Any) -> str:
        return self._platform.master.name if host == MASTER else self._platform.compute_hosts[host].name

    def route(self, src: Any, dst: Any) -> Route:
        """(Found anew at each call: the kernel keeps the routes it has met, Kernel._transfer.)"""
        network = self._network
        if network is None:  # no links described: transfers are free, but to itself
            zones = self._platform.zone_routes
            if zones is not None and src != dst:  # (an InputError where SimGrid has no route between two zones)
                zones.message_route(self._name(src), self._name(dst))
            return LOOPBACK if src == dst else FREE
        found = network.message_route(self._name(src), self._name(dst))
        if found is None:
            return FREE
        resources, latency = found
        if not resources:  # (UNBOUNDED_RATE: nothing to move, L07Action's remains are 0)
            return Route(latency, UNBOUNDED_RATE) if latency > 0 else FREE
        rate = min(network.capacities[r] for r in resources)
        if latency > 0:
            rate = min(rate, TCP_GAMMA / (2.0 * latency))
        return Route(latency, rate, tuple(resources))
