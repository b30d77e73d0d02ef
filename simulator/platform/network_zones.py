"""The zone tree of a platform's network, checked: each zone's members, links resolved to
resources, declared routes and star ports stored for routing (network_topology.py), and every
inconsistency of the declaration an InputError naming the element and the fix.

`ZoneTree` is the base class of `NetworkTopology`: it builds the tree once, at load time.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.network_declaration import (
    SHORTEST_PATH,
    STAR_LIKE,
    LinkRef,
    RouteDecl,
    Routing,
    SharingPolicy,
    ZoneDecl,
)


class NoRoute(Exception):
    """A route cannot be computed; `route()` names the two hosts and the file."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


@dataclass(frozen=True)
class Hop:
    """A zone-local piece of route: its resources, and the gateways of a route between zones."""

    resources: tuple[int, ...]
    gw_src: str | None
    gw_dst: str | None
    where: str
    backward: bool = False  # the reverse of a symmetrical declaration (its gateways swapped)


class Zone:
    """A zone ready for routing (built from a ZoneDecl by NetworkTopology)."""

    def __init__(self, decl: ZoneDecl, parent: Zone | None):
        self.id = decl.id
        self.where = decl.where
        self.routing = decl.routing
        self.parent = parent
        self.path: tuple[Zone, ...] = (parent.path if parent else ()) + (self,)  # root .. self
        self.netpoints: set[str] = set(decl.hosts) | set(decl.routers)
        self.routers: set[str] = set(decl.routers)
        self.members: list[str] = decl.ordered_members()  # in SimGrid's numbering (Floyd's ties)
        self.children: dict[str, Zone] = {}
        self.table: dict[tuple[str, str], Hop] = {}  # FULL, FLOYD, DIJKSTRA: the declared routes
        self.graph_nodes: list[str] = []  # DIJKSTRA: members in the order they first appear in routes
        self.graph: dict[str, list[tuple[str, Hop]]] = {}  # DIJKSTRA: each node's edges in declaration order
        self.shortest = None  # FLOYD, DIJKSTRA: its FloydRoutes or DijkstraRoutes, made when first needed
        # STAR, VIVALDI (SimGrid's StarZone): each member's way up and down; None where SimGrid
        # has an entry without them (a host given only a route to itself: routes to others abort).
        self.up: dict[str, tuple[int, ...] | None] = {}
        self.down: dict[str, tuple[int, ...] | None] = {}
        self.loopback: dict[str, tuple[int, ...]] = {}  # a host's own way to itself
        self.coordinates = dict(decl.coordinates)  # VIVALDI: x, y, height (ms) of members
        self.bypass: dict[tuple[str, str], tuple[int, ...]] = {}


class ZoneTree:
    """The zone tree built from a `NetworkDecl` and checked (the base class of `NetworkTopology`)."""

    def _fail(self, where: str, problem: str, fix: str) -> None:
        raise InputError(self.source, where, problem, fix)

    def _register_zone(self, decl: ZoneDecl, parent: Zone | None) -> Zone:
        """First pass: the zone tree and where every host and router is."""
        zone = Zone(decl, parent)
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
        if decl.routing in STAR_LIKE:
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

    def _check_netpoint(self, zone: Zone, route: RouteDecl, name: str, role: str) -> None:
        if name in zone.netpoints:
            return
        if name in zone.children:
            self._fail(route.where, f"{role} {name!r} is a zone: a route between zones is a <zoneRoute> with gw_src and gw_dst",
                       "write <zoneRoute src=... dst=... gw_src=... gw_dst=...>")
        if name in self._zone_of or name in self._zones:
            self._fail(route.where, f"{role} {name!r} is not a host or router of {zone.where}",
                       "declare a route inside the zone that holds both ends; zones are joined with <zoneRoute>")
        self._fail(route.where, f"{role} {name!r} is no host or router of the platform", "check the name")

    def _check_child_zone(self, zone: Zone, route: RouteDecl, name: str, role: str) -> None:
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

    def _add_route(self, zone: Zone, route: RouteDecl) -> None:
        zone_route = route.gw_src is not None or route.gw_dst is not None
        if route.src == route.dst and route.symmetrical and zone.routing in SHORTEST_PATH:
            # (a symmetrical route is declared twice: SimGrid 3.32 aborts on it in a Floyd zone,
            # "The route between h0 and h0 already exists", and crashes in a Dijkstra one)
            self._fail(route.where, f"the route goes from {route.src!r} to itself and is symmetrical: inside {zone.where} "
                       f"(routing {zone.routing.value}) SimGrid declares it twice and aborts (\"The route between "
                       f"{route.src} and {route.dst} already exists\")", 'add symmetrical="NO" to it (or remove it: the host\'s '
                       "transfers to itself then cross SimGrid's loopback link, 10 GBps)")
        if zone_route and route.src == route.dst and route.gw_src == route.gw_dst:
            self._fail(route.where, f"gw_src and gw_dst are both {route.gw_src!r}: SimGrid 3.32 refuses it (\"Cannot define "
                       f"a NetzoneRoute from '{route.gw_src}' to itself\")", "remove the <zoneRoute> (a zone never routes to itself)")
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
        forward = Hop(tuple(self._resolve(r, False) for r in route.links), route.gw_src, route.gw_dst, route.where)
        self._add_hop(zone, route.src, route.dst, forward, route)
        if route.symmetrical and route.src != route.dst:  # (a loopback is its own way back)
            backward = Hop(tuple(self._resolve(r, True) for r in reversed(route.links)), route.gw_dst, route.gw_src, route.where, True)
            self._add_hop(zone, route.dst, route.src, backward, route)

    def _add_hop(self, zone: Zone, src: str, dst: str, hop: Hop, route: RouteDecl) -> None:
        key = (src, dst)
        if key in zone.table:
            first = zone.table[key].where
            self._fail(route.where, f"the route from {src!r} to {dst!r} is already declared by {first}",
                       'routes are symmetrical by default: declare one direction only, or add symmetrical="NO" to both')
        zone.table[key] = hop
        if zone.routing is Routing.DIJKSTRA:
            for name in (src, dst):
                if name not in zone.graph:
                    zone.graph[name] = []
                    zone.graph_nodes.append(name)
            zone.graph[src].append((dst, hop))

    def _add_bypass(self, zone: Zone, route: RouteDecl) -> None:
        for name, role in ((route.src, "src"), (route.dst, "dst")):
            if name not in self._zone_of:
                self._fail(route.where, f"{role} {name!r} is no host or router of the platform", "a <bypassRoute> joins two hosts or routers")
        if not route.links:
            self._fail(route.where, "the bypass route has no <link_ctn>", "list the links it crosses")
        key = (route.src, route.dst)
        if key in zone.bypass:
            self._fail(route.where, f"a bypass route from {route.src!r} to {route.dst!r} is already declared", "keep one")
        zone.bypass[key] = tuple(self._resolve(r, False) for r in route.links)

    def _build_star(self, decl: ZoneDecl, zone: Zone) -> None:
        """A Cluster or Vivaldi zone, SimGrid's StarZone: each member has a way up to the zone's
        centre and a way down from it, empty unless a <host_link>, <cabinet>, <cluster> or <peer>
        gives it links; its only <route>s are from a host to itself (its loopback)."""
        for route in decl.routes:
            if route.src != route.dst:
                self._fail(route.where, f"{decl.where} (routing {decl.routing.value}) routes through each member's own "
                           "links: its only routes are from a host to itself (SimGrid 3.32 refuses the file: \"In a "
                           "StarZone, route must be ... loopback\")",
                           "remove the <route>; give the hosts links with <host_link id=... up=... down=...>"
                           if decl.routing is Routing.STAR else "remove the <route>; a <peer> gets its links from bw_in and bw_out")
            if route.gw_src is not None:  # a <zoneRoute> from a child zone to itself: never used
                self._check_child_zone(zone, route, route.src, "src")
                self._check_gateway(route, route.gw_src, "gw_src")
                self._check_gateway(route, route.gw_dst, "gw_dst")
            else:
                self._check_netpoint(zone, route, route.src, "src")
            # An entry without a way up or down: SimGrid aborts on its routes to others (unless
            # a <host_link> gives them, below).
            zone.up.setdefault(route.src, None)
            zone.down.setdefault(route.src, None)
            zone.loopback[route.src] = tuple(dict.fromkeys(self._resolve(r, False) for r in route.links))
        for name in decl.ports:
            if name not in zone.netpoints:
                self._fail(decl.where, f"{name!r} is not a host or router directly inside {decl.where}",
                           "a <host_link> names a host of its own zone")
        backbone = [decl.backbone] if decl.backbone is not None else []
        for name, port in decl.ports.items():  # (a hand-built zone's backbone joins its host_links' ways)
            zone.up[name] = tuple(self._resolve(r, False) for r in port.up + backbone)
            zone.down[name] = tuple(self._resolve(r, False) for r in backbone + port.down)
            if port.loopback:
                zone.loopback[name] = tuple(self._resolve(r, False) for r in port.loopback)
        for name in zone.members:  # everything else: empty ways (StarZone::do_seal)
            if name not in zone.up:
                zone.up[name] = zone.down[name] = ()
        if decl.backbone is not None:
            self._resolve(decl.backbone, False)  # (an unknown link is refused even if no host uses it)
