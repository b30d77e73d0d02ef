"""joulesim's native JSON for node-model platforms: IRMaSim's model without its type library.

    {"model": "modelV1",
     "nodes": [{"type": "fast", "count": 2, "memory": 32,
                "processors": [{"count": 1, "cores": 4, "clock_rate": 3.4, "dpflops_per_cycle": 1,
                                "static_power": 6.14, "dynamic_power": 5.59, "min_power": 0.05,
                                "b": -1.85e-05, "c": 32000, "da": 1.75, "db": 2000, "dc": 50000, "dd": 6000}]}]}

Each entry of `nodes` is a node type with its processors inline, `count` nodes of it (default
1); nodes are named node0, node1, ... in order, as IRMaSim names them. The document is
rewritten into IRMaSim's shape and read by `platform_irmasim`, so both formats mean the same.
"""

from __future__ import annotations

from typing import Any

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import shown


def is_native_node_platform(document: Any) -> bool:
    return isinstance(document, dict) and "model" in document and "nodes" in document


def irmasim_document(path: str, document: dict) -> dict:
    nodes = document["nodes"]
    if not isinstance(nodes, list) or not nodes:
        raise InputError(path, "$.nodes", f"is {shown(nodes)}", "give a non-empty list of node types")
    entries, node_types, processor_types = [], {}, {}
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise InputError(path, f"$.nodes[{i}]", f"is {shown(node)}", "a node type is an object with processors")
        name = f"$.nodes[{i}]"  # type names are internal: messages name the entry
        processors = node.get("processors")
        if not isinstance(processors, list):
            raise InputError(path, f"{name}.processors", "is missing" if processors is None else f"is {shown(processors)}",
                             "give the node type's processors as a list")
        refs = []
        for j, processor in enumerate(processors):
            if not isinstance(processor, dict):
                raise InputError(path, f"{name}.processors[{j}]", f"is {shown(processor)}", "a processor is an object")
            key = f"{name}.processors[{j}]"
            processor_types[key] = {k: v for k, v in processor.items() if k != "count"}
            refs.append({"type": key, "number": processor.get("count", 1)})
        node_types[name] = {"processors": refs}
        if "memory" in node:
            node_types[name]["memory"] = {"capacity": node["memory"]}
        entries.append({"type": name, "number": node.get("count", 1)})
    platform = {"id": "platform", "model_name": document["model"], "clusters": [{"id": "cluster0", "nodes": entries}]}
    return {"platform": {"platform": platform}, "node": node_types, "processor": processor_types}
