"""SimGrid XML platform files, the subset Batsim platforms use.

Read: ``<platform version="4.1">`` (versions 4 to 4.1; legacy ``<AS>`` zones too), nested
``<zone>`` with ``<prop>`` children (given to every host inside as ``zone_properties``, the
innermost zone winning), ``<host id speed pstate core>`` with ``<prop>`` children, and
``<peer id speed>`` (a host of a Vivaldi zone), and
``<cluster>``/``<cabinet>`` which expand to hosts ``prefix + N + suffix`` for N in ``radical``
("0-31,40"); a cluster's ``<prop>`` children become properties of each of its hosts and, the
cluster being a zone, their innermost ``zone_properties`` (as SimGrid does); its hosts get the
cluster's id as ``Host.zone``. Links, routes, routers and backbones make the platform's network
(:mod:`platform_xml_network`, read after the hosts); ``<storage>`` and ``<mount>`` are checked
(they must name a declared host, storage type and storage) and otherwise ignored, as are
traces and disks; ``<config>`` keys must be SimGrid's (simgrid_config_keys.py), their values are
not applied. Semantic checks are shared with the JSON loader (:mod:`platform_checks`).

The file is parsed with defusedxml: a DOCTYPE naming SimGrid's DTD is fine (it is not
fetched), but entity declarations (the "billion laughs" bomb) and external entities are
refused. Zones nest at most ``MAX_ZONE_DEPTH`` deep.
"""

from __future__ import annotations

import difflib
import re
import xml.etree.ElementTree as ET
from typing import Mapping


from joulesim.inputs.input_error import InputError
from joulesim.inputs.xml_input import parse_xml
from joulesim.simulator.platform.platform_checks import (
    DEFAULT_MASTER_NAME,
    MAX_HOSTS,
    MAX_ZONE_DEPTH,
    RawHost,
    build_platform,
    check_energy_properties,
    check_host_count,
    check_name_part,
    parse_int,
    parse_radical,
    parse_speed,
    parse_speeds,
    read_platform_file,
    shown,
)
from joulesim.simulator.platform.network_declaration import Routing
from joulesim.simulator.platform.platform_model import Platform
from joulesim.simulator.platform.platform_xml_network import read_xml_network, read_xml_zone_routes, zone_routing
from joulesim.simulator.platform.platform_xml_structure import check_structure
from joulesim.simulator.platform.simgrid_config_keys import check_config_keys
from joulesim.simulator.platform.vivaldi_coordinates import parse_coordinates

_ZONE_TAGS = ("zone", "AS")
# SimGrid reads versions 4 to 4.1 (older files use power= and must be converted).
_OLDEST_VERSION, _NEWEST_VERSION = 4.0, 4.1
# Every element of SimGrid's DTD (versions 3 to 4.1, deployment files included): others are
# typos (a <hots> would silently drop a host), so they are refused.
_SIMGRID_TAGS = frozenset((
    "platform", "include", "config", "random", "trace", "trace_connect", "zone", "AS", "host", "prop", "disk",
    "storage_type", "model_prop", "storage", "mount", "mstorage", "cluster", "cabinet", "peer", "router",
    "backbone", "link", "host_link", "route", "zoneRoute", "ASroute", "link_ctn", "bypassRoute",
    "bypassZoneRoute", "bypassASroute", "actor", "process", "argument",
))
_VERSION_RE = re.compile(r"[ \t\r\n]*[0-9]+(?:\.[0-9]+)?[ \t\r\n]*")


def _props(path: str, elem: ET.Element, where: str) -> dict[str, str]:
    props: dict[str, str] = {}
    for p in elem.findall("prop"):
        pid, value = p.get("id"), p.get("value")
        if pid is None or value is None:
            raise InputError(path, f"{where}, <prop>", "a <prop> needs both 'id' and 'value' attributes", 'write <prop id="name" value="..."/>')
        if pid in props:
            # SimGrid keeps the first value, Batsim's old parsers the last: neither is safe to guess.
            raise InputError(path, f"{where}, <prop id={shown(pid)}>", "the property is given twice", "keep one <prop> per id")
        props[pid] = value
    return props


def _required(path: str, elem: ET.Element, attr: str, where: str) -> str:
    value = elem.get(attr)
    if value is None or not value.strip():
        raise InputError(path, where, f"<{elem.tag}> has no '{attr}' attribute", f"add {attr}=\"...\" to the <{elem.tag}> element")
    return value


# simgrid.dtd's #REQUIRED attributes of the elements that expand into hosts: SimGrid's parser
# stops on a missing one ("Required attribute `bw' not set for `cluster' element."), even where
# the value may be empty (prefix="" and suffix="" are common).
_DTD_REQUIRED = ("id", "prefix", "suffix", "radical", "speed", "bw", "lat")  # (the same for both)


def _dtd_required(path: str, elem: ET.Element, tag: str) -> None:
    missing = [attr for attr in _DTD_REQUIRED if attr not in elem.attrib]
    if missing:
        name = elem.get("id")
        where = f"<{tag}>" if name is None else f"{tag} {shown(name)}"
        listed = ", ".join(f"'{attr}'" for attr in missing)
        raise InputError(path, where, f"<{tag}> has no {listed} attribute{'s' if len(missing) > 1 else ''}, which "
                         f"simgrid.dtd requires (SimGrid 3.32, and so Batsim, stop there: \"Required attribute "
                         f"`{missing[0]}' not set for `{tag}' element.\")",
                         "give " + " ".join(f'{attr}="..."' for attr in missing) + ' (prefix="" and suffix="" may be '
                         'empty; bw and lat are the bandwidth and latency of the hosts\' links, e.g. bw="1.25GBps" '
                         'lat="24us")')


def _pstate_and_core(path: str, elem: ET.Element, where: str) -> tuple[int, int]:
    pstate = parse_int(path, f"{where}, pstate", elem.get("pstate", "0"), "pstate")
    cores = parse_int(path, f"{where}, core", elem.get("core", "1"), "core")
    if cores < 1:
        raise InputError(path, f"{where}, core", f"core {shown(elem.get('core'))} must be >= 1", "give the number of cores, e.g. core=\"1\"")
    return pstate, cores


class _HostReader:
    """Collects the hosts of the zone tree (clusters expanded) as RawHosts."""

    def __init__(self, path: str):
        self.path = path
        self.hosts: list[RawHost] = []
        self.zones: dict[str, str] = {}  # zone and cluster ids -> where, to refuse duplicates
        self._speeds: dict[str, list[float]] = {}  # speed text -> speeds: hosts often share one

    def speeds(self, elem: ET.Element, where: str) -> list[float]:
        text = _required(self.path, elem, "speed", where)
        speeds = self._speeds.get(text)
        if speeds is None:
            speeds = self._speeds[text] = parse_speeds(self.path, f"{where}, speed", text)
        return speeds

    def zone_id(self, elem: ET.Element, where_tag: str) -> tuple[str, str]:
        zid = _required(self.path, elem, "id", where_tag)
        where = f"{'zone' if elem.tag in _ZONE_TAGS else elem.tag} {shown(zid)}"
        if zid in self.zones:
            raise InputError(self.path, where, f"zone id {shown(zid)} is already used by {self.zones[zid]}", "give every zone and cluster a unique id")
        self.zones[zid] = where
        return zid, where

    def walk(self, elem: ET.Element, zone_props: dict[str, str], cluster_id: str, depth: int) -> None:
        path, out = self.path, self.hosts
        for child in elem:
            tag = child.tag
            if tag in _ZONE_TAGS:
                zid, where = self.zone_id(child, f"<{tag}>")
                if depth >= MAX_ZONE_DEPTH:
                    raise InputError(path, where, f"zones are nested more than {MAX_ZONE_DEPTH} deep (joulesim's limit)",
                                     "flatten the zone hierarchy: real platforms need a few levels")
                if child.get("routing") is None:  # simgrid.dtd: #REQUIRED, links or not
                    raise InputError(path, where, f"<{tag}> has no 'routing' attribute, which simgrid.dtd requires "
                                     f"(SimGrid 3.32, and so Batsim, stop there: \"Required attribute `routing' not set "
                                     f"for `{tag}' element.\")", 'give it one, e.g. routing="Full"')
                zone_routing(path, where, child.get("routing"))
                inner = dict(zone_props)
                inner.update(_props(path, child, where))
                # Hosts of a hand-built cluster (routing="Cluster") belong to it as to a <cluster>.
                self.walk(child, inner, zid if child.get("routing", "").lower() == "cluster" else "", depth + 1)
            elif tag == "host":
                name = _required(path, child, "id", "<host>")
                where = f"host {shown(name)}"
                if len(out) >= MAX_HOSTS:
                    check_host_count(path, where, 1, len(out))
                speeds = self.speeds(child, where)
                pstate, cores = _pstate_and_core(path, child, where)
                out.append(RawHost(name, where, list(speeds), pstate, _props(path, child, where), dict(zone_props), cluster_id, cores))
            elif tag == "peer":  # a Vivaldi zone's host: one speed, one core, no properties
                name = _required(path, child, "id", "<peer>")
                where = f"peer {shown(name)}"
                if len(out) >= MAX_HOSTS:
                    check_host_count(path, where, 1, len(out))
                speed = parse_speed(path, f"{where}, speed", _required(path, child, "speed", where))
                out.append(RawHost(name, where, [speed], 0, {}, dict(zone_props), cluster_id, 1))
            elif tag in ("cluster", "cabinet"):
                _dtd_required(path, child, tag)
                if tag == "cluster":
                    cid, cwhere = self.zone_id(child, f"<{tag}>")
                else:  # a cabinet is a row of hosts inside a Cluster zone, not a zone
                    cid = _required(path, child, "id", f"<{tag}>")
                    cwhere = f"{tag} {shown(cid)}"
                speeds = self.speeds(child, cwhere)
                pstate, cores = _pstate_and_core(path, child, cwhere)
                props = _props(path, child, cwhere)
                # A cluster is a zone of its own: SimGrid gives its <prop>s to its hosts and to the zone.
                host_zone, host_zone_props = (cid, {**zone_props, **props}) if tag == "cluster" else (cluster_id, zone_props)
                prefix, suffix = child.get("prefix", ""), child.get("suffix", "")
                for text, what in ((cid, "id"), (prefix, "prefix"), (suffix, "suffix")):
                    check_name_part(path, f"{cwhere}, {what}", text, what)
                for n in parse_radical(path, f"{cwhere}, radical", _required(path, child, "radical", cwhere), len(out)):
                    name = f"{prefix}{n}{suffix}"
                    out.append(RawHost(name, f"{cwhere} host '{name}'", list(speeds), pstate, dict(props), dict(host_zone_props), host_zone, cores))
            # Network elements are read by read_xml_network once the hosts are known; storages
            # by _check_storages; the rest (trace, disk, config, actor...) is ignored.


# SimGrid elements that would declare hosts joulesim does not read: refused, not ignored.
_UNSUPPORTED_TAGS = {
    "include": ("<include> (another platform file) is not supported", "paste the content of the included file in its place"),
}


def _check_tags(path: str, root: ET.Element) -> None:
    for elem in root.iter():
        if elem.tag in _UNSUPPORTED_TAGS:
            raise InputError(path, f"<{elem.tag} id={shown(elem.get('id', elem.get('file', '?')))}>", *_UNSUPPORTED_TAGS[elem.tag])
        if elem.tag not in _SIMGRID_TAGS:
            tag = str(elem.tag)
            close = difflib.get_close_matches(tag, _SIMGRID_TAGS, n=1)
            hint = f"did you mean <{close[0]}>? " if close else ""
            raise InputError(path, f"<{tag[:60]}>", "is not an element of SimGrid platforms", f"{hint}see https://simgrid.org/simgrid.dtd")


def _check_coordinates(path: str, root: ET.Element) -> None:
    """SimGrid reads a host's, router's or peer's coordinates wherever they are (they only count
    in Vivaldi zones) and refuses the file when they are not three numbers."""
    for elem in root.iter():
        if elem.tag in ("host", "router", "peer") and elem.get("coordinates", ""):
            parse_coordinates(path, f"{elem.tag} {shown(elem.get('id', '?'))}", elem.get("coordinates"))


def _check_version(path: str, root: ET.Element) -> None:
    version = root.get("version")
    if version is None:
        return  # read as 4.1
    fix = f'use version="{_NEWEST_VERSION}" (SimGrid\'s current platform format)'
    if not _VERSION_RE.fullmatch(version):
        raise InputError(path, "<platform> version", f"version {shown(version)} is not a version number", fix)
    v = float(version)
    if v < _OLDEST_VERSION:
        raise InputError(path, "<platform> version", f"version {shown(version.strip())} is SimGrid's old format (power=, <AS>)",
                         f'convert it with SimGrid\'s simgrid_update_xml tool, or use version="{_NEWEST_VERSION}"')
    if v > _NEWEST_VERSION:
        raise InputError(path, "<platform> version", f"version {shown(version.strip())} is newer than the formats joulesim reads ({_OLDEST_VERSION:g} to {_NEWEST_VERSION:g})", fix)


def _check_storages(path: str, root: ET.Element, host_names: set[str]) -> None:
    """SimGrid's storages: each names a declared storage type and the host it is attached to;
    a host's <mount> names a declared storage. joulesim does not simulate them, but a storage
    on a host that does not exist is a mistake SimGrid refuses, so it is refused here too."""
    types = {t.get("id") for t in root.iter("storage_type")}
    storages: dict[str, str] = {}
    for storage in root.iter("storage"):
        sid = _required(path, storage, "id", "<storage>")
        where = f"<storage id={shown(sid)}>"
        if sid in storages:
            raise InputError(path, where, "the storage id is already used", "give every <storage> a unique id")
        type_id = _required(path, storage, "typeId", where)
        if type_id not in types:
            raise InputError(path, f"{where}, typeId", f"no <storage_type> has the id {shown(type_id)}", "declare it with <storage_type id=... size=...>, or fix typeId")
        host = _required(path, storage, "attach", where)
        if host not in host_names:
            raise InputError(path, f"{where}, attach", f"attaches the storage to host {shown(host)}, which the platform does not declare",
                             "name an existing <host> (or a host of a <cluster>: prefix + number + suffix)")
        storages[sid] = where
    for host in root.iter("host"):
        for mount in host.iter("mount"):
            where = f"host {shown(host.get('id', '?'))}, <mount>"
            storage = _required(path, mount, "storageId", where)
            if storage not in storages:
                raise InputError(path, f"{where}, storageId", f"mounts storage {shown(storage)}, which the platform does not declare",
                                 'declare it with <storage id=... typeId=... attach=...>, or fix storageId')
            _required(path, mount, "name", where)


def _refuse_master_in_empty_zone(path: str, root: ET.Element, master: str) -> None:
    """Batsim's actors on the master send each other messages, which SimGrid routes inside the
    master's zone: a routing="None" zone routes nothing, not even a host to itself, and SimGrid
    3.32 aborts ("There can't be route in an Empty zone"; Batsim 4.2.1 with the shipped
    platforms of before did). SimGrid loads such a file, but no Batsim run of it goes far."""
    for zone in root.iter():
        routing = zone.get("routing") if zone.tag in _ZONE_TAGS else None  # (a missing one is reported with the network)
        if routing is not None and zone_routing(path, f"zone {shown(zone.get('id'))}", routing) is Routing.NONE:
            if any(child.tag == "host" and child.get("id") == master for child in zone):
                raise InputError(path, f"zone {shown(zone.get('id'))} (routing=\"None\"), master host {shown(master)}",
                                 "the master is in a zone that routes nothing: SimGrid 3.32 aborts on the messages Batsim's "
                                 "actors send on it (\"There can't be route in an Empty zone\")",
                                 'give the zone routing="Full" (a zone of one host needs no route), and join it to the others '
                                 "with <zoneRoute>s as before")


def batsim_master_warnings(path: str, raw_hosts: list[RawHost], master_host: str | None) -> list[str]:
    """Platforms SimGrid loads and joulesim runs but Batsim 4.2.1 aborts on, for its master.
    Batsim gives role "master" to the host named by --master-host (default "master_host"),
    adding it to a role the platform gives (machines.cpp: "master,master" is no role), and
    aborts if a host with role=master is another one ("There are two master hosts")."""
    named = master_host or DEFAULT_MASTER_NAME
    warnings = []
    host = next((raw for raw in raw_hosts if raw.name == named), None)
    if host is not None and host.properties.get("role") == "master":
        warnings.append(f"joulesim: warning: {path}: {host.where} has role=master and is named {named!r}: Batsim 4.2.1 "
                        f"makes the host of that name its master and adds the role again (role 'master,master'), and "
                        f"aborts. Portable: remove its role property (the name alone makes it the master in both).")
    others = [raw for raw in raw_hosts if raw.properties.get("role") == "master" and raw.name != named]
    if host is not None and others and master_host is None:
        warnings.append(f"joulesim: warning: {path}: {others[0].where} has role=master, and a host is named {named!r}: "
                        f"joulesim takes {others[0].name!r} as the master, but Batsim 4.2.1 makes {named!r} a master too "
                        f"and aborts (\"There are two master hosts\"). Portable: rename host {named!r}, or remove the role "
                        f"property and let {named!r} be the master.")
    return warnings


def load_xml_platform(path: str, master_host: str | None = None, added_roles: Mapping[str, str] | None = None,
                      energy: bool = False) -> Platform:
    """Read a SimGrid XML platform file into a :class:`Platform` (InputError on bad input).
    With `energy` (-E), a power property that cannot be read is refused as soon as the hosts are
    (SimGrid's energy plugin reads them as it creates the hosts, before anything routes)."""
    path = str(path)
    root = parse_xml(path, read_platform_file(path))
    if root.tag != "platform":
        raise InputError(path, f"root <{root.tag[:60]}>", "the root element must be <platform>", 'wrap the platform in <platform version="4.1"> ... </platform>')
    _check_version(path, root)
    _check_tags(path, root)
    check_config_keys(path, root)
    _check_coordinates(path, root)
    reader = _HostReader(path)
    reader.walk(root, {}, "", 0)
    raw = reader.hosts
    if not raw:
        raise InputError(path, "<platform>", "declares no host", "add <host> or <cluster> elements inside a <zone>")
    platform = build_platform(path, raw, master_host, added_roles)
    if energy:
        check_energy_properties(platform)
    platform.warnings += batsim_master_warnings(path, raw, master_host)
    _refuse_master_in_empty_zone(path, root, platform.master.name)
    _check_storages(path, root, {h.name for h in raw})
    names = [h.name for h in platform.compute_hosts + platform.storage_hosts]
    platform.network = read_xml_network(path, root, names)
    platform.zone_routes = read_xml_zone_routes(path, root, names)
    # Last, so that a file with several mistakes is told the one about its content first.
    check_structure(path, root)
    return platform
