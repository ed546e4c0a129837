"""The tool cap's call counts (``disclosure/toolcap.py``) hold only tools that exist, and
are bounded by bytes as well as by count (#27): a client served in full runs every name
it sends, so the counter is the one place such a name could stay behind.
"""

from __future__ import annotations

import gc
import tracemalloc

import mcp_types as mt

from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.disclosure.toolcap import MAX_COUNTED_CHARS, ToolCap
from tests.conftest import build_server, connect

MIB = 1024 * 1024


async def test_calls_of_tools_that_do_not_exist_are_not_counted() -> None:
    """40 calls with 1 MB names from a client served in full (``claude-code``) kept 38 MiB
    in the counter; what does not exist is not counted, so nothing stays."""
    server = build_server()
    info = mt.Implementation(name="claude-code", version="1")
    async with connect(server, "legacy", client_info=info) as client:
        await client.list_tools()
        await client.call_tool("add", {"a": 1, "b": 2})  # warm up what a call keeps once
        await client.call_tool("nope", {}, raise_on_error=False)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for i in range(40):
                result = await client.call_tool(f"{i}" + "n" * MIB, {}, raise_on_error=False)
                assert result.is_error
            del result
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).data == 3
    # the last call's name and answer may still be referenced (about 2 MiB); 40 names not
    assert kept < 4 * MIB, f"40 unknown 1 MB tool names left {kept / MIB:.1f} MiB behind"


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
        before = tracemalloc.get_traced_memory()[0]
        await forty_long_names()
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept <= MAX_COUNTED_CHARS + MIB, f"the counts kept {kept / MIB:.1f} MiB of names"
    cap.note_call("search")
    assert cap.popular(["a", "search"], 1) == ["search"]  # counting goes on after a restart
