"""The package's imports point one way: down the wings, never in a circle (issue #22).

Ranks, lowest first (``docs/architecture.md``): the top-level base (``settings``,
``options``, ``log``, ``memo``, ``payloads``, ``fastmcp_internals``), then ``files``,
``access``, ``disclosure``, ``resolution``, then ``middleware``, ``proxy`` and ``cli``. A
module may import its own wing and any wing below it. Every import counts, those inside
functions and under ``TYPE_CHECKING`` included, so a circle cannot hide in a lazy import.
The package's ``__init__`` (the public surface) and the deprecated stubs sit outside the
ranks: they only re-export.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "fastmcp_progressive"
NAME = "fastmcp_progressive"

RANKS: dict[str, int] = {
    "settings": 0,
    "options": 0,
    "log": 0,
    "memo": 0,
    "hosts": 0,
    "payloads": 0,
    "fastmcp_internals": 0,
    "files": 1,
    "access": 2,
    "disclosure": 3,
    "resolution": 4,
    "middleware": 5,
    "proxy": 6,
    "cli": 7,
}
OUTSIDE = {"__init__", "__main__", "_deprecated"}  # the surface, the entry, the stubs' helper


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_stub(path: Path) -> bool:
    return "from fastmcp_progressive._deprecated import moved" in path.read_text()


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(path: Path, here: str, modules: Collection[str]) -> set[str]:
    """Every package module ``path`` imports, at any depth of its code (``from pkg import
    module`` counts as importing ``module``, not ``pkg``)."""
    found: set[str] = set()
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(NAME))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if not module.startswith(NAME):
                continue
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found.add(submodule if submodule in modules else module)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if _is_stub(path):
            continue
        graph[name] = {m for m in _imports(path, name, modules) if m in modules and m != name}
    return graph


def _rank(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in OUTSIDE:
        return None
    return RANKS.get(parts[1])


def test_every_module_has_a_rank() -> None:
    unranked = sorted(
        name
        for name, path in _modules().items()
        if name != NAME and not _is_stub(path) and _rank(name) is None
        and name.split(".")[1] not in OUTSIDE
    )
    assert unranked == [], f"modules outside every wing (add them to RANKS): {unranked}"


def test_no_import_points_up() -> None:
    upward = [
        f"{importer} imports {imported} (rank {_rank(importer)} -> {_rank(imported)})"
        for importer, imported_set in sorted(_graph().items())
        for imported in sorted(imported_set)
        if (r := _rank(importer)) is not None
        and (s := _rank(imported)) is not None
        and s > r
    ]
    assert upward == [], "imports from a lower wing up to a higher one:\n" + "\n".join(upward)


def test_no_import_circle() -> None:
    graph = {k: {m for m in v if m != NAME} for k, v in _graph().items() if k != NAME}
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
    assert circles == [], "import circles:\n" + "\n".join(circles)
