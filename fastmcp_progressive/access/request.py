"""One request as the middleware carries it: the caller, found once, and what it asks for.

FastMCP runs a middleware's hooks for one message in one pass (``on_message``, then
``on_request``, then the typed hook such as ``on_call_tool``), each with the same context.
So the caller is identified once, at the top of that pass, and the record of the request
(its ``Context``, its ``Caller``, the listing level it is served at, the ``RequestSite``
the gate asks) is carried to the typed hook, as Starlette's scope carries the user its
authentication middleware found. A hook reached without that pass (a component answering
for ``run_middleware=False``) builds its own record.

One HTTP request may still make two passes. With FastMCP < 4.2 on 2026-07-28 streamable
HTTP, the MCP SDK checks a ``tools/call``'s ``Mcp-Param-*`` headers by first running the
server's own ``tools/list`` for the caller, through every middleware, with a fresh
``Context`` but the same Starlette ``Request`` (``mcp.server._streamable_http_modern``:
``_tool_input_schema``; FastMCP 4.2 serves the SDK's ``get_tool_input_schema`` hook from a
schema cache instead). The caller is what that request presents (its authorization, its
headers, its envelope), so it is kept in the request's ASGI scope with the JSON-RPC id, and
the second pass reuses it rather than asking again (``identify_once``).

A ``tools/call`` adds which tool it runs, resolved the way FastMCP resolves it and only
once: the plain name, then, for a ``<hash>_<tool>`` name that finds nothing, the tool the
hash names (the backend name of an app-visible tool; ``get_tool`` alone does not know such
names, so a gate asking only ``get_tool`` would take them for unknown tools and let them
run). Whether the name is one of our bridges, and whether an outer
``ProgressiveDisclosure`` already let the enclosing call through (``let_through``), are
read here too; ``gate.py`` decides on all of it.

The "passed an outer gate" flag is shared by every ``ProgressiveDisclosure`` on purpose:
a tool body may call other tools of its server (a search transform's ``call_tool``,
CodeMode's ``execute``), and a parent server runs a mounted child's tool by calling the
child; a child's middleware learns that way that its parent's gate already passed the
call, while a child under a parent without the middleware keeps gating its own tools.

Example:
    ```python
    requests = Requests(catalog, store, levels=gate.level)
    request = requests.open(ctx)                # identify(ctx), once per request
    with requests.carrying(request):
        ...                                      # the typed hook: requests.open(ctx) again
    call = await request.call("refund_order", arguments, bridges={"bridge": describe})
    ```
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext
from fastmcp.server.providers.addressing import parse_hashed_backend_name
from fastmcp.tools.base import Tool

from fastmcp_progressive.access.caller import Caller, identify
from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.gate import Bridge, GateCall
from fastmcp_progressive.access.site import RequestSite
from fastmcp_progressive.fastmcp_internals import is_nested_tool_call
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.hosts import Level

T = TypeVar("T")
R = TypeVar("R")

_passed: ContextVar[bool] = ContextVar("fastmcp_progressive_passed_gate", default=False)
_instances = itertools.count()


@dataclass(frozen=True)
class Request:
    """One request: its context, its caller (identified once) and the site the gate asks."""

    ctx: Context | None
    caller: Caller
    site: RequestSite | None
    levels: Callable[[Caller], Level] = field(repr=False, compare=False)

    @cached_property
    def level(self) -> Level:
        """What this caller's listing shows (``full`` is never gated), decided on first use."""
        return self.levels(self.caller)

    async def call(self, name: str, arguments: dict[str, Any] | None = None, *,
                   bridges: Mapping[Bridge, Tool | None] | None = None) -> GateCall:
        """The ``tools/call`` of ``name`` in this request, its target resolved once."""
        ctx = self.ctx
        if ctx is None:
            return GateCall(self.caller, name, arguments, served=False)
        ours = [kind for kind, tool in (bridges or {}).items()
                if tool is not None and tool.name == name]
        hashed = parse_hashed_backend_name(name)
        plain = (await ctx.fastmcp.get_tool(name)) if ours or hashed is not None else None
        for kind in ours:  # a user's tool of a bridge's name wins over ours
            if same_tool(plain, (bridges or {})[kind]):
                return GateCall(self.caller, name, arguments, bridge=kind)
        target = None
        if hashed is not None and plain is None:
            target = await ctx.fastmcp.get_tool_by_hash(*hashed)
        return GateCall(
            self.caller,
            target.name if target is not None else name,
            arguments=arguments,
            hashed=target,
            nested=_passed.get() and is_nested_tool_call(),  # cheaper read first
        )


class Requests:
    """Builds each request's record once and carries it from ``on_message`` to the hooks."""

    def __init__(self, catalog: Catalog, store: DescriptionStore, *,
                 levels: Callable[[Caller], Level]) -> None:
        self._catalog = catalog
        self._store = store
        self._levels = levels
        # One slot per middleware, like the catalog's flag: a mounted child's middleware
        # runs with its parent's context, yet its record holds its own site and levels.
        self._carried: ContextVar[Request | None] = ContextVar(
            f"fastmcp_progressive_request_{next(_instances)}", default=None)

    def open(self, ctx: Context | None) -> Request:
        """The record of the request ``ctx`` belongs to: the one carried, else a new one."""
        carried = self._carried.get()
        if carried is not None and carried.ctx is ctx and ctx is not None:
            return carried
        if ctx is None:
            return Request(None, identify(None), None, self._levels)
        site = RequestSite(ctx, self._catalog, self._store)
        return Request(ctx, identify_once(ctx), site, self._levels)

    @contextmanager
    def carrying(self, request: Request) -> Iterator[Request]:
        """Hand ``request`` to the hooks this pass runs next."""
        token = self._carried.set(request)
        try:
            yield request
        finally:
            self._carried.reset(token)


_CALLER_KEY = "fastmcp_progressive.caller"
"""The ASGI scope key the caller of an HTTP request is kept under, with its JSON-RPC id."""


def identify_once(ctx: Context) -> Caller:
    """``identify(ctx)``, once per HTTP request and JSON-RPC id.

    A second pass of the same request (the SDK's hidden ``tools/list`` before a 2026-07-28
    ``tools/call`` on FastMCP < 4.2, see the module docstring) has a new ``Context`` but
    the same HTTP request and id, and reuses the caller kept in that request's ASGI scope,
    as Starlette's ``AuthenticationMiddleware`` keeps ``scope["user"]``. ASGI makes a new
    scope for each HTTP request and the id must match too, so no other request reads it.
    Without an HTTP request (stdio, in memory) each ``Context`` is its own request.

    Only a 2026-07-28 caller is kept: no handshake-era request makes a second pass, and a
    handshake-era scope can outlive its session for a while (its connection's, not ours),
    which would keep the caller and its headers alive with it (``test_load``)."""
    rc = ctx.request_context
    scope = getattr(getattr(rc, "request", None), "scope", None)
    request_id = getattr(rc, "request_id", None)
    if not isinstance(scope, dict) or request_id is None:
        return identify(ctx)
    kept = scope.get(_CALLER_KEY)
    if isinstance(kept, tuple) and kept[0] == request_id and isinstance(kept[1], Caller):
        return kept[1]
    caller = identify(ctx)
    if caller.era == "modern":
        scope[_CALLER_KEY] = (request_id, caller)
    return caller


def same_tool(tool: Tool | None, ours: Tool | None) -> bool:
    """Whether ``tool`` is ``ours`` (one of our bridges), not a user's tool of its name."""
    return (tool is not None and ours is not None
            and getattr(tool, "fn", None) is getattr(ours, "fn", None))


def let_through(call_next: CallNext[T, R]) -> CallNext[T, R]:
    """``call_next`` that marks everything it runs as having passed the gate."""

    async def passed(context: Any) -> R:
        token = _passed.set(True)
        try:
            return await call_next(context)
        finally:
            _passed.reset(token)

    return passed
