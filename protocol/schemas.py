"""JSON Schemas (draft-07, as Python dicts) of the Batsim 4 wire protocol.

`SIMULATOR_EVENT_SCHEMAS` describes the `data` of every event the simulator sends,
`DECISION_SCHEMAS` the `data` of every decision a decider sends (both keyed by event
`type`). `ENVELOPE_SCHEMA` describes the whole message. `validation.py` compiles each
of these once with fastjsonschema.

Conventions:
- Every JSON number is "number" / "integer" (fastjsonschema rejects booleans for both).
- `description` says what is expected in the form used in error messages ("must be ...");
  the non-standard keyword `x-fix` says how to repair a wrong value. Both are annotations:
  validators ignore them, `validation.py` reads them from the failing sub-schema.
- Unknown extra keys in `data` are accepted (Batsim ignores them), so existing deciders
  that send extra fields keep working.
- Interval-set fields are plain strings here; `validation.py` parses them with
  `parse_interval_set` (a regular expression cannot check that a <= b in "a-b").
  `INTERVAL_SET_FIELDS` lists them per event type.
"""

from __future__ import annotations

from typing import Any

# ---------------------------------------------------------------------------- atoms
JOB_STATES = [
    "NOT_SUBMITTED",
    "SUBMITTED",
    "RUNNING",
    "COMPLETED_SUCCESSFULLY",
    "COMPLETED_FAILED",
    "COMPLETED_WALLTIME_REACHED",
    "COMPLETED_KILLED",
    "REJECTED",
]
COMPLETED_JOB_STATES = [
    "COMPLETED_SUCCESSFULLY",
    "COMPLETED_FAILED",
    "COMPLETED_WALLTIME_REACHED",
    "COMPLETED_KILLED",
]
MACHINE_STATES = ["sleeping", "idle", "computing", "switching_on", "switching_off", "unavailable"]
SIMULATOR_NOTIFY_TYPES = [
    "no_more_static_job_to_submit",
    "no_more_external_event_to_occur",
    "event_machine_unavailable",
    "event_machine_available",
]
# (force_simulation_stop: a joulesim extension, Batsim 5's ForceSimulationStopEvent, which the
# batprotocol bridge sends; Batsim 4 has no such decision)
DECIDER_NOTIFY_TYPES = ["registration_finished", "continue_registration", "force_simulation_stop"]

NUMBER: dict[str, Any] = {"type": "number", "description": "a number (int or float, not a boolean)"}
NON_NEGATIVE_NUMBER: dict[str, Any] = {
    "type": "number",
    "minimum": 0,
    "description": "a non-negative number (int or float, not a boolean)",
}
INTEGER: dict[str, Any] = {"type": "integer", "description": "an integer (not a boolean)"}
NON_NEGATIVE_INTEGER: dict[str, Any] = {
    "type": "integer",
    "minimum": 0,
    "description": "a non-negative integer (not a boolean)",
}
BOOLEAN: dict[str, Any] = {"type": "boolean", "description": "a boolean (true or false)"}
STRING: dict[str, Any] = {"type": "string", "description": "a string"}
OBJECT: dict[str, Any] = {"type": "object", "description": "a JSON object"}
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "description": "a JSON object (usually {})"}
DIGITS: dict[str, Any] = {
    "type": "string",
    "pattern": "^[0-9]{1,18}$",  # ASCII only; 18 digits is far beyond any platform's ids
    "description": 'a string of at most 18 ASCII digits like "1"',
}
INT_OR_DIGITS: dict[str, Any] = {
    "anyOf": [NON_NEGATIVE_INTEGER, DIGITS],
    "description": 'a non-negative integer or a string of digits (like 2 or "2")',
    "x-fix": "send an integer or its decimal digits as a string",
}

JOB_ID: dict[str, Any] = {
    "type": "string",
    "pattern": "^[^!]+!.",
    "description": 'a job id string "workload!id" like "w0!1"',
    "x-fix": 'prefix the job\'s id with its workload name and "!" (e.g. "w0!1"; dynamic jobs often use "dyn!1")',
}
INTERVAL_SET: dict[str, Any] = {
    "type": "string",
    "description": 'an interval set string like "0-3 5"',
    "x-fix": 'list closed integer intervals a-b (a <= b) or single ids separated by single spaces, e.g. "0-3 5 7"',
}

# -------------------------------------------------------------- simulator events
RESOURCE: dict[str, Any] = {
    "type": "object",
    "required": ["id", "name", "state", "properties", "zone_properties"],
    "properties": {
        "id": NON_NEGATIVE_INTEGER,
        "name": STRING,
        "state": {"enum": MACHINE_STATES, "description": "a machine state"},
        "properties": OBJECT,
        "zone_properties": OBJECT,
    },
    "description": "a resource object {id, name, state, properties, zone_properties}",
}

CONFIG: dict[str, Any] = {
    "type": "object",
    "required": [
        "redis-enabled",
        "redis-hostname",
        "redis-port",
        "redis-prefix",
        "profiles-forwarded-on-submission",
        "dynamic-jobs-enabled",
        "dynamic-jobs-acknowledged",
        "profile-reuse-enabled",
        "forward-unknown-events",
    ],
    "properties": {
        "redis-enabled": BOOLEAN,
        "redis-hostname": STRING,
        "redis-port": INTEGER,
        "redis-prefix": STRING,
        "profiles-forwarded-on-submission": BOOLEAN,
        "dynamic-jobs-enabled": BOOLEAN,
        "dynamic-jobs-acknowledged": BOOLEAN,
        "profile-reuse-enabled": BOOLEAN,
        "forward-unknown-events": BOOLEAN,
        # "sched-config": any JSON value (what the user passed to the decider)
    },
    "description": "the simulation's configuration object",
}

SUBMITTED_JOB: dict[str, Any] = {
    "type": "object",
    "required": ["id", "subtime", "res", "profile"],
    "properties": {
        "id": JOB_ID,
        "subtime": NON_NEGATIVE_NUMBER,
        "res": NON_NEGATIVE_INTEGER,
        "profile": STRING,
        "walltime": NUMBER,
    },
    "description": "the job's JSON object {id, subtime, res, profile, walltime?, ...}",
}

JOB_PROGRESS_ENTRY: dict[str, Any] = {
    "type": "object",
    "required": ["profile_name"],
    "properties": {
        "profile_name": STRING,
        "progress": {"type": "number", "minimum": 0, "maximum": 1, "description": "a number in [0, 1]"},
        "current_task_index": NON_NEGATIVE_INTEGER,
        "current_task": OBJECT,
    },
    "description": "a progress object {profile_name, progress} or {profile_name, current_task_index, current_task}",
}

# joulesim extension (IRMaSim's node model): resources are cores, and SIMULATION_BEGINS carries
# the platform's hierarchy so a decider can place tasks core by core. Batsim deciders ignore
# the key; it is absent on Batsim platforms.
_POSITIVE_NUMBER = {"type": "number", "exclusiveMinimum": 0, "description": "a number > 0"}
_ANY_NUMBER = {"type": "number", "description": "a number"}
HIERARCHY_PROCESSOR: dict[str, Any] = {
    "type": "object",
    "required": ["name", "cores", "clock_rate", "dpflops_per_cycle", "static_power", "dynamic_power", "min_power",
                 "b", "c", "da", "db", "dc", "dd"],
    "properties": {
        "name": STRING,
        "type": STRING,
        "cores": {"type": "array", "items": NON_NEGATIVE_INTEGER, "minItems": 1,
                  "description": "the resource ids of its cores, in core order"},
        "clock_rate": _POSITIVE_NUMBER,  # GHz
        "dpflops_per_cycle": _POSITIVE_NUMBER,
        "static_power": {"type": "number", "minimum": 0, "description": "watts for the processor while a core is busy"},
        "dynamic_power": {"type": "number", "minimum": 0, "description": "watts per busy core"},
        "min_power": {"type": "number", "minimum": 0, "maximum": 1, "description": "fraction of static power when idle"},
        **{key: _ANY_NUMBER for key in ("b", "c", "da", "db", "dc", "dd")},  # modelV1 contention parameters
    },
    "description": "a processor {name, cores, clock_rate, dpflops_per_cycle, static_power, dynamic_power, min_power, b..dd}",
}
HIERARCHY: dict[str, Any] = {
    "type": "object",
    "required": ["model", "nodes"],
    "properties": {
        "model": {"enum": ["modelV1"], "description": '"modelV1"'},
        "nodes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "processors"],
                "properties": {
                    "name": STRING,  # unique on the platform
                    "id": STRING,  # IRMaSim's id within its cluster ("node0")
                    "cluster": STRING,
                    "type": STRING,
                    "memory": {"type": ["number", "null"], "description": "the node's memory capacity, or null"},
                    "processors": {"type": "array", "items": HIERARCHY_PROCESSOR, "minItems": 1,
                                   "description": "a list of processors"},
                },
                "description": "a node {name, id, cluster, type, memory, processors}",
            },
            "description": "the platform's nodes, in platform order",
        },
    },
    "description": 'the node hierarchy {"model": "modelV1", "nodes": [...]}',
}

SIMULATOR_EVENT_SCHEMAS: dict[str, dict[str, Any]] = {
    "SIMULATION_BEGINS": {
        "type": "object",
        "required": [
            "nb_resources",
            "nb_compute_resources",
            "nb_storage_resources",
            "allow_compute_sharing",
            "allow_storage_sharing",
            "config",
            "compute_resources",
            "storage_resources",
            "workloads",
            "profiles",
        ],
        "properties": {
            "nb_resources": NON_NEGATIVE_INTEGER,
            "nb_compute_resources": NON_NEGATIVE_INTEGER,
            "nb_storage_resources": NON_NEGATIVE_INTEGER,
            "allow_compute_sharing": BOOLEAN,
            "allow_storage_sharing": BOOLEAN,
            "config": CONFIG,
            "compute_resources": {"type": "array", "items": RESOURCE, "description": "a list of resource objects"},
            "storage_resources": {"type": "array", "items": RESOURCE, "description": "a list of resource objects"},
            "workloads": {
                "type": "object",
                "additionalProperties": STRING,
                "description": 'an object {workload name: path} like {"w0": "jobs.json"}',
            },
            "profiles": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": OBJECT,
                    "description": "an object {profile name: profile object}",
                },
                "description": "an object {workload name: {profile name: profile object}}",
            },
            "hierarchy": HIERARCHY,
        },
    },
    "JOB_SUBMITTED": {
        "type": "object",
        "required": ["job_id", "job"],
        "properties": {"job_id": JOB_ID, "job": SUBMITTED_JOB, "profile": OBJECT},
    },
    "JOB_COMPLETED": {
        "type": "object",
        "required": ["job_id", "job_state", "return_code", "alloc"],
        "properties": {
            "job_id": JOB_ID,
            "job_state": {"enum": COMPLETED_JOB_STATES, "description": "a final job state"},
            "return_code": INTEGER,
            "alloc": INTERVAL_SET,
        },
    },
    "JOB_KILLED": {
        "type": "object",
        "required": ["job_ids"],
        "properties": {
            "job_ids": {"type": "array", "items": JOB_ID, "description": "a list of job ids"},
            "job_progress": {
                "type": "object",
                "additionalProperties": JOB_PROGRESS_ENTRY,
                "description": "an object {job id: progress object}",
            },
        },
    },
    "RESOURCE_STATE_CHANGED": {
        "type": "object",
        "required": ["resources", "state"],
        "properties": {
            "resources": INTERVAL_SET,
            "state": {**DIGITS, "description": 'a pstate as a string of digits like "1"'},
        },
    },
    "REQUESTED_CALL": EMPTY_OBJECT,
    "ANSWER": {
        "type": "object",
        "required": ["consumed_energy"],
        "properties": {"consumed_energy": {**NON_NEGATIVE_NUMBER, "description": "a non-negative number of joules"}},
    },
    # A NOTIFY whose data carries a timestamp is an external event of a type Batsim does not know,
    # forwarded whole (--forward-unknown-events): any type. Every other NOTIFY has a known type.
    "NOTIFY": {
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {"type": "string", "description": "a NOTIFY type the simulator sends"},
            "resources": INTERVAL_SET,
        },
        "if": {"required": ["timestamp"]},
        "then": {"properties": {"timestamp": {**NON_NEGATIVE_NUMBER,
                                              "description": "a forwarded event's time, a number >= 0"}}},
        "else": {
            "properties": {"type": {"enum": SIMULATOR_NOTIFY_TYPES, "description": "a NOTIFY type the simulator sends"}},
            "if": {"properties": {"type": {"enum": ["event_machine_unavailable", "event_machine_available"]}}},
            "then": {
                "required": ["resources"],
                "properties": {"resources": INTERVAL_SET},
                "x-fix": 'machine (un)availability NOTIFY events carry the machines in "resources"',
            },
        },
    },
    "SIMULATION_ENDS": EMPTY_OBJECT,
}

# --------------------------------------------------------------------- decisions
DECISION_SCHEMAS: dict[str, dict[str, Any]] = {
    "EXECUTE_JOB": {
        "type": "object",
        "required": ["job_id", "alloc"],
        "properties": {
            "job_id": JOB_ID,
            "alloc": INTERVAL_SET,
            "mapping": {
                "type": "object",
                "propertyNames": {"pattern": "^[0-9]+$"},
                "additionalProperties": INT_OR_DIGITS,
                "description": 'an object {executor index: index in alloc} like {"0": 0, "1": "0"}',
                "x-fix": "use executor indices (digit strings) as keys and indices into alloc as values",
            },
            "storage_mapping": {
                "type": "object",
                "additionalProperties": INT_OR_DIGITS,
                "description": 'an object {storage label: resource id} like {"pfs": 2}',
            },
        },
    },
    "REJECT_JOB": {
        "type": "object",
        "required": ["job_id"],
        "properties": {"job_id": JOB_ID},
    },
    "KILL_JOB": {
        "type": "object",
        "required": ["job_ids"],
        "properties": {
            "job_ids": {
                "type": "array",
                "minItems": 1,
                "items": JOB_ID,
                "description": 'a non-empty list of job ids like ["w0!1"]',
                "x-fix": "list at least one job to kill, or send no KILL_JOB",
            },
        },
    },
    "CALL_ME_LATER": {
        "type": "object",
        "required": ["timestamp"],
        "properties": {"timestamp": NUMBER},
    },
    "SET_RESOURCE_STATE": {
        "type": "object",
        "required": ["resources", "state"],
        "properties": {
            "resources": INTERVAL_SET,
            "state": {
                **INT_OR_DIGITS,
                "description": 'a pstate: an integer or a string of digits (like 1 or "1")',
                "x-fix": 'send the pstate number, e.g. "state": "1"',
            },
        },
    },
    "QUERY": {
        "type": "object",
        "required": ["requests"],
        "properties": {
            "requests": {
                "type": "object",
                "required": ["consumed_energy"],
                "properties": {"consumed_energy": EMPTY_OBJECT},
                "description": 'an object like {"consumed_energy": {}}',
                "x-fix": 'send {"requests": {"consumed_energy": {}}}',
            },
        },
    },
    "REGISTER_PROFILE": {
        "type": "object",
        "required": ["workload_name", "profile_name", "profile"],
        "properties": {
            "workload_name": STRING,
            "profile_name": STRING,
            "profile": {"type": "object", "required": ["type"], "description": 'a profile object like {"type": "delay", "delay": 10}'},
        },
    },
    "REGISTER_JOB": {
        "type": "object",
        "required": ["job_id", "job"],
        "properties": {
            "job_id": JOB_ID,
            "job": {
                "type": "object",
                "required": ["res", "profile"],
                "properties": {
                    "id": {"type": ["string", "integer"], "description": "a string or integer job id"},
                    "subtime": NON_NEGATIVE_NUMBER,
                    "res": NON_NEGATIVE_INTEGER,
                    "profile": STRING,
                    "walltime": NUMBER,
                },
                "description": 'a job object like {"res": 2, "profile": "p1", "walltime": 100}',
            },
        },
    },
    "NOTIFY": {
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {
                "enum": DECIDER_NOTIFY_TYPES,
                "description": "a NOTIFY type a decider may send",
                "x-fix": 'a decider notifies "registration_finished" or "continue_registration" (or, joulesim\'s '
                         'extension, "force_simulation_stop")',
            },
        },
    },
    "SET_JOB_METADATA": {
        "type": "object",
        "required": ["job_id", "metadata"],
        "properties": {"job_id": JOB_ID, "metadata": STRING},
    },
    "CHANGE_JOB_STATE": {
        "type": "object",
        "required": ["job_id", "job_state"],
        "properties": {
            "job_id": JOB_ID,
            "job_state": {"enum": JOB_STATES, "description": "a job state"},
            "kill_reason": STRING,
        },
    },
}

# Fields holding interval sets, checked with parse_interval_set after the schema.
INTERVAL_SET_FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    # (side, type) -> fields; side is "simulator" or "decider"
    ("simulator", "JOB_COMPLETED"): ("alloc",),
    ("simulator", "RESOURCE_STATE_CHANGED"): ("resources",),
    ("simulator", "NOTIFY"): ("resources",),
    ("decider", "EXECUTE_JOB"): ("alloc",),
    ("decider", "SET_RESOURCE_STATE"): ("resources",),
}


# ---------------------------------------------------------------------- envelope
def _event_schema(types: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["timestamp", "type", "data"],
        "properties": {
            "timestamp": NUMBER,
            "type": {"enum": sorted(types)},
            "data": {"type": "object"},
        },
        "allOf": [
            {"if": {"properties": {"type": {"const": name}}}, "then": {"properties": {"data": schema}}}
            for name, schema in sorted(types.items())
        ],
    }


def envelope_schema(types: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The whole message `{"now", "events": [...]}` for one direction (documentation, tools)."""
    return {
        "type": "object",
        "required": ["now", "events"],
        "properties": {"now": NUMBER, "events": {"type": "array", "items": _event_schema(types)}},
    }


ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["now", "events"],
    "properties": {
        "now": NUMBER,
        "events": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["timestamp", "type", "data"],
                "properties": {"timestamp": NUMBER, "type": STRING, "data": OBJECT},
            },
        },
    },
}
SIMULATOR_MESSAGE_SCHEMA = envelope_schema(SIMULATOR_EVENT_SCHEMAS)
DECIDER_MESSAGE_SCHEMA = envelope_schema(DECISION_SCHEMAS)
