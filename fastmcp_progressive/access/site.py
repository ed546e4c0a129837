"""What the server serving one ``tools/call`` tells the gate (``gate.CallSite``).

The gate decides; this answers its questions about the request's server: which tools
FastMCP's gateway transforms generate, whether a tool exists or is visible to the caller,
whether it is pinned, and where the server keeps session state. Each answer is computed
only when the gate asks for it.

Example:
    ```python
    site = RequestSite(ctx, catalog, store)
    verdict = await gate.decide(call, site)
    ```
"""

from __future__ import annotations

import weakref
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.tools.base import Tool

from fastmcp_progressive.access.catalog import Catalog, gateway_tools
from fastmcp_progressive.fastmcp_internals import state_storage
from fastmcp_progressive.files.pins import is_pinned
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.settings import GrantStoreProtocol

_Seen = tuple[tuple[Any, ...], frozenset[str]]
_gateways: weakref.WeakKeyDictionary[FastMCP[Any], _Seen] = weakref.WeakKeyDictionary()
"""Per server: its transforms when last looked at (held, so their ids stay theirs), and
the gateway tools they generate."""


def gateways_of(server: FastMCP[Any]) -> frozenset[str]:
    """``gateway_tools(server)``, recomputed only when the server's transforms change.

    A transform added, removed or replaced changes the identities looked at, so the answer
    is never stale; what is skipped is walking (and type-checking) each transform per call.
    """
    transforms = server.transforms
    if not transforms:
        return frozenset()
    known = _gateways.get(server)
    if known is not None and len(known[0]) == len(transforms) and all(
        seen is current for seen, current in zip(known[0], transforms, strict=True)
    ):
        return known[1]
    names = gateway_tools(server)
    _gateways[server] = (tuple(transforms), names)
    return names


class RequestSite:
    """The ``CallSite`` of one request (``ctx``), for the gate's questions."""

    __slots__ = ("_catalog", "_ctx", "_store")

    def __init__(self, ctx: Context, catalog: Catalog, store: DescriptionStore) -> None:
        self._ctx = ctx
        self._catalog = catalog
        self._store = store

    def is_gateway(self, name: str) -> bool:
        return name in gateways_of(self._ctx.fastmcp)

    async def exists(self, name: str) -> bool:
        return await self._catalog.exists(self._ctx, name)

    async def tool(self, name: str) -> Tool | None:
        return await self._catalog.tool(self._ctx, name)

    def pinned(self, tool: Tool) -> bool:
        return is_pinned(tool, self._store.lookup(tool.name))

    def state_store(self) -> GrantStoreProtocol:
        return state_storage(self._ctx)  # type: ignore[no-any-return]

    async def refreshed(self, name: str) -> FoundSite | None:
        """After our lookup found no ``name``: the tool as FastMCP itself resolves it now
        (``get_tool``: visibility, transforms, component auth; a proxy refreshes its
        cache), when the caller may see it, as a site that knows it; else None."""
        tool = await self._ctx.fastmcp.get_tool(name)
        if tool is None:
            return None
        if not await self._catalog.visible(self._ctx, [tool]):
            return None
        return FoundSite(self, name, tool)


class FoundSite:
    """A ``RequestSite`` that knows one tool its lookup had missed (see ``refreshed``)."""

    __slots__ = ("_name", "_site", "_tool")

    def __init__(self, site: RequestSite, name: str, tool: Tool) -> None:
        self._site, self._name, self._tool = site, name, tool

    def is_gateway(self, name: str) -> bool:
        return self._site.is_gateway(name)

    async def exists(self, name: str) -> bool:
        return name == self._name or await self._site.exists(name)

    async def tool(self, name: str) -> Tool | None:
        return self._tool if name == self._name else await self._site.tool(name)

    def pinned(self, tool: Tool) -> bool:
        return self._site.pinned(tool)

    def state_store(self) -> GrantStoreProtocol:
        return self._site.state_store()

    async def refreshed(self, name: str) -> FoundSite | None:
        return await self._site.refreshed(name)
