"""The real tool catalogs the benchmarks replay (``shared/corpus/*.tools.json``).

The corpus lives beside the repository (``../shared/corpus``), is read-only third-party
data, and is loaded exactly as stored. Set ``FASTMCP_PROGRESSIVE_CORPUS`` to point
elsewhere (a CI checkout with another layout).

Example:
    ```python
    catalogs = load_corpus()               # all seven, smallest first
    github = load_corpus(["github-mcp-server"])[0]
    len(github.tools)                      # 117
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.corpus import (  # one definition of where the corpus is, shared with the tests
    CORPUS_ENV,
    REPO_ROOT,
    SUFFIX,
    catalog_names,
    catalog_tools,
    corpus_dir,
    smallest_catalog,
)

__all__ = ["CORPUS_ENV", "REPO_ROOT", "Catalog", "available", "corpus_dir", "largest",
           "load_catalog", "load_corpus", "smallest"]


@dataclass(frozen=True)
class Catalog:
    """One server's tools as its ``tools/list`` returned them (wire-named JSON objects)."""

    name: str
    tools: tuple[dict[str, Any], ...]

    @property
    def names(self) -> list[str]:
        return [tool["name"] for tool in self.tools]

    def tool(self, name: str) -> dict[str, Any]:
        for tool in self.tools:
            if tool["name"] == name:
                return tool
        raise KeyError(name)


available = catalog_names

def load_catalog(path: Path) -> Catalog:
    """Read one catalog file; fail loudly if it is not a JSON array of named tools."""
    return Catalog(name=path.name[: -len(SUFFIX)], tools=tuple(catalog_tools(path)))


def load_corpus(names: Sequence[str] | None = None) -> list[Catalog]:
    """The named catalogs (all when ``names`` is None), smallest catalog first."""
    folder = corpus_dir()
    chosen = list(names) if names is not None else available()
    if not chosen:
        raise FileNotFoundError(f"no *{SUFFIX} catalogs in {folder} (set {CORPUS_ENV})")
    catalogs = [load_catalog(folder / f"{name}{SUFFIX}") for name in chosen]
    return sorted(catalogs, key=lambda c: (len(c.tools), c.name))


def smallest() -> Catalog:
    """The catalog with the fewest tools (the smoke run's input)."""
    name, tools = smallest_catalog()
    return Catalog(name=name, tools=tuple(tools))


def largest() -> Catalog:
    """The catalog with the most tools (the latency section's input)."""
    return load_corpus()[-1]
