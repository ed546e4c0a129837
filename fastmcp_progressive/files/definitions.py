"""The full definition served for one tool: its registered form with its file merged over it.

A tool needs no description file: its registered name, description, schemas and
annotations already make a full definition. A file adds examples and guidance, or
overrides any field (a file never has to copy a schema). Each definition carries a
``digest``: the SHA-256 of its RFC 8785 (JCS) canonical JSON, the form tool-manifest
proposals assume, so a client can cache it, notice when it changes, and recompute it with
any JCS implementation.

Example:
    ```python
    definition = full_definition(tool, store.lookup(tool.name))
    definition["digest"]  # "sha256:..."
    ```
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Hashable
from typing import Any

import rfc8785
from fastmcp.tools.base import Tool

from fastmcp_progressive.caches import ToolCache
from fastmcp_progressive.files.model import DescriptionFile
from fastmcp_progressive.files.schema_refs import inline_refs
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.settings import CacheSettings

_REGISTERED_FIELDS = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
)


def registered_definition(tool: Tool) -> dict[str, Any]:
    """The tool as plain FastMCP would list it, schemas inlined, display-only fields dropped."""
    wire = tool.to_mcp_tool(name=tool.name).model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    definition = {key: wire[key] for key in _REGISTERED_FIELDS if key in wire}
    for key in ("inputSchema", "outputSchema"):
        schema = definition.get(key)
        if isinstance(schema, dict):
            definition[key] = inline_refs(schema)
    return definition


def full_definition(tool: Tool, file: DescriptionFile | None) -> dict[str, Any]:
    """What ``resources/read`` returns for ``tool``: registered fields, file fields over them."""
    definition = registered_definition(tool)
    if file is not None:
        definition.update(file.fields())
        definition["name"] = tool.name
    definition["digest"] = digest(definition)
    return definition


def digest(definition: dict[str, Any]) -> str:
    """``sha256:`` and the hex SHA-256 of the definition (``digest`` itself left out) as
    RFC 8785 canonical JSON (JCS: UTF-16 key order, ECMAScript number forms, UTF-8).

    The canonical form comes from ``rfc8785`` (Trail of Bits), not from ``json.dumps``:
    number formatting (``1e+21``, ``-0`` as ``0``) and key order by UTF-16 code units are
    where a hand-written canonicaliser goes wrong. JCS knows only I-JSON values, so two a
    Python schema may hold are mapped first, as any JSON parser would meet them: an integer
    beyond 2**53 becomes the double it reads as, and a non-finite float (no JSON form at
    all) becomes the string ``json.dumps`` would write (``"NaN"``, ``"Infinity"``), as
    does an integer too large for any double.
    """
    body = {k: v for k, v in definition.items() if k != "digest"}
    try:
        canonical = rfc8785.dumps(body)
    except rfc8785.CanonicalizationError:
        canonical = rfc8785.dumps(_i_json(body))
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


_SAFE_INTEGER = 2**53 - 1


def _i_json(value: Any) -> Any:
    """``value`` with the numbers JCS refuses replaced as ``digest`` says."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) <= _SAFE_INTEGER:
            return value
        try:
            return _i_json(float(value))  # the double a JSON parser reads it as
        except OverflowError:  # past every double: a parser reads an infinity
            return "-Infinity" if value < 0 else "Infinity"
    if isinstance(value, float):
        return value if math.isfinite(value) else json.dumps(value)
    if isinstance(value, dict):
        return {k: _i_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_i_json(v) for v in value]
    return value


class Definitions:
    """Full definitions, memoized per tool (by object, else by content) and file signature.

    A cache hit costs the file's ``stat`` (so an edit is served by the next read) and a
    dictionary lookup; the merge, schema inlining and digest run once per change. The
    content key lets a mounted or proxied server's fresh tool objects hit as well; at most
    ``cache_size`` definitions are kept (least recently used dropped first).
    """

    def __init__(self, store: DescriptionStore, *,
                 cache_size: int = CacheSettings.definitions) -> None:
        self.store = store
        self._memo: ToolCache[tuple[Any, dict[str, Any], str]] = ToolCache(
            cache_size, key=registered_content)

    def for_tool(self, tool: Tool) -> tuple[dict[str, Any], str]:
        """The full definition of ``tool`` as its file says now, and its compact JSON."""
        sig = self.store.signature(tool.name)
        memo: tuple[Any, dict[str, Any], str] | None = self._memo.get(tool)
        if memo is not None and memo[0] == sig:
            return memo[1], memo[2]
        definition = full_definition(tool, self.store.lookup_at(tool.name, sig))
        text = compact_json(definition)
        self._memo.put(tool, (sig, definition, text))
        return definition, text


def registered_content(tool: Tool) -> Hashable:
    """The fields ``registered_definition`` reads: equal for a mounted or proxied copy."""
    return (
        tool.name, tool.title, tool.description, repr(tool.parameters),
        repr(tool.output_schema), repr(tool.annotations), repr(tool.execution),
        repr(tool.task_config),
    )


def compact_json(value: Any) -> str:
    """JSON as served: compact separators, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
