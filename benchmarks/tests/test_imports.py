"""The benchmarks' imports point one way and never in a circle (issue 22).

``results`` (the rows) is the bottom; ``measure`` and ``report`` build on it and never on
each other (the report renders ``results.json`` alone); ``run`` measures; ``__main__`` runs
and reports. Every import counts, those inside functions too, so a circle cannot hide in a
lazy import; a failure names the import.
"""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import circles, import_graph, modules_below

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "results": set(),
    "measure": {"results", "measure"},
    "report": {"results", "report"},
    "run": {"results", "measure"},
    "__main__": {"results", "measure", "report", "run"},
}
"""What each part of ``benchmarks`` may import from the rest of it."""


def _graph() -> dict[str, set[str]]:
    """Each module of ``benchmarks`` (tests aside) and the ``benchmarks`` modules it imports."""
    # parts below ROOT only: a clone or worktree in a folder named "tests" keeps its modules
    modules = {n: p for n, p in modules_below(ROOT).items()
               if "tests" not in p.relative_to(ROOT).parts}
    return import_graph(modules)


def _part(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def test_every_part_imports_only_what_it_may() -> None:
    wrong = [f"{importer} imports {imported}"
             for importer, imported_set in sorted(_graph().items())
             for imported in sorted(imported_set)
             if _part(importer) in ALLOWED and _part(imported) not in ALLOWED[_part(importer)]]
    assert wrong == [], "imports against the benchmarks' direction:\n" + "\n".join(wrong)


def test_no_import_circle() -> None:
    found = circles(_graph())
    assert found == [], "import circles in benchmarks/:\n" + "\n".join(found)


def test_the_graph_sees_imports() -> None:
    """The walk finds real edges (a test that sees no imports would pass on anything)."""
    graph = _graph()
    assert "benchmarks.results" in graph["benchmarks.report.targets"]
    assert "benchmarks.measure.servers" in graph["benchmarks.measure.cost"]
    assert "benchmarks.measure.scale" in graph["benchmarks.measure.hostile"]
