"""The network of a platform: links, the zone tree, and the route between two compute hosts.

The description follows SimGrid's (what Batsim platforms use). Links have a bandwidth
(bytes/s), a latency (s) and a sharing policy. Hosts and routers sit in a tree of zones;
each zone routes between its own members (hosts, routers, child zones) in its own way:

- ``FULL`` (``routing="Full"``): every route is declared, ``<route>`` between hosts or routers,
  ``<zoneRoute>`` between child zones (with a gateway inside each);
- ``SHORTEST`` (``Floyd``, ``Dijkstra``, ``DijkstraCache``): declared routes are the edges of a
  graph; a route is the path with the fewest edges (ties: declaration order);
- ``STAR`` (a ``<cluster>``, ``routing="Cluster"``, the JSON backbone): each member has links
  up to the zone's centre and down from it; a route is the source's way up, the zone's
  backbone if any, then the destination's way down (a link met twice counts once);
- ``NONE`` (``routing="None"``): no route at all (a zone holding only the master, say).

A route between zones is found as SimGrid's ``NetZoneImpl::get_global_route`` does: in the
deepest zone holding both ends, take the route between the two child zones that hold them,
then recursively the route from the source to that route's first gateway, and from its
last gateway to the destination. Routes are computed when first asked for (a platform may
have thousands of hosts) and cached.

Resources: a SHARED link is one resource (both directions share its bandwidth); a
SPLITDUPLEX link is two, ``<name>_UP`` and ``<name>_DOWN``, each with the full bandwidth; a
FATPIPE link is one resource flagged in ``fatpipe``: a flow crossing it is bounded by its
bandwidth but does not share it. A resource may appear twice in a route when the platform
routes a flow through the same link twice (SimGrid then counts its bytes twice).

Loaders (:mod:`platform_xml`, :mod:`platform_json`) describe the network as a
:class:`NetworkDecl` (network_declaration.py); :class:`NetworkTopology` checks it into a zone
tree (network_zones.py: unknown links, misplaced routes, duplicate names... are InputErrors
naming the element) and answers ``route(src, dst)`` here.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.network_declaration import Link, NetworkDecl, Routing, SharingPolicy
from joulesim.simulator.platform.network_zones import Hop, NoRoute, Zone, ZoneTree

_ROUTE_CACHE_LIMIT = 1 << 18  # pairs kept before the cache is emptied (bounded memory)
LOOPBACK_NAME = "__loopback__"
LOOPBACK_BANDWIDTH = 10e9  # bytes/s: SimGrid's network/loopback-bw default, 10GBps


def _takes_model_loopback(zone: Zone) -> bool:
    """Whether SimGrid gives this zone's hosts the model's loopback link (FullZone and
    Floyd/DijkstraZone do_seal: zones of the base hierarchy, those without child zones)."""
    return zone.routing in (Routing.FULL, Routing.SHORTEST) and not zone.children and bool(zone.netpoints)


class NetworkTopology(ZoneTree):
    """Links as resources, and routes between hosts: compute hosts (ids 0..n-1, the engine's
    order) then storage hosts (n..n+m-1).

    - ``nb_resources``; ``capacity`` (bytes/s) and ``fatpipe`` (bool) per resource;
      ``names`` per resource (``l``, or ``l_UP``/``l_DOWN`` for SPLITDUPLEX halves);
      ``latency`` per resource (s).
    - ``route(src, dst)`` -> (resource indices in travel order, total latency in s). The same
      host: no resource, no latency (see ``self_route`` for what a host's transfer to itself
      crosses).
    - ``loopback``: the resource index of SimGrid's loopback link (None when no zone needs it).
    """

    def __init__(self, decl: NetworkDecl, host_names: list[str], source: str):
        self.source = str(source)
        self.host_names = list(host_names)
        self._zone_of: dict[str, Zone] = {}  # netpoint name -> its zone
        self._zones: dict[str, Zone] = {}
        self.root = self._register_zone(decl.root, None)
        self._links: dict[str, Link] = {}
        self._resource: dict[str, int] = {}
        names: list[str] = []
        capacity: list[float] = []
        fatpipe: list[bool] = []
        latency: list[float] = []
        for link in decl.links:
            if link.name in self._links:
                self._fail(link.where, f"link name {link.name!r} is already used by {self._links[link.name].where}",
                           "give every link a unique id")
            self._links[link.name] = link
            halves = [f"{link.name}_UP", f"{link.name}_DOWN"] if link.policy is SharingPolicy.SPLITDUPLEX else [link.name]
            for name in halves:
                if name in self._resource:
                    other = names[self._resource[name]]
                    self._fail(link.where, f"resource name {name!r} is used twice (link {other!r} and a half of SPLITDUPLEX link {link.name!r}, or the reverse)",
                               "rename one of the links: a SPLITDUPLEX link 'x' owns the names 'x_UP' and 'x_DOWN'")
                self._resource[name] = len(names)
                names.append(name)
                capacity.append(link.bandwidth)
                fatpipe.append(link.policy is SharingPolicy.FATPIPE)
                latency.append(link.latency)
        # SimGrid's network model has one loopback link, `__loopback__` (network/loopback-bw
        # 10 GBps, network/loopback-lat 0, FATPIPE), that Full and Floyd/Dijkstra zones holding
        # hosts route a host's transfers to itself through when no route from the host to
        # itself is declared (measured with SimGrid 3.32 under ptask_L07: two executors of a
        # parallel task on one host move 1e8 B in 0.01 s, two such tasks at once as well; an
        # actor's 1-byte message to an actor of its own host takes 1e-10 s).
        self.loopback: int | None = None
        if any(_takes_model_loopback(zone) for zone in self._zones.values()):
            if LOOPBACK_NAME in self._resource:
                self._fail(self._links[LOOPBACK_NAME].where, f"the link name {LOOPBACK_NAME!r} is SimGrid's own loopback link",
                           "rename the link")
            self.loopback = len(names)
            self._resource[LOOPBACK_NAME] = self.loopback
            names.append(LOOPBACK_NAME)
            capacity.append(LOOPBACK_BANDWIDTH)
            fatpipe.append(True)
            latency.append(0.0)
        self.names = names
        self.nb_resources = len(names)
        self.capacity = np.array(capacity, dtype=float)
        self.fatpipe = np.array(fatpipe, dtype=bool)
        self.latency = np.array(latency, dtype=float)
        self._latency = latency  # Python floats: summed in travel order, as SimGrid does

        self._build_zone(decl.root)
        for name in self.host_names:
            if name not in self._zone_of:
                self._fail("platform", f"host {name!r} is in no zone of the network description", "this is a loader bug: please report it")
        self._cache: dict[tuple[int, int], tuple[tuple[int, ...], float]] = {}
        self._self_routes: dict[int, tuple[tuple[int, ...], float]] = {}
        self._sub_routes: dict[tuple[str, str], tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self._sub_routes_under_way: set[tuple[str, str]] = set()  # to report gateways that route in a circle

    # ------------------------------------------------------------------ public API
    def route(self, src: int, dst: int) -> tuple[tuple[int, ...], float]:
        """Resource indices from host `src` to `dst` (ids), and the total latency (s)."""
        key = (src, dst)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        n = len(self.host_names)
        if not (0 <= src < n and 0 <= dst < n):
            raise ValueError(f"route({src}, {dst}): host ids go from 0 to {n - 1}")
        if src == dst:
            result: tuple[tuple[int, ...], float] = ((), 0.0)
        else:
            a, b = self.host_names[src], self.host_names[dst]
            result = self._resources_and_latency(a, b, f"route from host '{a}' (id {src}) to host '{b}' (id {dst})")
        if len(self._cache) >= _ROUTE_CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = result
        return result

    def self_route(self, host: int) -> tuple[tuple[int, ...], float]:
        """What a transfer from host `host` (id) to itself crosses under SimGrid's routing (see
        message_route): an MPI message between two ranks of one host, or a parallel task's bytes
        between two executors mapped onto it, go up the host's link and down again."""
        hit = self._self_routes.get(host)  # (not in _cache: route(h, h) is the free "no route")
        if hit is None:
            name = self.host_names[host]
            hit = self._self_routes[host] = self.message_route(name, name) or ((), 0.0)
        return hit

    def message_route(self, src: str, dst: str) -> tuple[tuple[int, ...], float] | None:
        """What a transfer from netpoint `src` to netpoint `dst` (names; the master host too)
        crosses, as SimGrid routes it, and its latency; None when either is outside the network
        description. Unlike `route`, a host's transfer to itself is routed as in SimGrid: a
        cluster host goes up its link and down again; a Full zone uses the route declared from
        the host to itself, if any; else a Full or Floyd/Dijkstra zone of hosts crosses the
        model's loopback link."""
        if src not in self._zone_of or dst not in self._zone_of:
            return None
        if src == dst:
            zone = self._zone_of[src]
            if zone.routing is Routing.STAR:
                resources = zone.loopback.get(src) or _star_resources(zone, src, src)
            elif zone.routing is Routing.FULL and (src, src) in zone.table:
                resources = zone.table[(src, src)].resources
            elif self.loopback is not None and _takes_model_loopback(zone):
                resources = (self.loopback,)
            elif zone.routing is Routing.NONE:  # SimGrid 3.32 routes nothing there, not even a host to itself
                raise InputError(self.source, f"route from {src!r} to itself", f"{zone.where} has routing None: SimGrid aborts "
                                 "(\"There can't be route in an Empty zone\")", f'give {zone.where} routing="Full"')
            else:
                resources = ()
        else:
            return self._resources_and_latency(src, dst, f"route from {src!r} to {dst!r}")
        return resources, self._latency_of(resources)

    def _resources_and_latency(self, src: str, dst: str, what: str) -> tuple[tuple[int, ...], float]:
        """The global route between two netpoints and its latency; InputError naming `what`."""
        out: list[int] = []
        summed: list[int] = []
        try:
            self._global_route(src, dst, out, summed)
        except NoRoute as e:
            raise InputError(self.source, what, e.problem, e.fix) from None
        return tuple(out), self._latency_of(summed)

    def _latency_of(self, resources) -> float:
        latency = 0.0  # summed in travel order, as SimGrid does
        for r in resources:
            latency += self._latency[r]
        return latency

    def route_names(self, src: int, dst: int) -> list[str]:
        """The route's resource names (for messages and tests)."""
        return [self.names[r] for r in self.route(src, dst)[0]]

    def link(self, name: str) -> Link:
        return self._links[name]

    # ------------------------------------------------------------------ routing
    def _global_route(self, src: str, dst: str, out: list[int], summed: list[int]) -> None:
        """Append the resources from netpoint `src` to netpoint `dst` (SimGrid's get_global_route)
        to `out` in travel order, and to `summed` in the order SimGrid adds their latencies: the
        common zone's route first (with the routes between its hops), then the way from `src`
        to its gateway, then the way from the last gateway to `dst` (a float sum depends on its
        order: 1 us + 5 us + 3 us is not 5 us + 3 us + 1 us to the last bit)."""
        src_zone, dst_zone = self._zone_of[src], self._zone_of[dst]
        if src_zone is dst_zone:
            common = src_side = dst_side = src_zone
        else:
            common, src_side, dst_side = _common_ancestors(src_zone, dst_zone)
        if common.bypass and src_zone is common and dst_zone is common:
            bypass = common.bypass.get((src, dst))
            if bypass is not None:
                out.extend(bypass)
                summed.extend(bypass)
                return
        if src_side is dst_side:
            if src == dst:
                return  # a gateway reached from itself
            for name, zone in ((src, src_zone), (dst, dst_zone)):
                if zone is not common:
                    other = dst if name == src else src
                    raise NoRoute(
                        f"{name!r} is inside {zone.where}, below {common.where} where {other!r} is: SimGrid routes only "
                        "between members of one zone (hosts, routers, child zones)",
                        f"put {other!r} in a zone of its own inside {common.where} and join the zones with a <zoneRoute>")
            if common.routing is Routing.STAR:
                local = _star_resources(common, src, dst)
                out.extend(local)
                summed.extend(local)
            else:
                for hop in self._local_hops(common, src, dst):  # routes between hosts: no gateways
                    out.extend(hop.resources)
                    summed.extend(hop.resources)
            return
        hops = self._local_hops(common, src_side.id, dst_side.id)
        first, last = hops[0], hops[-1]
        self._check_inside(first.gw_src, src_side, first, "gw_src")
        self._check_inside(last.gw_dst, dst_side, last, "gw_dst")
        middle: list[int] = []
        middle_summed: list[int] = []
        previous_gateway = None
        for hop in hops:
            if previous_gateway is not None and previous_gateway != hop.gw_src:
                between = self._sub_route(previous_gateway, hop.gw_src)
                middle.extend(between[0])
                middle_summed.extend(between[1])
            middle.extend(hop.resources)
            middle_summed.extend(hop.resources)
            previous_gateway = hop.gw_dst
        summed.extend(middle_summed)
        if src != first.gw_src:
            up = self._sub_route(src, first.gw_src)
            out.extend(up[0])
            summed.extend(up[1])
        out.extend(middle)
        if last.gw_dst != dst:
            down = self._sub_route(last.gw_dst, dst)
            out.extend(down[0])
            summed.extend(down[1])

    def _sub_route(self, src: str, dst: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """A route to or from a gateway (travel order, latency order): shared by many host pairs, so cached."""
        key = (src, dst)
        hit = self._sub_routes.get(key)
        if hit is None:
            # The gateways between the hops of a shortest-path route are not checked to lie
            # inside the zone (SimGrid does not either): the route to one may need itself.
            if key in self._sub_routes_under_way:
                raise NoRoute(f"the route from {src!r} to {dst!r} (between two zoneRoutes) goes round in a circle: computing it needs itself",
                               "check the gateways (gw_src, gw_dst) of the zoneRoutes: each should be inside the zone it names")
            self._sub_routes_under_way.add(key)
            out: list[int] = []
            summed: list[int] = []
            try:
                self._global_route(src, dst, out, summed)
            finally:
                self._sub_routes_under_way.discard(key)
            hit = (tuple(out), tuple(summed))
            if len(self._sub_routes) >= _ROUTE_CACHE_LIMIT:
                self._sub_routes.clear()
            self._sub_routes[key] = hit
        return hit

    def _check_inside(self, gateway: str | None, zone: Zone, hop: Hop, role: str) -> None:
        # Checked when used, not when loaded: also stops any endless recursion on a bad gateway.
        if gateway is None or zone not in self._zone_of[gateway].path:
            if hop.backward:  # report the attribute as the file spells it
                role = "gw_dst" if role == "gw_src" else "gw_src"
            raise NoRoute(f"{hop.where}: {role} {gateway!r} is not inside {zone.where}",
                           f"name as {role} a host or router of {zone.where} (a cluster's router for a cluster)")

    def _local_hops(self, zone: Zone, src: str, dst: str) -> list[Hop]:
        """The zone-local route from member `src` to member `dst`, as one or more hops."""
        if zone.routing is Routing.FULL:
            hop = zone.table.get((src, dst))
            if hop is None:
                raise NoRoute(f"{zone.where} (routing Full) declares no route from {src!r} to {dst!r}",
                               f"add a <{'zoneRoute' if src in zone.children else 'route'} src=\"{src}\" dst=\"{dst}\"> to {zone.where}")
            return [hop]
        if zone.routing is Routing.STAR:
            return [Hop(_star_resources(zone, src, dst), zone.gateway[src], zone.gateway[dst], zone.where)]
        if zone.routing is Routing.SHORTEST:
            return self._shortest(zone, src, dst)
        raise NoRoute(f"{zone.where} has routing None: it routes nothing (between {src!r} and {dst!r})",
                       f'give {zone.where} routing="Full" and the routes its members need')

    def _shortest(self, zone: Zone, src: str, dst: str) -> list[Hop]:
        predecessors = zone.paths.get(src)
        if predecessors is None:  # breadth-first search from src: fewest hops, first declared wins ties
            predecessors = {src: (src, None)}
            queue = deque([src])
            while queue:
                node = queue.popleft()
                for nxt, hop in zone.graph.get(node, ()):
                    if nxt not in predecessors:
                        predecessors[nxt] = (node, hop)
                        queue.append(nxt)
            zone.paths[src] = predecessors
        if dst not in predecessors:
            raise NoRoute(f"{zone.where} (shortest-path routing) has no chain of routes from {src!r} to {dst!r}",
                           f"declare routes in {zone.where} that connect them")
        hops: list[Hop] = []
        node = dst
        while node != src:
            node, hop = predecessors[node]
            hops.append(hop)
        hops.reverse()
        return hops


def _star_resources(zone: Zone, src: str, dst: str) -> tuple[int, ...]:
    """Way up, backbone, way down; a link met twice counts once (as in SimGrid's StarZone)."""
    resources = zone.up[src] + zone.backbone + zone.down[dst]
    if len(set(resources)) == len(resources):
        return resources
    return tuple(dict.fromkeys(resources))


def _common_ancestors(src_zone: Zone, dst_zone: Zone) -> tuple[Zone, Zone, Zone]:
    """(deepest zone holding both, its child on src's side, its child on dst's side), as
    SimGrid's find_common_ancestors: when one zone holds the other, all three are that zone."""
    if src_zone is dst_zone:
        return src_zone, src_zone, src_zone
    a, b = src_zone.path, dst_zone.path
    i = 0
    n = min(len(a), len(b))
    while i < n and a[i] is b[i]:
        i += 1
    if i == 0:
        raise NoRoute("the two hosts are in two separate zone trees", "wrap the whole platform in one <zone>")
    if i == n:
        return a[i - 1], a[i - 1], a[i - 1]
    return a[i - 1], a[i], b[i]
