"""A FastMCP proxy that keeps one backend session per client, so grants survive it.

By default a FastMCP proxy (``create_proxy(url)``, ``fastmcp run <url>``) opens a new
backend session for every request it forwards. Behind it, a server with
``ProgressiveDisclosure`` sees every request as a new caller: the grant a read makes is
gone by the next call. ``SessionBackends`` is a client factory for ``FastMCPProxy`` that
keeps one connected backend client per front caller instead: per handshake-era session
(closed when that session closes) and per authenticated principal. Callers with no identity
(2026-07-28 without auth, on any transport: that protocol keys nothing to a connection)
still get a fresh backend session per request. The backend speaks the front's protocol era.

Example:
    ```python
    from fastmcp_progressive.backend_sessions import session_proxy

    proxy = session_proxy("http://127.0.0.1:8000/mcp")  # instead of create_proxy(...)
    proxy.run()
    ```
"""

from __future__ import annotations

from typing import Any

from fastmcp import Client
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers.proxy import FastMCPProxy, ProxyClient

from .caller import identify
from .fastmcp_internals import close_with_connection, connect_with_mode

_KEPT_KINDS = frozenset({"session", "principal"})


class SessionBackends:
    """Client factory: one connected backend client per front caller (see module doc)."""

    def __init__(self, target: Any, **client_kwargs: Any) -> None:
        self._base: Client[Any] = ProxyClient(target, **client_kwargs)
        self._open: dict[str, Client[Any]] = {}

    @property
    def open_sessions(self) -> int:
        """How many backend sessions are connected right now."""
        return len(self._open)

    async def __call__(self) -> Client[Any]:
        try:
            ctx = get_context()
        except RuntimeError:
            return self._base.new()
        caller = identify(ctx)
        rc = ctx.request_context
        mode = "legacy" if caller.era == "legacy" or rc is None else rc.protocol_version
        if caller.kind not in _KEPT_KINDS or caller.key is None:
            fresh = self._base.new()
            connect_with_mode(fresh, mode)
            return fresh
        key = f"{caller.kind}:{caller.key}"
        client = self._open.get(key)
        if client is not None and client.is_connected():
            return client
        client = self._base.new()
        connect_with_mode(client, mode)
        await client.__aenter__()  # type: ignore[no-untyped-call]
        self._open[key] = client

        async def close() -> None:
            if self._open.get(key) is client:
                del self._open[key]
            await client.__aexit__(None, None, None)  # type: ignore[no-untyped-call]

        close_with_connection(caller.anchor, close)  # principals: until aclose()
        return client

    async def aclose(self) -> None:
        """Disconnect every backend session still open."""
        while self._open:
            _, client = self._open.popitem()
            await client.__aexit__(None, None, None)  # type: ignore[no-untyped-call]


def session_proxy(target: Any, **settings: Any) -> FastMCPProxy:
    """``create_proxy(target)`` with one backend session per client (``SessionBackends``)."""
    return FastMCPProxy(client_factory=SessionBackends(target), **settings)
