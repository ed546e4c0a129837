"""The describe path (``disclosure/describer.py``) costs what the question touches: a refusal
or a read rebuilds no listing and shows other listing middleware only the tools in question;
a hidden name costs what an unknown one does; and the answer to unknown names is bounded
whatever the catalog.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastmcp import FastMCP

from fastmcp_progressive import DESCRIPTIONS_URI
from fastmcp_progressive.payloads import UNKNOWN_TOOL_HINT
from tests.conftest import (
    build_server,
    connect,
    fetch,
    gated,
    serve_http,
)
from tests.servers import FILTERED_TOOL, ListFilter, add_admin_only_tool, add_numbered_tools

HIDDEN = FILTERED_TOOL




def _count_scans(server: FastMCP) -> dict[str, int]:
    """Count full passes over the local provider's components and tool listings."""
    provider = server.local_provider
    counts = {"scans": 0, "listings": 0}

    class Counting(dict):  # type: ignore[type-arg]
        def values(self) -> Any:
            counts["scans"] += 1
            return super().values()

    provider._components = Counting(provider._components)
    original = provider._list_tools

    async def listing() -> Any:
        counts["listings"] += 1
        return await original()

    provider._list_tools = listing  # type: ignore[method-assign]
    return counts


def _big_server(tools: int, **options: Any) -> FastMCP:
    server = build_server(**options)
    add_numbered_tools(server, tools, "tool_{:05d}", "Tool number {}.")
    return server


async def test_other_listing_middleware_sees_only_the_tools_in_question() -> None:
    server = _big_server(300)
    spy = ListFilter()
    server.add_middleware(spy)
    counts = _count_scans(server)
    async with connect(server, "legacy") as c:
        await c.list_tools()
        counts["listings"], spy.seen[:] = 0, []
        assert await gated(c, "tool_00007", {})
        body = await fetch(c, *[f"tool_{i:05d}" for i in range(5)])
        assert counts["listings"] == 0  # no listing rebuilt for a refusal or a read
        assert spy.seen == [1, 5]  # the filter ran over the tools asked about, nothing more
        body = await fetch(c, HIDDEN)
        hidden_listings, counts["listings"] = counts["listings"], 0
        await fetch(c, "no_such_tool")
    # a name not found is answered from the caller's listing (its available_tools, #21),
    # and a hidden one costs what an unknown one does (FastMCP's miss lists: #33)
    assert hidden_listings == counts["listings"] == 2
    assert HIDDEN not in body[HIDDEN]["available_tools"]


async def test_hidden_and_unknown_names_cost_the_same() -> None:
    server = build_server(auth=True)
    add_admin_only_tool(server)
    counts = _count_scans(server)
    async with serve_http(server) as url, connect(url, "modern", token="alice-token") as c:
        await fetch(c, "add")
        costs = []
        for name in ("wipe", "no_such_tool"):
            counts["scans"] = counts["listings"] = 0
            body = await fetch(c, name)
            entry = body[name]
            assert entry == {"error": f"Tool '{name}' not found", "message": UNKNOWN_TOOL_HINT,
                             "available_tools": entry["available_tools"]}
            assert sorted(entry["available_tools"]) == ["add", "echo", "shout"]
            costs.append(dict(counts))
    assert costs[0] == costs[1]
    # FastMCP's own get_tool (#26: a name it does not find costs it a listing, its fallback
    # to a lower version), then one listing of the caller's own tools (available_tools),
    # whether hidden or unknown
    assert costs[0]["scans"] <= 3 and costs[0]["listings"] == 2


@pytest.mark.slow  # builds a 2,000-tool server
async def test_answers_to_unknown_names_are_bounded_whatever_the_catalog() -> None:
    sizes = []
    for tools in (20, 2000):
        server = _big_server(tools)
        async with connect(server, "modern") as c:
            contents = await c.read_resource(
                f"{DESCRIPTIONS_URI}?tools=" + ",".join(f"nope{i}" for i in range(32))
            )
            sizes.append(len(contents[0].text))  # type: ignore[union-attr]
    # at most ten suggested names of ten characters each, whatever the catalog
    assert max(sizes) < 32 * (200 + 10 * 13)


async def test_a_query_answer_looks_each_tool_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A query ranks the tools this caller may see (one listing: ``visible_tools``) and
    describes the best ones, and those named beside it: each is described from that
    listing, not looked up again (#35; before, ``describe`` asked FastMCP's ``get_tool``
    for each tool just listed). A name the listing lacks is looked up, once (it is
    answered as unknown); the bridge itself is the gate's one lookup."""
    server = build_server()
    looked: list[str] = []
    original = server.get_tool

    async def spy(name: str, *args: Any, **kwargs: Any) -> Any:
        looked.append(name)
        return await original(name, *args, **kwargs)

    monkeypatch.setattr(server, "get_tool", spy)
    async with connect(server, "legacy") as client:
        await client.list_tools()
        looked.clear()
        result = await client.call_tool("describe_tools", {"query": "add two integers"})
        assert "add" in json.loads(result.content[0].text)["tools"]
        assert looked == ["describe_tools"]
        looked.clear()
        result = await client.call_tool("describe_tools", {"query": "add two integers",
                                                           "tools": ["echo", "nope"]})
        assert {"add", "echo", "nope"} <= set(json.loads(result.content[0].text)["tools"])
        assert sorted(looked) == ["describe_tools", "nope"]
