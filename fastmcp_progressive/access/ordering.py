"""Middleware that cannot sit in front of ``ProgressiveDisclosure``, caught on the first request.

``add_middleware`` appends, so ``mcp.add_middleware(ProgressiveDisclosure())`` often lands
behind middleware added earlier. Most of it is fine there: ``AuthMiddleware`` looks our
components up like any other (they are registered, see ``components.py``). A
``ResponseCachingMiddleware`` in front is not: it would replay one caller's listing (full
or reduced), description read or tool result to another caller without ever reaching the
gate, which means lockouts and calls that skip the gate. There is no start-up hook for
middleware, so the check runs on the first request the server sees and refuses every
request (with the fix in the message) until the order is right; it never waits for a read.

The order changes only with a server's middleware list, so ``OrderCheck`` asks again only
when that list is no longer the one it last found in order.

Example:
    ```python
    problem = misordered(server.middleware, middleware)
    if problem:
        raise MiddlewareOrderError(problem)
    ```
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from fastmcp.server.middleware.caching import ResponseCachingMiddleware
from mcp.shared.exceptions import MCPError

from fastmcp_progressive.fastmcp_internals import cached_methods
from fastmcp_progressive.log import get_logger

logger = get_logger()

HANDSHAKE_METHODS = frozenset({"initialize", "server/discover", "notifications/initialized"})


class MiddlewareOrderError(MCPError):
    """ProgressiveDisclosure sits behind middleware that would bypass its gate.

    A JSON-RPC error (not a masked internal error) so the client sees the fix.
    """

    def __init__(self, message: str) -> None:
        super().__init__(code=-32603, message=message)


def misordered(chain: Sequence[Any], middleware: Any) -> str | None:
    """What is wrong with ``middleware``'s place in ``chain``, or None when nothing is."""
    position = next((i for i, m in enumerate(chain) if m is middleware), None)
    if position is None:
        return None
    for outer in chain[:position]:
        if isinstance(outer, ResponseCachingMiddleware):
            cached = cached_methods(outer)
            if cached:
                return (
                    "ProgressiveDisclosure was added after ResponseCachingMiddleware, which "
                    f"caches {', '.join(sorted(cached))} for every caller alike and would "
                    "serve one caller's listing, description read or tool result to another "
                    "without passing the gate. Add ProgressiveDisclosure first "
                    "(mcp.add_middleware(ProgressiveDisclosure(...)) before "
                    "mcp.add_middleware(ResponseCachingMiddleware(...))), or disable "
                    "caching of those methods."
                )
    return None


class OrderCheck:
    """``misordered`` for one middleware, asked again only when a server's list changes.

    Example:
        ```python
        order = OrderCheck(middleware)
        if not order.settled(server):
            order.check(server, "tools/list")  # raises MiddlewareOrderError, logged once
        ```
    """

    def __init__(self, middleware: Any) -> None:
        self._middleware = middleware
        self._in_order: weakref.WeakKeyDictionary[Any, tuple[Any, ...]] = (
            weakref.WeakKeyDictionary())
        self._reported = False

    def settled(self, server: Any) -> bool:
        """Whether ``server``'s middleware list is the one last found in order."""
        known, chain = self._in_order.get(server), server.middleware
        return known is not None and len(known) == len(chain) and all(
            seen is current for seen, current in zip(known, chain, strict=True))

    def check(self, server: Any, method: str | None = None) -> None:
        """Refuse to serve while middleware in front of ours would bypass the gate (a
        handshake passes: the client connects and hears why on its next request)."""
        if method in HANDSHAKE_METHODS:
            return
        chain = tuple(server.middleware)
        problem = misordered(chain, self._middleware)
        if problem is None:
            self._in_order[server] = chain
            return
        if not self._reported:
            self._reported = True
            logger.error("%s", problem)
        raise MiddlewareOrderError(problem)
