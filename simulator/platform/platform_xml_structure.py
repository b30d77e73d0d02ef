"""Where each element of a SimGrid XML platform may stand, as SimGrid 3.32's DTD says
(src/surf/xml/simgrid.dtd, enforced by its generated parser at load: "Starting tag <link> is
not allowed here").

A zone lists its <prop>s first, then either zones, clusters and links followed by its
zoneRoutes (an internal zone), or hosts, routers and links followed by its routes (a leaf
zone), never both; <platform> holds its <config>s, then its zones, then its actors; a host holds
<prop>, <disk> and <mount>; a link or a cluster only <prop>s; a route only <link_ctn>s; routers,
backbones, link_ctn and the like nothing; each element has its own attributes. joulesim
refuses what the DTD refuses, naming the element (and the one before it), where the old reader
took any order and ignored unknown attributes.
"""

from __future__ import annotations

import difflib
import re
import xml.etree.ElementTree as ET

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_checks import shown

_INTERNAL = "AS|zone|include|link|backbone|cluster|peer|trace|trace_connect"
_ZONE_ROUTES = "zoneRoute|ASroute|trace|trace_connect|bypassASroute|bypassZoneRoute"
_LEAF = "include|storage_type|storage|host|cabinet|router|link|backbone|trace|trace_connect|host_link"
_ROUTES = "route|trace|trace_connect|bypassRoute"


def _sequence(*groups: str) -> re.Pattern[str]:
    """Child tags (each followed by a space) matching the starred groups in order."""
    return re.compile("".join(f"(?:(?:{group}) )*" for group in groups))


def _either(*models: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile("(?:prop )*(?:" + "|".join(f"(?:{model.pattern})" for model in models) + ")")


# Every such model is a series of starred groups, so the sequences it accepts are closed under
# prefixes: the first child whose prefix no longer matches is the one out of place.
_MODELS: dict[str, re.Pattern[str]] = {
    "zone": _either(_sequence(_INTERNAL, _ZONE_ROUTES, "trace|trace_connect"), _sequence(_LEAF, _ROUTES)),
    "AS": _either(_sequence(_INTERNAL + "|cabinet", _ZONE_ROUTES, "trace|trace_connect"), _sequence(_LEAF, _ROUTES)),
    "platform": _sequence("config|random", "include|cluster|cabinet|peer|AS|zone|trace|trace_connect", "process|actor"),
    "include": _sequence("include|cluster|cabinet|peer|AS|zone|trace|trace_connect"),
    "host": _sequence("disk|prop|mount"),
    "storage_type": _sequence("model_prop|prop"),
    "process": _sequence("argument|prop"),
    "actor": _sequence("argument|prop"),
    **{tag: _sequence("prop") for tag in ("cluster", "link", "storage", "disk", "config")},
    **{tag: _sequence("link_ctn") for tag in ("route", "ASroute", "zoneRoute", "bypassRoute", "bypassASroute", "bypassZoneRoute")},
}
_EMPTY = frozenset(("random", "trace_connect", "mount", "host_link", "cabinet", "peer", "router", "backbone", "link_ctn",
                    "argument", "prop", "model_prop"))

_ZONE_FIX = ("in SimGrid's order: a zone's <prop>s first; then either its zones, clusters and links, then its "
             "<zoneRoute>s; or its hosts, routers and links, then its <route>s (a zone holds hosts or zones, not both)")
_FIXES = {
    "platform": "put <config> first, then the zones, then any <actor>",
    "zone": _ZONE_FIX,
    "AS": _ZONE_FIX,
    "host": "a <host> holds only <prop>, <disk> and <mount> elements",
    **{tag: "a route holds only <link_ctn> elements"
       for tag in ("route", "ASroute", "zoneRoute", "bypassRoute", "bypassASroute", "bypassZoneRoute")},
}


# The attributes each element may have in SimGrid 3.32's DTD (others: "Bad attribute").
_ROUTE_ATTRIBUTES = "src dst gw_src gw_dst symmetrical"
_ATTRIBUTES = {tag: frozenset(names.split()) for tag, names in {
    "platform": "version", "zone": "id routing", "AS": "id routing", "include": "file", "config": "id",
    "random": "id min max mean std_deviation generator seed radical", "trace": "id file periodicity",
    "trace_connect": "kind trace element", "prop": "id value key", "model_prop": "id key value",
    "host": "id speed pstate core availability_file state_file speed_file coordinates",
    "disk": "id read_bw write_bw", "host_link": "id up down",
    "cluster": "id prefix suffix radical speed core bw lat sharing_policy topology topo_parameters bb_bw bb_lat "
               "bb_sharing_policy limiter_link loopback_bw loopback_lat router_id",
    "cabinet": "id prefix suffix radical speed bw lat",
    "peer": "id speed bw_in bw_out lat coordinates availability_file state_file speed_file",
    "router": "id coordinates", "backbone": "id bandwidth latency",
    "link": "id bandwidth latency sharing_policy bandwidth_file latency_file state_file",
    "route": "src dst symmetrical", "ASroute": _ROUTE_ATTRIBUTES, "zoneRoute": _ROUTE_ATTRIBUTES,
    "bypassRoute": "src dst", "bypassASroute": "src dst gw_src gw_dst", "bypassZoneRoute": "src dst gw_src gw_dst",
    "link_ctn": "id direction", "storage_type": "id model size content", "storage": "id typeId content attach",
    "mount": "storageId name", "process": "host function start_time kill_time on_failure",
    "actor": "host function start_time kill_time on_failure", "argument": "value",
}.items()}


def check_structure(path: str, root: ET.Element) -> None:
    """InputError at the first element that SimGrid's DTD does not allow where it stands, or
    with an attribute it does not know."""
    for elem in root.iter():
        tag = elem.tag
        if not isinstance(tag, str):
            continue
        allowed = _ATTRIBUTES.get(tag)
        if allowed is not None:
            for attribute in elem.attrib:
                if attribute not in allowed and not attribute.startswith("{"):
                    close = difflib.get_close_matches(attribute, allowed, n=1)
                    hint = f"did you mean {close[0]!r}? " if close else ""
                    raise InputError(path, f"{_named(elem)}, {attribute}", f"<{tag}> has no attribute {shown(attribute)} in "
                                     "SimGrid's platforms (SimGrid 3.32 refuses the file: \"Bad attribute\")",
                                     f"{hint}{tag}'s attributes are " + ", ".join(sorted(allowed)))
        children = [child for child in elem if isinstance(child.tag, str)]
        if not children:
            continue
        if tag in _EMPTY:
            _refuse(path, elem, children[0], None, f"<{tag}> holds nothing in SimGrid platforms", f"close it: <{tag} .../>")
        model = _MODELS.get(tag)
        if model is None:
            continue
        text = ""
        previous = None
        for child in children:
            text += f"{child.tag} "
            if not model.fullmatch(text):
                fix = _FIXES.get(tag, f"a <{tag}> holds only <prop> elements")
                _refuse(path, elem, child, previous, "is not allowed here (SimGrid 3.32 refuses the file: "
                        f"\"Starting tag <{child.tag}> is not allowed here\")", fix)
            previous = child


def _named(elem: ET.Element) -> str:
    for attribute in ("id", "src", "file"):
        if attribute in elem.attrib:
            text = f"<{elem.tag} {attribute}={shown(elem.get(attribute))}"
            if attribute == "src" and "dst" in elem.attrib:
                text += f" dst={shown(elem.get('dst'))}"
            return text + ">"
    return f"<{elem.tag}>"


def _refuse(path: str, parent: ET.Element, child: ET.Element, previous: ET.Element | None, problem: str, fix: str) -> None:
    where = f"{_named(child)} in {_named(parent)}"
    if previous is not None:
        where += f", after {_named(previous)}"
    raise InputError(path, where, problem, fix)
