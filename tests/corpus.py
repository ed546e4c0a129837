"""Where the real tool catalogs are: ``../shared/corpus/*.tools.json`` beside the checkout.

The corpus is read-only third-party data kept outside the repository (it is not in the
sdist either). ``FASTMCP_PROGRESSIVE_CORPUS`` points elsewhere. Tests that need it skip,
saying so, when it is absent; the benchmarks read it through here too.

Example:
    ```python
    tools = catalog_tools("github-mcp-server")     # the JSON array tools/list returned
    ```
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CORPUS_ENV = "FASTMCP_PROGRESSIVE_CORPUS"
SUFFIX = ".tools.json"
REPO_ROOT = Path(__file__).resolve().parent.parent


def corpus_dir() -> Path:
    """Where the catalogs are: ``$FASTMCP_PROGRESSIVE_CORPUS`` or ``../shared/corpus``."""
    configured = os.environ.get(CORPUS_ENV)
    return Path(configured) if configured else REPO_ROOT.parent / "shared" / "corpus"


def catalog_path(name: str) -> Path:
    return corpus_dir() / f"{name}{SUFFIX}"


def catalog_tools(path: Path) -> list[dict[str, Any]]:
    """Read one catalog file; fail loudly if it is not a JSON array of named tools."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(t, dict) and "name" in t for t in data):
        raise ValueError(f"{path}: expected a JSON array of tool objects")
    return data


def catalog_names() -> list[str]:
    """Every catalog in the corpus folder (file name without ``.tools.json``)."""
    return sorted(p.name[: -len(SUFFIX)] for p in corpus_dir().glob(f"*{SUFFIX}"))


def smallest_catalog() -> tuple[str, list[dict[str, Any]]]:
    """The catalog with the fewest tools (ties broken by name): the smoke runs' input."""
    names = catalog_names()
    if not names:
        raise FileNotFoundError(f"no *{SUFFIX} catalogs in {corpus_dir()} (set {CORPUS_ENV})")
    loaded = {name: catalog_tools(catalog_path(name)) for name in names}
    name = min(loaded, key=lambda n: (len(loaded[n]), n))
    return name, loaded[name]


SERVERS_FILE = "livemcptool.servers.json"
TASKS_FILE = "livemcpbench-tasks.public.json"


def servers_path() -> Path:
    """LiveMCPBench's 70 servers (``server``, ``title``, ``description``, ``tools``)."""
    return corpus_dir() / SERVERS_FILE


def load_servers() -> list[dict[str, Any]]:
    data = json.loads(servers_path().read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(s, dict) and "server" in s for s in data):
        raise ValueError(f"{servers_path()}: expected a JSON array of servers")
    return data


def load_tasks() -> list[dict[str, Any]]:
    """LiveMCPBench's public tasks: a ``question`` and the ``tools`` (short names) it needs."""
    data = json.loads((corpus_dir() / TASKS_FILE).read_text(encoding="utf-8"))
    return [t for t in data if isinstance(t, dict) and isinstance(t.get("question"), str)]
