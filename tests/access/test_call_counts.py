"""The tool cap's call counts (``disclosure/toolcap.py``) hold only tools that exist, and
are bounded by bytes as well as by count (#27): a client served in full runs every name
it sends, so the counter is the one place such a name could stay behind.
"""

from __future__ import annotations

import gc
import tracemalloc

import mcp_types as mt

from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.disclosure.toolcap import ToolCap
from tests.conftest import build_server, connect

MIB = 1024 * 1024


def blocks_of(size: int) -> int:
    """Memory blocks of ``size`` bytes or more allocated since ``tracemalloc.start()`` and
    still held: each long tool name kept is one. (The total would also count what a
    background thread allocates meanwhile, such as the tokenizer an earlier test's server
    loads.)"""
    return sum(1 for trace in tracemalloc.take_snapshot().traces if trace.size >= size)


async def test_calls_of_tools_that_do_not_exist_are_not_counted() -> None:
    """Calls of made-up names from a client served in full (``claude-code``) were counted:
    40 calls with 1 MB names kept 41 MiB. What does not exist is not counted now (20 KB
    names here, below the counts' own bound in characters), so none stays."""
    server = build_server()
    info = mt.Implementation(name="claude-code", version="1")
    size = 20_000
    async with connect(server, "legacy", client_info=info) as client:
        await client.list_tools()
        await client.call_tool("add", {"a": 1, "b": 2})  # warm up what a call keeps once
        await client.call_tool("nope", {}, raise_on_error=False)
        gc.collect()
        tracemalloc.start()
        try:
            for i in range(40):
                result = await client.call_tool(f"{i}" + "n" * size, {},
                                                raise_on_error=False)
                assert result.is_error
            del result
            gc.collect()
            kept = blocks_of(size)
        finally:
            tracemalloc.stop()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).data == 3
    # the last call's name and its answer may still be referenced; 40 names not
    assert kept <= 3, f"{kept} of 40 unknown tool names were left behind"


async def test_counted_names_are_bounded_by_characters_not_only_by_count() -> None:
    """Counted names were bounded only by their number (100,000): 40 real tools with 1 MB
    names kept 40 MB of them; the counts start over past ``MAX_COUNTED_CHARS``."""
    cap = ToolCap(GrantStore(), max_tools=5)

    async def forty_long_names() -> None:  # real tools: a gateway's names can be that long
        for i in range(40):
            cap.note_call(f"{i}" + "t" * MIB)

    gc.collect()
    tracemalloc.start()
    try:
        await forty_long_names()
        gc.collect()
        kept = blocks_of(MIB)
    finally:
        tracemalloc.stop()
    assert kept <= 2, f"the counts kept {kept} 1 MB names"  # the latest, at most
    cap.note_call("search")
    assert cap.popular(["a", "search"], 1) == ["search"]  # counting goes on after a restart
