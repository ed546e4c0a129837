"""FastMCP servers that replay a catalog: the same tools, served plain, by us, or searched.

Each catalog tool becomes a ``ReplayTool``: a ``fastmcp.tools.base.Tool`` whose name,
title, description, input/output schema, annotations, icons, ``_meta`` and execution come
from the JSON, so ``tools/list`` is what FastMCP would serve for that server. The body
accepts any arguments (no validation, like a permissive real tool) and answers a short
fixed text plus, when the tool declares an ``outputSchema``, the smallest object that
satisfies it, so a client that validates structured output accepts the answer.

``ReplayTool`` keeps FastMCP's own equality semantics (and so is unhashable, exactly like
``FunctionTool``): a benchmark that made tools hashable would measure a server no user has.

Example:
    ```python
    server = build_server(catalog, "minimal")
    async with Client(server.mcp) as client:
        await client.list_tools()
    ```
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.resources.types import TextResource
from fastmcp.server.auth import AuthProvider
from fastmcp.server.middleware import Middleware
from fastmcp.server.transforms.search import BM25SearchTransform, RegexSearchTransform
from fastmcp.tools.base import Tool, ToolResult
from pydantic import AnyUrl

from fastmcp_progressive import ListingLevel, ListingSettings, ProgressiveDisclosure

from .corpus import Catalog

Variant = Literal["plain", "minimal", "skeleton", "regex", "bm25"]
VARIANTS: tuple[Variant, ...] = ("plain", "minimal", "skeleton", "regex", "bm25")
PROGRESSIVE: tuple[Variant, ...] = ("minimal", "skeleton")
SEARCH: tuple[Variant, ...] = ("regex", "bm25")
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


@dataclass
class ReplayServer:
    """A replay server and, for our variants, the middleware instance inside it."""

    variant: Variant
    mcp: FastMCP
    middleware: ProgressiveDisclosure | None

    async def settle(self, timeout: float = 60.0) -> None:
        """Wait until our description-file watcher is armed and has read every file.

        The first request starts the watcher thread, which parses the whole directory
        once in the background; timing before it finishes would measure that thread
        competing for the GIL. Waits on the watcher's own ``ready`` event (no sleeping);
        returns at once when there is no watcher (no files, or a package without one).
        """
        hot = getattr(self.middleware, "hot_reload", None)
        ready = getattr(getattr(hot, "watcher", None), "ready", None)
        if isinstance(ready, threading.Event):
            await asyncio.to_thread(ready.wait, timeout)

    async def preloaded(self, timeout: float = 60.0) -> float | None:
        """Wait until ours' start-up preload of description files is done; its duration.

        None when there is no preload (plain, or a package without one).
        """
        preload = getattr(self.middleware, "preload", None)
        done = getattr(preload, "done", None)
        if not isinstance(done, threading.Event):
            return None
        await asyncio.to_thread(done.wait, timeout)
        seconds = getattr(preload, "seconds", None)
        return seconds if isinstance(seconds, float) else None


def build_server(
    catalog: Catalog,
    variant: Variant,
    *,
    descriptions_dir: Path | None = None,
    outer: Sequence[Middleware] = (),
    auth: AuthProvider | None = None,
    static_resources: dict[str, str] | None = None,
    options: dict[str, Any] | None = None,
) -> ReplayServer:
    """A FastMCP server serving ``catalog`` as ``variant``.

    ``outer`` middleware is added before ours, so it sees each request before and after
    us (a timer there measures our work plus FastMCP's). ``static_resources`` maps URIs to
    JSON texts served as plain resources (the baseline for description reads).
    ``options`` are extra ``ProgressiveDisclosure`` settings (its ``listing`` takes the
    variant's level).
    """
    mcp = FastMCP(f"replay-{catalog.name}", auth=auth)
    for spec in catalog.tools:
        mcp.add_tool(replay_tool(spec))
    for uri, text in (static_resources or {}).items():
        mcp.add_resource(
            TextResource(uri=AnyUrl(uri), name=f"static-{len(uri)}", text=text,
                         mime_type="application/json")
        )
    for middleware in outer:
        mcp.add_middleware(middleware)
    ours: ProgressiveDisclosure | None = None
    if variant in PROGRESSIVE:
        level: ListingLevel = "minimal" if variant == "minimal" else "skeleton"
        chosen = dict(options or {})
        listing = replace(chosen.pop("listing", ListingSettings()), level=level)
        ours = ProgressiveDisclosure(descriptions_dir, listing=listing, **chosen)
        mcp.add_middleware(ours)
    elif variant == "regex":
        mcp.add_transform(RegexSearchTransform())
    elif variant == "bm25":
        mcp.add_transform(BM25SearchTransform())
    return ReplayServer(variant=variant, mcp=mcp, middleware=ours)
