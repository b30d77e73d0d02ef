"""joulesim's import graph, read from the source files (every import, lazy ones inside functions
included), for the layering rules of tests/test_import_rules.py.

The repository's folders are installed under the `joulesim` namespace by pyproject.toml's
package-dir table (`simulator/` is `joulesim.simulator`, `api/` is `joulesim` itself), so the
graph is built from that table rather than from an installed copy: it checks the tree being
edited, installed in editable mode or not.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ImportEdge:
    importer: str  # module name
    imported: str  # module name (a package's __init__ counts as the package)
    line: int
    type_only: bool  # under `if TYPE_CHECKING:`: for annotations, never run


def module_files(root: Path = REPO_ROOT) -> dict[str, Path]:
    """Module name -> source file, for every package pyproject.toml installs."""
    settings = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    directories = settings["package-dir"]
    modules: dict[str, Path] = {}
    for package in settings["packages"]:
        # The longest mapped prefix names the folder (joulesim.simulator.energy -> simulator/energy).
        prefix = max((p for p in directories if package == p or package.startswith(p + ".")), key=len)
        folder = root / directories[prefix] / Path(*package[len(prefix):].strip(".").split(".") if
                                                      package != prefix else ())
        for file in sorted(folder.glob("*.py")):
            name = package if file.stem == "__init__" else f"{package}.{file.stem}"
            modules[name] = file
    return modules


def _targets(node: ast.AST, importer: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:  # relative: resolve against the importer's package
        parts = importer.split(".")
        parts = parts if is_package else parts[:-1]
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([base] if base else []))
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def import_edges(modules: dict[str, Path] | None = None) -> list[ImportEdge]:
    """Every import between joulesim's own modules, at module level or inside a function."""
    modules = module_files() if modules is None else modules
    edges = []
    for importer, file in modules.items():
        tree = ast.parse(file.read_text(), filename=str(file))
        type_only = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                type_only.update(id(inner) for statement in node.body for inner in ast.walk(statement))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = _targets(node, importer, file.stem == "__init__")
            # `from a.b import c`: the module a.b.c when it exists, else a.b (c is a name in it).
            found = [t for t in targets[:-1] if t in modules] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.ImportFrom) and not found and targets[-1] in modules:
                found = [targets[-1]]
            if isinstance(node, ast.Import):
                found = [t for t in targets if t in modules]
            edges += [ImportEdge(importer, target, node.lineno, id(node) in type_only)
                      for target in found if target != importer]
    return edges
