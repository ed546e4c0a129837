"""Input-schema properties a reduced listing must keep: those annotated ``x-mcp-header``.

On 2026-07-28 HTTP a client turns each property annotated ``x-mcp-header`` in the
*listed* input schema into an ``Mcp-Param-*`` header, and FastMCP >= 4.2 validates those
headers against the schemas it last listed (one server-wide cache, refreshed by every
``tools/list``). A reduced listing that dropped such a property would make calls fail
(HTTP 400) for whichever client listed before or after. So every listing level keeps
these properties, each with its type and its annotation, and nothing else of them.

Example:
    ```python
    header_properties({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}})
    # {"region": {"type": "string", "x-mcp-header": "Region"}}
    ```
"""

from __future__ import annotations

from typing import Any

HEADER_KEY = "x-mcp-header"
_KEPT = ("type", HEADER_KEY)


def header_properties(schema: dict[str, Any]) -> dict[str, Any]:
    """The top-level properties of ``schema`` annotated ``x-mcp-header``, reduced to
    their type and annotation."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        name: {key: spec[key] for key in _KEPT if key in spec}
        for name, spec in properties.items()
        if isinstance(spec, dict) and HEADER_KEY in spec
    }


def with_headers(reduced: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``reduced`` with the header properties of ``schema`` (the registered one) put back."""
    headers = header_properties(schema)
    if not headers:
        return reduced
    properties = dict(reduced.get("properties") or {})
    for name, spec in headers.items():
        properties[name] = {**properties.get(name, {}), **spec}
    return {**reduced, "properties": properties}
