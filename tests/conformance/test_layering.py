"""The middleware composes with FastMCP's own auth, visibility and other middleware.

Rule under test: a tool the caller may not see is never listed, described or named; it is
"not found" exactly like an unknown name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import FastMCP
from fastmcp.server.auth import require_scopes
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.middleware.authorization import AuthMiddleware
from fastmcp.server.middleware.tool_injection import ToolInjectionMiddleware
from fastmcp.server.transforms import Transform
from fastmcp.server.transforms.search import BM25SearchTransform, RegexSearchTransform
from fastmcp.tools.base import Tool

from fastmcp_progressive import DESCRIPTIONS_URI, ProgressiveDisclosure
from fastmcp_progressive.payloads import UNKNOWN_TOOL_HINT
from tests.conftest import (
    ERAS,
    TOKENS,
    TRANSPORTS,
    Era,
    Transport,
    answer_of,
    build_server,
    clients,
    connect,
    fetch,
    gated,
    read_json,
    serve_http,
)
from tests.parts import parts
from tests.servers import FILTERED_TOOL, ListFilter
from tests.versions import HIDDEN_LISTING_IN_MODERN_HTTP_CALL


def _admin_server(**options: Any) -> FastMCP:
    server = build_server(auth=True, **options)

    @server.tool(auth=require_scopes("admin"))
    def wipe(confirm: bool) -> str:
        """Delete everything."""
        return "wiped"

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_component_auth_hides_tool_everywhere(era: str) -> None:
    server = _admin_server()
    async with serve_http(server) as url, connect(url, era, token="alice-token") as c:  # type: ignore[arg-type]
        assert "wipe" not in [t.name for t in await c.list_tools()]
        body = await fetch(c, "wipe", "add")
        assert body["wipe"] == {
            "error": "Tool 'wipe' not found",
            "message": UNKNOWN_TOOL_HINT,
            "available_tools": body["wipe"]["available_tools"],
        }
        assert sorted(body["wipe"]["available_tools"]) == ["add", "echo", "shout"]
        assert "wipe" not in (await read_json(c, DESCRIPTIONS_URI))["error"]["available_tools"]
        result = await c.call_tool("wipe", {"confirm": True}, raise_on_error=False)
        assert result.is_error
        assert "TOOL_DESCRIPTION_REQUIRED" not in result.content[0].text  # type: ignore[union-attr]


async def test_disabled_tool_is_not_found() -> None:
    server = build_server()
    server.disable(names={"shout"})
    async with connect(server, "legacy") as c:  # a followable caller (2026-07-28: principal)
        assert "shout" not in [t.name for t in await c.list_tools()]
        body = await fetch(c, "shout")
        assert body["shout"] == {"error": "Tool 'shout' not found", "message": UNKNOWN_TOOL_HINT,
                                 "available_tools": body["shout"]["available_tools"]}
        assert sorted(body["shout"]["available_tools"]) == ["add", "echo"]


async def test_auth_middleware_filtering_is_respected_when_outside() -> None:
    tokens = dict(
        TOKENS, **{"admin-token": {"client_id": "agent", "sub": "root", "scopes": ["admin"]}}
    )
    from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

    # ProgressiveDisclosure first (outermost): AuthMiddleware refuses reads of resources
    # it cannot look up, and the descriptions resource is not a registered one.
    server = FastMCP("t", auth=StaticTokenVerifier(tokens=tokens))
    server.add_middleware(ProgressiveDisclosure())

    @server.tool(tags={"admin"})
    def wipe() -> str:
        """Delete everything."""
        return "wiped"

    @server.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    def admin_only(ctx: Any) -> bool:
        tags = getattr(ctx.component, "tags", set())
        return "admin" not in tags or "admin" in (ctx.token.scopes if ctx.token else [])

    server.add_middleware(AuthMiddleware(auth=admin_only))
    async with clients(server, "http", "modern", 2, tokens=["alice-token", "admin-token"]) as (
        a,
        root,
    ):
        assert [t.name for t in await a.list_tools()] == ["ping", "describe_tools"]
        assert "error" in (await fetch(a, "wipe"))["wipe"]
        assert await gated(a, "ping", {})
        assert "inputSchema" in (await fetch(root, "wipe"))["wipe"]
        assert not await gated(root, "wipe", {})
        denied = await a.call_tool("wipe", {}, raise_on_error=False)
        assert denied.is_error
        assert "TOOL_DESCRIPTION_REQUIRED" not in denied.content[0].text  # type: ignore[union-attr]


async def test_tool_injection_middleware_tools_are_listed_reduced_and_gated() -> None:
    def injected_now() -> str:
        """Tell the server time. Always UTC."""
        return "12:00"

    server = build_server()
    server.add_middleware(ToolInjectionMiddleware(tools=[Tool.from_function(injected_now)]))
    async with connect(server, "legacy") as c:
        listed = {t.name: t for t in await c.list_tools()}
        assert listed["injected_now"].description == "Tell the server time."
        assert await gated(c, "injected_now", {})
        assert (await fetch(c, "injected_now"))["injected_now"]["name"] == "injected_now"
        assert not await gated(c, "injected_now", {})


@pytest.mark.parametrize("transform", [RegexSearchTransform, BM25SearchTransform])
async def test_search_transform_catalog_is_full_and_proxied_calls_not_gated_twice(
    transform: type,
) -> None:
    server = build_server()  # the transform's gateway tools are exempted automatically
    server.add_transform(transform())
    async with connect(server, "legacy") as c:  # followable (2026-07-28: a principal)
        names = [t.name for t in await c.list_tools()]
        assert names == ["search_tools", "call_tool", "describe_tools"]
        query = (
            {"pattern": "add"} if transform is RegexSearchTransform else {"query": "add integers"}
        )
        found = await c.call_tool("search_tools", query)
        text = found.content[0].text  # type: ignore[union-attr]
        assert '"required":["a","b"]' in text.replace(" ", "")  # catalog sees full schemas
        proxied = await c.call_tool("call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert "5" in proxied.content[0].text  # type: ignore[union-attr]
        assert await gated(c, "add")  # a direct client call of the hidden tool is still gated


class CountListings(Middleware):
    """Inner spy: counts how often the listing reaches the server."""

    def __init__(self) -> None:
        self.listings = 0

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        self.listings += 1
        return await call_next(context)


async def test_hidden_listing_inside_modern_http_call_is_memoized() -> None:
    middleware = ProgressiveDisclosure()
    server = build_server(auth=True, middleware=middleware)
    spy = CountListings()
    server.add_middleware(spy)
    async with clients(server, "http", "modern", tokens=["alice-token"]) as (c,):
        await c.list_tools()
        first = parts(middleware).lister.reduce(await server.list_tools(run_middleware=False))
        await fetch(c, "add")
        before = spy.listings
        assert (await c.call_tool("add", {"a": 1, "b": 1})).data == 2
        hidden = 1 if HIDDEN_LISTING_IN_MODERN_HTTP_CALL else 0  # gone in FastMCP 4.2
        assert spy.listings == before + hidden  # the SDK's hidden tools/list ran through us
        again = parts(middleware).lister.reduce(await server.list_tools(run_middleware=False))
    assert all(x is y for x, y in zip(first, again, strict=True))  # memo hit: same objects


async def test_server_instructions_kept_and_extended() -> None:
    for era in ("legacy", "modern"):
        async with connect(build_server(), era) as c:  # type: ignore[arg-type]
            instructions = c.instructions or ""
            assert instructions.startswith("Server instructions.")
            assert "?tools=" in instructions


HIDDEN = FILTERED_TOOL


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
        bridged_entry = answer_of(bridged)[HIDDEN]
        assert set(bridged_entry) == {"error", "message", "available_tools"}
        assert HIDDEN not in bridged_entry["available_tools"]
        refused = await c.call_tool(HIDDEN, {"text": "x"}, raise_on_error=False)
        assert "TOOL_DESCRIPTION_REQUIRED" not in json.dumps(refused.structured_content or {})
        missing = await read_json(c, DESCRIPTIONS_URI)
        assert HIDDEN not in missing["error"]["available_tools"]


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

    assert await gateway_tools(server) == {"find_tools", "call_tool"}
    async with connect(server, "legacy") as c:  # a followed caller: gated
        await c.list_tools()  # a stream that calls first is checked by its arguments instead
        assert await gated(c, "add")
