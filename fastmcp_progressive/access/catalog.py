"""Which tools the caller may see, asked of FastMCP itself so this package never widens it.

FastMCP decides visibility in two places: inside the server (providers, transforms,
``mcp.enable/disable``, session visibility, component ``auth``), which
``FastMCP.get_tool`` applies to a single name, and in middleware that filters
``tools/list`` (``AuthMiddleware``, a tenant or role filter of the user's own), whichever
hook it uses: ``on_list_tools``, ``on_request`` or ``on_message``. A tool counts as visible
only if both agree: the conservative answer, never the generous one.

A request that reached a mounted child through its parent (``parent.mount(child)``) must
pass the parent too: each server that mounted ours and handed the request on must show the
tool's delegate to this caller (its ``disable``, ``Visibility`` transforms, session
visibility, component ``auth``, and its own listing filters such as ``AuthMiddleware``).
So ``run_tool``, a query, a read and a suggestion never reach a tool the server the
client talks to hides (``through_mounts``).

Asking the middleware costs what the question touches, not what the server holds: the other
middleware run their ``tools/list`` hooks over just the tools in question (found by
``get_tool``), as if the catalog held only those. A filter that decides per tool (by name,
tag, caller, scope) answers exactly as in the caller's full listing. Middleware that only
observe or cache (FastMCP's logging, timing, rate limiting, error handling, response
caching) are not asked, so a lookup is neither counted as a request nor cached as a listing.

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
from functools import partial
from itertools import pairwise
from typing import Any

import mcp_types as mt
from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.middleware.caching import ResponseCachingMiddleware
from fastmcp.server.middleware.dereference import DereferenceRefsMiddleware
from fastmcp.server.middleware.error_handling import ErrorHandlingMiddleware, RetryMiddleware
from fastmcp.server.middleware.logging import LoggingMiddleware, StructuredLoggingMiddleware
from fastmcp.server.middleware.ping import PingMiddleware
from fastmcp.server.middleware.rate_limiting import (
    RateLimitingMiddleware,
    SlidingWindowRateLimitingMiddleware,
)
from fastmcp.server.middleware.response_limiting import ResponseLimitingMiddleware
from fastmcp.server.middleware.timing import DetailedTimingMiddleware, TimingMiddleware
from fastmcp.tools.base import Tool

from fastmcp_progressive.fastmcp_internals import delegate_of, mounted_namespaces, request_servers

_listing_for: ContextVar[tuple[Middleware, ...]] = ContextVar(
    "fastmcp_progressive_listing_for", default=())
"""The middleware whose catalog is listing tools for itself right now (innermost last)."""


NO_SUCH_TOOL = "\x00no such tool"
"""A name no server holds (MCP tool names have no control characters)."""


_OBSERVERS: tuple[type[Middleware], ...] = (
    DereferenceRefsMiddleware, ErrorHandlingMiddleware, RetryMiddleware, LoggingMiddleware,
    StructuredLoggingMiddleware, TimingMiddleware, DetailedTimingMiddleware,
    RateLimitingMiddleware, SlidingWindowRateLimitingMiddleware, ResponseLimitingMiddleware,
    PingMiddleware)
"""FastMCP middleware known not to filter listings: skipped by exact type (a subclass may)."""

_LISTING_HOOKS = ("__call__", "on_message", "on_request", "on_list_tools")


def hooks_listing(middleware: Middleware) -> bool:
    """Whether ``middleware`` may change what ``tools/list`` shows, whatever hook it uses."""
    if type(middleware) in _OBSERVERS or isinstance(middleware, ResponseCachingMiddleware):
        return False
    kind = type(middleware)
    return any(getattr(kind, hook) is not getattr(Middleware, hook) for hook in _LISTING_HOOKS)


class Catalog:
    """Answers "may this caller see tool X" and "which tools may it see"."""

    def __init__(self, owner: Middleware) -> None:
        self._owner = owner

    def passthrough(self) -> bool:
        """True while this catalog lists tools for itself: its owner's listing hook must
        pass them on unreduced. Like FastMCP's CatalogTransform, per owner: a parent's and
        a mounted child's middleware never see each other's "listing for myself"."""
        return any(owner is self._owner for owner in _listing_for.get())

    @contextmanager
    def _passthrough(self) -> Iterator[None]:
        token = _listing_for.set((*_listing_for.get(), self._owner))
        try:
            yield
        finally:
            _listing_for.reset(token)

    async def tool(self, ctx: Context, name: str) -> Tool | None:
        """The tool named ``name`` as this caller may see it, or None."""
        return (await self.tools(ctx, [name]))[name]

    async def tools(self, ctx: Context, names: Sequence[str]) -> dict[str, Tool | None]:
        """Each of ``names`` mapped to its tool as this caller may see it, or None.

        Each name is FastMCP's own ``get_tool`` (transforms, versions, visibility, component
        ``auth``), and the other middleware's listing hooks run once, over the tools found.
        """
        server = ctx.fastmcp
        found = {name: await server.get_tool(name) for name in names}
        candidates = [tool for tool in found.values() if tool is not None]
        if candidates:
            shown = {t.name for t in await self.keep_visible(ctx, candidates)}
            hidden = [n for n, tool in found.items() if tool is not None and n not in shown]
            found = {name: tool if name in shown else None for name, tool in found.items()}
            for _ in hidden:  # what an unknown name costs (FastMCP's lookup of a name it
                await server.get_tool(NO_SUCH_TOOL)  # lacks scans every provider), so the
                # answer's timing never tells a name a filter hides from one that is not there
        return found

    async def shown(self, ctx: Context, tool: Tool) -> bool:
        """Whether the other middleware's listing filters show ``tool`` to this caller."""
        return tool.name in await self.visible(ctx, [tool])

    async def visible(self, ctx: Context, tools: Sequence[Tool], server: Any = None
                      ) -> set[str]:
        """Names among ``tools`` that the other middleware's listing hooks keep showing
        (those of ``server``, a server that mounted ours, when given).

        A hook that fails answers "none": a lookup never widens what a caller may see.
        """
        filters = [m for m in (ctx.fastmcp if server is None else server).middleware
                   if hooks_listing(m) and not (m is self._owner if server is None
                                                else isinstance(m, type(self._owner)))]
        if not filters:
            return {tool.name for tool in tools}
        candidates = list(tools)

        async def base(context: MiddlewareContext[Any]) -> Any:
            return list(candidates)

        chain: CallNext[Any, Any] = base
        for middleware in reversed(filters):
            chain = _link(middleware, chain)
        context = MiddlewareContext(message=mt.ListToolsRequest(method="tools/list"),
                                    fastmcp_context=ctx, source="client", type="request",
                                    method="tools/list")
        try:
            with self._passthrough():
                listed = await chain(context)
        except Exception:
            return set()
        if isinstance(listed, mt.ListToolsResult):
            listed = listed.tools
        return {t.name for t in listed or () if isinstance(t, (Tool, mt.Tool))}

    async def keep_visible(self, ctx: Context, tools: list[Tool]) -> list[Tool]:
        """``tools`` minus those a listing filter outside our middleware hides."""
        shown = await self.visible(ctx, tools)
        return await self.through_mounts(ctx, [t for t in tools if t.name in shown])

    async def through_mounts(self, ctx: Context, tools: Sequence[Tool]) -> list[Tool]:
        """``tools`` (of ``ctx.fastmcp``) minus those a server this request came through
        hides: every server that mounted ours and handed the request on shows the tool's
        delegate to this caller. Costs nothing for a request the server got directly; one
        listing of each such parent otherwise."""
        servers = request_servers(ctx)
        alive = {tool.name: tool.name for tool in tools}  # our name -> its name one hop out
        for inner, outer in pairwise(servers):
            if not any(child is inner for _, child in mounted_namespaces(outer, with_plain=True)):
                break  # ``inner`` was not reached through a mount: the client talks to it
            delegates: dict[str, Tool] = {}
            with self._passthrough():  # the child's own listing hook passes tools on whole
                for tool in await outer.list_tools(run_middleware=False):
                    delegate = delegate_of(tool)
                    if delegate is not None and delegate[0] is inner:
                        delegates.setdefault(delegate[1], tool)
            reached = [delegates[name] for name in alive.values() if name in delegates]
            shown = await self.visible(ctx, reached, server=outer) if reached else set()
            alive = {ours: delegates[name].name for ours, name in alive.items()
                     if name in delegates and delegates[name].name in shown}
        return [tool for tool in tools if tool.name in alive]

    async def names(self, ctx: Context) -> list[str]:
        """Names of every tool this caller's ``tools/list`` shows, in listing order."""
        with self._passthrough():
            tools = await ctx.fastmcp.list_tools(run_middleware=True)
        first: dict[str, Tool] = {}
        for tool in tools:
            first.setdefault(tool.name, tool)
        return [t.name for t in await self.through_mounts(ctx, list(first.values()))]


def _link(middleware: Middleware, call_next: CallNext[Any, Any]) -> CallNext[Any, Any]:
    """``middleware`` around ``call_next`` for a ``tools/list``, with all of its hooks.

    FastMCP's ``Middleware.__call__`` runs only the hooks of the phase the request is in
    (a custom method such as ``tools/resolve`` runs in the outer phase, which skips
    ``on_list_tools``), read from a private context variable. So a middleware that keeps
    FastMCP's ``__call__`` is chained here through its public hooks, in the order FastMCP
    nests them: ``on_message(on_request(on_list_tools(call_next)))``. One that overrides
    ``__call__`` is called as is (FastMCP runs such an override once per message, in any
    phase).
    """
    if type(middleware).__call__ is not Middleware.__call__:
        return partial(middleware, call_next=call_next)
    handler = call_next
    for hook in (middleware.on_list_tools, middleware.on_request, middleware.on_message):
        handler = partial(hook, call_next=handler)
    return handler
