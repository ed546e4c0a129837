"""Disclosure follows the caller's own ``tools/list``, whatever hook hides a tool, and costs
what the question touches: a lookup neither scans the catalog per name nor rebuilds the
caller's listing, and a hidden name costs what an unknown one does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import FastMCP
from fastmcp.server.auth import require_scopes
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.transforms import Transform
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools.base import Tool

from fastmcp_progressive import DESCRIPTIONS_URI, ProgressiveDisclosure
from fastmcp_progressive.payloads import UNKNOWN_TOOL_HINT
from tests.conftest import (
    ERAS,
    TOKENS,
    TRANSPORTS,
    Era,
    Transport,
    build_server,
    clients,
    connect,
    fetch,
    gated,
    read_json,
    serve_http,
)
from tests.spies import batch_handled
from tests.waiting import ListChangedRecorder as Recorder
from tests.waiting import watcher_ready

HIDDEN = "shout"


def _drop_hidden(result: Any) -> Any:
    if isinstance(result, mt.ListToolsResult):
        return result.model_copy(update={"tools": [t for t in result.tools if t.name != HIDDEN]})
    if isinstance(result, (list, tuple)):
        return [t for t in result if getattr(t, "name", None) != HIDDEN]
    return result


async def _filter_listing(
    self: Middleware, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
) -> Any:
    result = await call_next(context)
    return _drop_hidden(result) if context.method == "tools/list" else result


class RequestFilter(Middleware):
    """A tenant filter written the usual way: on the request, by method."""

    on_request = _filter_listing


class MessageFilter(Middleware):
    """The same filter, one hook further out."""

    on_message = _filter_listing


class ListFilter(Middleware):
    """The same filter in ``on_list_tools``, counting the tools it is shown."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self.seen.append(len(tools))
        return [t for t in tools if t.name != HIDDEN]


@pytest.mark.parametrize("hook", [RequestFilter, MessageFilter, ListFilter])
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
async def test_listing_filter_of_any_hook_style_hides_the_tool_everywhere(
    hook: type[Middleware], transport: Transport, era: Era
) -> None:
    server = build_server()
    server.add_middleware(hook())
    async with clients(server, transport, era) as (c,):
        assert HIDDEN not in [t.name for t in await c.list_tools()]
        entry = (await fetch(c, HIDDEN, "add"))[HIDDEN]
        assert entry == {
            "error": f"Tool '{HIDDEN}' not found",
            "message": UNKNOWN_TOOL_HINT,
            "available_tools": entry["available_tools"],
        }
        assert HIDDEN not in entry["available_tools"]
        bridged = await c.call_tool("describe_tools", {"tools": [HIDDEN]})
        bridged_entry = bridged.structured_content[HIDDEN]  # type: ignore[index]
        assert set(bridged_entry) == {"error", "message", "available_tools"}
        assert HIDDEN not in bridged_entry["available_tools"]
        refused = await c.call_tool(HIDDEN, {"text": "x"}, raise_on_error=False)
        assert "TOOL_DESCRIPTION_REQUIRED" not in json.dumps(refused.structured_content or {})
        missing = await read_json(c, DESCRIPTIONS_URI)
        assert HIDDEN not in missing["error"]["available_tools"]


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
    for i in range(tools):
        server.add_tool(Tool.from_function(lambda: "x", name=f"tool_{i:05d}",
                                           description=f"Tool number {i}."))
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
    # a name not found is answered from the caller's listing (its available_tools, #21)
    assert counts["listings"] == 1
    assert HIDDEN not in body[HIDDEN]["available_tools"]


async def test_hidden_and_unknown_names_cost_the_same() -> None:
    server = build_server(auth=True)

    @server.tool(auth=require_scopes("admin"))
    def wipe() -> str:
        """Delete everything."""
        return "wiped"

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


class RenameTool(Transform):
    """A user's transform whose attribute merely ends in ``_tool_name``."""

    def __init__(self) -> None:
        self.target_tool_name = "add"


async def test_only_fastmcp_gateway_transforms_are_exempt() -> None:
    server = build_server()
    server.add_transform(RenameTool())
    server.add_transform(BM25SearchTransform(search_tool_name="find_tools"))
    middleware = server.middleware[-1]
    assert isinstance(middleware, ProgressiveDisclosure)
    from fastmcp_progressive.access.gate import gateway_tools

    assert gateway_tools(server) == {"find_tools", "call_tool"}
    async with connect(server, "legacy") as c:  # a followed caller: gated
        await c.list_tools()  # a stream that calls first is checked by its arguments instead
        assert await gated(c, "add")


async def test_list_changed_goes_only_to_sessions_whose_listing_changed(
    tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens = dict(TOKENS, **{"admin-token": {"client_id": "agent", "sub": "root",
                                             "scopes": ["admin"]}})
    from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

    middleware = ProgressiveDisclosure(tmp_descriptions)
    server = FastMCP("t", auth=StaticTokenVerifier(tokens=tokens))
    server.add_middleware(middleware)

    @server.tool(auth=require_scopes("admin"))
    def wipe() -> str:
        """Delete everything."""
        return "wiped"

    @server.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    alice, root = Recorder(), Recorder()
    async with (
        serve_http(server) as url,
        connect(url, "legacy", token="alice-token", message_handler=alice) as a,
        connect(url, "legacy", token="admin-token", message_handler=root) as r,
    ):
        await a.list_tools()
        await r.list_tools()
        await watcher_ready(middleware)
        watcher = middleware.hot_reload.watcher
        assert watcher is not None

        seen = batch_handled(monkeypatch, watcher, {"orphan"})
        (tmp_descriptions / "orphan.json").write_text('{"summary": "No such tool."}')
        assert await asyncio.to_thread(seen.wait, 5.0), "the watcher never saw the orphan file"
        (tmp_descriptions / "wipe.json").write_text('{"summary": "Erase it all."}')
        await root.next()
        (tmp_descriptions / "ping.json").write_text('{"summary": "Say pong."}')
        await alice.next()
        await root.next()
    assert len(alice.times) == 1  # only ping's line changed in alice's listing
    assert len(root.times) == 2  # wipe's and ping's; never the orphan's
