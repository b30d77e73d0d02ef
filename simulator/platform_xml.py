"""SimGrid XML platform files, the subset Batsim platforms use.

Read: ``<platform version="4.1">`` (legacy ``<AS>`` zones too), nested ``<zone>`` with ``<prop>``
children (given to every host inside as ``zone_properties``, the innermost zone winning),
``<host id speed pstate core>`` with ``<prop>`` children, and ``<cluster>``/``<cabinet>`` which
expand to hosts ``prefix + N + suffix`` for N in ``radical`` ("0-31,40"); a cluster's ``<prop>``
children become properties of each of its hosts and, the cluster being a zone, their innermost
``zone_properties`` (as SimGrid does); its hosts get the cluster's id as ``Host.zone``.
Links, routes, routers and backbones make the platform's network (:mod:`platform_xml_network`,
read after the hosts); traces, storage and disks are ignored. Semantic checks are shared with
the JSON loader (:mod:`platform_checks`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from joulesim.simulator.input_error import InputError
from joulesim.simulator.platform_checks import RawHost, build_platform, parse_int, parse_radical, parse_speeds
from joulesim.simulator.platform_model import Platform
from joulesim.simulator.platform_xml_network import read_xml_network

_ZONE_TAGS = ("zone", "AS")


def _props(path: str, elem: ET.Element, where: str) -> dict[str, str]:
    props: dict[str, str] = {}
    for p in elem.findall("prop"):
        pid, value = p.get("id"), p.get("value")
        if pid is None or value is None:
            raise InputError(path, f"{where}, <prop>", "a <prop> needs both 'id' and 'value' attributes", 'write <prop id="name" value="..."/>')
        props[pid] = value
    return props


def _required(path: str, elem: ET.Element, attr: str, where: str) -> str:
    value = elem.get(attr)
    if value is None or not value.strip():
        raise InputError(path, where, f"<{elem.tag}> has no '{attr}' attribute", f"add {attr}=\"...\" to the <{elem.tag}> element")
    return value



def _pstate_and_core(path: str, elem: ET.Element, where: str) -> int:
    pstate = parse_int(path, f"{where}, pstate", elem.get("pstate", "0"), "pstate")
    core = elem.get("core")
    if core is not None and parse_int(path, f"{where}, core", core, "core") < 1:
        raise InputError(path, f"{where}, core", f"core {core!r} must be >= 1", "give the number of cores, e.g. core=\"1\"")
    return pstate


def _walk(path: str, elem: ET.Element, zone_props: dict[str, str], cluster_id: str, out: list[RawHost]) -> None:
    for child in elem:
        tag = child.tag
        if tag in _ZONE_TAGS:
            zid = child.get("id", "?")
            inner = dict(zone_props)
            inner.update(_props(path, child, f"zone '{zid}'"))
            # Hosts of a hand-built cluster (routing="Cluster") belong to it as to a <cluster>.
            _walk(path, child, inner, zid if child.get("routing", "").lower() == "cluster" else "", out)
        elif tag == "host":
            name = _required(path, child, "id", "<host>")
            where = f"host '{name}'"
            speeds = parse_speeds(path, f"{where}, speed", _required(path, child, "speed", where))
            out.append(RawHost(name, where, speeds, _pstate_and_core(path, child, where), _props(path, child, where), dict(zone_props), cluster_id))
        elif tag in ("cluster", "cabinet"):
            cid = _required(path, child, "id", f"<{tag}>")
            cwhere = f"{tag} '{cid}'"
            speeds = parse_speeds(path, f"{cwhere}, speed", _required(path, child, "speed", cwhere))
            pstate = _pstate_and_core(path, child, cwhere)
            props = _props(path, child, cwhere)
            # A cluster is a zone of its own: SimGrid gives its <prop>s to its hosts and to the zone.
            host_zone, host_zone_props = (cid, {**zone_props, **props}) if tag == "cluster" else (cluster_id, zone_props)
            prefix, suffix = child.get("prefix", ""), child.get("suffix", "")
            for n in parse_radical(path, f"{cwhere}, radical", _required(path, child, "radical", cwhere)):
                name = f"{prefix}{n}{suffix}"
                out.append(RawHost(name, f"{cwhere} host '{name}'", list(speeds), pstate, dict(props), dict(host_zone_props), host_zone))
        # Network elements are read by read_xml_network once the hosts are known; the rest
        # (trace, storage, disk, config, actor...) is ignored.


def load_xml_platform(path: str, master_host: str | None = None) -> Platform:
    """Read a SimGrid XML platform file into a :class:`Platform` (InputError on bad input)."""
    path = str(path)
    try:
        tree = ET.parse(path)
    except ET.ParseError as e:
        line, col = e.position
        raise InputError(path, f"line {line}, column {col + 1}", "malformed XML: " + re.sub(r": line \d+, column \d+$", "", str(e)), "fix the XML syntax (unclosed tag, bad quote, stray '&'...)") from None
    except OSError as e:
        raise InputError(path, "file", f"cannot read: {e.strerror or e}", "check the path and the file's permissions") from None
    root = tree.getroot()
    if root.tag != "platform":
        raise InputError(path, f"root <{root.tag}>", "the root element must be <platform>", 'wrap the platform in <platform version="4.1"> ... </platform>')
    version = root.get("version")
    if version is not None:
        try:
            v = float(version)
        except ValueError:
            raise InputError(path, "<platform> version", f"version {version!r} is not a number", 'use version="4.1"') from None
        if v < 4:
            raise InputError(path, "<platform> version", f"version {version} is SimGrid's old format (power=, <AS>)", "convert it with SimGrid's simgrid_update_xml tool, or use version=\"4.1\"")
    raw: list[RawHost] = []
    _walk(path, root, {}, "", raw)
    if not raw:
        raise InputError(path, "<platform>", "declares no host", "add <host> or <cluster> elements inside a <zone>")
    platform = build_platform(path, raw, master_host)
    platform.network = read_xml_network(path, root, [h.name for h in platform.compute_hosts])
    return platform
