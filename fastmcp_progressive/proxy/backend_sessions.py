"""A FastMCP proxy that keeps one backend session per client, so grants survive it.

By default a FastMCP proxy (``create_proxy(url)``, ``fastmcp run <url>``) opens a new
backend session for every request it forwards. Behind it, a server with
``ProgressiveDisclosure`` sees every request as a new caller: the grant a read makes is
gone by the next call. ``SessionBackends`` is a client factory for ``FastMCPProxy`` that
keeps one connected backend client per front caller instead: per handshake-era session
(closed when that session closes) and per authenticated principal. Callers with no identity
(2026-07-28 without auth, on any transport: that protocol keys nothing to a connection)
still get a fresh backend session per request. The backend speaks the front's protocol era.

A caller has at most one backend session: its requests that arrive together wait for the
first to connect it (single flight), rather than each connecting one that nothing keeps.
Kept sessions are bounded: a handshake session's backend closes with it; a
principal's (which has no end the proxy sees) closes after ``idle_ttl`` seconds unused, and
at most ``max_sessions`` are open at once (the least recently used closes first). A session
closed while a request still uses it closes when that request ends (FastMCP's client counts
its users). ``aclose()`` disconnects every backend session the factory connected.

Example:
    ```python
    from fastmcp_progressive.proxy.backend_sessions import session_proxy

    proxy = session_proxy("http://127.0.0.1:8000/mcp")  # instead of create_proxy(...)
    proxy.run()
    ```
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

import anyio
from cachetools import TTLCache
from fastmcp import Client
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers.proxy import FastMCPProxy, ProxyClient

from fastmcp_progressive.access.caller import identify
from fastmcp_progressive.fastmcp_internals import close_with_connection
from fastmcp_progressive.proxy.forwarding import full_listing

_KEPT_KINDS = frozenset({"session", "principal"})
DEFAULT_IDLE_TTL = 600.0
DEFAULT_MAX_SESSIONS = 256


class _Kept(TTLCache[str, "Client[Any]"]):
    """The kept backend clients: least recently used first out past ``maxsize``, each gone
    ``ttl`` seconds after its last use (a use sets it again). What either drops waits in
    ``dropped`` for the factory to close (closing is async; cachetools' hooks are not)."""

    def __init__(self, maxsize: int, ttl: float, timer: Callable[[], float]) -> None:
        super().__init__(maxsize, ttl, timer)
        self.dropped: list[Client[Any]] = []

    def popitem(self) -> tuple[str, Client[Any]]:
        key, client = super().popitem()
        self.dropped.append(client)
        return key, client

    def expire(self, time: float | None = None) -> list[tuple[str, Client[Any]]]:
        expired = list(super().expire(time))
        self.dropped.extend(client for _, client in expired)
        return expired


class SessionBackends:
    """Client factory: one connected backend client per front caller (see module doc)."""

    def __init__(
        self,
        target: Any,
        *,
        idle_ttl: float = DEFAULT_IDLE_TTL,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
        **client_kwargs: Any,
    ) -> None:
        if not idle_ttl > 0 or math.isinf(idle_ttl):
            raise ValueError(f"idle_ttl must be a positive number of seconds, not {idle_ttl!r}")
        if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) \
                or max_sessions < 1:
            raise ValueError(f"max_sessions must be a positive integer, not {max_sessions!r}")
        client_kwargs.setdefault("extensions", [full_listing()])  # we disclose ourselves
        self._base: Client[Any] = ProxyClient(target, **client_kwargs)
        self._client_kwargs = client_kwargs
        self._open = _Kept(max_sessions, idle_ttl, clock)
        self._connecting: dict[str, anyio.Event] = {}  # keys whose backend is connecting now
        self._connected: set[Client[Any]] = set()  # every backend we connected, until closed
        self.idle_ttl = idle_ttl
        self.max_sessions = max_sessions

    def _speaking(self, mode: str) -> Client[Any]:
        """A new, unconnected client over the base's transport that connects in ``mode``
        (``Client``'s public ``mode`` argument; the same transport, as ``new()`` shares)."""
        return ProxyClient(self._base.transport, **{**self._client_kwargs, "mode": mode})

    @property
    def open_sessions(self) -> int:
        """How many backend sessions are connected right now."""
        return len(self._open)

    async def __call__(self) -> Client[Any]:
        try:
            ctx = get_context()
        except RuntimeError:
            return self._base.new()
        await self._close_idle()
        caller = identify(ctx)
        rc = ctx.request_context
        mode = "legacy" if caller.era == "legacy" or rc is None else rc.protocol_version
        if caller.kind not in _KEPT_KINDS or caller.key is None:
            return self._speaking(mode)
        key = f"{caller.kind}:{caller.key}"
        while True:
            kept = self._open.get(key)
            if kept is not None and kept.is_connected():
                self._open[key] = kept  # used now: its idle time starts again
                return kept
            connecting = self._connecting.get(key)
            if connecting is None:
                break
            await connecting.wait()  # one connect per key: the caller's other requests wait
        done = self._connecting[key] = anyio.Event()
        try:
            client = self._speaking(mode)
            await client.__aenter__()  # type: ignore[no-untyped-call]
            # those closed while a request used them have disconnected since, as it ended
            self._connected = {c for c in self._connected if c.is_connected()}
            self._connected.add(client)
            self._open[key] = client  # past max_sessions the least recently used is dropped
        finally:  # connected or not, the requests waiting look again (and may try)
            del self._connecting[key]
            done.set()

        async def close() -> None:
            if self._open.get(key) is client:
                del self._open[key]
            await self._leave(client)

        close_with_connection(caller.anchor, close)  # handshake sessions: when they end
        await self._close_dropped()
        return client

    async def _close_idle(self) -> None:
        """Close the kept sessions unused for ``idle_ttl`` seconds (oldest first)."""
        self._open.expire()
        await self._close_dropped()

    async def _close_dropped(self) -> None:
        """Close what the kept cache dropped (idle, or least recently used past the bound)."""
        while self._open.dropped:
            await self._leave(self._open.dropped.pop(0))

    async def aclose(self) -> None:
        """Disconnect every backend session this factory connected: the kept ones, and
        those closed earlier (idle, least recently used) that a request still used."""
        self._open.expire()
        self._open.dropped.extend(self._open.values())
        self._open.clear()
        await self._close_dropped()
        while self._connected:
            client = self._connected.pop()
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await client.close()  # type: ignore[no-untyped-call]  # held by a request

    async def _leave(self, client: Client[Any]) -> None:
        """Our hold on a backend client ends; it disconnects once no request uses it."""
        # a backend that is already gone has nothing left to close
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            await client.__aexit__(None, None, None)  # type: ignore[no-untyped-call]
        if not client.is_connected():
            self._connected.discard(client)


def session_proxy(target: Any, **settings: Any) -> FastMCPProxy:
    """``create_proxy(target)`` with one backend session per client (``SessionBackends``)."""
    return FastMCPProxy(client_factory=SessionBackends(target), **settings)
