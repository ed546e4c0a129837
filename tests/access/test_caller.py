"""Who the caller is (`caller.py`) and the FastMCP internals behind it and the name index
(`fastmcp_internals.py`): each fails here first if a release moves it."""

from __future__ import annotations

import gc
import tracemalloc
from types import SimpleNamespace
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import FastMCP
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive import GrantSettings, ProgressiveDisclosure
from fastmcp_progressive.access.caller import Caller, identify
from fastmcp_progressive.access.grants import GRANTS_COLLECTION
from tests.conftest import TOKENS, build_server, clients, connect, fetch, gated, serve_http
from tests.servers import add_basic_tools


class RecordCallers(Middleware):
    def __init__(self) -> None:
        self.callers: list[Caller] = []

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        self.callers.append(identify(context.fastmcp_context))
        return await call_next(context)


@pytest.mark.parametrize(
    ("transport", "era", "token", "kind"),
    [
        ("memory", "legacy", None, "session"),
        ("memory", "modern", None, "anonymous"),  # 2026-07-28: nothing of the connection
        ("http", "legacy", "alice-token", "session"),
        ("http", "modern", "alice-token", "principal"),
        ("http", "modern", None, "anonymous"),
    ],
)
async def test_caller_kind_per_transport_and_era(
    transport: Any, era: Any, token: str | None, kind: str
) -> None:
    server = FastMCP("ids", auth=StaticTokenVerifier(tokens=TOKENS) if token else None)

    @server.tool
    def noop() -> str:
        return "ok"

    spy = RecordCallers()
    server.add_middleware(spy)
    async with clients(server, transport, era, tokens=[token]) as (c,):
        await c.call_tool("noop", {})
        await c.call_tool("noop", {})
    first, second = spy.callers
    assert first.kind == second.kind == kind
    assert first.era == era
    if kind in ("session", "principal"):
        assert first.key == second.key  # stable across requests of one client
        assert first.key is not None
    assert "authorization" not in first.headers


def test_no_request_means_internal() -> None:
    assert identify(None).kind == "internal"


async def test_principal_grants_live_in_the_servers_session_state_store() -> None:
    store = MemoryStore()
    server = build_server(auth=True)
    server._state_storage = store  # what FastMCP(session_state_store=store) sets
    async with clients(server, "http", "modern", tokens=["alice-token"]) as (c,):
        await fetch(c, "add")
        assert not await gated(c)
    keys = await store.keys(collection=GRANTS_COLLECTION)
    assert len(keys) == 1
    assert keys[0].startswith("user:") and keys[0].endswith("|add")


async def test_explicit_grant_store_is_used() -> None:
    store = MemoryStore()
    server = build_server(auth=True,
                          middleware=ProgressiveDisclosure(grants=GrantSettings(store=store)))
    async with clients(server, "http", "modern", tokens=["bob-token"]) as (c,):
        await fetch(c, "echo")
    assert len(await store.keys(collection=GRANTS_COLLECTION)) == 1


def test_connection_close_subscribers_do_not_shadow_each_other() -> None:
    from contextlib import ExitStack
    from types import SimpleNamespace

    from fastmcp_progressive.fastmcp_internals import on_connection_close

    calls: list[str] = []
    connection = SimpleNamespace(exit_stack=ExitStack(), state={})
    assert on_connection_close(connection, lambda: calls.append("grants"), marker="a")
    assert on_connection_close(connection, lambda: calls.append("again"), marker="a")
    assert on_connection_close(connection, lambda: calls.append("watch"), marker="b")
    connection.exit_stack.close()
    assert sorted(calls) == ["grants", "watch"]  # one per marker, none lost
    assert not on_connection_close(SimpleNamespace(), lambda: None, marker="a")


async def test_a_renamed_search_transforms_tools_are_its_gateways() -> None:
    """The gate learns a search transform's tool names from its public listing."""
    from fastmcp import FastMCP
    from fastmcp.server.transforms.search import RegexSearchTransform

    from fastmcp_progressive.access.gate import gateway_tools

    server: FastMCP = FastMCP("renamed")
    server.add_transform(RegexSearchTransform(search_tool_name="find", call_tool_name="run"))
    assert await gateway_tools(server) == {"find", "run"}


async def test_a_lookup_asks_a_typed_listing_filter_in_any_phase() -> None:
    """A lookup made while FastMCP runs only the outer hooks (a custom method such as
    ``tools/resolve`` answered in ``on_request``) still asks a filter's ``on_list_tools``,
    without setting FastMCP's phase."""
    from fastmcp.server.middleware.middleware import _dispatch_phase

    from fastmcp_progressive.access.catalog import Catalog

    class HideSecret(Middleware):
        async def on_list_tools(self, context: Any, call_next: Any) -> Any:
            return [t for t in await call_next(context) if t.name != "secret"]

    server: FastMCP = FastMCP("phase")

    @server.tool
    def secret() -> str:
        return "s"

    server.add_middleware(HideSecret())
    tool = await server.get_tool("secret")
    assert tool is not None
    ctx = SimpleNamespace(fastmcp=server)
    token = _dispatch_phase.set("outer")
    try:
        assert await Catalog(owner=object()).visible(ctx, [tool]) == set()  # type: ignore[arg-type]
        assert _dispatch_phase.get() == "outer"
    finally:
        _dispatch_phase.reset(token)


def test_the_caller_is_held_for_its_request_only() -> None:
    """``serving`` holds the caller for the pass it wraps (the hooks read it back with
    ``caller_of``) and for no other request: the next context is identified afresh."""
    from types import SimpleNamespace

    from fastmcp_progressive.access import caller as module

    first, second = (SimpleNamespace(request_context=None) for _ in range(2))
    with module.serving(first) as held:  # type: ignore[arg-type]
        assert module.caller_of(first) is held  # type: ignore[arg-type]
        assert module._serving.get() is not None
    assert module._serving.get() is None
    assert module.caller_of(None) is module.INTERNAL
    with module.serving(None) as internal:
        assert internal is module.INTERNAL and module._serving.get() is None
    assert module.caller_of(second).kind == "internal"  # type: ignore[arg-type]


def test_only_a_2026_07_28_caller_is_kept_in_its_http_requests_scope(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only that era's calls make a second pass (the SDK's hidden listing on FastMCP < 4.2);
    a handshake-era scope may outlive its session, and a caller kept in it would too, as
    would one kept by a 2026-07-28 request other than a call (nothing reads it again)."""
    from types import SimpleNamespace

    from fastmcp_progressive.access import caller as module

    monkeypatch.setattr(module, "SECOND_PASS", True)  # FastMCP < 4.2
    for era, method, kept in (("legacy", "tools/call", False), ("modern", "tools/list", False),
                              ("modern", "tools/call", True)):
        caller = Caller(kind="session" if era == "legacy" else "anonymous", era=era,
                        headers={"mcp-method": method})
        monkeypatch.setattr(module, "identify", lambda ctx, caller=caller: caller)
        scope: dict[str, object] = {}
        ctx = SimpleNamespace(request_context=SimpleNamespace(
            request=SimpleNamespace(scope=scope), request_id=7))
        assert module.caller_of(ctx) is caller  # type: ignore[arg-type]
        assert (module._SCOPE_KEY in scope) is kept, (era, method)
        other = SimpleNamespace(request_context=SimpleNamespace(
            request=SimpleNamespace(scope=scope), request_id=7))
        assert module.caller_of(other) is caller  # type: ignore[arg-type]  # the second pass
        assert module._SCOPE_KEY not in scope  # taken out by the pass that reused it


async def names_left_behind(server: FastMCP, clients: int, size: int) -> int:
    """How many of ``clients`` 2026-07-28 HTTP clients' ``size``-character names are still
    in memory once they all left (blocks of the name's size; ``tracemalloc``)."""
    async with serve_http(server) as url:
        async def one(i: int) -> None:
            info = mt.Implementation(name=f"{i:03d}" + "x" * size, version="1")
            async with connect(url, "modern", client_info=info) as client:
                await client.list_tools()
                await client.call_tool("add", {"a": 1, "b": 2})

        await one(999)  # warm up what every server keeps once
        gc.collect()
        tracemalloc.start()
        try:
            for i in range(clients):
                await one(i)
            gc.collect()
            return sum(1 for trace in tracemalloc.take_snapshot().traces
                       if size <= trace.size < size + 4096)
        finally:
            tracemalloc.stop()


async def test_clients_names_do_not_outlive_their_clients_over_http() -> None:
    """2026-07-28 HTTP without auth: the last clients' ``clientInfo`` names stayed in
    memory after they left (40 clients with 2 MB names: about 10 MiB), kept with their
    caller in the ASGI scopes uvicorn holds a while after a connection ends; plain FastMCP
    keeps none. A caller is kept in a scope only where the SDK makes a second pass
    (FastMCP < 4.2), and taken out by the pass that reuses it."""
    size = 2 * 1024 * 1024
    plain = FastMCP("plain")
    add_basic_tools(plain)
    assert await names_left_behind(plain, 8, size) == 0
    assert await names_left_behind(build_server(), 8, size) == 0
