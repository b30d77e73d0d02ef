"""The network part of a SimGrid XML platform: links, zones, clusters and routes.

Read once the hosts are known (:mod:`platform_xml`), into a :class:`NetworkDecl` that
:class:`NetworkTopology` checks and routes. A file without any network element (no
``<link>``, ``<backbone>``, ``<cabinet>``, ``<host_link>``, ``<cluster>``: simgrid.dtd requires a
cluster's ``bw``/``lat``, checked in :mod:`platform_xml`) has no network: :func:`read_xml_network`
returns None and jobs cost no communication.

Supported, with SimGrid's defaults (simgrid.dtd):

- ``<zone>``/``<AS>`` with ``routing`` Full, Floyd, Dijkstra, DijkstraCache, Cluster, Vivaldi or
  None;
- ``<link id bandwidth latency="0" sharing_policy="SHARED">`` (SHARED, SPLITDUPLEX, FULLDUPLEX
  = SPLITDUPLEX, FATPIPE);
- ``<route src dst symmetrical="YES">`` between hosts/routers, ``<zoneRoute>``/``<ASroute>``
  ``src dst gw_src gw_dst symmetrical="YES"`` between child zones, with ``<link_ctn id
  direction>`` children (a symmetrical route's reverse crosses SPLITDUPLEX links the other way);
  ``<bypassRoute src dst>`` between hosts/routers of the zone declaring it;
- ``<cluster id prefix suffix radical speed bw lat sharing_policy="SPLITDUPLEX" bb_bw
  bb_lat="0s" bb_sharing_policy="SHARED" limiter_link router_id>``: a zone of its own; host N
  gets link ``<id>_link_N`` (up, then backbone ``<id>_backbone`` if bb_bw is given, then the
  destination's link down; with limiter_link a SHARED ``<id>_link_N_limiter`` on both sides);
  its router (the gateway for zoneRoutes) is ``prefix + id + "_router" + suffix`` or router_id;
- ``<zone routing="Cluster">`` with ``<host>``, ``<router>``, ``<link>``, ``<host_link id up
  down>``, ``<backbone id bandwidth latency>`` and ``<cabinet>`` (links ``link_<host>_UP``/``_DOWN``);
- ``<router id coordinates>`` anywhere a host may be;
- Vivaldi zones: ``<host coordinates="x y height">`` (ms) and ``<peer id speed bw_in bw_out
  coordinates>``, a host with two links ``link_<id>_UP`` (bw_out) and ``link_<id>_DOWN`` (bw_in)
  of latency 0; a route between two members adds their coordinates' latency
  (vivaldi_coordinates.py). A platform with a Vivaldi zone has a network even without links.

A cluster's ``loopback_bw``/``loopback_lat`` give each host a FATPIPE loopback link
``<id>_link_N_loopback`` for its transfers to itself (as SimGrid does).

Refused with an error saying what to do: ``topology`` other than FLAT, WIFI links, link profiles
(``bandwidth_file``...), ``trace_connect`` on links, Wifi zones, a ``<peer>`` outside a Vivaldi
zone (SimGrid aborts), ``<bypassZoneRoute>``/``<bypassASroute>``. A ``<backbone>`` outside a Cluster zone (SimGrid
refuses it) is read as a plain SHARED link.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.network_declaration import (
    Link,
    LinkRef,
    NetworkDecl,
    RouteDecl,
    Routing,
    SharingPolicy,
    StarPort,
    ZoneDecl,
    cluster_zone,
    peer_links,
)
from joulesim.simulator.platform.network_topology import NetworkTopology
from joulesim.simulator.platform.platform_checks import parse_bandwidth, parse_latency, parse_radical, shown
from joulesim.simulator.platform.vivaldi_coordinates import parse_coordinates

_ZONE_TAGS = ("zone", "AS")
# (a <cluster> has its hosts' links: simgrid.dtd requires its bw and lat, checked in platform_xml)
_NETWORK_TAGS = ("link", "backbone", "cabinet", "cluster", "host_link")
_ROUTINGS = {  # (SimGrid compares them ignoring case)
    "full": Routing.FULL,
    "floyd": Routing.FLOYD,
    "dijkstra": Routing.DIJKSTRA,
    "dijkstracache": Routing.DIJKSTRA,
    "cluster": Routing.STAR,
    "vivaldi": Routing.VIVALDI,
    "none": Routing.NONE,
}
_POLICIES = {
    "SHARED": SharingPolicy.SHARED,
    "SPLITDUPLEX": SharingPolicy.SPLITDUPLEX,
    "FULLDUPLEX": SharingPolicy.SPLITDUPLEX,  # SimGrid's deprecated spelling of SPLITDUPLEX
    "FATPIPE": SharingPolicy.FATPIPE,
}
_LINK_TRACE_KINDS = ("LINK_AVAIL", "BANDWIDTH", "LATENCY")


def zone_routing(path: str, where: str, text: str) -> Routing:
    """The Routing of a zone's `routing` attribute; InputError naming the zone and the accepted
    values otherwise. Checked for every zone, also in a platform without links (a zone with
    routing="Quantum" was accepted there)."""
    routing = _ROUTINGS.get(text.strip().lower())
    if routing is None:
        if text.strip().lower() == "wifi":
            raise InputError(path, f"{where}, routing", f'routing="{shown(text)[1:-1]}" is not supported',
                             'use routing="Full" with explicit routes, or <cluster>s')
        raise InputError(path, f"{where}, routing", f"unknown routing {shown(text)}",
                         "use one of: Full, Floyd, Dijkstra, DijkstraCache, Cluster, Vivaldi, None")
    return routing


def declares_network(root: ET.Element) -> bool:
    """Whether transfers cost anything: links, or a Vivaldi zone (its coordinates are latencies)."""
    for tag in _NETWORK_TAGS + ("peer",):
        if next(root.iter(tag), None) is not None:
            return True
    return any(zone.get("routing", "").strip().lower() == "vivaldi" for tag in _ZONE_TAGS for zone in root.iter(tag))


_ROUTE_TAGS = ("route", "zoneRoute", "ASroute", "bypassRoute", "bypassZoneRoute", "bypassASroute")


def _refuse_routes_without_links(path: str, root: ET.Element) -> None:
    """A route crosses links: in a file that declares none, it names links that do not exist."""
    for route in root.iter():
        if route.tag in _ROUTE_TAGS:
            tag = route.tag
            where = f"<{tag} src={shown(route.get('src', '?'))} dst={shown(route.get('dst', '?'))}>"
            ctn = route.find("link_ctn")
            if ctn is None:
                raise InputError(path, where, "the route has no <link_ctn>, and the platform declares no link",
                                 "remove the route (without links, transfers are free), or declare the links it crosses")
            raise InputError(path, f"{where}, <link_ctn id={shown(ctn.get('id', ''))}>",
                             f"no link named {shown(ctn.get('id', ''))}: the platform declares no link at all",
                             'declare it with <link id="..." bandwidth="..." latency="..."/>, or remove the route (without links, transfers are free)')


def read_xml_network(path: str, root: ET.Element, host_names: list[str]) -> NetworkTopology | None:
    """The platform's network (None if the file describes none); InputError on bad input.
    `host_names`: the compute hosts then the storage hosts, in id order."""
    if not declares_network(root):
        _refuse_routes_without_links(path, root)
        return None
    reader = _NetworkReader(path)
    return NetworkTopology(NetworkDecl(reader.links, reader.read_root(root)), host_names, path)


def read_xml_zone_routes(path: str, root: ET.Element, host_names: list[str]) -> NetworkTopology | None:
    """A file without network but with several zones: its zone tree, without links (every route
    it gives is empty; it refuses those SimGrid has not); None for one zone or none."""
    if declares_network(root) or sum(1 for tag in _ZONE_TAGS for _ in root.iter(tag)) < 2:
        return None
    reader = _NetworkReader(path)
    return NetworkTopology(NetworkDecl([], reader.read_root(root)), host_names, path)


class _NetworkReader:
    def __init__(self, path: str):
        self.path = path
        self.links: list[Link] = []

    def fail(self, where: str, problem: str, fix: str) -> None:
        raise InputError(self.path, where, problem, fix)

    def required(self, elem: ET.Element, attr: str, where: str) -> str:
        value = elem.get(attr)
        if value is None or not value.strip():
            self.fail(where, f"<{elem.tag}> has no '{attr}' attribute", f'add {attr}="..." to the <{elem.tag}> element')
        return value.strip()

    # ------------------------------------------------------------------ zones
    def read_root(self, root: ET.Element) -> ZoneDecl:
        peer = root.find("peer")
        if peer is not None:
            self.fail(f"<peer id={shown(peer.get('id', '?'))}>", "a <peer> outside any zone: SimGrid 3.32 aborts (\"<peer> tag "
                      "can only be used in Vivaldi netzones\")", 'put it inside a <zone routing="Vivaldi">')
        tops = [c for c in root if c.tag in _ZONE_TAGS + ("cluster", "cabinet", "host", "router", "link")]
        if len(tops) == 1 and tops[0].tag in _ZONE_TAGS:
            return self.read_zone(tops[0])
        # Several top-level elements: an implicit top zone that routes nothing between them.
        zone = ZoneDecl("", Routing.NONE, "the top level of <platform>")
        self.read_body(root, zone)
        return zone

    def read_zone(self, elem: ET.Element) -> ZoneDecl:
        zid = self.required(elem, "id", f"<{elem.tag}>")
        where = f"zone '{zid}'"
        routing = zone_routing(self.path, where, self.required(elem, "routing", where))
        zone = ZoneDecl(zid, routing, where)
        self.read_body(elem, zone)
        return zone

    def read_body(self, elem: ET.Element, zone: ZoneDecl) -> None:
        for child in elem:
            tag = child.tag
            if tag in _ZONE_TAGS:
                zone.children.append(self.read_zone(child))
                zone.members.append(zone.children[-1].id)
            elif tag == "cluster":
                zone.children.append(self.read_cluster(child))
                zone.members.append(zone.children[-1].id)
            elif tag == "host":
                zone.hosts.append(child.get("id", "").strip())
                self.read_coordinates(child, zone, zone.hosts[-1], f"host {shown(zone.hosts[-1])}")
            elif tag == "router":
                zone.routers.append(self.required(child, "id", f"{zone.where}, <router>"))
                self.read_coordinates(child, zone, zone.routers[-1], f"router {shown(zone.routers[-1])}")
            elif tag == "peer":
                self.read_peer(child, zone)
            elif tag == "link":
                self.links.append(self.read_link(child, zone))
            elif tag == "backbone":
                self.read_backbone(child, zone)
            elif tag == "host_link":
                self.read_host_link(child, zone)
            elif tag == "cabinet":
                self.read_cabinet(child, zone)
            elif tag == "route":
                zone.routes.append(self.read_route(child, zone, between_zones=False))
            elif tag in ("zoneRoute", "ASroute"):
                zone.routes.append(self.read_route(child, zone, between_zones=True))
            elif tag == "bypassRoute":
                zone.bypass_routes.append(self.read_route(child, zone, between_zones=False, bypass=True))
            elif tag in ("bypassZoneRoute", "bypassASroute"):
                self.fail(f"{zone.where}, <{tag}>", f"<{tag}> is not supported", "declare the route between the zones with a <zoneRoute> instead")
            elif tag == "trace_connect" and child.get("kind", "HOST_AVAIL") in _LINK_TRACE_KINDS:
                self.fail(f"{zone.where}, <trace_connect element='{child.get('element', '?')}'>",
                          "link profiles (bandwidth, latency or availability over time) are not supported", "remove the <trace_connect>")
            # Anything else (prop, trace, storage, disk, config...) carries no network.

    def read_coordinates(self, elem: ET.Element, zone: ZoneDecl, name: str, where: str) -> None:
        """A host's, router's or peer's Vivaldi coordinates (SimGrid checks them in any zone)."""
        zone.members.append(name)
        text = elem.get("coordinates", "")
        if text:
            zone.coordinates[name] = parse_coordinates(self.path, where, text)

    def read_peer(self, elem: ET.Element, zone: ZoneDecl) -> None:
        """A Vivaldi zone's peer: a host (read as such by platform_xml) with its two links."""
        name = self.required(elem, "id", f"{zone.where}, <peer>")
        where = f"<peer id={shown(name)}>"
        if zone.routing is not Routing.VIVALDI:
            self.fail(where, f"a <peer> in {zone.where}, whose routing is {zone.routing.value}: SimGrid 3.32 aborts (\"<peer> tag "
                      "can only be used in Vivaldi netzones\")", f'give {zone.where} routing="Vivaldi", or write a <host> instead')
        links, port = peer_links(name, parse_bandwidth(self.path, f"{where}, bw_in", self.required(elem, "bw_in", where)),
                                 parse_bandwidth(self.path, f"{where}, bw_out", self.required(elem, "bw_out", where)), where)
        self.links += links
        zone.hosts.append(name)
        zone.ports[name] = port
        self.read_coordinates(elem, zone, name, where)

    # ------------------------------------------------------------------ links
    def policy(self, elem: ET.Element, attr: str, default: str, allowed: tuple[str, ...], where: str) -> SharingPolicy:
        text = elem.get(attr, default).strip()
        if text not in allowed:
            if text == "WIFI":
                self.fail(f"{where}, {attr}", "WIFI links are not supported", "use SHARED, SPLITDUPLEX or FATPIPE")
            self.fail(f"{where}, {attr}", f"unknown sharing policy {text!r}", "use one of: " + ", ".join(allowed))
        return _POLICIES[text]

    def read_link(self, elem: ET.Element, zone: ZoneDecl) -> Link:
        lid = self.required(elem, "id", f"{zone.where}, <link>")
        where = f"<link id='{lid}'>"
        for attr in ("bandwidth_file", "latency_file", "state_file"):
            if elem.get(attr, "").strip():
                self.fail(f"{where}, {attr}", "link profiles (values changing over time) are not supported", f"remove {attr}")
        return Link(
            lid,
            parse_bandwidth(self.path, f"{where}, bandwidth", self.required(elem, "bandwidth", where)),
            # SimGrid's DTD says latency defaults to 0, but its parser finds no number and refuses the link.
            parse_latency(self.path, f"{where}, latency", self.required(elem, "latency", where)),
            self.policy(elem, "sharing_policy", "SHARED", ("SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"), where),
            where,
        )

    def read_backbone(self, elem: ET.Element, zone: ZoneDecl) -> None:
        bid = self.required(elem, "id", f"{zone.where}, <backbone>")
        where = f"<backbone id='{bid}'>"
        link = Link(bid, parse_bandwidth(self.path, f"{where}, bandwidth", self.required(elem, "bandwidth", where)),
                    parse_latency(self.path, f"{where}, latency", self.required(elem, "latency", where)), SharingPolicy.SHARED, where)
        self.links.append(link)
        if zone.routing is Routing.STAR:
            if zone.backbone is not None:
                self.fail(where, f"{zone.where} already has a backbone", "keep one <backbone> per cluster zone")
            zone.backbone = LinkRef(bid, None, where)

    def read_host_link(self, elem: ET.Element, zone: ZoneDecl) -> None:
        where = f"{zone.where}, <host_link id='{elem.get('id', '?')}'>"
        if zone.routing is not Routing.STAR:
            self.fail(where, '<host_link> only belongs in a <zone routing="Cluster">', 'set routing="Cluster" on the zone, or write <route>s')
        host = self.required(elem, "id", where)
        if host in zone.ports:
            self.fail(where, f"host {host!r} already has a <host_link>", "keep one per host")
        zone.ports[host] = StarPort([LinkRef(self.required(elem, "up", where), None, where)],
                                    [LinkRef(self.required(elem, "down", where), None, where)])

    def read_cabinet(self, elem: ET.Element, zone: ZoneDecl) -> None:
        cid = elem.get("id", "?")
        where = f"cabinet '{cid}'"
        if zone.routing is not Routing.STAR:
            self.fail(where, '<cabinet> only belongs in a <zone routing="Cluster">', "use a <cluster> instead, or put the cabinet in a Cluster zone")
        bw = parse_bandwidth(self.path, f"{where}, bw", self.required(elem, "bw", where))
        lat = parse_latency(self.path, f"{where}, lat", self.required(elem, "lat", where))
        prefix, suffix = elem.get("prefix", ""), elem.get("suffix", "")
        for n in parse_radical(self.path, f"{where}, radical", self.required(elem, "radical", where)):
            host = f"{prefix}{n}{suffix}"
            up, down = f"link_{host}_UP", f"link_{host}_DOWN"  # SimGrid's names: two SHARED links
            self.links += [Link(up, bw, lat, SharingPolicy.SHARED, where), Link(down, bw, lat, SharingPolicy.SHARED, where)]
            zone.hosts.append(host)
            zone.ports[host] = StarPort([LinkRef(up, None, where)], [LinkRef(down, None, where)])

    def read_cluster(self, elem: ET.Element) -> ZoneDecl:
        cid = self.required(elem, "id", "<cluster>")
        where = f"cluster '{cid}'"
        bw = parse_bandwidth(self.path, f"{where}, bw", elem.get("bw"))
        lat = parse_latency(self.path, f"{where}, lat", elem.get("lat"))
        policy = self.policy(elem, "sharing_policy", "SPLITDUPLEX", ("SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"), where)
        topology = elem.get("topology", "FLAT").strip()
        if topology != "FLAT":
            self.fail(f"{where}, topology", f"topology {topology!r} is not supported (only FLAT: hosts, their links and a backbone)",
                      "describe the network with FLAT clusters joined by <zoneRoute>s")
        loopback = None  # (SimGrid gives the hosts loopback links when either is given)
        if elem.get("loopback_bw", "").strip() or elem.get("loopback_lat", "").strip():
            loopback = (parse_bandwidth(self.path, f"{where}, loopback_bw", elem.get("loopback_bw", "0")),
                        parse_latency(self.path, f"{where}, loopback_lat", elem.get("loopback_lat", "0s")))
        bb_bw, bb_lat = elem.get("bb_bw", "").strip(), parse_latency(self.path, f"{where}, bb_lat", elem.get("bb_lat", "0s"))
        backbone = None
        if bb_bw:
            backbone = (parse_bandwidth(self.path, f"{where}, bb_bw", bb_bw), bb_lat,
                        self.policy(elem, "bb_sharing_policy", "SHARED", ("SHARED", "FATPIPE"), where))
        elif bb_lat > 0:
            self.fail(f"{where}, bb_lat", "bb_lat is given without bb_bw", "give the backbone's bandwidth too (bb_bw), or drop bb_lat")
        limiter_text = elem.get("limiter_link", "").strip()
        limiter = parse_bandwidth(self.path, f"{where}, limiter_link", limiter_text) if limiter_text else None
        prefix, suffix = elem.get("prefix", ""), elem.get("suffix", "")
        hosts = [(n, f"{prefix}{n}{suffix}") for n in parse_radical(self.path, f"{where}, radical", self.required(elem, "radical", where))]
        router = elem.get("router_id", "").strip() or f"{prefix}{cid}_router{suffix}"
        zone, links = cluster_zone(cid, where, hosts, bw, lat, policy, backbone, limiter, router, loopback)
        self.links += links
        return zone

    # ------------------------------------------------------------------ routes
    def read_route(self, elem: ET.Element, zone: ZoneDecl, between_zones: bool, bypass: bool = False) -> RouteDecl:
        tag = elem.tag
        src = self.required(elem, "src", f"{zone.where}, <{tag}>")
        dst = self.required(elem, "dst", f"{zone.where}, <{tag}>")
        where = f"{zone.where}, <{tag} src='{src}' dst='{dst}'>"
        gw_src = self.required(elem, "gw_src", where) if between_zones else None
        gw_dst = self.required(elem, "gw_dst", where) if between_zones else None
        if between_zones and src != dst and gw_src == gw_dst:
            self.fail(where, f"gw_src and gw_dst are both {gw_src!r}: a route between two zones cannot start and end at one point "
                      f"(SimGrid 3.32 refuses the file: \"Cannot define a NetzoneRoute from '{gw_src}' to itself\")",
                      "name a host or router of the source zone as gw_src and one of the destination zone as gw_dst")
        symmetrical = True
        if not bypass:
            text = elem.get("symmetrical", "YES").strip()
            if text not in ("YES", "NO", "yes", "no"):
                self.fail(f"{where}, symmetrical", f"symmetrical {text!r} is not YES or NO", 'write symmetrical="YES" (the default) or "NO"')
            symmetrical = text.upper() == "YES"
        links = []
        for i, ctn in enumerate(elem):
            if ctn.tag != "link_ctn":
                continue
            cwhere = f"{where}, <link_ctn> {i}"
            lid = self.required(ctn, "id", cwhere)
            direction = ctn.get("direction", "NONE").strip()
            if direction not in ("UP", "DOWN", "NONE"):
                self.fail(f"{cwhere}, direction", f"direction {direction!r} is not UP, DOWN or NONE", 'write direction="UP" or "DOWN" (SPLITDUPLEX links only)')
            links.append(LinkRef(lid, None if direction == "NONE" else direction, f"{where}, <link_ctn id='{lid}'>"))
        return RouteDecl(src, dst, links, where, gw_src, gw_dst, symmetrical)
