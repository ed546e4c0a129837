"""Who "the caller" is in each era, and what happens where there is no identity at all."""

from __future__ import annotations

import logging

import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.utilities.tests import temporary_settings

from fastmcp_progressive import ClientSettings
from tests.conftest import (
    TRANSPORTS,
    Transport,
    build_server,
    clients,
    connect,
    fetch,
    gated,
    serve_http,
)
from tests.parts import parts, sessions_held
from tests.servers import ADD_TYPED


async def test_modern_same_principal_shares_grants_across_connections() -> None:
    server = build_server(auth=True)
    async with serve_http(server) as url:
        async with connect(url, "modern", token="alice-token") as first:
            await fetch(first, "add")
        async with connect(url, "modern", token="alice-token") as second:
            assert not await gated(second)  # per principal: survives a reconnect
        async with connect(url, "modern", token="bob-token") as other:
            assert await gated(other)


async def test_legacy_sessions_of_one_principal_stay_isolated() -> None:
    server = build_server(auth=True)
    async with clients(server, "http", "legacy", 2, tokens=["alice-token", "alice-token"]) as (
        a,
        b,
    ):
        await fetch(a, "add")
        assert not await gated(a)
        assert await gated(b)


async def test_legacy_session_grants_released_on_close() -> None:
    server = build_server()
    middleware = server.middleware[-1]
    async with connect(server, "legacy") as c:
        await fetch(c, "add")
        assert sessions_held(parts(middleware).grants) == 1
    assert sessions_held(parts(middleware).grants) == 0


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_modern_callers_without_auth_are_judged_by_each_request(
    transport: Transport,
) -> None:
    """2026-07-28: "MUST NOT rely on prior requests over the same connection", and the tool
    list "MUST NOT vary per-connection or as a side effect of other requests". Without auth
    nothing of the connection (in memory as on HTTP) keys a grant: a read grants nothing, a
    call is judged by its own arguments, and the listing is the same before and after, on
    this connection and on another."""
    server = build_server()
    async with clients(server, transport, "modern", count=2) as (c, other):
        before = [t.model_dump() for t in await c.list_tools()]
        assert await gated(c, "echo", {"words": "x"})  # taught, never granted
        await fetch(c, "echo", "add")
        assert await gated(c, "echo", {"words": "x"})  # the read earlier changes nothing
        assert not await gated(c, "echo", {"text": "x"})  # fits: runs, no read needed
        assert not await gated(other, "add")
        assert [t.model_dump() for t in await c.list_tools()] == before
        assert [t.model_dump() for t in await other.list_tools()] == before


async def test_handshake_sessions_keep_connection_grants() -> None:
    """The handshake era has sessions: a read grants that session, and only it."""
    server = build_server()
    async with connect(server, "legacy") as c, connect(server, "legacy") as other:
        await other.list_tools()
        await fetch(c, "add")
        assert not await gated(c)  # granted (ungranted, this followable session is refused)
        assert await gated(other)


async def test_anonymous_modern_http_validated_by_default(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = build_server()
    async with serve_http(server) as url:
        with caplog.at_level(logging.INFO, logger="fastmcp.progressive"):
            async with connect(url, "modern") as c:
                tools = await c.list_tools()
                assert tools[0].input_schema == ADD_TYPED
                assert not await gated(c)  # arguments that fit the schema run
                assert not await gated(c, "echo", {"text": "x"})
                assert await gated(c, "echo", {"words": "x"})  # ones that do not are taught
    notes = [r for r in caplog.records if "cannot follow" in r.getMessage()]
    assert len(notes) == 1  # said once, not per call


async def test_anonymous_full_policy_gives_compatibility_listing() -> None:
    server = build_server(clients=ClientSettings(anonymous="full"))
    async with serve_http(server) as url, connect(url, "modern") as c:
        add = next(t for t in await c.list_tools() if t.name == "add")
        assert add.input_schema["required"] == ["a", "b"]
        assert not await gated(c)


async def test_anonymous_shared_policy_gates_with_one_grant_set() -> None:
    server = build_server(clients=ClientSettings(anonymous="shared"))
    async with serve_http(server) as url:
        async with connect(url, "modern") as a, connect(url, "modern") as b:
            assert await gated(a)
            await fetch(a, "add")
            assert not await gated(b)  # documented: shared means shared


async def test_legacy_stateless_http_is_anonymous() -> None:
    server = build_server()
    with temporary_settings(stateless_http=True):
        async with serve_http(server) as url:
            async with Client(StreamableHttpTransport(url), mode="legacy") as c:
                assert not await gated(c)  # no session to keep a grant under: validated
        async with serve_http(build_server(clients=ClientSettings(anonymous="shared"))) as url:
            async with Client(StreamableHttpTransport(url), mode="legacy") as c:
                assert await gated(c)
                await fetch(c, "add")
                assert not await gated(c)  # kept under the shared anonymous set, not per request


async def test_legacy_and_modern_clients_side_by_side_are_isolated() -> None:
    server = build_server(auth=True)
    async with (
        serve_http(server) as url, connect(url, "legacy", token="alice-token") as old,
        connect(url, "modern", token="bob-token") as new,
    ):
        await fetch(old, "add")
        assert await gated(new)
        await fetch(new, "echo")
        assert await gated(old, "echo", {"text": "x"})
