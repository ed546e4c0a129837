"""Compatibility mode: every trigger, in both eras, and decisions that stay with one client."""

from __future__ import annotations

from typing import Any

import mcp_types as mt
import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from mcp.client.extension import advertise

from fastmcp_progressive import EXTENSION_ID, ClientInfo, ClientSettings
from tests.conftest import (
    ERAS,
    FOLLOWED_IN_MEMORY,
    Era,
    build_server,
    connect,
    fetch,
    gated,
    serve_http,
)
from tests.servers import ADD_FULL_TEXT, ADD_TYPED

FULL = advertise(EXTENSION_ID, {"mode": "full"})
PROGRESSIVE = advertise(EXTENSION_ID, {"mode": "progressive"})


async def _is_full(client: Client[Any]) -> bool:
    add = next(t for t in await client.list_tools() if t.name == "add")
    full = add.description == ADD_FULL_TEXT
    assert full == (add.input_schema != ADD_TYPED)
    if full:
        assert not await gated(client)
    return full


@pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)
async def test_client_extension_selects_mode(era: Era) -> None:
    server = build_server(clients=ClientSettings(full_clients=["*"]))  # the client overrides
    async with (
        connect(server, era, extensions=[FULL]) as full,
        connect(server, era, extensions=[PROGRESSIVE]) as progressive,
    ):
        assert await _is_full(full)
        assert not await _is_full(progressive)
        assert await gated(progressive)
        assert "add" in await fetch(full, "add")  # the resource still answers in full mode


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("mode", [["full"], {"mode": "full"}, 3], ids=["list", "dict", "int"])
async def test_a_non_string_mode_is_ignored_not_a_failed_connection(
        era: Era, mode: Any, caplog: pytest.LogCaptureFixture) -> None:
    """#34: ``{"mode": ["full"]}`` failed ``initialize`` with "unhashable type" and logged a
    traceback per request; a mode that is not a text asks for nothing."""
    server = build_server(clients=ClientSettings(full_clients=["*"]))
    async with connect(server, era, extensions=[advertise(EXTENSION_ID, {"mode": mode})]) as c:
        assert await _is_full(c)  # the operator's rule decides, as with no mode at all
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


@pytest.mark.parametrize("era", ERAS)
async def test_client_name_glob_rule(era: Era) -> None:
    server = build_server(clients=ClientSettings(full_clients=["old-host/1.*"]))
    old = mt.Implementation(name="old-host", version="1.4")
    new = mt.Implementation(name="old-host", version="2.0")
    async with (
        connect(server, era, client_info=old) as a,
        connect(server, era, client_info=new) as b,
    ):
        assert await _is_full(a)
        assert not await _is_full(b)


@pytest.mark.parametrize("era", ERAS)
async def test_header_for_gateways_on_one_http_server(era: Era) -> None:
    server = build_server(auth=True)
    async with serve_http(server) as url:
        gateway = StreamableHttpTransport(
            url, auth="alice-token", headers={"X-Progressive-Disclosure": "full"}
        )
        mode = "legacy" if era == "legacy" else "auto"
        async with (
            Client(gateway, mode=mode) as full,
            connect(url, era, token="bob-token") as progressive,
        ):
            assert await _is_full(full)
            assert not await _is_full(progressive)
            assert await gated(progressive)


@pytest.mark.parametrize("era", ERAS)
async def test_resolver_sees_client_and_has_final_say(era: Era) -> None:
    seen: list[ClientInfo] = []

    def resolver(client: ClientInfo) -> str | None:
        seen.append(client)
        return "full" if client.name == "ops-console" else None

    server = build_server(clients=ClientSettings(level_resolver=resolver))
    ops = mt.Implementation(name="ops-console", version="3")
    async with connect(server, era, client_info=ops, extensions=[PROGRESSIVE]) as c:
        assert await _is_full(c)
    assert seen[-1].era == era
    assert seen[-1].extension_settings == {"mode": "progressive"}


async def test_failing_resolver_falls_back_without_breaking_requests() -> None:
    def broken(client: ClientInfo) -> str:
        raise RuntimeError("boom")

    async with connect(build_server(clients=ClientSettings(level_resolver=broken)), "modern") as c:
        assert not await _is_full(c)
