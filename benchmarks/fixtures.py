"""Description files for a catalog, so reads have a file cache to hit or miss.

The token section serves registered definitions only (no files: what a user gets with
one line of middleware). The latency and scale sections need files: a cache hit costs
one ``stat``, a miss a read and a parse. Each file holds what a developer would add: a
short ``summary``, one worked example using the tool's required arguments, and a line of
usage guidance. Contents are derived from the catalog, deterministic, and never copied
into the report.

Example:
    ```python
    write_descriptions(catalog, Path(tmp))   # one <tool>.json per tool
    rewrite_marker(Path(tmp) / "get_me.json", "v2", atomic=False)
    ```
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fastmcp_progressive.disclosure.listing import summarize

from .corpus import Catalog

MARKER_KEY = "usage_guidance"


def sample_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """Plausible values for the tool's required arguments (first enum value, 1, "value")."""
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    return {name: _sample(properties.get(name, {})) for name in schema.get("required", [])}


def description_file(tool: dict[str, Any], marker: str = "v1") -> dict[str, Any]:
    """The JSON a developer might write for ``tool`` (summary, one example, guidance)."""
    return {
        "summary": summarize(tool.get("description") or tool["name"], 120),
        "examples": [
            {
                "description": f"Call {tool['name']} with its required arguments.",
                "input": sample_arguments(tool),
            }
        ],
        MARKER_KEY: f"[{marker}] Check the result before calling another tool.",
    }


def _sample(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return "value"
    if spec.get("enum"):
        return spec["enum"][0]
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(
        str(kind), "value"
    )


def write_descriptions(catalog: Catalog, directory: Path) -> Path:
    """Write ``<tool>.json`` for every tool of ``catalog`` into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for tool in catalog.tools:
        path = directory / f"{tool['name']}.json"
        path.write_text(json.dumps(description_file(tool)), encoding="utf-8")
    return directory


def rewrite_marker(path: Path, marker: str, *, atomic: bool) -> None:
    """Change the guidance marker of one file, in place or by ``os.replace``.

    The in-place write keeps the inode and, for equal-length markers, the size: only the
    mtime tells the change apart, the hardest case for a stat-based cache.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    data[MARKER_KEY] = f"[{marker}] Check the result before calling another tool."
    text = json.dumps(data)
    if not atomic:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
