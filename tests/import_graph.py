"""The import graph of a folder of Python modules, and the circles in it.

Shared by the package's direction test (``tests/architecture/test_import_direction.py``) and
the benchmarks' (``benchmarks/tests/test_imports.py``). Every import counts, those inside
functions and under ``TYPE_CHECKING`` too, so a circle cannot hide in a lazy import; ``from
pkg import module`` counts as importing ``module``, not ``pkg``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from tests.tracked import tracked


def module_name(path: Path, top: Path) -> str:
    """The dotted name of ``path``, a module below the package folder ``top``."""
    parts = path.relative_to(top.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_below(top: Path) -> dict[str, Path]:
    """Every module below the package folder ``top``, by dotted name (the project's own
    files: nothing git ignores)."""
    return {module_name(p, top): p for p in tracked(top, "*.py")}


def import_graph(modules: Mapping[str, Path]) -> dict[str, set[str]]:
    """Each of ``modules`` and which of ``modules`` it imports (itself left out)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package.rsplit(".", node.level - 1)[0] if node.level else ""
                module = ".".join(p for p in (base, node.module or "") if p)
                for alias in node.names:
                    submodule = f"{module}.{alias.name}"
                    found.add(submodule if submodule in modules else module)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: Mapping[str, set[str]]) -> list[str]:
    """Each import circle of ``graph`` found by one depth-first walk, as ``a -> b -> a``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    found: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, set())):
            if state.get(nxt) == 1:
                found.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return found
