"""What clients and upstreams can make the server keep is bounded by bytes, not only by count
(#21): client names outlive their clients in the mode memo, and per-tool memos keep one
entry per distinct content a tool ever had.

Retained memory is measured with ``tracemalloc`` (what is still allocated once the clients
are gone and garbage is collected), against a bound far below what the old code kept.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import FastMCP
from fastmcp.server import create_proxy
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.caches import ToolCache
from tests.conftest import build_server, connect

MIB = 1024 * 1024


def retained(work: Callable[[], Any]) -> int:
    """Bytes still allocated after ``work()`` (its return value dropped, garbage collected)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = work()
        del result
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_long_client_names_are_kept_by_digest_not_whole() -> None:
    """40 unauthenticated 2 MB client names held 78 MiB in the mode memo (4 GiB at its
    1,024-entry cap); each is now kept as its SHA-256."""
    policy = ModePolicy()
    default = policy.level(Caller(kind="anonymous", era="modern", client_name="some-host"))

    def forty_clients() -> None:
        for i in range(40):
            name = f"{i}" + "n" * (2 * MIB)
            caller = Caller(kind="anonymous", era="modern", client_name=name,
                            client_version="v" * MIB)
            assert policy.level(caller) == default

    kept = retained(forty_clients)
    assert kept < MIB, f"the mode memo kept {kept / MIB:.1f} MiB of client names"
    same = Caller(kind="anonymous", era="modern", client_name="0" + "n" * (2 * MIB),
                  client_version="v" * MIB)
    assert policy.level(same) == default  # still answered from the memo


async def test_long_client_names_over_the_protocol_are_not_kept() -> None:
    server = build_server()
    name = "x" * (2 * MIB)

    async def connect_and_leave(i: int) -> None:
        info = mt.Implementation(name=f"{i}{name}", version="1")
        async with connect(server, "legacy", client_info=info) as client:
            await client.list_tools()

    await connect_and_leave(-1)  # warm up what every server keeps once
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(5):
            await connect_and_leave(i)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2 * MIB, f"5 clients with 2 MB names left {kept / MIB:.1f} MiB behind"


class ChangingDescriptions(Middleware):
    """An upstream whose every tool description changes on every listing (5 KB each)."""

    def __init__(self) -> None:
        self.listings = 0

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        self.listings += 1
        tools = await call_next(context)
        return [t.model_copy(update={"description": f"listing {self.listings}: " + "d" * 5000})
                for t in tools]


def changing_upstream(tools: int) -> FastMCP:
    upstream = FastMCP("changing")
    for i in range(tools):
        upstream.add_tool(Tool.from_function(_tool, name=f"tool_{i}"))
    upstream.add_middleware(ChangingDescriptions())
    return upstream


def _tool(x: int) -> int:
    return x


@pytest.mark.slow  # 200 proxied listings and reads: about 10 s
async def test_per_tool_memos_keep_one_entry_per_tool_when_descriptions_keep_changing() -> None:
    """An upstream whose descriptions changed on every listing left 327 MiB behind (one
    memo entry per tool per listing, up to 20,000 listed and 2,048 definitions); a
    changed description now replaces its tool's entry."""
    tools, listings = 20, 200
    proxy = create_proxy(changing_upstream(tools))
    middleware = ProgressiveDisclosure()
    proxy.add_middleware(middleware)
    names = [f"tool_{i}" for i in range(tools)]
    async with connect(proxy, "legacy") as client:
        await client.list_tools()
        await client.call_tool("describe_tools", {"tools": names})
        for _ in range(listings):
            await client.list_tools()
            await client.call_tool("describe_tools", {"tools": names})
    for memo in (middleware.lister._memo, middleware.definitions._memo):
        assert len(memo) <= tools + 1  # + the bridge tool
        kept = sum(len(repr(value)) for value in memo._values.values())
        assert kept < MIB, f"{listings} changing listings kept {kept / MIB:.1f} MiB"


def test_a_memo_keeps_the_latest_content_per_slot_and_its_bound() -> None:
    class T:
        def __init__(self, name: str, text: int) -> None:
            self.name, self.text = name, text

    memo: ToolCache[Any] = ToolCache(3, key=lambda t: (t.name, t.text))
    for n in range(5):
        memo.put(T("a", n), n)
    assert len(memo) == 1 and memo.get(T("a", 4)) == 4
    assert memo.get(T("a", 3)) is None
    for name in "bcd":
        memo.put(T(name, 0), name)
    assert len(memo) == 3 and memo.get(T("a", 4)) is None  # the LRU bound holds
    memo.put(T("a", 5), 5)
    assert len(memo) == 3 and memo.get(T("a", 5)) == 5
