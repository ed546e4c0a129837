"""Middleware that may not sit in front of ours, checked when a server's list changes.

``ProgressiveDisclosure`` has no start-up hook, so its first request on a server checks
the middleware list (``misordered``: a ``ResponseCachingMiddleware`` in front would replay
one caller's answers to another, past the gate; the middleware added twice) and adds our
components (``install``: a server tool may hold a bridge's name). ``OrderCheck`` keeps the
answer in the server's ``caches.py:per_server`` slot ``OrderCheck.slot`` (one per
middleware), with whether another middleware of the list may filter listings; the
middleware reads it on each request without calling in here, so a warm request never
enters this module.

Example:
    ```python
    order = OrderCheck(middleware)
    if (server_slots(server) or {}).get(order.slot) is None:
        await order.check(server, "tools/list")  # MiddlewareOrderError, logged once
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastmcp.server.middleware.caching import ResponseCachingMiddleware
from mcp.shared.exceptions import MCPError

from fastmcp_progressive.access.catalog import hooks_listing
from fastmcp_progressive.caches import per_server
from fastmcp_progressive.disclosure.components import BridgeNameTaken
from fastmcp_progressive.log import get_logger

logger = get_logger()

InOrder = tuple[tuple[Any, ...], bool]
"""A server's middleware list when last found in order, and whether another middleware
of it may filter listings."""


HANDSHAKE_METHODS = frozenset({"initialize", "server/discover", "notifications/initialized"})


class MiddlewareOrderError(MCPError):
    """ProgressiveDisclosure cannot serve as set up: it sits behind middleware that would
    bypass its gate, it was added twice, or a server tool has a bridge's name.

    A JSON-RPC error (not a masked internal error) so the client sees the fix.
    """

    def __init__(self, message: str) -> None:
        super().__init__(code=-32603, message=message)


def misordered(chain: Sequence[Any], middleware: Any) -> str | None:
    """What is wrong with ``middleware``'s place in ``chain``, or None when nothing is.

    ``add_middleware`` appends, so ``ProgressiveDisclosure`` often lands behind middleware
    added earlier. Most of it is fine there (``AuthMiddleware`` looks our components up
    like any other). A ``ResponseCachingMiddleware`` in front is not: it would replay one
    caller's listing, description read or tool result to another without reaching the
    gate, which means lockouts and calls that skip the gate. Whichever methods it was told
    to cache: which ones is not public (its settings are constructor arguments only), and
    the fix, ProgressiveDisclosure first, is right for every configuration.
    """
    position = next((i for i, m in enumerate(chain) if m is middleware), None)
    if position is None:
        return None
    if any(m is not middleware and isinstance(m, type(middleware)) for m in chain):
        return ("ProgressiveDisclosure was added to this server twice: each would add its "
                "own bridge and gate every call again. Add it once (one "
                "mcp.add_middleware(ProgressiveDisclosure(...)), with every setting there).")
    for outer in chain[:position]:
        if isinstance(outer, ResponseCachingMiddleware):
            return ("ProgressiveDisclosure was added after ResponseCachingMiddleware, which "
                    "caches listings, resource reads and tool results for every caller alike "
                    "and would serve one caller's listing, description read or tool result to "
                    "another without passing the gate. Add ProgressiveDisclosure first "
                    "(mcp.add_middleware(ProgressiveDisclosure(...)) before "
                    "mcp.add_middleware(ResponseCachingMiddleware(...))).")
    return None


class OrderCheck:
    """``misordered`` for one middleware, asked again only when a server's list changes;
    found at the same time: whether another middleware of the list may filter listings
    (``catalog.hooks_listing``; then a tool's visibility is asked of it before a refusal).
    It runs on a server's first request (the module docstring's example)."""

    def __init__(self, middleware: Any) -> None:
        self._middleware = middleware
        self.slot = f"order.in_order.{id(middleware)}"
        """The ``per_server`` slot of a server's list when last found in order for this
        middleware (an ``InOrder``; the middleware compares it with the server's list on
        each request, without calling in here). The list held there holds the middleware,
        so its ``id`` stays its own while the slot is kept."""
        self._reported = False

    async def check(self, server: Any, method: str | None = None,
                    install: Callable[[], Awaitable[None]] | None = None) -> None:
        """Refuse to serve while the middleware list is wrong (``misordered``) or our
        components cannot be added (``install``: a server tool of a bridge's name), except
        the handshake: the client connects and hears why, with the fix, on its next
        request, and the server logs it once (a traceback per request said neither)."""
        chain = tuple(server.middleware)
        problem = misordered(chain, self._middleware)
        if problem is None and install is not None:
            try:
                await install()
            except BridgeNameTaken as taken:
                problem = str(taken)
        if problem is None:
            per_server(server)[self.slot] = (chain, any(
                m is not self._middleware and hooks_listing(m) for m in chain))
            return
        if method in HANDSHAKE_METHODS:
            return
        if not self._reported:
            self._reported = True
            logger.error("%s", problem)
        raise MiddlewareOrderError(problem)

