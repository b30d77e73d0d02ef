"""joulesim's native JSON platform format.

A platform is an object with these keys (all optional, but at least one compute host is needed)::

    {
      "version": 1,
      "description": "free text",
      "master": {"name": "master_host", "speed": "1Gf"},
      "hosts": [
        {"name": "h0", "speed": ["1Gf", "1e-9Mf", 0.1639, 0.0066], "pstate": 0,
         "role": "compute_node", "properties": {"k": "v"}, "zone_properties": {"site": "a"},
         "wattage_per_state": [[95, 190.74], [9.75, 9.75], [101, 101], [125.17, 125.17]],
         "wattage_off": 9.75,
         "sleep_pstates": [{"sleep": 1, "switch_off": 2, "switch_on": 3}]}
      ],
      "clusters": [
        {"id": "c0", "prefix": "c0-host", "count": 16, "speed": "1Gf",
         "properties": {}, "zone_properties": {"cluster": "c0"},
         "bw": "10Gbps", "lat": "24ns", "bb_bw": "1.25GBps", "bb_lat": 0}
      ],
      "backbone": {"bw": "1.25GBps", "lat": "24ns"}
    }

Host fields:

- ``name`` (required) and ``speed`` (required except for ``master``): one speed per pstate, as a
  list or a single value; each is a number in flop/s or a string with a SimGrid unit ("100Mf").
  A string may also hold the whole comma-separated list ("1Gf, 500Mf").
- ``pstate``: initial pstate (default 0). ``core``: number of cores (default 1; SimGrid's: the host computes on that many cores).
- ``role``: ``compute_node`` (default), ``storage`` or ``master``.
- ``properties``, ``zone_properties``: string-to-string maps forwarded to deciders as Batsim does.
- ``wattage_per_state``: ``[[idle, max], ...]`` (or ``[idle, epsilon, max]``) one per pstate, or the
  Batsim string ``"idle:max, ..."``. ``wattage_off``: watts when off (number or string).
- ``sleep_pstates``: list of ``{"sleep", "switch_off", "switch_on"}`` objects (or
  ``[sleep, off, on]`` triples), or the Batsim string ``"1:2:3"``.

``role``, ``wattage_per_state``, ``wattage_off`` and ``sleep_pstates`` are also written into the
host's ``properties`` as Batsim-style strings (that is what Batsim forwards to deciders); giving
one both as a field and inside ``properties`` is an error.

``version`` is 1, the only version so far (others are refused). Numbers are JSON numbers (NaN and Infinity, which Python's json module accepts, are refused;
an integer field may be written 3.0) or, where a unit is allowed, strings. A key given twice
in one object is an error (JSON parsers silently keep the last one). The limits of
:mod:`platform_checks` apply (at most 1,000,000 hosts, 256 pstates per host...).

``master`` is a host (``speed`` defaults to "1Gf") that gets ``role`` "master". Instead, one entry
of ``hosts`` may have ``"role": "master"``, or a host may be named "master_host"; the
``master_host`` argument (``--master-host``) overrides, as for XML.

Hosts are numbered as in SimGrid XML, as Batsim 4.2.1 numbers machines: compute hosts, then
storage hosts, by name as strings compare (c0-host0, c0-host1, c0-host10...), whatever their
order in the file: Batsim never reads this format, but the XML that ``joulesim platform
export-xml`` writes of it then gives Batsim the same ids.

Cluster fields: ``id`` (required), ``prefix``, ``suffix`` (default ""), the host numbers as
``radical`` ("0-31,40" or a list of integers) or ``count`` (N: 0..N-1), and the host fields above
except ``name``; they apply to every generated host ``prefix + N + suffix``, whose ``Host.zone``
is the cluster's id.

Network (as SimGrid's ``<cluster>``; see :mod:`platform_xml_network`). A cluster with ``bw``
has links: ``bw``, ``lat`` (default 0) and ``sharing_policy`` (SPLITDUPLEX by default; SHARED,
FATPIPE) for each host's link to the cluster's switch; ``bb_bw``, ``bb_lat`` (default 0) and
``bb_sharing_policy`` (SHARED or FATPIPE) for the switch itself (none without ``bb_bw``);
``limiter_link`` and ``router_id`` as in SimGrid. Bandwidths are bytes/s or strings with a
SimGrid unit ("1.25GBps", "10Gbps" is bits), latencies seconds or strings ("24ns").
The top-level ``backbone`` (``bw``, ``lat`` default 0, ``sharing_policy`` SHARED or FATPIPE,
``id`` default "backbone") joins the clusters: a route between two clusters goes up the source
cluster to its router, through the backbone, and down the destination cluster. Once one
cluster has links (or a backbone is given) all clusters need ``bw``, and several clusters need
the backbone. Hosts outside clusters (the master, ``hosts``) have no link. ``topology`` (other
than FLAT), ``topo_parameters``, ``loopback_bw`` and ``loopback_lat`` are refused. The top-level
``network`` key is read and ignored (older files have it). Unknown keys are errors (they
usually are typos).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import fastjsonschema

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.network_declaration import (
    Link,
    LinkRef,
    NetworkDecl,
    RouteDecl,
    Routing,
    SharingPolicy,
    ZoneDecl,
    cluster_zone,
)
from joulesim.simulator.platform.network_topology import NetworkTopology
from joulesim.simulator.platform.platform_checks import (
    RawHost,
    build_platform,
    check_host_count,
    check_name_part,
    parse_bandwidth,
    parse_latency,
    parse_radical,
    parse_speeds,
    read_platform_file,
    shown,
)
from joulesim.simulator.platform.platform_irmasim import is_irmasim_platform, load_irmasim_platform
from joulesim.simulator.platform.platform_json_schema import schema_error, validator
from joulesim.simulator.platform.platform_model import Platform
from joulesim.simulator.platform.platform_node_json import irmasim_document, is_native_node_platform

_CLUSTER_NETWORK_KEYS = ("bw", "lat", "bb_bw", "bb_lat", "limiter_link", "loopback_bw", "loopback_lat")


def _fmt(x: Any) -> str:
    return x if isinstance(x, str) else str(x)


def _batsim_props(path: str, where: str, obj: dict) -> dict[str, str]:
    """Properties with the structured fields written back as Batsim strings."""
    props = dict(obj.get("properties", {}))
    fields: dict[str, str] = {}
    if "role" in obj:
        fields["role"] = obj["role"]
    if "wattage_per_state" in obj:
        w = obj["wattage_per_state"]
        fields["wattage_per_state"] = w if isinstance(w, str) else ", ".join(":".join(_fmt(v) for v in pair) for pair in w)
    if "wattage_off" in obj:
        fields["wattage_off"] = _fmt(obj["wattage_off"])
    if obj.get("sleep_pstates", []) != []:  # absent or an empty list: no sleep pstate
        s = obj["sleep_pstates"]
        if not isinstance(s, str):
            s = ",".join(
                f"{_whole(t['sleep'])}:{_whole(t['switch_off'])}:{_whole(t['switch_on'])}" if isinstance(t, dict) else ":".join(str(_whole(v)) for v in t) for t in s
            )
        fields["sleep_pstates"] = s
    for key, value in fields.items():
        if key in props:
            raise InputError(path, f"{where}.{key}", f"{key!r} is given both as a field and in 'properties'", "give it only once")
        props[key] = value
    return props


class _DuplicateKey(Exception):
    """A key given twice in one JSON object (json.loads would keep the last value silently)."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class _NotJsonNumber(Exception):
    """NaN, Infinity or -Infinity, which json.loads accepts though JSON has no such numbers."""


def _object_without_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _refuse_constant(name: str) -> Any:
    raise _NotJsonNumber(name)


def read_json(path: str, data: bytes) -> Any:
    """A JSON document, strictly: UTF-8 (a BOM is allowed), no NaN or Infinity, no key twice in
    an object, no integer of thousands of digits, no nesting deeper than Python's recursion limit."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(path, f"line {line} (byte {e.start})", f"not UTF-8 text: {e.reason}", "save the file as UTF-8 JSON") from None
    try:
        return json.loads(text, object_pairs_hook=_object_without_duplicate_keys, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno}, column {e.colno}", f"malformed JSON: {e.msg}", "fix the JSON syntax (missing comma or quote, trailing comma...)") from None
    except _DuplicateKey as e:
        raise InputError(path, f"key {shown(e.key)}", "appears twice in the same JSON object (all but the last value would be silently dropped)",
                         "keep the key once in each object") from None
    except RecursionError:
        raise InputError(path, "file", "JSON nested too deeply (arrays or objects inside each other about a thousand levels deep)",
                         "a platform needs a few levels: check the file was written by a JSON writer") from None
    except _NotJsonNumber as e:
        raise InputError(path, "file", f"malformed JSON: {e} is not a JSON number", "write finite numbers, e.g. 1e9") from None
    except ValueError:  # Python refuses to convert integers of more than 4,300 digits
        raise InputError(path, "file", "malformed JSON: an integer has thousands of digits", "write numbers that fit a double, e.g. 1e9") from None


def _whole(value: int | float) -> int:
    """A JSON integer (JSON Schema counts 3.0 as one)."""
    return int(value)


def load_json_platform(path: str, master_host: str | None = None, raw: bytes | None = None,
                       platform_name: str | None = None, added_roles: Mapping[str, str] | None = None) -> Platform:
    """Read a native JSON platform file, or an IRMaSim platform file, into a :class:`Platform`
    (InputError on bad input).

    `raw`, when given, is the document itself (a platform built in Python and encoded); `path`
    then only names it in messages. `platform_name` chooses one platform of an IRMaSim file."""
    path = str(path)
    data = read_json(path, read_platform_file(path) if raw is None else raw)
    if added_roles and (is_irmasim_platform(data) or is_native_node_platform(data)):
        raise InputError(path, "--add-role-to-hosts", "this is a node platform (processors and cores), whose hosts have no roles",
                         "drop --add-role-to-hosts, or use a Batsim platform (XML, or JSON with hosts and clusters)")
    if is_irmasim_platform(data):
        return load_irmasim_platform(path, data, platform_name)
    if is_native_node_platform(data):
        return load_irmasim_platform(path, irmasim_document(path, data), platform_name)
    if platform_name is not None:
        raise InputError(path, "--platform-name", f"given ({platform_name!r}), but this is not an IRMaSim platform file "
                         "with several platforms", "drop --platform-name")
    try:
        validator()(data)
    except fastjsonschema.JsonSchemaValueException as e:
        raise schema_error(path, e) from None

    check_host_count(path, "$.hosts", len(data.get("hosts", [])), 0)
    raw: list[RawHost] = []
    if "master" in data:
        m = data["master"]
        where = f"$.master ({shown(m['name'])})"
        props = _batsim_props(path, where, m)
        if props.setdefault("role", "master") != "master":
            raise InputError(path, f"{where}.role", f"the master host has role {shown(props['role'])}", 'drop the role or use "master"')
        speeds = parse_speeds(path, f"{where}.speed", m.get("speed", "1Gf"))
        raw.append(RawHost(m["name"], where, speeds, _whole(m.get("pstate", 0)), props, dict(m.get("zone_properties", {}))))
    for i, h in enumerate(data.get("hosts", [])):
        where = f"$.hosts[{i}] ({shown(h['name'])})"
        speeds = parse_speeds(path, f"{where}.speed", h["speed"])
        raw.append(RawHost(h["name"], where, speeds, _whole(h.get("pstate", 0)), _batsim_props(path, where, h), dict(h.get("zone_properties", {})),
                           cores=_whole(h.get("core", 1))))
    cluster_hosts: list[list[tuple[int, str]]] = []
    cluster_ids: dict[str, str] = {}
    for i, c in enumerate(data.get("clusters", [])):
        cwhere = f"$.clusters[{i}] ({shown(c['id'])})"
        if c["id"] in cluster_ids:
            raise InputError(path, f"{cwhere}.id", f"the cluster id is already used by {cluster_ids[c['id']]}", "give every cluster a unique id")
        cluster_ids[c["id"]] = cwhere
        prefix, suffix = c.get("prefix", ""), c.get("suffix", "")
        for key, text in (("id", c["id"]), ("prefix", prefix), ("suffix", suffix)):
            check_name_part(path, f"{cwhere}.{key}", text, key)
        speeds = parse_speeds(path, f"{cwhere}.speed", c["speed"])
        props = _batsim_props(path, cwhere, c)
        pstate = _whole(c.get("pstate", 0))
        hosts = [(n, f"{prefix}{n}{suffix}") for n in _cluster_numbers(path, cwhere, c, len(raw))]
        cluster_hosts.append(hosts)
        zone_props = c.get("zone_properties", {})
        for _, name in hosts:
            raw.append(RawHost(name, f"{cwhere} host '{name}'", list(speeds), pstate, dict(props), dict(zone_props), c["id"],
                               _whole(c.get("core", 1))))
    if not raw:
        raise InputError(path, "$", "declares no host", 'add "hosts" or "clusters"')
    platform = build_platform(path, raw, master_host, added_roles)
    if "backbone" in data or any(k in c for c in data.get("clusters", []) for k in _CLUSTER_NETWORK_KEYS):
        platform.network = _network(path, data, cluster_hosts, platform)
    declared_master, _ = master_entry(data, platform.master.name)
    for where, entry in [("$.master", data.get("master", {})), *((f"$.hosts[{i}] ({shown(h['name'])})", h) for i, h in enumerate(data.get("hosts", [])))]:
        if "link" not in entry:
            continue
        if entry is not declared_master:
            raise InputError(path, f"{where}.link", "only the master host has a link (it joins the master to the clusters)",
                             'drop "link": the other hosts reach the master through their cluster\'s links')
        if platform.network is None:
            raise InputError(path, f"{where}.link", "the master has a link but the platform has no network (no cluster has links)",
                             'drop "link", or give the clusters links ("bw", "lat")')
    return platform


def _cluster_numbers(path: str, where: str, cluster: dict, before: int) -> list[int]:
    """Host numbers of a cluster: "radical" ("0-31,40" or a list), or "count" (0..count-1);
    `before` hosts are already declared (the total is checked before the list is made)."""
    if ("radical" in cluster) == ("count" in cluster):
        problem = "gives both 'radical' and 'count'" if "radical" in cluster else "missing field 'radical' (or 'count')"
        raise InputError(path, where, problem, 'give either "radical": "0-15" or "count": 16')
    if "count" in cluster:
        count = cluster["count"]
        check_host_count(path, f"{where}.count", count, before)
        return list(range(_whole(count)))
    radical = cluster["radical"]
    if isinstance(radical, list):
        radical = [_whole(n) for n in radical]
    return parse_radical(path, f"{where}.radical", radical, before)


def master_entry(data: dict, name: str) -> tuple[dict | None, str]:
    """The JSON object that declares the master host (`"master"`, or its entry of `"hosts"`), and where."""
    if data.get("master", {}).get("name") == name:
        return data["master"], "$.master"
    for i, host in enumerate(data.get("hosts", [])):
        if host["name"] == name:
            return host, f"$.hosts[{i}] ({shown(name)})"
    return None, "$"


def outside_zone_id(host: str, taken: set[str]) -> str:
    """The id of the zone of its own that a host outside the clusters gets (unique)."""
    zone_id, n = f"{host}_zone", 1
    while zone_id in taken:
        zone_id, n = f"{host}_zone{n}", n + 1
    taken.add(zone_id)
    return zone_id


def _link(path: str, where: str, obj: dict, default_id: str) -> Link:
    """A link given as {"id", "bw", "lat", "sharing_policy"} (the backbone, the master's link)."""
    name = obj.get("id", default_id)
    where = f"{where} ('{name}')"
    return Link(name, parse_bandwidth(path, f"{where}.bw", obj["bw"]), parse_latency(path, f"{where}.lat", obj.get("lat", 0)),
                SharingPolicy(obj.get("sharing_policy", "SHARED")), where)


def _network(path: str, data: dict, cluster_hosts: list[list[tuple[int, str]]], platform: Platform) -> NetworkTopology:
    """Clusters as in SimGrid XML, joined by "backbone" (every route between two clusters goes
    up the source cluster to its router, through the backbone, down the destination cluster)."""
    links: list[Link] = []
    clusters: list[ZoneDecl] = []
    for i, (c, hosts) in enumerate(zip(data.get("clusters", []), cluster_hosts)):
        where = f"$.clusters[{i}] ('{c['id']}')"
        if "bw" not in c:
            raise InputError(path, where, "missing field 'bw' (the bandwidth of the hosts' links)",
                             'add "bw" (e.g. "1.25GBps") and "lat": the platform has a network, so every cluster needs them')
        for key, fix in (("topology", 'drop "topology": only flat clusters (links, backbone) are supported'),
                         ("topo_parameters", 'drop "topo_parameters"'),
                         ("loopback_bw", "drop it (a host's transfers to itself go up its link and down again), "
                                         "or write the platform in XML, where clusters take it"),
                         ("loopback_lat", "drop it (a host's transfers to itself go up its link and down again), "
                                          "or write the platform in XML, where clusters take it")):
            if key in c and not (key == "topology" and c[key] == "FLAT"):
                raise InputError(path, f"{where}.{key}", f"{key} is not supported", fix)
        backbone = None
        if "bb_bw" in c:
            backbone = (parse_bandwidth(path, f"{where}.bb_bw", c["bb_bw"]), parse_latency(path, f"{where}.bb_lat", c.get("bb_lat", 0)),
                        SharingPolicy(c.get("bb_sharing_policy", "SHARED")))
        elif "bb_lat" in c:
            raise InputError(path, f"{where}.bb_lat", "bb_lat is given without bb_bw", 'give the backbone\'s bandwidth too ("bb_bw"), or drop "bb_lat"')
        policy = c.get("sharing_policy", "SPLITDUPLEX")
        limiter = parse_bandwidth(path, f"{where}.limiter_link", c["limiter_link"]) if "limiter_link" in c else None
        router = c.get("router_id") or f"{c.get('prefix', '')}{c['id']}_router{c.get('suffix', '')}"
        zone, zone_links = cluster_zone(
            c["id"], where, hosts, parse_bandwidth(path, f"{where}.bw", c["bw"]), parse_latency(path, f"{where}.lat", c.get("lat", 0)),
            SharingPolicy.SPLITDUPLEX if policy == "FULLDUPLEX" else SharingPolicy(policy), backbone, limiter, router)
        clusters.append(zone)
        links += zone_links
    # As SimGrid XML would say it (platform_xml_export.py writes it so): a Full root zone; the
    # clusters; the backbone as a zoneRoute between every two clusters; each host outside the
    # clusters (the master, "hosts") in a zone of its own; the master's zone joined to every
    # other zone through the master's link (Batsim's actors talk to the master from every host).
    root = ZoneDecl("AS0", Routing.FULL, "the top level of the JSON platform")
    root.children = list(clusters)
    clustered = {name for hosts in cluster_hosts for _, name in hosts}
    outside = [h.name for h in [platform.master, *platform.compute_hosts, *platform.storage_hosts] if h.name not in clustered]
    taken = {zone.id for zone in clusters}
    gateways = {zone.id: zone.routers[0] for zone in clusters}
    master_zone = None  # stays None for a master inside a cluster: its cluster's links reach the others
    for name in outside:
        zone_id = outside_zone_id(name, taken)
        where = f"the zone of host {name!r} (outside \"clusters\")"
        root.children.append(ZoneDecl(zone_id, Routing.FULL, where, hosts=[name]))
        gateways[zone_id] = name
        if name == platform.master.name:
            master_zone = zone_id
    if "backbone" in data:
        backbone = _link(path, "$.backbone", data["backbone"], "backbone")
        links.append(backbone)
        for i, zone in enumerate(clusters):
            root.routes += [RouteDecl(zone.id, other.id, [LinkRef(backbone.name, None, backbone.where)], backbone.where,
                                      gw_src=zone.routers[0], gw_dst=other.routers[0]) for other in clusters[i + 1:]]
    elif len(clusters) > 1:
        raise InputError(path, "$", f"{len(clusters)} clusters with links but no \"backbone\" to join them",
                         'add "backbone": {"bw": "1.25GBps", "lat": "24ns"}')
    if master_zone is not None:
        master, where = master_entry(data, platform.master.name)
        if master is None or "link" not in master:
            raise InputError(path, where, "the platform has a network but the master host has no link (Batsim's actors send "
                             "messages from every host to the master, and SimGrid has no route without a link)",
                             'give the master a link: "master": {"name": "master_host", "link": {"bw": "10GBps", "lat": "1us"}} '
                             '(a master declared in "hosts" moves to "master" for that)')
        link = _link(path, f"{where}.link", master["link"], "master_link")
        links.append(link)
        root.routes += [RouteDecl(master_zone, zone_id, [LinkRef(link.name, None, link.where)], link.where,
                                  gw_src=gateways[master_zone], gw_dst=gateway)
                        for zone_id, gateway in gateways.items() if zone_id != master_zone]
    return NetworkTopology(NetworkDecl(links, root), [h.name for h in platform.compute_hosts + platform.storage_hosts], path)
