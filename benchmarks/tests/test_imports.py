"""The benchmarks' imports point one way and never in a circle (issue 22).

``results`` (the rows) is the bottom; ``measure`` and ``report`` build on it and never on
each other (the report renders ``results.json`` alone); ``run`` measures; ``__main__`` runs
and reports. Every import counts, those inside functions too, so a circle cannot hide in a
lazy import; a failure names the import.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "results": set(),
    "measure": {"results", "measure"},
    "report": {"results", "report"},
    "run": {"results", "measure"},
    "__main__": {"results", "measure", "report", "run"},
}
"""What each part of ``benchmarks`` may import from the rest of it."""


def _name(path: Path) -> str:
    parts = ("benchmarks", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Each module of ``benchmarks`` (tests aside) and the ``benchmarks`` modules it imports."""
    paths = {_name(p): p for p in ROOT.rglob("*.py") if "tests" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package.rsplit(".", node.level - 1)[0] if node.level else ""
                module = ".".join(p for p in (base, node.module or "") if p)
                found.update(f"{module}.{a.name}" if f"{module}.{a.name}" in paths else module
                             for a in node.names)
        graph[name] = {m for m in found if m in paths and m != name}
    return graph


def _part(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def test_every_part_imports_only_what_it_may() -> None:
    wrong = [f"{importer} imports {imported}"
             for importer, imported_set in sorted(_graph().items())
             for imported in sorted(imported_set)
             if _part(importer) in ALLOWED and _part(imported) not in ALLOWED[_part(importer)]]
    assert wrong == [], "imports against the benchmarks' direction:\n" + "\n".join(wrong)


def test_no_import_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    circles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, set())):
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert circles == [], "import circles in benchmarks/:\n" + "\n".join(circles)


def test_the_graph_sees_imports() -> None:
    """The walk finds real edges (a test that sees no imports would pass on anything)."""
    graph = _graph()
    assert "benchmarks.results" in graph["benchmarks.report.targets"]
    assert "benchmarks.measure.servers" in graph["benchmarks.measure.cost"]
    assert "benchmarks.measure.scale" in graph["benchmarks.measure.hostile"]
