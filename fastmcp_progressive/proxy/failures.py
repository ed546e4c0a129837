"""An upstream's failures, named: as a tool error or JSON-RPC error, never as a failed handshake.

Both the single-upstream front (``front.py``) and each upstream of a gateway
(``gateway.py``) wrap their proxy in these, so a dead or failing upstream is reported by
name (with what it last wrote to stderr) and the others keep serving.

Example:
    ```python
    proxy.add_middleware(UpstreamFailures(upstream))  # outermost on the proxy
    ```
"""

from __future__ import annotations

from typing import Any

import mcp_types as mt
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from mcp import MCPError

from fastmcp_progressive.log import get_logger
from fastmcp_progressive.proxy.upstream import Upstream

logger = get_logger("proxy")


class UpstreamFailures(Middleware):
    """Outermost on the proxy: an upstream failure becomes an error naming the upstream.

    ``tools/call`` answers a tool error (``isError``, the model reads it); every other
    request a JSON-RPC error. Errors the upstream itself answered pass through untouched.
    """

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream

    async def on_message(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        try:
            return await call_next(context)
        except Exception as exc:
            reason = self.upstream.explain(exc)
            if reason is None:
                raise
            logger.error("%s (during %s)", reason, context.method)
            await self.upstream.forget_session()
            if context.method == "tools/call":
                raise ToolError(reason) from exc
            raise MCPError(code=mt.INTERNAL_ERROR, message=reason) from exc


class UpstreamMetadata(Middleware):
    """FastMCP's proxy metadata middleware, minus failing the handshake for a dead upstream.

    That middleware copies the upstream's instructions into ``initialize`` /
    ``server/discover`` and raises when the upstream cannot be reached. A handshake that
    fails reads as "wrong protocol era" to a negotiating client, so instead the handshake
    completes without the upstream's metadata and each later request names the failure.
    """

    def __init__(self, inner: Middleware, upstream: Upstream) -> None:
        self.inner = inner
        self.upstream = upstream

    async def on_initialize(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        return await self._tolerant(self.inner.on_initialize, context, call_next)

    async def on_discover(self, context: MiddlewareContext[Any],
                          call_next: CallNext[Any, Any]) -> Any:
        return await self._tolerant(self.inner.on_discover, context, call_next)

    async def _tolerant(self, hook: Any, context: MiddlewareContext[Any],
                        call_next: CallNext[Any, Any]) -> Any:
        answered: list[Any] = []

        async def keep(ctx: MiddlewareContext[Any]) -> Any:
            answered.append(await call_next(ctx))
            return answered[-1]

        try:
            return await hook(context, keep)
        except Exception as exc:
            reason = self.upstream.explain(exc)
            if reason is None or not answered:
                raise
            logger.warning("%s (during %s)", reason, context.method)
            return answered[-1]
