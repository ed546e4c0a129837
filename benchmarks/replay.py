"""FastMCP servers that replay a catalog: the same tools, served plain, by us, or searched.

Each catalog tool becomes a ``ReplayTool`` (``tests/replay.py``, shared with the tests):
the listing FastMCP would serve for that server, and a body that accepts any arguments.
``ReplayTool`` keeps FastMCP's own equality semantics (unhashable, like ``FunctionTool``):
a benchmark that made tools hashable would measure a server no user has.

Example:
    ```python
    server = build_server(catalog, "typed")
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

from fastmcp import FastMCP
from fastmcp.resources.types import TextResource
from fastmcp.server.auth import AuthProvider
from fastmcp.server.middleware import Middleware
from fastmcp.server.transforms.search import BM25SearchTransform, RegexSearchTransform
from pydantic import AnyUrl

from fastmcp_progressive import ListingLevel, ListingSettings, ProgressiveDisclosure
from tests.replay import replay_tool

from .corpus import Catalog

Variant = Literal["plain", "typed", "minimal", "skeleton", "regex", "bm25"]
VARIANTS: tuple[Variant, ...] = ("plain", "typed", "minimal", "skeleton", "regex", "bm25")
PROGRESSIVE: tuple[Variant, ...] = ("typed", "minimal", "skeleton")
DEFAULT: Variant = "typed"
"""Ours as one line of middleware sets it up (``ListingSettings``' default level)."""
assert ListingSettings.level == DEFAULT, "the benchmarks' default is the package's"
SEARCH: tuple[Variant, ...] = ("regex", "bm25")


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
    list_page_size: int | None = None,
) -> ReplayServer:
    """A FastMCP server serving ``catalog`` as ``variant``.

    ``outer`` middleware is added before ours, so it sees each request before and after
    us (a timer there measures our work plus FastMCP's). ``static_resources`` maps URIs to
    JSON texts served as plain resources (the baseline for description reads).
    ``options`` are extra ``ProgressiveDisclosure`` settings (its ``listing`` takes the
    variant's level). ``list_page_size`` is FastMCP's: listings come in pages of that many.
    """
    mcp = FastMCP(f"replay-{catalog.name}", auth=auth, list_page_size=list_page_size)
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
        level: ListingLevel = variant  # type: ignore[assignment]  # one of PROGRESSIVE
        chosen = dict(options or {})
        listing = replace(chosen.pop("listing", ListingSettings()), level=level)
        ours = ProgressiveDisclosure(descriptions_dir, listing=listing, **chosen)
        mcp.add_middleware(ours)
    elif variant == "regex":
        mcp.add_transform(RegexSearchTransform())
    elif variant == "bm25":
        mcp.add_transform(BM25SearchTransform())
    return ReplayServer(variant=variant, mcp=mcp, middleware=ours)
