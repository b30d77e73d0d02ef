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
        {"id": "c0", "prefix": "node-", "radical": "0-31", "suffix": "", "speed": "1Gf",
         "properties": {}, "zone_properties": {}, "bw": "10Gbps", "lat": "5us"}
      ],
      "network": {}
    }

Host fields:

- ``name`` (required) and ``speed`` (required except for ``master``): one speed per pstate, as a
  list or a single value; each is a number in flop/s or a string with a SimGrid unit ("100Mf").
  A string may also hold the whole comma-separated list ("1Gf, 500Mf").
- ``pstate``: initial pstate (default 0). ``core``: number of cores (accepted, unused).
- ``role``: ``compute_node`` (default), ``storage`` or ``master``.
- ``properties``, ``zone_properties``: string-to-string maps forwarded to deciders as Batsim does.
- ``wattage_per_state``: ``[[idle, max], ...]`` (or ``[idle, epsilon, max]``) one per pstate, or the
  Batsim string ``"idle:max, ..."``. ``wattage_off``: watts when off (number or string).
- ``sleep_pstates``: list of ``{"sleep", "switch_off", "switch_on"}`` objects (or
  ``[sleep, off, on]`` triples), or the Batsim string ``"1:2:3"``.

``role``, ``wattage_per_state``, ``wattage_off`` and ``sleep_pstates`` are also written into the
host's ``properties`` as Batsim-style strings (that is what Batsim forwards to deciders); giving
one both as a field and inside ``properties`` is an error.

``master`` is a host (``speed`` defaults to "1Gf") that gets ``role`` "master". Instead, one entry
of ``hosts`` may have ``"role": "master"``, or a host may be named "master_host"; the
``master_host`` argument (``--master-host``) overrides, as for XML.

Cluster fields: ``id`` (required), ``prefix``, ``suffix`` (default ""), ``radical`` (required:
"0-31,40" or a list of integers) and the host fields above except ``name``; they apply to every
generated host ``prefix + N + suffix``. Network fields (``bw``, ``lat``, ``bb_bw``, ``bb_lat``,
``sharing_policy``, ``bb_sharing_policy``, ``topology``, ``topo_parameters``, ``loopback_bw``,
``loopback_lat``, ``limiter_link``, ``router_id``) and the top-level ``network`` are accepted and
ignored for now. Unknown keys are errors (they usually are typos).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import fastjsonschema

from joulesim.simulator.input_error import InputError
from joulesim.simulator.platform_checks import ROLES, RawHost, build_platform, parse_radical, parse_speeds
from joulesim.simulator.platform_model import Platform

_STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}, "description": "an object whose values are strings"}
_NUM_OR_STR = {"anyOf": [{"type": "number"}, {"type": "string"}]}
_SPEED = {
    "anyOf": [_NUM_OR_STR, {"type": "array", "minItems": 1, "items": _NUM_OR_STR}],
    "description": 'one speed per pstate: a list of numbers (flop/s) or strings with a SimGrid unit, e.g. ["1Gf", "500Mf"]',
}
_NONNEG_INT = {"type": "integer", "minimum": 0, "description": "a non-negative integer"}
_HOST_FIELDS = {
    "speed": _SPEED,
    "pstate": {**_NONNEG_INT, "description": "the initial pstate, an index of the speed list"},
    "core": {"type": "integer", "minimum": 1, "description": "a number of cores >= 1"},
    "role": {"enum": list(ROLES), "description": "one of " + ", ".join(ROLES)},
    "properties": _STR_MAP,
    "zone_properties": _STR_MAP,
    "wattage_per_state": {
        "anyOf": [
            {"type": "string"},
            {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "number"}}},
        ],
        "description": 'a list of [idle, max] watts per pstate, e.g. [[95, 190.74], [9.75, 9.75]], or "95:190.74, 9.75:9.75"',
    },
    "wattage_off": {**_NUM_OR_STR, "description": "watts of a switched-off host, e.g. 9.75"},
    "sleep_pstates": {
        "anyOf": [
            {"type": "string"},
            {
                "type": "array",
                "items": {
                    "anyOf": [
                        {
                            "type": "object",
                            "required": ["sleep", "switch_off", "switch_on"],
                            "additionalProperties": False,
                            "properties": {"sleep": _NONNEG_INT, "switch_off": _NONNEG_INT, "switch_on": _NONNEG_INT},
                        },
                        {"type": "array", "minItems": 3, "maxItems": 3, "items": _NONNEG_INT},
                    ]
                },
            },
        ],
        "description": 'a list of {"sleep": 1, "switch_off": 2, "switch_on": 3} objects, or "1:2:3"',
    },
}
_NETWORK_KEYS = (
    "bw", "lat", "bb_bw", "bb_lat", "sharing_policy", "bb_sharing_policy", "topology",
    "topo_parameters", "loopback_bw", "loopback_lat", "limiter_link", "router_id",
)
_HOST = {
    "type": "object",
    "required": ["name", "speed"],
    "additionalProperties": False,
    "properties": {"name": {"type": "string", "minLength": 1, "description": "a non-empty host name"}, **_HOST_FIELDS},
}
_MASTER = {**_HOST, "required": ["name"]}
_CLUSTER = {
    "type": "object",
    "required": ["id", "radical", "speed"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "description": "the cluster's name"},
        "prefix": {"type": "string"},
        "suffix": {"type": "string"},
        "radical": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": _NONNEG_INT}],
            "description": 'host numbers: "0-31,40" or a list of integers',
        },
        **_HOST_FIELDS,
        **{k: {} for k in _NETWORK_KEYS},
    },
}
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "$schema": {"type": "string"},
        "version": {"type": "integer"},
        "description": {"type": "string"},
        "master": _MASTER,
        "hosts": {"type": "array", "items": _HOST},
        "clusters": {"type": "array", "items": _CLUSTER},
        "network": {},
    },
}
_FIX_DOC = "see the JSON platform format in joulesim.simulator.platform_json's documentation"


@lru_cache(maxsize=1)
def _validator():
    return fastjsonschema.compile(SCHEMA)


def _json_path(name: str) -> str:
    return "$" + name[len("data"):] if name.startswith("data") else name


def _schema_error(path: str, e: fastjsonschema.JsonSchemaValueException) -> InputError:
    where = _json_path(e.name or "data")
    definition = e.definition if isinstance(e.definition, dict) else {}
    if e.rule == "additionalProperties" and isinstance(e.value, dict):
        allowed = sorted(definition.get("properties", {}))
        extra = sorted(set(e.value) - set(allowed))
        return InputError(path, where, f"unknown field(s) {', '.join(map(repr, extra))}", "allowed fields: " + ", ".join(allowed))
    if e.rule == "required":
        missing = [k for k in definition.get("required", []) if not isinstance(e.value, dict) or k not in e.value]
        return InputError(path, where, f"missing field(s) {', '.join(map(repr, missing))}", "add them; " + _FIX_DOC)
    if e.rule in ("anyOf", "oneOf"):
        problem = "has the wrong type or shape"
    else:
        problem = e.message.replace(e.name, "value", 1) if e.name else e.message
    fix = f"expected {definition['description']}" if "description" in definition else _FIX_DOC
    return InputError(path, where, f"{problem} (got {json.dumps(e.value)[:80]})", fix)


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
                f"{t['sleep']}:{t['switch_off']}:{t['switch_on']}" if isinstance(t, dict) else ":".join(map(str, t)) for t in s
            )
        fields["sleep_pstates"] = s
    for key, value in fields.items():
        if key in props:
            raise InputError(path, f"{where}.{key}", f"{key!r} is given both as a field and in 'properties'", "give it only once")
        props[key] = value
    return props



def load_json_platform(path: str, master_host: str | None = None) -> Platform:
    """Read a native JSON platform file into a :class:`Platform` (InputError on bad input)."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno}, column {e.colno}", f"malformed JSON: {e.msg}", "fix the JSON syntax (missing comma or quote, trailing comma...)") from None
    except UnicodeDecodeError as e:
        raise InputError(path, "file", f"not UTF-8 text: {e.reason}", "save the file as UTF-8 JSON") from None
    except OSError as e:
        raise InputError(path, "file", f"cannot read: {e.strerror or e}", "check the path and the file's permissions") from None
    try:
        _validator()(data)
    except fastjsonschema.JsonSchemaValueException as e:
        raise _schema_error(path, e) from None

    raw: list[RawHost] = []
    if "master" in data:
        m = data["master"]
        where = f"$.master ('{m['name']}')"
        props = _batsim_props(path, where, m)
        if props.setdefault("role", "master") != "master":
            raise InputError(path, f"{where}.role", f"the master host has role {props['role']!r}", 'drop the role or use "master"')
        speeds = parse_speeds(path, f"{where}.speed", m.get("speed", "1Gf"))
        raw.append(RawHost(m["name"], where, speeds, m.get("pstate", 0), props, dict(m.get("zone_properties", {}))))
    for i, h in enumerate(data.get("hosts", [])):
        where = f"$.hosts[{i}] ('{h['name']}')"
        speeds = parse_speeds(path, f"{where}.speed", h["speed"])
        raw.append(RawHost(h["name"], where, speeds, h.get("pstate", 0), _batsim_props(path, where, h), dict(h.get("zone_properties", {}))))
    for i, c in enumerate(data.get("clusters", [])):
        cwhere = f"$.clusters[{i}] ('{c['id']}')"
        speeds = parse_speeds(path, f"{cwhere}.speed", c["speed"])
        props = _batsim_props(path, cwhere, c)
        for n in parse_radical(path, f"{cwhere}.radical", c["radical"]):
            name = f"{c.get('prefix', '')}{n}{c.get('suffix', '')}"
            raw.append(RawHost(name, f"{cwhere} host '{name}'", list(speeds), c.get("pstate", 0), dict(props), dict(c.get("zone_properties", {}))))
    if not raw:
        raise InputError(path, "$", "declares no host", 'add "hosts" or "clusters"')
    return build_platform(path, raw, master_host)
