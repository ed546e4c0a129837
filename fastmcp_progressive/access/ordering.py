"""Middleware that cannot sit in front of ``ProgressiveDisclosure``, caught on the first request.

``add_middleware`` appends, so ``mcp.add_middleware(ProgressiveDisclosure())`` often lands
behind middleware added earlier. Most of it is fine there: ``AuthMiddleware`` looks our
components up like any other (they are registered, see ``components.py``). A
``ResponseCachingMiddleware`` in front is not: it would replay one caller's listing (full
or reduced), description read or tool result to another caller without ever reaching the
gate, which means lockouts and calls that skip the gate. There is no start-up hook for
middleware, so the check runs on the first request the server sees and refuses every
request (with the fix in the message) until the order is right; it never waits for a read.

Example:
    ```python
    problem = misordered(server.middleware, middleware)
    if problem:
        raise MiddlewareOrderError(problem)
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastmcp.server.middleware.caching import ResponseCachingMiddleware
from mcp.shared.exceptions import MCPError

from fastmcp_progressive.fastmcp_internals import cached_methods


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
