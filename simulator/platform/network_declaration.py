"""The network as a platform file declares it, before any check: links with their sharing
policy, zones with their routing, declared routes, a SimGrid <cluster> as a star zone, and a
Vivaldi zone's <peer> as a host with its two links.

The readers (platform_xml_network.py, platform_json.py) build a `NetworkDecl`; network_topology.py
checks it and computes routes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class SharingPolicy(str, Enum):
    SHARED = "SHARED"  # both directions share the bandwidth
    SPLITDUPLEX = "SPLITDUPLEX"  # each direction is its own resource with the full bandwidth
    FATPIPE = "FATPIPE"  # no sharing: the bandwidth bounds each flow alone


class Routing(str, Enum):
    FULL = "Full"
    FLOYD = "Floyd"
    DIJKSTRA = "Dijkstra"  # (DijkstraCache too: the cache changes no route)
    STAR = "Cluster"
    VIVALDI = "Vivaldi"  # a star zone whose routes add the latency of the members' coordinates
    NONE = "None"


SHORTEST_PATH = (Routing.FLOYD, Routing.DIJKSTRA)  # declared routes are the edges of a graph
STAR_LIKE = (Routing.STAR, Routing.VIVALDI)  # SimGrid's StarZone: a way up and a way down per member


@dataclass(frozen=True)
class Link:
    name: str
    bandwidth: float  # bytes/s
    latency: float  # s
    policy: SharingPolicy
    where: str = field(default="", compare=False)  # the declaring element, for error messages


@dataclass(frozen=True)
class LinkRef:
    """One link of a route (a ``<link_ctn>``): a link name, or one half of a SPLITDUPLEX link
    given by `direction` ("UP"/"DOWN") or by its resource name ("l_UP")."""

    link: str
    direction: str | None = None
    where: str = field(default="", compare=False)


@dataclass
class RouteDecl:
    """A declared route: between hosts/routers (no gateways) or between child zones (a
    zoneRoute: both gateways given)."""

    src: str
    dst: str
    links: list[LinkRef]
    where: str
    gw_src: str | None = None
    gw_dst: str | None = None
    symmetrical: bool = True


@dataclass
class StarPort:
    """How one member of a STAR or VIVALDI zone reaches the zone's centre (`up`) and is reached
    from it (`down`, in travel order)."""

    up: list[LinkRef] = field(default_factory=list)
    down: list[LinkRef] = field(default_factory=list)
    loopback: list[LinkRef] = field(default_factory=list)  # a host's way to itself, if not up and down


@dataclass
class ZoneDecl:
    id: str
    routing: Routing
    where: str  # e.g. "zone 'AS0'" or "cluster 'c0'"
    hosts: list[str] = field(default_factory=list)  # directly inside
    routers: list[str] = field(default_factory=list)
    children: list[ZoneDecl] = field(default_factory=list)
    routes: list[RouteDecl] = field(default_factory=list)
    bypass_routes: list[RouteDecl] = field(default_factory=list)
    ports: dict[str, StarPort] = field(default_factory=dict)  # STAR and VIVALDI only
    # STAR only: a hand-built Cluster zone's <backbone>, which SimGrid appends to the way up and
    # prepends to the way down of every <host_link> and <cabinet> host (not of the others).
    backbone: LinkRef | None = None
    # Hosts, routers and child zones in the order SimGrid numbers them (the file's order): a
    # Floyd zone breaks ties between equally short paths by these numbers. Empty: hosts,
    # routers, then children.
    members: list[str] = field(default_factory=list)
    # Vivaldi coordinates (x, y, height in ms) of members that have them.
    coordinates: dict[str, tuple[float, float, float]] = field(default_factory=dict)

    def ordered_members(self) -> list[str]:
        return self.members or [*self.hosts, *self.routers, *(child.id for child in self.children)]


@dataclass
class NetworkDecl:
    links: list[Link]
    root: ZoneDecl


def cluster_zone(cid: str, where: str, hosts: list[tuple[int, str]], bw: float, lat: float, policy: SharingPolicy,
                 backbone: tuple[float, float, SharingPolicy] | None, limiter: float | None, router: str,
                 loopback: tuple[float, float] | None = None) -> tuple[ZoneDecl, list[Link]]:
    """A SimGrid ``<cluster>`` (FLAT topology) as a STAR zone, and its links.

    Host number N (`hosts` holds (N, name) pairs) gets link ``<cid>_link_N`` (bw, lat, policy);
    a route leaves through its link up, crosses the backbone ``<cid>_backbone`` (bw, lat,
    policy) if any, and enters the destination through its link down. A `limiter` adds a
    SHARED ``<cid>_link_N_limiter`` crossed by all the host's sends and receives. A `loopback`
    (bw, lat) gives each host a FATPIPE ``<cid>_link_N_loopback``, its transfers to itself
    (without one they go up its link and down again). The `router` is the cluster's gateway for
    routes between zones (no link of its own: its way up and down are empty).
    """
    zone = ZoneDecl(cid, Routing.STAR, where)
    links: list[Link] = []
    bb: list[LinkRef] = []
    if backbone is not None:
        name = f"{cid}_backbone"
        links.append(Link(name, backbone[0], backbone[1], backbone[2], f"{where} (its backbone)"))
        bb = [LinkRef(name, None, where)]
    for n, host in hosts:
        link = f"{cid}_link_{n}"
        links.append(Link(link, bw, lat, policy, f"{where} (link of host '{host}')"))
        up, down = [LinkRef(link, "UP", where), *bb], [*bb, LinkRef(link, "DOWN", where)]
        if limiter is not None:
            links.append(Link(f"{link}_limiter", limiter, 0.0, SharingPolicy.SHARED, f"{where} (limiter of host '{host}')"))
            up.insert(0, LinkRef(f"{link}_limiter", None, where))
            down.append(LinkRef(f"{link}_limiter", None, where))
        zone.hosts.append(host)
        zone.ports[host] = StarPort(up, down)
        if loopback is not None:
            links.append(Link(f"{link}_loopback", loopback[0], loopback[1], SharingPolicy.FATPIPE,
                              f"{where} (loopback of host '{host}')"))
            zone.ports[host].loopback = [LinkRef(f"{link}_loopback", None, where)]
    zone.routers.append(router)
    return zone, links


def peer_links(peer: str, bw_in: float, bw_out: float, where: str) -> tuple[list[Link], StarPort]:
    """A Vivaldi zone's ``<peer>``: SimGrid gives it two SHARED links of latency 0,
    ``link_<peer>_UP`` (bw_out, its way up) and ``link_<peer>_DOWN`` (bw_in, its way down)."""
    up, down = f"link_{peer}_UP", f"link_{peer}_DOWN"
    links = [Link(up, bw_out, 0.0, SharingPolicy.SHARED, f"{where} (its link up)"),
             Link(down, bw_in, 0.0, SharingPolicy.SHARED, f"{where} (its link down)")]
    return links, StarPort([LinkRef(up, None, where)], [LinkRef(down, None, where)])
