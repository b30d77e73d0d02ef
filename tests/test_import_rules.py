"""The architecture as import rules (docs/reference/architecture.md): no circles, and no import from a
lower layer to a higher one, lazy imports inside functions included.

The layers, top first; packages on one line are independent of each other. A module may import
its own sub-package, anything in a lower layer, and nothing else.
"""

from __future__ import annotations

import graphlib

import pytest

from import_graph import import_edges, module_files

#: Top-level layers (packages of `joulesim`; "joulesim" alone is the Python API: the package root's
#: own modules, in api/).
LAYERS = [
    ["joulesim.cli"],
    ["joulesim.rl", "joulesim.learn", "joulesim.adapters"],
    ["joulesim.campaign"],
    ["joulesim"],
    ["joulesim.analysis", "joulesim.workload_tools"],
    ["joulesim.simulator", "joulesim.deciders"],
    ["joulesim.inputs"],
    ["joulesim.protocol", "joulesim.console", "joulesim.platforms", "joulesim.workloads"],
]
#: Inside the two big packages: what each sub-package may import of its siblings (as its
#: docstring says). The package's own __init__ (the deciders' registry) may import them all.
INNER = {
    "joulesim.simulator": {
        "checkpoint": [],
        "engine": ["output", "models", "energy", "workload", "platform"],
        "output": ["energy", "workload", "platform"],
        "models": ["energy", "workload", "platform"],
        "energy": ["workload", "platform"],
        "workload": ["platform"],
        "platform": [],
    },
    "joulesim.deciders": {
        "grid": ["energy", "batch", "common"],
        "learned": ["node", "common"],
        "energy": ["batch", "common"],
        "node": ["common"],
        "batch": ["common"],
        "common": [],
    },
}
EDGES = import_edges()


def top_unit(module: str) -> tuple[int, str] | None:
    """(layer index, package) of `module` among LAYERS: the longest package that contains it."""
    best = None
    for index, units in enumerate(LAYERS):
        for unit in units:
            if (module == unit or module.startswith(unit + ".")) and (best is None or len(unit) > len(best[1])):
                best = (index, unit)
    return best


def inner_unit(package: str, module: str) -> str | None:
    """The sub-package of `package` holding `module`; None for the package's own __init__."""
    rest = module[len(package) + 1:].split(".")[0] if module != package else None
    return rest if rest in INNER[package] else None


def violations(edges: list) -> list[str]:
    found = []
    for edge in edges:
        (i, unit_i), (j, unit_j) = top_unit(edge.importer), top_unit(edge.imported)
        if unit_i != unit_j:
            if i >= j:  # sideways (same layer) or upward
                found.append(f"{edge.importer} (line {edge.line}) imports {edge.imported}: "
                             f"{unit_i} may not import {unit_j}")
            continue
        if unit_i not in INNER:
            continue
        sub_i, sub_j = inner_unit(unit_i, edge.importer), inner_unit(unit_i, edge.imported)
        if sub_i is None or sub_i == sub_j:
            continue  # the package's __init__, or inside one sub-package
        if sub_j is None or sub_j not in INNER[unit_i][sub_i]:
            found.append(f"{edge.importer} (line {edge.line}) imports {edge.imported}: "
                         f"{unit_i}.{sub_i} may import only {INNER[unit_i][sub_i] or 'none of its siblings'}")
    return found


def test_every_module_has_a_layer():
    files = module_files()
    assert [m for m in files if top_unit(m) is None] == []
    # "joulesim" alone is the API: only api/'s own modules; a new package must be given a layer.
    assert [m for m in files if top_unit(m)[1] == "joulesim" and files[m].parent.name != "api"] == []
    inside = [m for m in files if top_unit(m)[1] in INNER and m != top_unit(m)[1]]
    assert [m for m in inside if inner_unit(top_unit(m)[1], m) is None] == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    assert violations(EDGES) == []


def test_no_circles():
    """Runtime imports (module level or in a function) form no circle. Imports under
    TYPE_CHECKING (annotations only) follow the layers like the others, so the only back-references
    they can make stay inside one sub-package (the engine's helpers name `Simulation`)."""
    graph = graphlib.TopologicalSorter()
    for edge in EDGES:
        if not edge.type_only:
            graph.add(edge.importer, edge.imported)
    try:
        graph.prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import circle: {' -> '.join(exc.args[1])}")


def test_the_rules_catch_what_the_issue_found():
    """A decider importing the simulator, the API taking process handling from the CLI, a shared
    piece importing a policy, a simulator module importing a decider: each is refused."""
    from import_graph import ImportEdge

    found = violations([ImportEdge("joulesim.deciders.grid.cluster_broker", "joulesim.simulator.energy.energy_cost", 1, False),
                        ImportEdge("joulesim.run_simulation", "joulesim.cli.main", 2, False),
                        ImportEdge("joulesim.deciders.common.queue_order", "joulesim.deciders.batch.easy", 3, False),
                        ImportEdge("joulesim.simulator.engine.simulation", "joulesim.deciders.batch.easy", 4, False),
                        ImportEdge("joulesim.deciders.node.pcbe", "joulesim.deciders.batch.easy", 5, False),
                        ImportEdge("joulesim.deciders.batch.easy", "joulesim.deciders", 6, False)])
    assert len(found) == 6, found
    assert violations([ImportEdge("joulesim.deciders.batch.easy", "joulesim.deciders.common.queue_policy", 1, False),
                       ImportEdge("joulesim.cli.main", "joulesim.deciders", 2, True)]) == []
