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

from .catalog import Catalog, gateway_tools
from .descriptions import DescriptionStore
from .fastmcp_internals import state_storage
from .grants import KeyValue
from .pins import is_pinned

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

    def state_store(self) -> KeyValue:
        return state_storage(self._ctx)  # type: ignore[no-any-return]
