"""What `joulesim.simulate` accepts as a platform, a workload or events: names, paths or objects.

Objects built in Python (a platform or workload dict) are encoded to JSON and go through the
same loaders as files, so they get exactly the same checks and error messages; the messages
name them "<platform dict>", "<workload dict w0>", "<events list>".
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import orjson

from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import read_text_file
from joulesim.simulator.platform.platform_json import load_json_platform
from joulesim.simulator.platform.platform_loader import load_platform
from joulesim.simulator.platform.platform_model import Platform
from joulesim.simulator.workload.external_events import ExternalEvent, events_from_bytes, load_external_events
from joulesim.simulator.workload.workload_loader import load_workload, workload_from_bytes
from joulesim.simulator.workload.workload_model import Workload

#: What a platform may be given as.
PlatformSource = str | os.PathLike | dict | Platform
#: What one workload may be given as (a list of these gives several workloads).
WorkloadSource = str | os.PathLike | dict


def _encoded(label: str, value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError as exc:
        raise InputError(label, "value", f"cannot be written as JSON: {exc}",
                         "use only dicts with string keys, lists, strings, numbers, booleans and None") from None


def _kind(value: Any) -> str:
    return type(value).__name__


def platform_from(value: PlatformSource, master_host: str | None = None,
                  platform_name: str | None = None) -> Platform:
    """A loaded platform from a path, a shipped name, a JSON platform dict (native or IRMaSim),
    or a Platform."""
    if isinstance(value, Platform):
        return value
    if isinstance(value, dict):
        label = "<platform dict>"
        return load_json_platform(label, master_host, _encoded(label, value), platform_name)
    if isinstance(value, (str, os.PathLike)):
        return load_platform(os.fspath(value), master_host, platform_name)
    raise InputError("platform", "argument", f"is a {_kind(value)}",
                     "give a platform file path, a shipped platform name, a JSON platform dict, "
                     "or a Platform from joulesim.simulator.platform.platform_loader.load_platform")


def workloads_from(value: WorkloadSource | Sequence[WorkloadSource]) -> list[Workload]:
    """Workloads w0, w1, ... from one source or a list of them."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    workloads = []
    for index, item in enumerate(items):
        name = f"w{index}"
        if isinstance(item, dict):
            label = f"<workload dict {name}>"
            workloads.append(workload_from_bytes(label, _encoded(label, item), name))
        elif isinstance(item, (str, os.PathLike)):
            workloads.append(load_workload(os.fspath(item), name))
        else:
            raise InputError("workload", f"argument {index}", f"is a {_kind(item)}",
                             "give a workload file path, a shipped workload name or a Batsim workload "
                             "dict (or a list of those)")
    return workloads


def events_from(value: str | os.PathLike | Sequence[dict], nb_compute_hosts: int,
                forward_unknown: bool = False) -> list[ExternalEvent]:
    """External events from a JSON-lines file or a list of event dicts (`forward_unknown`:
    `--forward-unknown-events`)."""
    if isinstance(value, (str, os.PathLike)):
        return load_external_events(os.fspath(value), nb_compute_hosts, forward_unknown)
    if isinstance(value, (list, tuple)):
        label = "<events list>"
        lines = b"\n".join(_encoded(label, event) for event in value)
        return events_from_bytes(label, lines, nb_compute_hosts, forward_unknown)
    raise InputError("events", "argument", f"is a {_kind(value)}",
                     "give an events file path or a list of event dicts like "
                     "{'timestamp': 10, 'type': 'machine_unavailable', 'resources': '0-1'}")


def sched_config_from(text: str | None, path: str | os.PathLike | None) -> str:
    """Batsim's `--sched-cfg TEXT` / `--sched-cfg-file FILE`: the string SIMULATION_BEGINS forwards
    to the decider (config.sched-config), "" without either; both at once are refused, as by Batsim."""
    if text is not None and path is not None:
        raise InputError("--sched-cfg-file", "option", "given together with --sched-cfg",
                         "give the scheduler configuration once: as text, or as a file")
    if path is not None:
        return read_text_file(os.fspath(path), "a scheduler configuration file")
    return text or ""
