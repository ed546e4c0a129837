"""What the upstream serves beyond its tools, resources and prompts, served by the front too.

FastMCP's proxy forwards listings, calls, reads and prompts, but not ``completion/complete``
nor ``resources/subscribe``/``unsubscribe``: through it a client got -32601 (method not
found) for both, and the front advertised neither capability while the upstream had them
(the official conformance suite's ``completion-complete``, ``resources-subscribe`` and
``resources-unsubscribe`` scenarios, ``tests/conformance/test_official_suite.py``).

``Mirrored`` serves both methods, forwarding each to the upstream (completions through
FastMCP's own ``add_completion_handler``, subscriptions through
``fastmcp_internals.serve_method``: FastMCP has no public way to serve them), and, as
middleware, makes the front's ``initialize`` (and ``server/discover``) advertise
``completions`` and ``resources.subscribe`` as the upstream's own answer does: the SDK derives
both from the methods being served, when the front's first answer may come before the
upstream is even started (the Python form starts it on the first request), so the answer is
corrected once the proxy's metadata middleware, inside this one, has connected it. An
upstream without them is thus not said to have them, and answers the methods itself
(-32601).

Subscriptions are counted per resource: the upstream is subscribed when the first front
session subscribes and unsubscribed when the last one leaves (one upstream session serves
every front session), and its ``notifications/resources/updated`` go to every front session
subscribed to that resource. Each connection keeps the URIs it subscribed to in its own
``state`` (``fastmcp_internals.connection_state``), and ``Mirrored`` the connections holding
any, each dropped by its close callback: no weak map (#35). A connection that closed without
unsubscribing is forgotten, though the upstream stays subscribed for it; one with no
``state`` to keep them in (no handshake-era connection) cannot be told later, so it is not
kept.

Example:
    ```python
    mirrored = Mirrored(server, upstream)   # progressive_proxy does this
    server.middleware.insert(0, mirrored)
    upstream.on_resource_updated = mirrored.updated
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from fastmcp_progressive.fastmcp_internals import (
    connection_state,
    on_connection_close,
    request_connection,
    serve_method,
)
from fastmcp_progressive.log import get_logger

if TYPE_CHECKING:
    from fastmcp_progressive.proxy.upstream import Upstream

logger = get_logger("proxy")

_SUBSCRIBED = "fastmcp_progressive.subscribed"
"""The key of a connection's ``state`` holding the URIs it subscribed to (a set)."""
_CLOSE_MARKER = "fastmcp_progressive.unsubscribe"


class Mirrored(Middleware):
    """The upstream's completions and resource subscriptions, served by ``server``."""

    def __init__(self, server: FastMCP[Any], upstream: Upstream) -> None:
        self.upstream = upstream
        # the front connections subscribed to anything, by id, each dropped when it closes
        self._connections: dict[int, Any] = {}
        server.add_completion_handler(self.complete)
        serve_method(server, "resources/subscribe", mt.SubscribeRequestParams, self.subscribe)
        serve_method(server, "resources/unsubscribe", mt.UnsubscribeRequestParams,
                     self.unsubscribe)

    async def on_initialize(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        return self._as_upstream(await call_next(context))

    async def on_discover(self, context: MiddlewareContext[Any],
                          call_next: CallNext[Any, Any]) -> Any:
        return self._as_upstream(await call_next(context))

    def _as_upstream(self, result: Any) -> Any:
        """``result`` advertising completions and subscriptions as the upstream does (as it
        is when the upstream's own answer is not known: it could not be reached)."""
        ours = getattr(result, "capabilities", None)
        client = self.upstream.client
        theirs = getattr(client.initialize_result, "capabilities", None) if client else None
        if not isinstance(ours, mt.ServerCapabilities) or theirs is None:
            return result
        update: dict[str, Any] = {"completions": theirs.completions}
        if ours.resources is not None:
            subscribe = bool(theirs.resources and theirs.resources.subscribe
                             and ours.resources.subscribe)
            update["resources"] = ours.resources.model_copy(update={"subscribe": subscribe})
        return result.model_copy(update={"capabilities": ours.model_copy(update=update)})

    # -- completions --------------------------------------------------------------------------
    async def complete(self, ref: Any, argument: mt.CompletionArgument,
                       context: mt.CompletionContext | None) -> mt.Completion:
        """The upstream's completion for ``ref``/``argument``, as it gives it."""
        client = await self.upstream.connected()
        async with client:
            result: mt.CompleteResult = await client.complete_mcp(
                ref=ref, argument={"name": argument.name, "value": argument.value},
                context_arguments=context.arguments if context is not None else None)
        return result.completion

    # -- subscriptions --------------------------------------------------------------------------
    async def subscribe(self, ctx: Any, params: mt.SubscribeRequestParams) -> mt.EmptyResult:
        uri = str(params.uri)
        if not self._subscribed(uri):
            client = await self.upstream.connected()
            async with client:
                await client.subscribe_resource(uri)
        connection = _connection(ctx)
        state = connection_state(connection)
        key = id(connection)
        if state is not None and on_connection_close(
                connection, lambda: self._connections.pop(key, None), marker=_CLOSE_MARKER):
            state.setdefault(_SUBSCRIBED, set()).add(uri)
            self._connections[key] = connection
        return mt.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: mt.UnsubscribeRequestParams) -> mt.EmptyResult:
        uri = str(params.uri)
        uris = (connection_state(_connection(ctx)) or {}).get(_SUBSCRIBED)
        if uris is not None and uri in uris:
            uris.discard(uri)
            if not self._subscribed(uri):
                client = await self.upstream.connected()
                async with client:
                    await client.unsubscribe_resource(uri)
        return mt.EmptyResult()

    def _subscribed(self, uri: str) -> list[Any]:
        """The front connections subscribed to ``uri``."""
        return [connection for connection in list(self._connections.values())
                if uri in (connection_state(connection) or {}).get(_SUBSCRIBED, ())]

    async def updated(self, uri: str) -> None:
        """The upstream says ``uri`` changed: tell every front session subscribed to it."""
        for connection in self._subscribed(uri):
            try:
                await connection.send_resource_updated(uri)
            except Exception as exc:  # a session that went away: not the others' problem
                logger.debug("resources/updated for %s not delivered: %s", uri, exc)


def _connection(ctx: Any) -> Any:
    """The front client a subscription belongs to: its handshake connection (the SDK makes
    a ``ServerSession`` per request), which outlives the request and can be told later."""
    return request_connection(ctx.session) or ctx.session
