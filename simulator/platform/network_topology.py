"""The network of a platform: links, the zone tree, and the route between two compute hosts.

The description follows SimGrid's (what Batsim platforms use). Links have a bandwidth
(bytes/s), a latency (s) and a sharing policy. Hosts and routers sit in a tree of zones;
each zone routes between its own members (hosts, routers, child zones) in its own way:

- ``FULL`` (``routing="Full"``): routes are declared, ``<route>`` between hosts or routers,
  ``<zoneRoute>`` between child zones (with a gateway inside each); SimGrid's FullZone takes an
  undeclared route between hosts or routers as an empty one (no link, no latency), and aborts
  on an undeclared one between zones;
- ``FLOYD``, ``DIJKSTRA`` (``Floyd``, ``Dijkstra``, ``DijkstraCache``): declared routes are the
  edges of a graph; a route is a path of fewest links, ties broken as SimGrid's algorithm
  breaks them (shortest_paths.py);
- ``STAR`` (a ``<cluster>``, ``routing="Cluster"``): each member has a way up to the zone's
  centre and a way down from it (a cluster's backbone is part of both); a route is the
  source's way up then the destination's way down (a link met twice counts once);
- ``VIVALDI`` (``routing="Vivaldi"``): a star zone too (only a ``<peer>`` has links, its own up
  and down), whose routes add the latency of the members' coordinates
  (vivaldi_coordinates.py);
- ``NONE`` (``routing="None"``): no route at all (a zone holding only the master, say).

A route between zones is found as SimGrid's ``NetZoneImpl::get_global_route`` does: in the
deepest zone holding both ends, take the route between the two child zones that hold them,
then recursively the route from the source to that route's first gateway, and from its
last gateway to the destination. Routes are computed when first asked for (a platform may
have thousands of hosts) and cached; a route SimGrid would abort on is an InputError then.

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

from functools import cached_property
from typing import TYPE_CHECKING

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.network_declaration import STAR_LIKE, Link, NetworkDecl, Routing, SharingPolicy
from joulesim.simulator.platform.network_zones import Hop, NoRoute, Zone, ZoneTree
from joulesim.simulator.platform.shortest_paths import DijkstraRoutes, FloydRoutes
from joulesim.simulator.platform.vivaldi_coordinates import vivaldi_latency

if TYPE_CHECKING:
    import numpy as np

_ROUTE_CACHE_LIMIT = 1 << 18  # pairs kept before the cache is emptied (bounded memory)
LOOPBACK_NAME = "__loopback__"
LOOPBACK_BANDWIDTH = 10e9  # bytes/s: SimGrid's network/loopback-bw default, 10GBps


def _takes_model_loopback(zone: Zone) -> bool:
    """Whether SimGrid gives this zone's hosts the model's loopback link (FullZone and
    Floyd/DijkstraZone do_seal: zones of the base hierarchy, those without child zones)."""
    return zone.routing in (Routing.FULL, Routing.FLOYD, Routing.DIJKSTRA) and not zone.children and bool(zone.netpoints)


class NetworkTopology(ZoneTree):
    """Links as resources, and routes between hosts: compute hosts (ids 0..n-1, the engine's
    order) then storage hosts (n..n+m-1).

    - ``nb_resources``; ``capacity`` (bytes/s) and ``fatpipe`` (bool) per resource;
      ``names`` per resource (``l``, or ``l_UP``/``l_DOWN`` for SPLITDUPLEX halves);
      ``latency`` per resource (s).
    - ``route(src, dst)`` -> (resource indices in travel order, total latency in s). The same
      host: no resource, no latency (see ``self_route`` for what a host's transfer to itself
      crosses). A route may have latency and no resource (a Vivaldi zone's).
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
        # Python floats and bools, by resource (the arrays below are made from them when a model
        # of the network needs them: a run of delay jobs only routes Batsim's messages, without numpy).
        self.capacities = [float(value) for value in capacity]
        self._fatpipes = fatpipe
        self._latency = latency  # summed in SimGrid's order (_global_route)

        self._build_zone(decl.root)
        for name in self.host_names:
            if name not in self._zone_of:
                self._fail("platform", f"host {name!r} is in no zone of the network description", "this is a loader bug: please report it")
        self._cache: dict[tuple[int, int], tuple[tuple[int, ...], float]] = {}
        self._self_routes: dict[int, tuple[tuple[int, ...], float]] = {}
        self._sub_routes: dict[tuple[str, str], tuple[tuple[int, ...], tuple[float, ...]]] = {}
        self._sub_routes_under_way: set[tuple[str, str]] = set()  # to report gateways that route in a circle

    # ------------------------------------------------------------------ public API
    @cached_property
    def capacity(self) -> "np.ndarray":
        """Each resource's bandwidth (B/s), as an array."""
        import numpy as np

        return np.array(self.capacities, dtype=float)

    @cached_property
    def fatpipe(self) -> "np.ndarray":
        import numpy as np

        return np.array(self._fatpipes, dtype=bool)

    @cached_property
    def latency(self) -> "np.ndarray":
        import numpy as np

        return np.array(self._latency, dtype=float)

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
        description. Unlike `route`, a host's transfer to itself is routed as in SimGrid: its
        zone's bypass route to itself if any; in a star zone, the host's loopback route or up
        its link and down again (plus twice its height in a Vivaldi zone); in a Full zone, the
        route declared from the host to itself, if any; in Floyd/Dijkstra zones the cheapest
        way round; else a Full or Floyd/Dijkstra zone of hosts crosses the model's loopback link."""
        if src not in self._zone_of or dst not in self._zone_of:
            return None
        if src != dst:
            return self._resources_and_latency(src, dst, f"route from {src!r} to {dst!r}")
        zone = self._zone_of[src]
        bypass = zone.bypass.get((src, src))
        if bypass is not None:
            return bypass, self._latency_of(bypass)
        if zone.routing is Routing.NONE:  # SimGrid 3.32 routes nothing there, not even a host to itself
            raise InputError(self.source, f"route from {src!r} to itself", f"{zone.where} has routing None: SimGrid aborts "
                             "(\"There can't be route in an Empty zone\")", f'give {zone.where} routing="Full"')
        out: list[int] = []
        terms: list[float] = []
        try:
            self._local_route(zone, src, src, out, terms)
        except NoRoute as e:
            raise InputError(self.source, f"route from {src!r} to itself", e.problem, e.fix) from None
        return tuple(out), _sum(terms)

    def _resources_and_latency(self, src: str, dst: str, what: str) -> tuple[tuple[int, ...], float]:
        """The global route between two netpoints and its latency; InputError naming `what`."""
        out: list[int] = []
        terms: list[float] = []
        try:
            self._global_route(src, dst, out, terms)
        except NoRoute as e:
            raise InputError(self.source, what, e.problem, e.fix) from None
        return tuple(out), _sum(terms)

    def _latency_of(self, resources) -> float:
        return _sum([self._latency[r] for r in resources])  # in travel order, as SimGrid sums a declared route

    def route_names(self, src: int, dst: int) -> list[str]:
        """The route's resource names (for messages and tests)."""
        return [self.names[r] for r in self.route(src, dst)[0]]

    def link(self, name: str) -> Link:
        return self._links[name]

    # ------------------------------------------------------------------ routing
    def _global_route(self, src: str, dst: str, out: list[int], terms: list[float]) -> None:
        """Append the resources from netpoint `src` to netpoint `dst` (SimGrid's get_global_route)
        to `out` in travel order, and to `terms` the latencies in the order SimGrid adds them:
        the common zone's route first (with the routes between its hops), then the way from
        `src` to its gateway, then the way from the last gateway to `dst` (a float sum depends on
        its order: 1 us + 5 us + 3 us is not 5 us + 3 us + 1 us to the last bit)."""
        src_zone, dst_zone = self._zone_of[src], self._zone_of[dst]
        if src_zone is dst_zone:
            common = src_side = dst_side = src_zone
        else:
            common, src_side, dst_side = _common_ancestors(src_zone, dst_zone)
        if common.bypass and src_zone is common and dst_zone is common:
            bypass = common.bypass.get((src, dst))
            if bypass is not None:
                out.extend(bypass)
                terms.extend(self._latency[r] for r in bypass)
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
            self._local_route(common, src, dst, out, terms)
            return
        hops = self._local_hops(common, src_side.id, dst_side.id)
        first, last = hops[0], hops[-1]
        self._check_inside(first.gw_src, src_side, first, "gw_src")
        self._check_inside(last.gw_dst, dst_side, last, "gw_dst")
        middle: list[int] = []
        middle_terms: list[float] = []
        previous_gateway = None
        for hop in hops:
            if previous_gateway is not None and previous_gateway != hop.gw_src:
                if common.routing is Routing.DIJKSTRA:
                    raise NoRoute(f"{common.where} (routing Dijkstra) routes from {src_side.id!r} to {dst_side.id!r} through "
                                  f"zoneRoutes whose gateways do not meet ({previous_gateway!r}, then {hop.gw_src!r}): SimGrid "
                                  "3.32 crashes on it (its DijkstraZone follows a null gateway)",
                                  "make each zoneRoute start where the previous one ends, or give the zone routing=\"Floyd\"")
                between = self._sub_route(previous_gateway, hop.gw_src)
                middle.extend(between[0])
                middle_terms.extend(between[1])
            middle.extend(hop.resources)
            middle_terms.extend(self._latency[r] for r in hop.resources)
            previous_gateway = hop.gw_dst
        if common.routing is Routing.DIJKSTRA:  # (it adds its edges' latencies from the destination back)
            middle_terms = [self._latency[r] for hop in reversed(hops) for r in hop.resources]
        terms.extend(middle_terms)
        if src != first.gw_src:
            up = self._sub_route(src, first.gw_src)
            out.extend(up[0])
            terms.extend(up[1])
        out.extend(middle)
        if last.gw_dst != dst:
            down = self._sub_route(last.gw_dst, dst)
            out.extend(down[0])
            terms.extend(down[1])

    def _local_route(self, zone: Zone, src: str, dst: str, out: list[int], terms: list[float]) -> None:
        """The route between two hosts or routers of one zone (src == dst: a host's way to itself)."""
        if zone.routing in STAR_LIKE:
            resources = self._star_resources(zone, src, dst)
            out.extend(resources)
            terms.extend(self._latency[r] for r in resources)
            if zone.routing is Routing.VIVALDI:
                terms.append(vivaldi_latency(self._coordinates(zone, src), self._coordinates(zone, dst)))
            return
        if zone.routing is Routing.FULL:
            hop = zone.table.get((src, dst))
            if hop is not None:
                resources = hop.resources
            elif src == dst and self.loopback is not None and _takes_model_loopback(zone):
                resources = (self.loopback,)
            else:  # undeclared: SimGrid's FullZone gives an empty route (no link, no latency)
                resources = ()
            out.extend(resources)
            terms.extend(self._latency[r] for r in resources)
            return
        hops = self._local_hops(zone, src, dst)
        for hop in hops:
            out.extend(hop.resources)
        for hop in (reversed(hops) if zone.routing is Routing.DIJKSTRA else hops):
            terms.extend(self._latency[r] for r in hop.resources)

    def _star_resources(self, zone: Zone, src: str, dst: str) -> tuple[int, ...]:
        """A star zone's way up then way down (a link met twice counts once, as in SimGrid's
        StarZone), or the host's own loopback."""
        if src == dst and zone.loopback.get(src):
            return zone.loopback[src]
        up, down = zone.up[src], zone.down[dst]
        for ways, name, what in ((up, src, "UP from source"), (down, dst, "DOWN to destination")):
            if ways is None:
                raise NoRoute(f"{zone.where} (routing {zone.routing.value}) gives {name!r} a route to itself but no links of "
                              f"its own, and SimGrid 3.32 then aborts on its routes to others (\"StarZone routing ({src} - "
                              f"{dst}): no link {what} node\")", f"remove the <route src=\"{name}\" dst=\"{name}\">"
                              + (f", or give {name!r} a <host_link>" if zone.routing is Routing.STAR else ""))
        resources = up + down
        if len(set(resources)) == len(resources):
            return resources
        return tuple(dict.fromkeys(resources))

    def _coordinates(self, zone: Zone, name: str):
        coordinates = zone.coordinates.get(name)
        if coordinates is None:
            kind = "zone" if name in zone.children else ("router" if name in zone.routers else "host")
            raise NoRoute(f"{kind} {name!r} of {zone.where} (routing Vivaldi) has no coordinates: SimGrid 3.32 aborts on its "
                          f"routes (\"Please specify the Vivaldi coordinates of {kind.capitalize()} {name}\")",
                          f'give {name!r} coordinates="x y height" (ms)' if kind != "zone" else
                          f"a child zone of a Vivaldi zone cannot have coordinates: move {name!r}'s hosts into {zone.where}")
        return coordinates

    def _sub_route(self, src: str, dst: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """A route to or from a gateway (travel order, latency terms): shared by many host pairs, so cached."""
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
            terms: list[float] = []
            try:
                self._global_route(src, dst, out, terms)
            finally:
                self._sub_routes_under_way.discard(key)
            hit = (tuple(out), tuple(terms))
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
        """The zone-local route from member `src` to member `dst`, as one or more hops (between
        child zones, or in a Floyd or Dijkstra zone)."""
        if zone.routing is Routing.FULL:
            hop = zone.table.get((src, dst))
            if hop is None:  # (between hosts or routers it would be an empty route: _local_route)
                raise NoRoute(f"{zone.where} (routing Full) declares no route from {src!r} to {dst!r} (SimGrid 3.32 aborts: "
                              f"\"Bad gateways for route from ...\")", f"add a <zoneRoute src=\"{src}\" dst=\"{dst}\"> to {zone.where}")
            return [hop]
        if zone.routing is Routing.FLOYD or zone.routing is Routing.DIJKSTRA:
            return self._shortest(zone).hops(src, dst)
        if zone.routing in STAR_LIKE:
            if zone.routing is Routing.VIVALDI:
                self._coordinates(zone, src)  # (SimGrid asks the child zone's coordinates first)
            raise NoRoute(f"{zone.where} (routing {zone.routing.value}) gives its child zones {src!r} and {dst!r} no gateway: "
                          "SimGrid 3.32 aborts on routes between them (\"Bad gateways for route from ...\")",
                          f"put {zone.where}'s child zones in a Full zone joined by <zoneRoute>s")
        raise NoRoute(f"{zone.where} has routing None: it routes nothing (between {src!r} and {dst!r})",
                       f'give {zone.where} routing="Full" and the routes its members need')

    def _shortest(self, zone: Zone):
        """The zone's FloydRoutes or DijkstraRoutes, made when first needed (with SimGrid's model
        loopback on every member, or graph node, without a route to itself)."""
        if zone.shortest is None:
            loopback = None
            if self.loopback is not None and _takes_model_loopback(zone):
                loopback = Hop((self.loopback,), None, None, "SimGrid's loopback link")
            if zone.routing is Routing.FLOYD:
                zone.shortest = FloydRoutes(zone.where, zone.members, zone.table, loopback)
            else:
                graph = {name: list(edges) for name, edges in zone.graph.items()}
                if loopback is not None:
                    for name, edges in graph.items():
                        if all(target != name for target, _ in edges):
                            edges.append((name, loopback))
                zone.shortest = DijkstraRoutes(zone.where, zone.graph_nodes, graph)
        return zone.shortest


def _sum(terms) -> float:
    """A latency as SimGrid adds it up: one term after another, from 0."""
    latency = 0.0
    for term in terms:
        latency += term
    return latency


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
