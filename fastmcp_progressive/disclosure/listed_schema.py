"""The input schema each listing level shows, written so every known host can read it.

Levels (``ListingSettings.level``):

- ``"typed"`` (default): every argument the tool takes, each with one plain JSON type or an
  ``anyOf`` of plain types, and ``required`` exactly as registered. Nothing else: no
  descriptions, enums, formats, bounds, defaults or nested object properties (the full
  definition, and the gate's refusal, carry those). An array keeps the type of its items
  (``{"type": "array", "items": {"type": "string"}}``): OpenAI and Gemini reject an array
  schema without ``items``, and AutoGen reads a missing ``items`` as a list of strings.
- ``"skeleton"``: ``typed`` plus the structure inside: enum values, and the properties and
  ``required`` of nested objects (typed the same way), for hosts that build nested
  validation models from the listing.
- ``"minimal"``: ``{"type": "object", "properties": {}}`` (the extension spec's
  suggestion), only for clients known to pass undeclared arguments through: a third of
  agent frameworks read the listed properties as the whole contract and then drop, reject
  or never offer every argument (see ``../shared/notes/hosts.md``).

Why one type and never a type list: Semantic Kernel copies ``type`` into a ``str`` field,
AutoGen hashes it and DSPy looks it up in a dict, so ``{"type": ["integer", "null"]}``
fails at tool load and makes the whole server unusable there. A nullable optional
argument (``int | None = None``) is listed as its non-null type: it is optional because
it is not in ``required``, and a model never needs to send ``null`` to leave it out (the
server still accepts ``null``: calls are checked against the registered schema). Only an
argument whose sole type is ``null`` is listed as ``{"type": "null"}``. An argument that
declares no type at all (``Any``) is listed as an ``anyOf`` of every non-null type, since
AutoGen refuses a property without one.

Every level also keeps the properties annotated ``x-mcp-header`` (``with_headers``), each
with its type and its annotation and nothing else of them: on 2026-07-28 HTTP a client
turns each such property of the *listed* schema into an ``Mcp-Param-*`` header, and FastMCP
>= 4.2 validates those headers against the schemas it last listed (one server-wide cache,
refreshed by every ``tools/list``), so a listing that dropped one would make calls fail
(HTTP 400) for whichever client listed before or after.

Example:
    ```python
    typed({"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}})
    # {"type": "object", "properties": {"n": {"type": "integer"}}}
    ```
"""

from __future__ import annotations

import copy
from typing import Any

from fastmcp_progressive.files.definitions import inline_refs

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object")
"""The non-null JSON Schema types, in the order an untyped argument lists them."""
MAX_DEPTH = 8
"""Nesting (array items, ``skeleton``'s object properties) followed before a bare type."""
_SCALARS = frozenset(("string", "integer", "number", "boolean"))
HEADER_KEY = "x-mcp-header"
_KEPT_OF_HEADERS = ("type", HEADER_KEY)

_PYTHON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    (list, "array"), (dict, "object"), (type(None), "null"))


def minimal(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``minimal`` level, a new dict each time (a listed copy shares nothing). No
    ``additionalProperties``: JSON Schema's default already allows any argument, and the
    hosts measured to drop undeclared arguments drop them with ``true`` spelled out as well;
    the key costs 5 tokens a tool (590 on github-mcp-server)."""
    return {"type": "object", "properties": {}}


def _fresh(value: Any) -> Any:
    """``value`` itself when immutable, else a deep copy: every level's schema is built
    of new dicts and lists, so a listed copy shares nothing with the registered schema
    (the listing keeps it without a deep copy of the whole)."""
    return value if value is None or isinstance(value, str | int | float) else copy.deepcopy(value)


def typed(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``typed`` level: argument names with plain types, and ``required``."""
    return _object(inline_refs(schema, defs_only=True), deep=False, depth=0)


def skeleton(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``skeleton`` level: ``typed`` plus enums and nested objects' properties."""
    return _object(inline_refs(schema, defs_only=True), deep=True, depth=0)


LEVELS = {"typed": typed, "skeleton": skeleton, "minimal": minimal}
"""Each listing level's schema, from the registered one."""


def _object(schema: dict[str, Any], *, deep: bool, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": {}}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {name: _argument(spec, deep=deep, depth=depth + 1)
                             for name, spec in properties.items() if isinstance(name, str)}
    required = schema.get("required")
    if isinstance(required, list) and required:
        out["required"] = [_fresh(name) for name in required]
    return out


def _argument(spec: Any, *, deep: bool, depth: int) -> dict[str, Any]:
    """One argument's listed schema: a plain type, or an ``anyOf`` of plain types."""
    if isinstance(spec, dict):  # the common case, answered as ``_members`` would answer it
        kind = spec.get("type")
        if isinstance(kind, str) and kind in _SCALARS and not (deep and "enum" in spec):
            return {"type": kind}
    members = _members(spec, deep=deep, depth=depth)
    if not members:
        members = [_plain(kind, None, deep=False, depth=depth) for kind in JSON_TYPES]
    return members[0] if len(members) == 1 else {"anyOf": members}


def _members(spec: Any, *, deep: bool, depth: int) -> list[dict[str, Any]]:
    """The plain member schemas ``spec`` allows, ``null`` left out unless it is all."""
    found: list[tuple[str, Any]] = []
    _collect(spec, found, depth=0)
    if any(kind != "null" for kind, _ in found):
        found = [(kind, source) for kind, source in found if kind != "null"]
    first: dict[str, Any] = {}  # each kind from the first schema naming it
    for kind, source in found:
        first.setdefault(kind, source)
    return [_plain(kind, source, deep=deep, depth=depth) for kind, source in first.items()]


def _collect(spec: Any, found: list[tuple[str, Any]], *, depth: int) -> None:
    """Every (type, the schema it came from) that ``spec`` names, through unions."""
    if not isinstance(spec, dict) or depth > MAX_DEPTH:
        return
    kind = spec.get("type")
    if isinstance(kind, str):
        found.append((kind, spec))
        return
    if isinstance(kind, list):
        found.extend((k, spec) for k in kind if isinstance(k, str))
        return
    for key in ("anyOf", "oneOf", "allOf"):
        options = spec.get(key)
        if isinstance(options, list):
            before = len(found)
            for option in options:
                _collect(option, found, depth=depth + 1)
                if key == "allOf" and len(found) > before:
                    return  # every part holds: the first typed one says what it is
            if len(found) > before:
                return
    values = spec["enum"] if isinstance(spec.get("enum"), list) else (
        [spec["const"]] if "const" in spec else [])
    for value in values:
        found.append((_value_type(value), spec))
    if not values:
        if isinstance(spec.get("properties"), dict):
            found.append(("object", spec))
        elif "items" in spec:
            found.append(("array", spec))


def _value_type(value: Any) -> str:
    return next((kind for python, kind in _PYTHON_TYPES if isinstance(value, python)), "string")


def _plain(kind: str, source: Any, *, deep: bool, depth: int) -> dict[str, Any]:
    """``{"type": kind}``, with its items' type for an array and, at ``skeleton``, the
    enum and the nested properties the source schema declares."""
    source = source if isinstance(source, dict) else {}
    if kind not in JSON_TYPES and kind != "null":
        kind = "string"  # a type no JSON Schema knows: the wire form is text anyway
    out: dict[str, Any] = {"type": kind}
    if kind == "array":
        items = source.get("items")
        members = _members(items, deep=deep, depth=depth + 1) if depth < MAX_DEPTH else []
        # no item type known: ``{}`` (any item), never a missing ``items``
        out["items"] = (members[0] if len(members) == 1 else {"anyOf": members}) if members else {}
    elif deep and kind == "object" and depth < MAX_DEPTH and isinstance(
            source.get("properties"), dict):
        nested = _object(source, deep=True, depth=depth)
        out["properties"] = nested["properties"]
        if "required" in nested:
            out["required"] = nested["required"]
    if deep and isinstance(source.get("enum"), list):
        values = [_fresh(v) for v in source["enum"] if _value_type(v) == kind]
        if values:
            out["enum"] = values
    return out


def header_properties(schema: dict[str, Any]) -> dict[str, Any]:
    """The top-level properties of ``schema`` annotated ``x-mcp-header``, reduced to
    their type and annotation."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {name: {key: _fresh(spec[key]) for key in _KEPT_OF_HEADERS if key in spec}
            for name, spec in properties.items() if isinstance(spec, dict) and HEADER_KEY in spec}


def with_headers(reduced: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``reduced`` with the header properties of ``schema`` (the registered one) put back."""
    headers = header_properties(schema)
    if not headers:
        return reduced
    properties = dict(reduced.get("properties") or {})
    for name, spec in headers.items():
        properties[name] = {**properties.get(name, {}), **spec}
    return {**reduced, "properties": properties}
