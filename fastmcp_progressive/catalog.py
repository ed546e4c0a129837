"""Which tools the caller may see, asked of FastMCP itself so this package never widens it.

FastMCP decides visibility in two places: inside the server (providers, transforms,
``mcp.enable/disable``, session visibility, component ``auth``), which
``FastMCP.get_tool`` applies to a single name, and in middleware that filters
``tools/list`` (``AuthMiddleware``, a user's own). When no other middleware filters the
listing, ``get_tool`` is exact and cheap. When one does, the caller's real listing is
produced by running the whole chain (our own hook passes it through untouched) and a tool
counts as visible only if both agree: the conservative answer, never the generous one.

Example:
    ```python
    catalog = Catalog(owner=middleware)
    tool = await catalog.tool(ctx, "create_invoice")  # None when hidden, disabled or unknown
    ```
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.middleware import Middleware
from fastmcp.server.middleware.dereference import DereferenceRefsMiddleware
from fastmcp.tools.base import Tool

_raw_listing: ContextVar[bool] = ContextVar("fastmcp_progressive_raw_listing", default=False)


def listing_passthrough() -> bool:
    """True while this package lists tools for itself: its hook must not reduce them."""
    return _raw_listing.get()


@contextmanager
def _passthrough() -> Iterator[None]:
    token = _raw_listing.set(True)
    try:
        yield
    finally:
        _raw_listing.reset(token)


_GATEWAY_TRANSFORMS = {
    "ResourcesAsTools": ("list_resources", "read_resource"),
    "PromptsAsTools": ("list_prompts", "get_prompt"),
}


def gateway_tools(server: FastMCP) -> frozenset[str]:
    """Tools a server-level transform generates to reach other components.

    A search transform's ``search_tools``/``call_tool`` and ``ResourcesAsTools``'
    ``list_resources``/``read_resource`` are how a client finds and reaches the real tools;
    gating them would make the model fetch a description to be allowed to search. Found
    from the transforms themselves (their ``*_tool_name`` settings), so renamed ones count.
    """
    names: set[str] = set()
    for transform in getattr(server, "_transforms", ()):
        names.update(_GATEWAY_TRANSFORMS.get(type(transform).__name__, ()))
        for attribute, value in vars(transform).items():
            if attribute.endswith("_tool_name") and isinstance(value, str):
                names.add(value)
    return frozenset(names)


class Catalog:
    """Answers "may this caller see tool X" and "which tools may it see"."""

    def __init__(self, owner: Middleware) -> None:
        self._owner = owner

    async def tool(self, ctx: Context, name: str) -> Tool | None:
        """The tool named ``name`` as this caller may see it, or None."""
        return (await self.tools(ctx, [name]))[name]

    async def tools(self, ctx: Context, names: Sequence[str]) -> dict[str, Tool | None]:
        """Each of ``names`` mapped to its tool as this caller may see it, or None.

        The caller's full listing, when middleware filters it, is produced once per call.
        """
        found = {name: await ctx.fastmcp.get_tool(name) for name in names}
        if any(found.values()) and self._filtered_by_middleware(ctx):
            listed = set(await self.names(ctx))
            found = {name: tool if name in listed else None for name, tool in found.items()}
        return found

    async def names(self, ctx: Context) -> list[str]:
        """Names of every tool this caller's ``tools/list`` shows, in listing order."""
        with _passthrough():
            tools = await ctx.fastmcp.list_tools(run_middleware=True)
        return list(dict.fromkeys(t.name for t in tools))

    def _filtered_by_middleware(self, ctx: Context) -> bool:
        for middleware in ctx.fastmcp.middleware:
            if middleware is self._owner or isinstance(middleware, DereferenceRefsMiddleware):
                continue
            if type(middleware).on_list_tools is not Middleware.on_list_tools:
                return True
        return False
