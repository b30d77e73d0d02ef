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
:class:`NetworkDecl` (network_declaration.py); :class:`NetworkTopology` checks it (unknown links, misplaced routes,
duplicate names... are InputErrors naming the element) and answers ``route(src, dst)``.
"""

from __future__ import annotations

import difflib
from collections import deque
from dataclasses import dataclass

import numpy as np

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.network_declaration import (
    Link,
    LinkRef,
    NetworkDecl,
    RouteDecl,
    Routing,
    SharingPolicy,
    ZoneDecl,
)


class _NoRoute(Exception):
    """A route cannot be computed; `route()` names the two hosts and the file."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


@dataclass(frozen=True)
class _Hop:
    """A zone-local piece of route: its resources, and the gateways of a route between zones."""

    resources: tuple[int, ...]
    gw_src: str | None
    gw_dst: str | None
    where: str
    backward: bool = False  # the reverse of a symmetrical declaration (its gateways swapped)


class _Zone:
    """A zone ready for routing (built from a ZoneDecl by NetworkTopology)."""

    def __init__(self, decl: ZoneDecl, parent: _Zone | None):
        self.id = decl.id
        self.where = decl.where
        self.routing = decl.routing
        self.parent = parent
        self.path: tuple[_Zone, ...] = (parent.path if parent else ()) + (self,)  # root .. self
        self.netpoints: set[str] = set(decl.hosts) | set(decl.routers)
        self.children: dict[str, _Zone] = {}
        self.table: dict[tuple[str, str], _Hop] = {}  # FULL
        self.graph: dict[str, list[tuple[str, _Hop]]] = {}  # SHORTEST: edges in declaration order
        self.paths: dict[str, dict[str, tuple[str, _Hop]]] = {}  # SHORTEST: predecessors per source
        self.up: dict[str, tuple[int, ...]] = {}  # STAR
        self.down: dict[str, tuple[int, ...]] = {}
        self.gateway: dict[str, str | None] = {}
        self.backbone: tuple[int, ...] = ()
        self.bypass: dict[tuple[str, str], tuple[int, ...]] = {}

    def is_member(self, name: str) -> bool:
        return name in self.netpoints or name in self.children


_ROUTE_CACHE_LIMIT = 1 << 18  # pairs kept before the cache is emptied (bounded memory)


class NetworkTopology:
    """Links as resources, and routes between compute hosts (ids 0..n-1, the engine's order).

    - ``nb_resources``; ``capacity`` (bytes/s) and ``fatpipe`` (bool) per resource;
      ``names`` per resource (``l``, or ``l_UP``/``l_DOWN`` for SPLITDUPLEX halves);
      ``latency`` per resource (s).
    - ``route(src, dst)`` -> (resource indices in travel order, total latency in s). The same
      host: no resource, no latency (loopback is free).
    """

    def __init__(self, decl: NetworkDecl, host_names: list[str], source: str):
        self.source = str(source)
        self.host_names = list(host_names)
        self._zone_of: dict[str, _Zone] = {}  # netpoint name -> its zone
        self._zones: dict[str, _Zone] = {}
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
        self._sub_routes: dict[tuple[str, str], tuple[int, ...]] = {}
        self._sub_routes_under_way: set[tuple[str, str]] = set()  # to report gateways that route in a circle

    # ------------------------------------------------------------------ public API
    def route(self, src: int, dst: int) -> tuple[tuple[int, ...], float]:
        """Resource indices from compute host `src` to `dst` (ids), and the total latency (s)."""
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

    def message_route(self, src: str, dst: str) -> tuple[tuple[int, ...], float] | None:
        """What a transfer from netpoint `src` to netpoint `dst` (names; the master host too)
        crosses, as SimGrid routes it, and its latency; None when either is outside the network
        description. Unlike `route`, a host's transfer to itself is routed as in SimGrid: a
        cluster host goes up its link and down again; a Full zone uses the route declared from
        the host to itself, if any."""
        if src not in self._zone_of or dst not in self._zone_of:
            return None
        if src == dst:
            zone = self._zone_of[src]
            if zone.routing is Routing.STAR:
                resources = _star_resources(zone, src, src)
            elif zone.routing is Routing.FULL and (src, src) in zone.table:
                resources = zone.table[(src, src)].resources
            else:
                resources = ()
        else:
            return self._resources_and_latency(src, dst, f"route from {src!r} to {dst!r}")
        return resources, self._latency_of(resources)

    def _resources_and_latency(self, src: str, dst: str, what: str) -> tuple[tuple[int, ...], float]:
        """The global route between two netpoints and its latency; InputError naming `what`."""
        out: list[int] = []
        try:
            self._global_route(src, dst, out)
        except _NoRoute as e:
            raise InputError(self.source, what, e.problem, e.fix) from None
        return tuple(out), self._latency_of(out)

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

    # ------------------------------------------------------------------ building
    def _fail(self, where: str, problem: str, fix: str) -> None:
        raise InputError(self.source, where, problem, fix)

    def _register_zone(self, decl: ZoneDecl, parent: _Zone | None) -> _Zone:
        """First pass: the zone tree and where every host and router is."""
        zone = _Zone(decl, parent)
        if decl.id in self._zones:
            self._fail(decl.where, f"zone id {decl.id!r} is already used by {self._zones[decl.id].where}", "give every zone and cluster a unique id")
        self._zones[decl.id] = zone
        for name in decl.hosts + decl.routers:
            if name in self._zone_of:
                self._fail(decl.where, f"name {name!r} is used twice (in {self._zone_of[name].where} and here)",
                           "hosts and routers need unique names (a cluster's router is named prefix + id + '_router' + suffix unless router_id says otherwise)")
            self._zone_of[name] = zone
        for child in decl.children:
            zone.children[child.id] = self._register_zone(child, zone)
        return zone

    def _build_zone(self, decl: ZoneDecl) -> None:
        """Second pass, once every name is known: routes and links of the zone and below."""
        zone = self._zones[decl.id]
        for name in zone.netpoints:
            if name in self._zones:
                self._fail(decl.where, f"{name!r} names both a host or router and a zone", "give zones, hosts and routers distinct names")
        if decl.routing is Routing.STAR:
            self._build_star(decl, zone)
        elif decl.routes:
            if decl.routing is Routing.NONE:
                self._fail(decl.routes[0].where, f"{decl.where} has routing=\"None\": it cannot hold routes", 'use routing="Full" (or Floyd) to declare routes')
            for route in decl.routes:
                self._add_route(zone, route)
        for route in decl.bypass_routes:
            self._add_bypass(zone, route)
        for child in decl.children:
            self._build_zone(child)

    def _resolve(self, ref: LinkRef, backward: bool) -> int:
        """The resource a link reference crosses; `backward` for the reverse of a symmetrical route."""
        link = self._links.get(ref.link)
        if link is not None:
            if link.policy is not SharingPolicy.SPLITDUPLEX:
                return self._resource[link.name]  # the direction of a one-resource link does not matter
            if ref.direction is None:
                self._fail(ref.where, f"link {ref.link!r} is SPLITDUPLEX: a route must say which direction it crosses",
                           f'add direction="UP" or direction="DOWN" to the <link_ctn>, or name {ref.link + "_UP"!r} or {ref.link + "_DOWN"!r}')
            direction = ref.direction
            if backward:
                direction = "DOWN" if direction == "UP" else "UP"
            return self._resource[f"{link.name}_{direction}"]
        if ref.link in self._resource:  # a SPLITDUPLEX half named directly ("l_UP"), as <host_link> does
            return self._resource[ref.link]
        close = difflib.get_close_matches(ref.link, list(dict.fromkeys([*self._links, *self._resource])), n=3)
        hint = ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else "declare it with <link id=\"...\" bandwidth=\"...\" latency=\"...\"/>"
        self._fail(ref.where, f"no link named {ref.link!r}", hint)
        raise AssertionError  # unreachable: _fail raises

    def _check_netpoint(self, zone: _Zone, route: RouteDecl, name: str, role: str) -> None:
        if name in zone.netpoints:
            return
        if name in zone.children:
            self._fail(route.where, f"{role} {name!r} is a zone: a route between zones is a <zoneRoute> with gw_src and gw_dst",
                       "write <zoneRoute src=... dst=... gw_src=... gw_dst=...>")
        if name in self._zone_of or name in self._zones:
            self._fail(route.where, f"{role} {name!r} is not a host or router of {zone.where}",
                       "declare a route inside the zone that holds both ends; zones are joined with <zoneRoute>")
        self._fail(route.where, f"{role} {name!r} is no host or router of the platform", "check the name")

    def _check_child_zone(self, zone: _Zone, route: RouteDecl, name: str, role: str) -> None:
        if name in zone.children:
            return
        if name in zone.netpoints:
            self._fail(route.where, f"{role} {name!r} is a host or router, not a zone", "routes between hosts or routers are written <route>")
        self._fail(route.where, f"{role} {name!r} is not a zone or cluster directly inside {zone.where}",
                   "a <zoneRoute> joins two child zones of the zone that declares it")

    def _check_gateway(self, route: RouteDecl, name: str, role: str) -> None:
        if name not in self._zone_of:
            self._fail(route.where, f"{role} {name!r} is no host or router of the platform",
                       "name a host or router inside the zone (a cluster's router is prefix + id + '_router' + suffix, or its router_id)")

    def _refuse_route_to_itself(self, route: RouteDecl, what: str) -> None:
        """SimGrid reads a route from a host to itself as its loopback, which joulesim does not
        model (transfers within a host are free): it would be accepted and never used."""
        if route.src == route.dst:
            self._fail(route.where, f"the route goes from {route.src!r} to itself: joulesim has no loopback routes "
                       "(transfers within a host or zone cost nothing)",
                       f"remove it; {what} joins two different ends")

    def _add_route(self, zone: _Zone, route: RouteDecl) -> None:
        zone_route = route.gw_src is not None or route.gw_dst is not None
        self._refuse_route_to_itself(route, "a <zoneRoute>" if zone_route else "a <route>")
        if zone_route:
            if route.gw_src is None or route.gw_dst is None:
                self._fail(route.where, "a route between zones needs both gw_src and gw_dst", "add the missing gateway")
            self._check_child_zone(zone, route, route.src, "src")
            self._check_child_zone(zone, route, route.dst, "dst")
            self._check_gateway(route, route.gw_src, "gw_src")
            self._check_gateway(route, route.gw_dst, "gw_dst")
        else:
            self._check_netpoint(zone, route, route.src, "src")
            self._check_netpoint(zone, route, route.dst, "dst")
        if not route.links:
            self._fail(route.where, "the route has no <link_ctn>", "list the links it crosses (SimGrid forbids empty routes)")
        forward = _Hop(tuple(self._resolve(r, False) for r in route.links), route.gw_src, route.gw_dst, route.where)
        self._add_hop(zone, route.src, route.dst, forward, route)
        if route.symmetrical:
            backward = _Hop(tuple(self._resolve(r, True) for r in reversed(route.links)), route.gw_dst, route.gw_src, route.where, True)
            self._add_hop(zone, route.dst, route.src, backward, route)

    def _add_hop(self, zone: _Zone, src: str, dst: str, hop: _Hop, route: RouteDecl) -> None:
        key = (src, dst)
        if key in zone.table:
            first = zone.table[key].where
            self._fail(route.where, f"the route from {src!r} to {dst!r} is already declared by {first}",
                       'routes are symmetrical by default: declare one direction only, or add symmetrical="NO" to both')
        zone.table[key] = hop
        if zone.routing is Routing.SHORTEST:
            zone.graph.setdefault(src, []).append((dst, hop))

    def _add_bypass(self, zone: _Zone, route: RouteDecl) -> None:
        self._refuse_route_to_itself(route, "a <bypassRoute>")
        for name, role in ((route.src, "src"), (route.dst, "dst")):
            if name not in self._zone_of:
                self._fail(route.where, f"{role} {name!r} is no host or router of the platform", "a <bypassRoute> joins two hosts or routers")
        if not route.links:
            self._fail(route.where, "the bypass route has no <link_ctn>", "list the links it crosses")
        key = (route.src, route.dst)
        if key in zone.bypass:
            self._fail(route.where, f"a bypass route from {route.src!r} to {route.dst!r} is already declared", "keep one")
        zone.bypass[key] = tuple(self._resolve(r, False) for r in route.links)

    def _build_star(self, decl: ZoneDecl, zone: _Zone) -> None:
        if decl.routes:
            self._fail(decl.routes[0].where, f"{decl.where} is a cluster: its routes come from its hosts' links and backbone",
                       "remove the <route>; give each host a <host_link id=... up=... down=...>")
        for name in decl.ports:
            if not zone.is_member(name):
                self._fail(decl.where, f"{name!r} is not a host, router or zone directly inside {decl.where}",
                           "a <host_link> names a host of its own zone")
        for name in decl.hosts:
            if name not in decl.ports:
                self._fail(decl.where, f"host {name!r} has no link in {decl.where}",
                           f'add <host_link id="{name}" up="..." down="..."/> in the zone')
        for name, port in decl.ports.items():
            zone.up[name] = tuple(self._resolve(r, False) for r in port.up)
            zone.down[name] = tuple(self._resolve(r, False) for r in port.down)
            zone.gateway[name] = port.gateway
            if name in zone.children:
                child = zone.children[name]
                if port.gateway is None or port.gateway not in self._zone_of or child not in self._zone_of[port.gateway].path:
                    self._fail(decl.where, f"the gateway of zone {name!r} must be a host or router inside it (got {port.gateway!r})", "this is a loader bug: please report it")
        for name in zone.children:
            if name not in decl.ports:
                self._fail(zone.children[name].where, f"{zone.children[name].where} is inside {decl.where}, which can only hold hosts and routers",
                           "move it out of the cluster zone")
        for name in decl.routers:  # a router without links: reached through the backbone alone
            zone.up.setdefault(name, ())
            zone.down.setdefault(name, ())
            zone.gateway.setdefault(name, None)
        if decl.backbone is not None:
            zone.backbone = (self._resolve(decl.backbone, False),)

    # ------------------------------------------------------------------ routing
    def _global_route(self, src: str, dst: str, out: list[int]) -> None:
        """Append the resources from netpoint `src` to netpoint `dst` (SimGrid's get_global_route)."""
        src_zone, dst_zone = self._zone_of[src], self._zone_of[dst]
        if src_zone is dst_zone:
            common = src_side = dst_side = src_zone
        else:
            common, src_side, dst_side = _common_ancestors(src_zone, dst_zone)
        if common.bypass and src_zone is common and dst_zone is common:
            bypass = common.bypass.get((src, dst))
            if bypass is not None:
                out.extend(bypass)
                return
        if src_side is dst_side:
            if src == dst:
                return  # a gateway reached from itself
            for name, zone in ((src, src_zone), (dst, dst_zone)):
                if zone is not common:
                    other = dst if name == src else src
                    raise _NoRoute(
                        f"{name!r} is inside {zone.where}, below {common.where} where {other!r} is: SimGrid routes only "
                        "between members of one zone (hosts, routers, child zones)",
                        f"put {other!r} in a zone of its own inside {common.where} and join the zones with a <zoneRoute>")
            if common.routing is Routing.STAR:
                out.extend(_star_resources(common, src, dst))
            else:
                for hop in self._local_hops(common, src, dst):  # routes between hosts: no gateways
                    out.extend(hop.resources)
            return
        hops = self._local_hops(common, src_side.id, dst_side.id)
        first, last = hops[0], hops[-1]
        self._check_inside(first.gw_src, src_side, first, "gw_src")
        self._check_inside(last.gw_dst, dst_side, last, "gw_dst")
        if src != first.gw_src:
            out.extend(self._sub_route(src, first.gw_src))
        previous_gateway = None
        for hop in hops:
            if previous_gateway is not None and previous_gateway != hop.gw_src:
                out.extend(self._sub_route(previous_gateway, hop.gw_src))
            out.extend(hop.resources)
            previous_gateway = hop.gw_dst
        if last.gw_dst != dst:
            out.extend(self._sub_route(last.gw_dst, dst))

    def _sub_route(self, src: str, dst: str) -> tuple[int, ...]:
        """A route to or from a gateway: shared by many host pairs, so cached."""
        key = (src, dst)
        hit = self._sub_routes.get(key)
        if hit is None:
            # The gateways between the hops of a shortest-path route are not checked to lie
            # inside the zone (SimGrid does not either): the route to one may need itself.
            if key in self._sub_routes_under_way:
                raise _NoRoute(f"the route from {src!r} to {dst!r} (between two zoneRoutes) goes round in a circle: computing it needs itself",
                               "check the gateways (gw_src, gw_dst) of the zoneRoutes: each should be inside the zone it names")
            self._sub_routes_under_way.add(key)
            out: list[int] = []
            try:
                self._global_route(src, dst, out)
            finally:
                self._sub_routes_under_way.discard(key)
            hit = tuple(out)
            if len(self._sub_routes) >= _ROUTE_CACHE_LIMIT:
                self._sub_routes.clear()
            self._sub_routes[key] = hit
        return hit

    def _check_inside(self, gateway: str | None, zone: _Zone, hop: _Hop, role: str) -> None:
        # Checked when used, not when loaded: also stops any endless recursion on a bad gateway.
        if gateway is None or zone not in self._zone_of[gateway].path:
            if hop.backward:  # report the attribute as the file spells it
                role = "gw_dst" if role == "gw_src" else "gw_src"
            raise _NoRoute(f"{hop.where}: {role} {gateway!r} is not inside {zone.where}",
                           f"name as {role} a host or router of {zone.where} (a cluster's router for a cluster)")

    def _local_hops(self, zone: _Zone, src: str, dst: str) -> list[_Hop]:
        """The zone-local route from member `src` to member `dst`, as one or more hops."""
        if zone.routing is Routing.FULL:
            hop = zone.table.get((src, dst))
            if hop is None:
                raise _NoRoute(f"{zone.where} (routing Full) declares no route from {src!r} to {dst!r}",
                               f"add a <{'zoneRoute' if src in zone.children else 'route'} src=\"{src}\" dst=\"{dst}\"> to {zone.where}")
            return [hop]
        if zone.routing is Routing.STAR:
            return [_Hop(_star_resources(zone, src, dst), zone.gateway[src], zone.gateway[dst], zone.where)]
        if zone.routing is Routing.SHORTEST:
            return self._shortest(zone, src, dst)
        raise _NoRoute(f"{zone.where} has routing None: it routes nothing (between {src!r} and {dst!r})",
                       f'give {zone.where} routing="Full" and the routes its members need')

    def _shortest(self, zone: _Zone, src: str, dst: str) -> list[_Hop]:
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
            raise _NoRoute(f"{zone.where} (shortest-path routing) has no chain of routes from {src!r} to {dst!r}",
                           f"declare routes in {zone.where} that connect them")
        hops: list[_Hop] = []
        node = dst
        while node != src:
            node, hop = predecessors[node]
            hops.append(hop)
        hops.reverse()
        return hops


def _star_resources(zone: _Zone, src: str, dst: str) -> tuple[int, ...]:
    """Way up, backbone, way down; a link met twice counts once (as in SimGrid's StarZone)."""
    resources = zone.up[src] + zone.backbone + zone.down[dst]
    if len(set(resources)) == len(resources):
        return resources
    return tuple(dict.fromkeys(resources))


def _common_ancestors(src_zone: _Zone, dst_zone: _Zone) -> tuple[_Zone, _Zone, _Zone]:
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
        raise _NoRoute("the two hosts are in two separate zone trees", "wrap the whole platform in one <zone>")
    if i == n:
        return a[i - 1], a[i - 1], a[i - 1]
    return a[i - 1], a[i], b[i]
