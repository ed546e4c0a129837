"""The front client's MCP roots, forwarded to upstreams that ask for them.

FastMCP's ``ProxyClient`` relays an upstream's ``roots/list`` to the front request it is
serving. An upstream asks when its session starts, which the proxy does before any front
client is connected (at start, to fail early and to start upstreams concurrently), so that
first question has nobody to ask. It is answered with no roots (an empty list: no client
has given any yet), not with an error, which upstreams log as a failure on every start
("Failed to request initial roots ... -32603"); either way the upstream keeps its command
line's folders (on ``server-filesystem``, the whole folder given there instead of the
narrower one the host chose). ``RootsForwarding`` closes that gap: on the first request of
each handshake-era front session whose client has roots, and when that client says its
roots changed, every upstream that asks for roots is told they changed, asks again, and
FastMCP's handler relays the question to this client. Roots do not exist in the 2026-07-28
era (SEP-2577).

One upstream process serves every front session: with several handshake sessions open at
once (HTTP), the upstream holds the roots of the session that last connected or changed
them. Stdio hosts have one session per proxy process.

Example:
    ```python
    server.add_middleware(RootsForwarding(lambda: [upstream]))
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import anyio
from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from fastmcp_progressive.access.caller import is_modern
from fastmcp_progressive.fastmcp_internals import connection_state, request_connection
from fastmcp_progressive.proxy.upstream import Upstream

_SYNCED = "fastmcp_progressive.roots_synced"
"""Marks, in a handshake-era connection's own scratch ``state`` (the SDK's, as FastMCP's
operations use it; gone with the connection), that its roots were forwarded."""
_ROOTS_CHANGED = "notifications/roots/list_changed"


class RootsForwarding(Middleware):
    """Tell upstreams to re-read roots when a front session with roots arrives or changes
    them (see the module docstring)."""

    def __init__(self, upstreams: Callable[[], Sequence[Upstream]]) -> None:
        self._upstreams = upstreams

    async def on_request(self, context: MiddlewareContext[Any],
                         call_next: CallNext[Any, Any]) -> Any:
        ctx = context.fastmcp_context
        if ctx is not None and context.method not in ("initialize", "server/discover"):
            state = connection_state(_roots_session(ctx))
            if state is not None and not state.get(_SYNCED):
                state[_SYNCED] = True
                await self._resync(ctx)
        return await call_next(context)

    async def on_notification(self, context: MiddlewareContext[Any],
                              call_next: CallNext[Any, Any]) -> Any:
        result = await call_next(context)
        ctx = context.fastmcp_context
        if context.method == _ROOTS_CHANGED and ctx is not None and _roots_session(ctx):
            await self._resync(ctx)
        return result

    async def _resync(self, ctx: Context) -> None:
        upstreams = self._upstreams()
        for upstream in upstreams:  # one that asks later (still starting) is answered too
            upstream.note_roots_front(ctx)
        asking = [u for u in upstreams if u.roots_asked]
        if not asking:
            return
        async with anyio.create_task_group() as group:
            for upstream in asking:
                group.start_soon(upstream.resync_roots, ctx)


def _roots_session(ctx: Context) -> Any | None:
    """The handshake-era connection behind ``ctx`` when its client declared roots."""
    rc = ctx.request_context
    if rc is None or is_modern(rc.protocol_version):
        return None
    session = rc.session
    try:
        capabilities = session.client_params.capabilities if session.client_params else None
    except AttributeError:
        return None
    if capabilities is None or capabilities.roots is None:
        return None
    return request_connection(session)
