"""The JSON Schema of joulesim's native JSON platform format (documented in platform_json.py),
its compiled validator, and its errors turned into InputErrors that name the field and the fix.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import fastjsonschema

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_checks import ROLES

_STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}, "description": "an object whose values are strings"}


# Type lists rather than "anyOf": fastjsonschema tries anyOf branches by raising exceptions,
# which made validating 5,000 hosts take a tenth of a second.
_NUM_OR_STR = {"type": ["number", "string"]}


_SPEED = {
    "type": ["number", "string", "array"],
    "minItems": 1,  # for an array
    "items": {**_NUM_OR_STR, "description": 'a speed: flop/s, or a string with a SimGrid unit, e.g. "1Gf"'},
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
        "type": ["string", "array"],
        "items": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "number"},
                  "description": "an [idle, max] (or [idle, epsilon, max]) list of watts, e.g. [95, 190.74]"},
        "description": 'a list of [idle, max] watts per pstate, e.g. [[95, 190.74], [9.75, 9.75]], or "95:190.74, 9.75:9.75"',
    },
    "wattage_off": {**_NUM_OR_STR, "description": "watts of a switched-off host, e.g. 9.75"},
    "sleep_pstates": {
        "type": ["string", "array"],
        "items": {
            "anyOf": [
                {
                    "type": "object",
                    "required": ["sleep", "switch_off", "switch_on"],
                    "additionalProperties": False,
                    "properties": {"sleep": _NONNEG_INT, "switch_off": _NONNEG_INT, "switch_on": _NONNEG_INT},
                },
                {"type": "array", "minItems": 3, "maxItems": 3, "items": _NONNEG_INT},
            ],
            "description": 'a {"sleep": 1, "switch_off": 2, "switch_on": 3} object or a [1, 2, 3] triple',
        },
        "description": 'a list of {"sleep": 1, "switch_off": 2, "switch_on": 3} objects, or "1:2:3"',
    },
}


_BANDWIDTH = {**_NUM_OR_STR, "description": 'a bandwidth: bytes/s, or a string with a SimGrid unit, e.g. "1.25GBps" or "10Gbps" (bits)'}


_LATENCY = {**_NUM_OR_STR, "description": 'a latency: seconds, or a string with a SimGrid unit, e.g. "24ns" or "5us"'}


_NETWORK_FIELDS = {
    "bw": _BANDWIDTH,
    "lat": _LATENCY,
    "bb_bw": _BANDWIDTH,
    "bb_lat": _LATENCY,
    "sharing_policy": {"enum": ["SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"], "description": "SHARED, SPLITDUPLEX (the default) or FATPIPE"},
    "bb_sharing_policy": {"enum": ["SHARED", "FATPIPE"], "description": "SHARED (the default) or FATPIPE"},
    "limiter_link": _BANDWIDTH,
    "router_id": {"type": "string", "minLength": 1, "description": "a non-empty router name"},
    # Accepted by the schema so that the loader can say why they are refused.
    "topology": {"type": "string"},
    "topo_parameters": {"type": "string"},
    "loopback_bw": _BANDWIDTH,
    "loopback_lat": _LATENCY,
}


_BACKBONE = {
    "type": "object",
    "required": ["bw"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "the backbone link's name (default \"backbone\")"},
        "bw": _BANDWIDTH,
        "lat": _LATENCY,
        "sharing_policy": {"enum": ["SHARED", "FATPIPE"], "description": "SHARED (the default) or FATPIPE"},
    },
}


_HOST = {
    "type": "object",
    "required": ["name", "speed"],
    "additionalProperties": False,
    "properties": {"name": {"type": "string", "minLength": 1, "description": "a non-empty host name"}, **_HOST_FIELDS},
}


# The master's link ("link", as "backbone": its id defaults to "master_link") joins it to every
# other zone: Batsim's actors talk to the master from every host, and SimGrid has no route of
# no link. Required once the platform has a network.
_HOST["properties"]["link"] = _BACKBONE  # the master's only (in "hosts" when it is declared there)
_MASTER = {**_HOST, "required": ["name"]}


_CLUSTER = {
    "type": "object",
    "required": ["id", "speed"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "the cluster's name, non-empty"},
        "prefix": {"type": "string"},
        "suffix": {"type": "string"},
        "radical": {
            "type": ["string", "array"],
            "items": _NONNEG_INT,
            "description": 'host numbers: "0-31,40" or a list of integers',
        },
        "count": {"type": "integer", "minimum": 1, "description": "a number of hosts >= 1 (numbered 0..count-1)"},
        **_HOST_FIELDS,
        **_NETWORK_FIELDS,
    },
}


SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "$schema": {"type": "string"},
        "version": {"type": "integer", "enum": [1], "description": "1, the only version of this format"},
        "description": {"type": "string"},
        "master": _MASTER,
        "hosts": {"type": "array", "items": _HOST},
        "clusters": {"type": "array", "items": _CLUSTER},
        "backbone": _BACKBONE,
        "network": {},  # read and ignored (files written for earlier versions have it)
    },
}


_FIX_DOC = "see the JSON platform format in joulesim.simulator.platform.platform_json's documentation"


@lru_cache(maxsize=1)
def validator():
    return fastjsonschema.compile(SCHEMA)


def _json_path(name: str) -> str:
    return "$" + name[len("data"):] if name.startswith("data") else name


def schema_error(path: str, e: fastjsonschema.JsonSchemaValueException) -> InputError:
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
    return InputError(path, where, f"{problem} (got {_preview(e.value)})", fix)


def _preview(value: Any, limit: int = 80) -> str:
    """The start of `value` in JSON notation (it may be megabytes long, or nested deeply)."""
    try:
        text = json.dumps(value)
    except (RecursionError, ValueError):
        return "a value nested too deeply to show"
    return text if len(text) <= limit else text[:limit] + "..."
