"""Catalog tools replayed on a FastMCP server: the same listing, a permissive body.

Each catalog tool becomes a ``ReplayTool``: a ``fastmcp.tools.base.Tool`` whose name,
title, description, input/output schema, annotations, icons, ``_meta`` and execution come
from the JSON, so ``tools/list`` is what FastMCP would serve for that server. The body
accepts any arguments (no validation, like a permissive real tool) and answers ``REPLY``
plus, when the tool declares an ``outputSchema``, the smallest object that satisfies it,
so a client that validates structured output accepts the answer.

``ReplayTool`` keeps FastMCP's own equality semantics (and so is unhashable, exactly like
``FunctionTool``). Tests replay corpus catalogs with it, and so do the benchmarks
(``benchmarks/measure/servers.py``), so both count the same listing. ``gateway()`` replays
LiveMCPBench's 70 servers (527 tools) behind one front, each mounted under its name.

Example:
    ```python
    mcp = FastMCP("github")
    for spec in catalog_tools(catalog_path("github-mcp-server")):
        mcp.add_tool(replay_tool(spec))
    ```
"""

from __future__ import annotations

from typing import Any

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import Tool, ToolResult

from tests.corpus import load_servers

REPLY = "ok"


class ReplayTool(Tool):
    """A catalog tool that accepts any arguments and returns a fixed, schema-valid answer."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        content = [mt.TextContent(type="text", text=REPLY)]
        if self.output_schema is None:
            return ToolResult(content=content)
        return ToolResult(content=content, structured_content=placeholder(self.output_schema))


def replay_tool(spec: dict[str, Any]) -> ReplayTool:
    """The ``ReplayTool`` for one wire-format tool object."""
    return ReplayTool.model_validate(
        {
            "name": spec["name"],
            "title": spec.get("title"),
            "description": spec.get("description"),
            "parameters": spec.get("inputSchema") or {"type": "object"},
            "output_schema": spec.get("outputSchema"),
            "annotations": spec.get("annotations"),
            "icons": spec.get("icons"),
            "meta": spec.get("_meta"),
            "execution": spec.get("execution"),
        }
    )


def placeholder(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The smallest JSON value ``schema`` accepts (required fields only, empty arrays)."""
    if defs is None:
        defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1])
        return placeholder(target, defs) if isinstance(target, dict) else None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and isinstance(options[0], dict):
            return placeholder(options[0], defs)
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: placeholder(properties.get(name, {}), defs)
            for name in schema.get("required", [])
        }
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(
        str(kind)
    )


def gateway(middleware: Middleware | None = None,
            servers: list[dict[str, Any]] | None = None) -> FastMCP:
    """The LiveMCPTool gateway: every server replayed (its description as its
    instructions) and mounted under its name, as ``proxy --config`` serves upstreams, so
    each is a group; ``middleware`` (ours, or None for plain) on the front."""
    front = FastMCP("livemcptool-gateway")
    for spec in servers if servers is not None else load_servers():
        child = FastMCP(spec["server"], instructions=spec.get("description") or None)
        for tool in spec["tools"]:
            child.add_tool(replay_tool(tool))
        front.mount(child, namespace=spec["server"])
    if middleware is not None:
        front.add_middleware(middleware)
    return front
