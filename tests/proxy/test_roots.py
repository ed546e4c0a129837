"""``RootsForwarding``: upstreams told to re-read roots once per front session, and again
when its client says they changed (``proxy/roots.py``)."""

from __future__ import annotations

from typing import Any

from fastmcp import FastMCP

from fastmcp_progressive.proxy.roots import RootsForwarding
from tests.conftest import connect
from tests.waiting import until


class Upstream:
    """Stands in for a ``proxy/upstream.py:Upstream`` that asked its client for roots."""

    roots_asked = True

    def __init__(self) -> None:
        self.resyncs = 0
        self.fronts: list[Any] = []

    def note_roots_front(self, ctx: Any) -> None:
        self.fronts.append(ctx)

    async def resync_roots(self, ctx: Any) -> None:
        self.resyncs += 1


def front(upstream: Upstream) -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("front")
    server.tool(lambda: "pong", name="ping")
    server.add_middleware(RootsForwarding(lambda: [upstream]))  # type: ignore[list-item]
    return server


async def test_a_session_with_roots_is_synced_once_then_on_each_change() -> None:
    upstream = Upstream()
    server = front(upstream)
    async with connect(server, "legacy", roots=["file:///work"]) as client:
        for _ in range(3):
            await client.list_tools()
        await client.call_tool("ping", {})
        assert upstream.resyncs == 1  # the session's first request, not each one
        await client.send_roots_list_changed()
        await until(lambda: upstream.resyncs == 2, what="the change to be forwarded")
    async with connect(server, "legacy", roots=["file:///other"]) as client:
        await client.list_tools()
        await client.list_tools()
    assert upstream.resyncs == 3  # a new session: synced once again


async def test_a_session_without_roots_is_never_synced() -> None:
    upstream = Upstream()
    async with connect(front(upstream), "legacy") as client:
        await client.list_tools()
        await client.call_tool("ping", {})
    assert upstream.resyncs == 0 and upstream.fronts == []
