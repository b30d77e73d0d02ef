"""IRMaSim's platform JSON, read as it is (`-p platform.json` with IRMaSim's own file).

The file is a library of types::

    {"platform": {NAME: {"id": NAME, "model_name": "modelV1",
                         "clusters": [{"id": "cluster0", "nodes": [{"type": "n1", "number": 2}, ...]}]}},
     "node": {"n1": {"processors": [{"type": "p1", "number": 1}], "memory": {"capacity": 32}}},
     "processor": {"p1": {"cores": 4, "clock_rate": 3.4, "dpflops_per_cycle": 1,
                          "static_power": 6.14, "dynamic_power": 5.59, "min_power": 0.05,
                          "b": -1.85e-05, "c": 32000, "da": 1.75, "db": 2000, "dc": 50000, "dd": 6000}}}

Components are named as IRMaSim names them: clusters "cluster<i>" unless given an id, nodes
"node<i>" numbered across the cluster's node entries, processors "processor<i>" within a node,
cores "core<i>". Nodes are named "node<i>" on a one-cluster platform and "<cluster>.node<i>"
otherwise; core resources "<node>.processor<j>.core<k>", numbered in that order. Only
the file's own types are used (IRMaSim's built-in type library is not shipped). Links,
`llc_size`, `power`, `uarch` and a processor entry's `count` are accepted and unused, as in
IRMaSim's modelV1.
"""

from __future__ import annotations

from typing import Any

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import clip, is_int, is_number, shown
from joulesim.simulator.platform.node_hierarchy import CONTENTION_KEYS, Node, NodeHierarchy, Processor
from joulesim.simulator.platform.platform_checks import check_host_count
from joulesim.simulator.platform.platform_model import Host, Platform

SUPPORTED_MODELS = ("modelV1",)
_PROCESSOR_NUMBERS = ("clock_rate", "dpflops_per_cycle", "static_power", "dynamic_power", "min_power") + CONTENTION_KEYS


def is_irmasim_platform(document: Any) -> bool:
    return isinstance(document, dict) and "platform" in document and "processor" in document


def load_irmasim_platform(path: str, document: dict, platform_name: str | None = None) -> Platform:
    """The Platform (cores as compute hosts, with its NodeHierarchy) of one of the file's platforms."""
    platforms = _object(path, "$.platform", document["platform"], "a map of platform names to platforms")
    if platform_name is None:
        if len(platforms) != 1:
            names = ", ".join(sorted(map(str, platforms))) or "none"
            raise InputError(path, "$.platform", f"holds {len(platforms)} platforms ({clip(names, 120)})",
                             "choose one with --platform-name NAME" if platforms else "describe one platform")
        platform_name = next(iter(platforms))
    elif platform_name not in platforms:
        raise InputError(path, "$.platform", f"has no platform named {shown(platform_name)}",
                         "use one of: " + clip(", ".join(map(str, platforms)), 200))
    where = f"$.platform.{platform_name}"
    description = _object(path, where, platforms[platform_name], "a platform object")
    model = description.get("model_name")
    if model not in SUPPORTED_MODELS:
        raise InputError(path, f"{where}.model_name", f"is {shown(model)}",
                         "joulesim runs IRMaSim's modelV1: set \"model_name\": \"modelV1\"")
    node_types = _object(path, "$.node", document.get("node", {}), "a map of node type names to node types")
    processor_types = _object(path, "$.processor", document["processor"], "a map of processor type names to processor types")
    clusters = _list(path, f"{where}.clusters", description.get("clusters"), "a list of clusters")
    if not clusters:
        raise InputError(path, f"{where}.clusters", "is empty", "describe at least one cluster with nodes")

    nodes: list[Node] = []
    processors: list[Processor] = []
    core_processor: list[int] = []
    checked_types: dict[str, dict[str, Any]] = {}
    for c_index, cluster in enumerate(clusters):
        cwhere = f"{where}.clusters[{c_index}]"
        cluster = _object(path, cwhere, cluster, "a cluster object")
        cluster_id = str(cluster.get("id", f"cluster{c_index}"))
        node_number = 0
        for e_index, entry in enumerate(_list(path, f"{cwhere}.nodes", cluster.get("nodes"), "a list of node entries")):
            ewhere = f"{cwhere}.nodes[{e_index}]"
            entry = _object(path, ewhere, entry, 'a node entry like {"type": "n1", "number": 2}')
            node_type = entry.get("type")
            if node_type not in node_types:
                raise InputError(path, f"{ewhere}.type", f"names node type {shown(node_type)}, which $.node does not define",
                                 "define the node type under \"node\" in this file (IRMaSim's built-in types are not shipped)")
            count = _count(path, f"{ewhere}.number", entry.get("number", 1))
            ndef = _object(path, _type_where("node", node_type), node_types[node_type], "a node type object")
            memory = _node_memory(path, node_type, ndef)
            proc_entries = _list(path, _type_where("node", node_type) + ".processors", ndef.get("processors"), "a list of processor entries")
            if not proc_entries:
                raise InputError(path, _type_where("node", node_type) + ".processors", "is empty", "give the node type at least one processor")
            for _ in range(count):
                node_id = str(entry.get("id", f"node{node_number}"))
                node_number += 1
                name = node_id if len(clusters) == 1 else f"{cluster_id}.{node_id}"
                node = Node(name, node_id, cluster_id, str(node_type), memory, [])
                proc_number = 0
                for p_index, pentry in enumerate(proc_entries):
                    pwhere = _type_where("node", node_type) + f".processors[{p_index}]"
                    pentry = _object(path, pwhere, pentry, 'a processor entry like {"type": "p1", "number": 1}')
                    ptype = pentry.get("type")
                    if ptype not in processor_types:
                        raise InputError(path, f"{pwhere}.type", f"names processor type {shown(ptype)}, which $.processor does not define",
                                         "define the processor type under \"processor\" in this file (IRMaSim's built-in types are not shipped)")
                    pdef = checked_types.get(ptype) or checked_types.setdefault(
                        ptype, _processor_type(path, _type_where("processor", ptype), processor_types[ptype]))
                    for _ in range(_count(path, f"{pwhere}.number", pentry.get("number", 1))):
                        check_host_count(path, pwhere, pdef["cores"], len(core_processor))
                        first = len(core_processor)
                        cores = list(range(first, first + pdef["cores"]))
                        core_processor.extend([len(processors)] * pdef["cores"])
                        node.processors.append(len(processors))
                        processors.append(Processor(
                            f"{name}.processor{proc_number}", str(ptype), len(nodes), cores,
                            pdef["clock_rate"], pdef["dpflops_per_cycle"], pdef["static_power"], pdef["dynamic_power"],
                            pdef["min_power"], {key: pdef[key] for key in CONTENTION_KEYS}))
                        proc_number += 1
                nodes.append(node)
    if not nodes:
        raise InputError(path, f"{where}.clusters", "declares no node", "give each cluster node entries with a type and a number")

    hosts = []
    for processor in processors:
        speed = processor.mops * 1e6
        node = nodes[processor.node].name
        for k, core in enumerate(processor.cores):
            hosts.append(Host(core, f"{processor.name}.core{k}", [speed], 0,
                              properties={"node": node, "processor": processor.name}, zone=nodes[processor.node].cluster))
    master = Host(-1, "master_host", [1e9], 0, role="master")
    platform = Platform(path, master, hosts)
    platform.nodes = NodeHierarchy(str(model), nodes, processors, core_processor)
    return platform


def _processor_type(path: str, where: str, definition: Any) -> dict[str, Any]:
    definition = _object(path, where, definition, "a processor type object")
    cores = definition.get("cores")
    if not (is_int(cores) and cores >= 1):
        raise InputError(path, f"{where}.cores", f"is {shown(cores)}", "give the number of cores, an integer >= 1")
    checked: dict[str, Any] = {"cores": int(cores)}
    for key in _PROCESSOR_NUMBERS:
        value = definition.get(key)
        if not is_number(value):
            problem = "is missing" if key not in definition else f"is {shown(value)}, not a number"
            raise InputError(path, f"{where}.{key}", problem, f"modelV1 needs {key} for every processor type "
                             f"(fields: cores, {', '.join(_PROCESSOR_NUMBERS)})")
        checked[key] = float(value)
    for key in ("clock_rate", "dpflops_per_cycle"):
        if checked[key] <= 0:
            raise InputError(path, f"{where}.{key}", f"is {checked[key]:g}", f"{key} must be > 0")
    for key in ("static_power", "dynamic_power"):
        if checked[key] < 0:
            raise InputError(path, f"{where}.{key}", f"is {checked[key]:g}", f"{key} must be >= 0 watts")
    if not 0 <= checked["min_power"] <= 1:
        raise InputError(path, f"{where}.min_power", f"is {checked['min_power']:g}",
                         "min_power is the fraction of static power drawn when no core is busy: between 0 and 1")
    if checked["b"] == 0:
        raise InputError(path, f"{where}.b", "is 0", "modelV1 divides by b: give the contention slope (e.g. -1.85e-05)")
    for n in range(checked["cores"]):  # the contention formula divides by dc - n dd for n co-running tasks
        if checked["dc"] - n * checked["dd"] == 0:
            raise InputError(path, f"{where}.dc", f"dc - {n} x dd is 0, which modelV1 divides by with {n + 1} busy cores",
                             "check dc and dd")
    return checked


def _node_memory(path: str, node_type: Any, definition: dict) -> float | None:
    """A node type's memory capacity (IRMaSim's {"memory": {"capacity": GB}}; joulesim's native
    form writes "memory": GB), None when not given; a non-number or a negative capacity is
    refused (deciders place jobs by free memory: a negative one was accepted)."""
    where = _type_where("node", node_type)
    native = where.startswith("$.nodes[")
    if "memory" not in definition:
        return None
    memory = definition["memory"]
    if not isinstance(memory, dict):
        raise InputError(path, f"{where}.memory", f"is {shown(memory)}",
                         'give the memory as an object with its capacity in GB, e.g. "memory": {"capacity": 32}')
    if "capacity" not in memory:
        return None
    capacity = memory["capacity"]
    if not is_number(capacity) or capacity < 0:
        raise InputError(path, f"{where}.memory" if native else f"{where}.memory.capacity", f"is {shown(capacity)}",
                         "give the node's memory capacity in GB, a number >= 0")
    return capacity


def _type_where(kind: str, name: Any) -> str:
    """Where a node or processor type is in the file (native node platforms name their types by
    the JSON path of their entry)."""
    name = str(name)
    return name if name.startswith("$.") else f"$.{kind}.{name}"


def _object(path: str, where: str, value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(path, where, f"is {shown(value)}", f"it must be {what}")
    return value


def _list(path: str, where: str, value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise InputError(path, where, "is missing" if value is None else f"is {shown(value)}", f"it must be {what}")
    return value


def _count(path: str, where: str, value: Any) -> int:
    if not (is_int(value) and value >= 0):
        raise InputError(path, where, f"is {shown(value)}", "give a count, an integer >= 0")
    return int(value)
