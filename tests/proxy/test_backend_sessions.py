"""``session_proxy`` / ``SessionBackends``: one backend session per caller, none left behind.

A principal's clients that arrive together used to open one backend session each: every
one but the last kept was connected, untracked, and outlived ``aclose()``. Here a real
streamable-HTTP front on 127.0.0.1 serves five principals connecting five clients each at
once, in front of an in-memory backend whose transport counts its open sessions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastmcp.client.transports import FastMCPTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.providers.proxy import FastMCPProxy
from mcp.client.session import ClientSession

from fastmcp_progressive.proxy.backend_sessions import SessionBackends
from tests.conftest import build_server, connect, serve_http
from tests.waiting import until

PRINCIPALS = [f"user{n}" for n in range(5)]
CLIENTS_EACH = 5
TOKENS = {f"{who}-token": {"client_id": "agent", "sub": who, "scopes": []}
          for who in PRINCIPALS}


class CountedBackend(FastMCPTransport):
    """The backend in memory; counts its sessions open now, and holds each new one until
    ``hold_until()`` says every client's request has reached the proxy's factory."""

    def __init__(self, hold_until: Any) -> None:
        super().__init__(build_server())
        self.open = 0
        self.opened = 0
        self._hold_until = hold_until

    @asynccontextmanager
    async def connect_session(self, **kwargs: Any) -> AsyncIterator[ClientSession]:
        self.opened += 1
        await until(self._hold_until, 30, "every client's request at the proxy")
        async with super().connect_session(**kwargs) as session:
            self.open += 1
            try:
                yield session
            finally:
                self.open -= 1


async def test_clients_of_one_principal_arriving_together_share_one_backend_and_aclose_closes_all(
) -> None:
    asked = [0]
    backend = CountedBackend(lambda: asked[0] >= len(PRINCIPALS) * CLIENTS_EACH)
    backends = SessionBackends(backend)

    async def factory() -> Any:
        asked[0] += 1
        return await backends()

    proxy = FastMCPProxy(client_factory=factory, auth=StaticTokenVerifier(tokens=TOKENS))
    try:
        async with serve_http(proxy) as url:
            async def one_client(token: str) -> None:
                async with connect(url, "modern", token=token) as client:
                    await client.list_tools()

            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    for who in PRINCIPALS:
                        for _ in range(CLIENTS_EACH):
                            group.start_soon(one_client, f"{who}-token")
            assert backend.opened == len(PRINCIPALS)  # one connect per principal (single flight)
            assert backends.open_sessions == backend.open == len(PRINCIPALS)
    finally:
        await backends.aclose()
    assert backends.open_sessions == 0
    await until(lambda: backend.open == 0, what="every backend session closed")
