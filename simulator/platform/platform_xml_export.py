"""A native JSON platform written as SimGrid XML (`joulesim platform export-xml`), so that it can
be taken to Batsim, and to SimGrid itself, unchanged.

The XML gives the same platform to joulesim (same hosts and ids, speeds, pstates, cores,
properties and zone properties, power model, links and routes: a test runs both and compares
every output byte for byte) and loads in SimGrid 3.32 (a test loads it there). Its form:

- one root zone, routing "Full";
- a cluster with links (`bw`) becomes a `<cluster>` with the same attributes; SimGrid gives a
  cluster's `<prop>`s to its hosts *and* to its zone, so its `properties` must also be among its
  `zone_properties` (refused otherwise, naming the cluster); zone properties beyond them go on
  a `<zone>` around the cluster;
- a platform without links becomes one zone holding every host (its `properties` as `<prop>`s),
  as Batsim's platforms without a network are: SimGrid finds no route between zones, and
  Batsim's first message to the master would abort; so its hosts' zone properties must agree;
- the master and the `hosts` outside clusters each go into a zone of their own (its zone
  properties as the zone's `<prop>`s);
- the `backbone` becomes a link and one zoneRoute through it between every two clusters (the
  JSON's route: up the source cluster to its router, the backbone, down the destination);
- the master's `link` becomes a link and one zoneRoute through it from the master's zone to
  every other zone.

The master is written portably for Batsim 4.2.1: a host named "master_host" gets no role
property (Batsim makes the host of that name the master and would count a role=master twice);
any other name keeps role=master (and must not be accompanied by a host named "master_host").
Numbers are written so that both readers get the same floats back (Python's shortest repr).
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import quoteattr

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_checks import DEFAULT_MASTER_NAME, read_platform_file
from joulesim.simulator.platform.platform_json import master_entry, load_json_platform, outside_zone_id, read_json
from joulesim.simulator.platform.platform_loader import platform_file
from joulesim.simulator.platform.platform_model import Host

# Cluster fields written as they are in the JSON (strings keep their SimGrid units).
_CLUSTER_NETWORK_ATTRIBUTES = (("bw", "Bps"), ("lat", "s"), ("sharing_policy", None), ("bb_bw", "Bps"), ("bb_lat", "s"),
                               ("bb_sharing_policy", None), ("limiter_link", "Bps"), ("router_id", None))


def export_xml(path: str) -> str:
    """The SimGrid XML text of the native JSON platform at `path` (InputError if it is not one,
    or if XML cannot say what it says)."""
    path = platform_file(str(path))
    if not path.lower().endswith(".json"):
        raise InputError(path, "platform", "is not a JSON platform: export-xml writes a joulesim JSON platform as XML",
                         "give a .json platform (an XML platform is SimGrid's format already)")
    platform = load_json_platform(path)  # every check of the JSON reader first
    if platform.nodes is not None:
        raise InputError(path, "$", "is a node platform (processors and cores, IRMaSim's model), which SimGrid XML cannot describe",
                         "export a platform of hosts and clusters")
    data = read_json(path, read_platform_file(path))
    hosts = {h.name: h for h in [platform.master, *platform.compute_hosts, *platform.storage_hosts]}
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">']
    if data.get("description"):
        lines.append(f"<!-- {_comment(str(data['description']))} -->")
    lines.append(f"<!-- Written by joulesim platform export-xml from {_comment(path)}. -->")
    lines += ['<platform version="4.1">', '  <zone id="AS0" routing="Full">']
    if platform.network is None:
        return "\n".join(lines + _one_zone(path, hosts, platform.master) + ["  </zone>", "</platform>", ""])
    zone_ids = {cluster["id"] for cluster in data.get("clusters", [])}  # the zones' ids, to keep new ones unique
    networked: list[dict[str, Any]] = []
    outer: dict[str, str] = {}  # a networked cluster's id -> the zone that routes name (itself, or a zone around it)
    clustered: set[str] = set()
    for i, cluster in enumerate(data.get("clusters", [])):
        where = f"$.clusters[{i}] ({cluster['id']!r})"
        members = _member_names(cluster, hosts)
        clustered.update(members)
        first = hosts[members[0]]
        # With a network every cluster has links (the JSON reader checks it).
        if first.pstate != 0:
            raise InputError(path, f"{where}.pstate", "a cluster with links starts in pstate 0 in SimGrid XML (its "
                             "<cluster> has no pstate attribute)", "drop pstate (or give the cluster no links) to export it")
        # A <cluster>'s <prop>s are its hosts' properties and its zone's: zone properties beyond
        # them go on a zone around it; properties that are not zone properties too cannot be said.
        props, zone_props = first.properties, first.zone_properties
        if any(zone_props.get(key) != value for key, value in props.items()):
            raise InputError(path, where, "has links, and properties that are not among its zone_properties: in SimGrid XML "
                             "a <cluster>'s properties are also its zone's",
                             "add the cluster's properties to its zone_properties (or give it no links) to export it")
        networked.append(cluster)
        around = {key: value for key, value in zone_props.items() if key not in props}
        if around:
            outer[cluster["id"]] = outside_zone_id(cluster["id"], zone_ids)
            lines += [f"    <zone id={quoteattr(outer[cluster['id']])} routing=\"Full\">", *_props(around, 6)]
            lines += ["  " + line for line in _cluster(cluster, first)]
            lines.append("    </zone>")
        else:
            outer[cluster["id"]] = cluster["id"]
            lines += _cluster(cluster, first)
    # Each host outside the clusters in a zone of its own (its gateway), as the JSON reader has it.
    gateways = {outer[cluster["id"]]: _router(cluster) for cluster in networked}
    for host in (h for h in hosts.values() if h.name not in clustered):
        zone_id = outside_zone_id(host.name, zone_ids)
        gateways[zone_id] = host.name
        lines.append(f"    <zone id={quoteattr(zone_id)} routing=\"Full\">")
        lines += _props(host.zone_properties, 6)
        lines += _host(host, 6, master=host is platform.master)
        lines.append("    </zone>")
    # SimGrid's DTD wants a zone's links before its routes.
    routes: list[str] = []
    if "backbone" in data:
        lines += _link(data["backbone"], "backbone")
        link_id = data["backbone"].get("id", "backbone")
        for i, a in enumerate(networked):
            for b in networked[i + 1:]:
                routes += _zone_route(outer[a["id"]], outer[b["id"]], gateways, link_id)
    master = master_entry(data, platform.master.name)[0] or {}
    if "link" in master:
        lines += _link(master["link"], "master_link")
        master_zone = next(zone for zone, gateway in gateways.items() if gateway == platform.master.name)
        for zone in gateways:
            if zone != master_zone:
                routes += _zone_route(master_zone, zone, gateways, master["link"].get("id", "master_link"))
    lines += routes
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(lines)


def _one_zone(path: str, hosts: dict[str, Host], master: Host) -> list[str]:
    """A platform without links: every host in the root zone, as Batsim's platforms without a
    network are (SimGrid gives them empty routes there; between zones it would find none, and
    Batsim's first message to the master would abort). So their zone properties must agree."""
    zone_props = master.zone_properties
    for host in hosts.values():
        if host.zone_properties != zone_props:
            raise InputError(path, f"host {host.name!r}", "has other zone_properties than the master's: a platform without "
                             "links is one zone in SimGrid XML (Batsim needs its hosts in one zone to talk to the master)",
                             "give every host the same zone_properties (or give the clusters links) to export it")
    lines = _props(zone_props, 4)
    for host in hosts.values():
        lines += _host(host, 4, master=host is master)
    return lines


def _link(link: dict[str, Any], default_id: str) -> list[str]:
    attributes = f"id={quoteattr(link.get('id', default_id))} bandwidth={quoteattr(_quantity(link['bw'], 'Bps'))} " \
                 f"latency={quoteattr(_quantity(link.get('lat', 0), 's'))}"
    if "sharing_policy" in link:
        attributes += f" sharing_policy={quoteattr(link['sharing_policy'])}"
    return [f"    <link {attributes}/>"]


def _zone_route(src: str, dst: str, gateways: dict[str, str], link_id: str) -> list[str]:
    return [f"    <zoneRoute src={quoteattr(src)} dst={quoteattr(dst)} gw_src={quoteattr(gateways[src])} "
            f"gw_dst={quoteattr(gateways[dst])}>", f"      <link_ctn id={quoteattr(link_id)}/>", "    </zoneRoute>"]


def _member_names(cluster: dict[str, Any], hosts: dict[str, Host]) -> list[str]:
    """The cluster's host names (the JSON reader gives them the cluster's id as Host.zone)."""
    return [name for name, host in hosts.items() if host.zone == cluster["id"]]


def _cluster(cluster: dict[str, Any], first: Host) -> list[str]:
    attributes = [f"id={quoteattr(cluster['id'])}", f"prefix={quoteattr(cluster.get('prefix', ''))}",
                  f"suffix={quoteattr(cluster.get('suffix', ''))}", f"radical={quoteattr(_radical(cluster))}",
                  f"speed={quoteattr(_speeds(first.speeds))}"]
    if first.cores != 1:
        attributes.append(f'core="{first.cores}"')
    # SimGrid's <cluster> needs lat (the JSON's defaults to 0), and bb_lat with bb_bw.
    cluster = {**cluster, "lat": cluster.get("lat", 0)}
    if "bb_bw" in cluster:
        cluster["bb_lat"] = cluster.get("bb_lat", 0)
    for key, unit in _CLUSTER_NETWORK_ATTRIBUTES:
        if key in cluster:
            value = cluster[key]
            attributes.append(f"{key}={quoteattr(_quantity(value, unit) if unit else str(value))}")
    props = _props(first.properties, 6)
    opening = "    <cluster " + " ".join(attributes)
    return [opening + ">", *props, "    </cluster>"] if props else [opening + "/>"]


def _host(host: Host, indent: int, master: bool = False) -> list[str]:
    properties = dict(host.properties)
    if master and host.name == DEFAULT_MASTER_NAME:
        properties.pop("role", None)  # the name makes it Batsim's master; a role would count twice
    elif master:
        properties["role"] = "master"
    attributes = f"id={quoteattr(host.name)} speed={quoteattr(_speeds(host.speeds))}"
    if host.cores != 1:
        attributes += f' core="{host.cores}"'
    if host.pstate != 0:
        attributes += f' pstate="{host.pstate}"'
    pad = " " * indent
    props = _props(properties, indent + 2)
    return [f"{pad}<host {attributes}>", *props, f"{pad}</host>"] if props else [f"{pad}<host {attributes}/>"]


def _props(properties: dict[str, str], indent: int) -> list[str]:
    pad = " " * indent
    return [f"{pad}<prop id={quoteattr(key)} value={quoteattr(value)}/>" for key, value in properties.items()]


def _radical(cluster: dict[str, Any]) -> str:
    if "count" in cluster:
        return f"0-{int(cluster['count']) - 1}"
    radical = cluster["radical"]
    return radical if isinstance(radical, str) else ",".join(str(int(n)) for n in radical)


def _router(cluster: dict[str, Any]) -> str:
    return cluster.get("router_id") or f"{cluster.get('prefix', '')}{cluster['id']}_router{cluster.get('suffix', '')}"


def _speeds(speeds: list[float]) -> str:
    return ",".join(f"{speed!r}f" for speed in speeds)


def _quantity(value: Any, unit: str) -> str:
    """A JSON quantity for an XML attribute: strings keep their SimGrid unit; numbers get the base one."""
    return value if isinstance(value, str) else f"{float(value)!r}{unit}"


def _comment(text: str) -> str:
    return text.replace("--", "- -")
