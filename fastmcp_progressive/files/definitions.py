"""The full definition a read serves, built once per file change: a tool's registered
fields with its file's merged over them and ``$ref`` inlined, and its digest (RFC 8785
canonical JSON). ``store.py:Definitions`` keeps each per tool and file signature, so a warm
read or refusal never enters this module (split from ``store.py``, #35).

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
from typing import Any

import rfc8785
from fastmcp.tools.base import Tool
from fastmcp.utilities.json_schema import dereference_refs

from fastmcp_progressive.files.model import DescriptionFile

# -- the full definition served ------------------------------------------------------------------
_REGISTERED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema",
                      "annotations", "execution")


def registered_definition(tool: Tool) -> dict[str, Any]:
    """The tool as plain FastMCP would list it, schemas inlined, display-only fields dropped."""
    wire = tool.to_mcp_tool(name=tool.name).model_dump(by_alias=True, exclude_none=True,
                                                       mode="json")
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

    A definition without floats, integers past 2**53 or keys beyond the Basic Multilingual
    Plane (almost every one) is written by ``json.dumps`` byte for byte as JCS writes it
    (``_json_as_jcs``), five times faster than ``rfc8785``: a first describe or refusal of
    a tool computes one.
    """
    body = {k: v for k, v in definition.items() if k != "digest"}
    canonical = _json_as_jcs(body)
    if canonical is None:
        try:
            canonical = rfc8785.dumps(body)
        except rfc8785.CanonicalizationError:
            canonical = rfc8785.dumps(_i_json(body))
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


_SAFE_INTEGER = 2**53 - 1
_BMP_END = "\uffff"


def _json_as_jcs(body: dict[str, Any]) -> bytes | None:
    """``body``'s JCS bytes written by ``json.dumps``, or None when the two could differ.

    They agree on every value but numbers: strings escape the same characters the same
    way (quote, backslash, the five short escapes, other control characters as lowercase
    four-digit escapes, the rest as UTF-8), and ``null``, ``true``, ``false`` and integers
    up to 2**53 read alike.
    A float, a larger integer or a non-string key is left to ``rfc8785``; so are keys with
    a character past U+FFFF, where ordering by code point (Python) and by UTF-16 code unit
    (JCS) part; a lone surrogate has no UTF-8 form and is left to it too.
    """
    stack: list[Any] = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, str) or value is None or isinstance(value, bool):
            continue
        if isinstance(value, int):
            if abs(value) > _SAFE_INTEGER:
                return None
        elif isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str) or (not key.isascii() and max(key) > _BMP_END):
                    return None
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
        else:  # a float, a tuple or anything else: rfc8785 decides
            return None
    try:
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return None


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


# -- $ref inlined ----------------------------------------------------------------------------------
def inline_refs(schema: dict[str, Any], *, defs_only: bool = False) -> dict[str, Any]:
    """``schema`` with every ``$ref`` inlined (unchanged, not copied, when it has none).

    ``defs_only`` skips the scan for a ``$ref`` outside ``$defs`` (pydantic, and so FastMCP,
    always writes its references with ``$defs``): the ``skeleton`` listing level builds a
    schema for every fresh tool object a mounted or proxied server hands out, and the scan
    costs about five times the skeleton itself (six parameters: 21 us against 4.7 us).
    """
    if "$defs" in schema or (not defs_only and "$ref" in json.dumps(schema)):
        return dereference_refs(schema)
    return schema
