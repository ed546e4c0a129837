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

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPUS_ENV = "FASTMCP_PROGRESSIVE_CORPUS"
SUFFIX = ".tools.json"
REPO_ROOT = Path(__file__).resolve().parent.parent


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


def corpus_dir() -> Path:
    """Where the catalogs are: ``$FASTMCP_PROGRESSIVE_CORPUS`` or ``../shared/corpus``."""
    configured = os.environ.get(CORPUS_ENV)
    return Path(configured) if configured else REPO_ROOT.parent / "shared" / "corpus"


def available() -> list[str]:
    """Names of every catalog in the corpus folder (file name without ``.tools.json``)."""
    return sorted(p.name[: -len(SUFFIX)] for p in corpus_dir().glob(f"*{SUFFIX}"))


def load_catalog(path: Path) -> Catalog:
    """Read one catalog file; fail loudly if it is not a JSON array of named tools."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(t, dict) and "name" in t for t in data):
        raise ValueError(f"{path}: expected a JSON array of tool objects")
    return Catalog(name=path.name[: -len(SUFFIX)], tools=tuple(data))


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
    return load_corpus()[0]


def largest() -> Catalog:
    """The catalog with the most tools (the latency section's input)."""
    return load_corpus()[-1]
