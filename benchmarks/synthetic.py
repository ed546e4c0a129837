"""Synthetic catalogs of any size, shaped like the real ones, for the scale section.

No real server has 10,000 tools, but a gateway aggregating many servers can. Tools here
are deterministic (seeded), with names built from verbs and nouns, two- or
three-sentence descriptions and 2-6 typed parameters (some enums, some required), which
puts their size near the corpus median (about 1 KB of JSON per tool).

Example:
    ```python
    catalog = synthetic_catalog(1_000)
    len(catalog.tools)  # 1000
    ```
"""

from __future__ import annotations

import random
from typing import Any

from .corpus import Catalog

_VERBS = ("get", "list", "create", "update", "delete", "search", "sync", "export", "archive",
          "restore")
_NOUNS = ("invoice", "customer", "ticket", "repository", "deployment", "dataset", "report",
          "channel", "cluster", "document", "payment", "subscription", "alert", "pipeline")
_PARAMS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("id", {"type": "string", "description": "Unique identifier of the {noun}."}),
    ("owner", {"type": "string", "description": "Account or organisation that owns the {noun}."}),
    ("limit", {"type": "integer", "minimum": 1, "maximum": 100,
               "description": "Maximum number of results to return (1-100)."}),
    ("cursor", {"type": "string", "description": "Pagination cursor from a previous call."}),
    ("status", {"type": "string", "enum": ["open", "closed", "pending", "archived"],
                "description": "Only {noun}s in this state."}),
    ("tags", {"type": "array", "items": {"type": "string"},
              "description": "Labels attached to the {noun}."}),
    ("dry_run", {"type": "boolean", "description": "Validate without changing anything."}),
    ("payload", {"type": "object", "additionalProperties": True,
                 "description": "Fields of the {noun} to write."}),
)


def synthetic_tool(index: int, rng: random.Random) -> dict[str, Any]:
    """One tool object in wire format (name, description, inputSchema, annotations)."""
    verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
    chosen = rng.sample(_PARAMS, rng.randint(2, 6))
    properties = {
        name: {**spec, "description": spec["description"].format(noun=noun)}
        for name, spec in chosen
    }
    required = [name for name in properties if rng.random() < 0.4]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    description = (
        f"{verb.capitalize()} a {noun} in the workspace. "
        f"Use this when the user asks to {verb} one or more {noun}s; results include ids "
        f"that other {noun} tools accept."
        + (" Requires write access." if verb in ("create", "update", "delete") else "")
    )
    return {
        "name": f"{verb}_{noun}_{index:05d}",
        "description": description,
        "inputSchema": schema,
        "annotations": {"readOnlyHint": verb in ("get", "list", "search", "export")},
    }


def synthetic_catalog(size: int, *, seed: int = 0) -> Catalog:
    """A catalog of ``size`` synthetic tools (same seed and size: same tools)."""
    rng = random.Random(seed)
    return Catalog(name=f"synthetic-{size}",
                   tools=tuple(synthetic_tool(i, rng) for i in range(size)))
