"""Composition with FastMCP's own pieces, in the deployment shapes ``docs/deployment.md``
shows (issue 10): behind a FastMCP proxy, middleware order, mounts, SSE, response caching,
rate limiting, ``ResourcesAsTools``, hashed backend names, ``x-mcp-header`` properties,
``fastmcp run``. In memory and over HTTP, both eras. (Auth, visibility and listing filters
of other middleware: ``conformance/test_layering.py``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import SSETransport, StdioTransport
from fastmcp.server import create_proxy
from fastmcp.server.auth import AuthContext
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.dependencies import get_http_headers
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.server.middleware.authorization import AuthMiddleware
from fastmcp.server.middleware.caching import ResponseCachingMiddleware
from fastmcp.server.middleware.rate_limiting import RateLimitingMiddleware
from fastmcp.server.providers.addressing import (
    TOOL_HASH_META_KEY,
    hash_tool,
    hashed_backend_name,
)
from fastmcp.server.providers.proxy import FastMCPProxy
from fastmcp.server.transforms import ResourcesAsTools
from fastmcp.utilities.tests import run_server_async
from mcp.client.extension import advertise
from mcp.shared.exceptions import MCPError
from pydantic import Field

from fastmcp_progressive import (
    DESCRIPTIONS_URI,
    EXTENSION_ID,
    ClientSettings,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import identify
from fastmcp_progressive.fastmcp_internals import wire_param
from fastmcp_progressive.payloads import is_descriptions_uri
from fastmcp_progressive.proxy.backend_sessions import SessionBackends
from fastmcp_progressive.resolution.client import resolve_tool, tool_resolution
from tests.conftest import (
    ERAS,
    FOLLOWED_IN_MEMORY,
    TOKENS,
    TRANSPORTS,
    Era,
    Transport,
    build_server,
    connect,
    fetch,
    gated,
    needs_a_followed_caller,
)
from tests.servers import ADD_TYPED, add_basic_tools, proxies_hide_nothing
from tests.waiting import PATIENCE

ERA = pytest.mark.parametrize("era", ERAS)
FOLLOWED_ERA = pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)  # 2026-07-28 in memory: anonymous


@asynccontextmanager
async def reach(
    server: FastMCP, transport: Transport, era: Era, **kw: Any
) -> AsyncIterator[Client[Any]]:
    """A client of ``server`` in memory or over a real HTTP port."""
    if transport == "memory":
        async with connect(server, era, **kw) as client:
            yield client
        return
    async with run_server_async(server) as url, connect(url, era, **kw) as client:
        yield client


def text_of(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


# -- behind a FastMCP proxy ------------------------------------------------------------------
@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_read_through_a_proxy_works_and_the_listing_shrinks(
    era: Era, transport: Transport
) -> None:
    """A backend whose operator says its proxies hide nothing (a FastMCP proxy is otherwise
    served in full, ``test_outer_view.py``)."""
    backend = build_server(clients=proxies_hide_nothing())
    async with reach(create_proxy(backend), transport, era) as c:
        listed = {t.name: t for t in await c.list_tools()}
        assert listed["add"].input_schema == ADD_TYPED
        templates = [t.uri_template for t in await c.list_resource_templates()]
        assert f"{DESCRIPTIONS_URI}{{?tools}}" in templates
        described = await fetch(c, "add", "echo")
        assert described["add"]["inputSchema"]["required"] == ["a", "b"]
        assert "echo" in described
        bridged = await c.call_tool("describe_tools", {"tools": ["shout"]})
        assert "shout" in json.loads(text_of(bridged))


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_through_a_default_proxy_calls_are_checked_by_their_arguments(
    era: Era, transport: Transport
) -> None:
    """A default proxy opens a backend session per request: each call arrives in a session
    whose first request is that call, so the gate checks its arguments (no grant could
    follow it). After a fetch, a valid call runs; bad arguments never do."""
    backend = build_server(clients=proxies_hide_nothing())
    async with reach(create_proxy(backend), transport, era) as c:
        await c.list_tools()
        await fetch(c, "add")
        assert (await c.call_tool("add", {"a": 1, "b": 2})).data == 3
        refused = await c.call_tool("echo", {"text": 5}, raise_on_error=False)
        error = (refused.structured_content or {})["error"]
        assert error["code"] == "TOOL_DESCRIPTION_REQUIRED" and "definition" in error


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_proxy_with_one_backend_session_per_client_keeps_grants(
    era: Era, transport: Transport
) -> None:
    """A proxy whose backend client stays connected keeps one backend session: a fetch
    grants and the next call runs, exactly as without the proxy."""
    backend = build_server()
    async with Client(backend, mode="legacy") as upstream:
        proxy = create_proxy(upstream)
        async with reach(proxy, transport, era) as c:
            assert await gated(c)
            await fetch(c, "add")
            assert (await c.call_tool("add", {"a": 2, "b": 3})).data == 5
            assert await gated(c, "shout", {"text": "x"})  # only what was fetched


# -- middleware order ------------------------------------------------------------------------
def _signed_in(ctx: AuthContext) -> bool:
    return ctx.token is not None or get_http_headers() == {}  # in memory: no HTTP, no token


def _authed_server(auth_first: bool) -> FastMCP:
    mcp = FastMCP("authed", auth=StaticTokenVerifier(tokens=TOKENS))
    add_basic_tools(mcp)
    chain = [AuthMiddleware(auth=_signed_in), ProgressiveDisclosure()]
    for middleware in chain if auth_first else reversed(chain):
        mcp.add_middleware(middleware)
    return mcp


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("auth_first", [True, False], ids=["auth-first", "auth-after"])
async def test_auth_middleware_in_either_order_reads_bridge_and_gate_work(
    era: Era, transport: Transport, auth_first: bool
) -> None:
    needs_a_followed_caller(transport, era, "alice-token")
    async with reach(_authed_server(auth_first), transport, era, token="alice-token") as c:
        await c.list_tools()  # sessions that list first are followed by grants
        assert await gated(c)
        assert "add" in await fetch(c, "add")
        assert (await c.call_tool("add", {"a": 1, "b": 2})).data == 3
        assert await gated(c, "echo", {"text": "x"})
        await c.call_tool("describe_tools", {"tools": ["echo"]})
        assert (await c.call_tool("echo", {"text": "x"})).data == "x"
        prompts = [p.name for p in await c.list_prompts()]
        assert "progressive_disclosure_guide" in prompts


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_response_cache_in_front_refuses_with_the_fix(era: Era, transport: Transport) -> None:
    mcp = FastMCP("cached")
    add_basic_tools(mcp)
    mcp.add_middleware(ResponseCachingMiddleware())
    mcp.add_middleware(ProgressiveDisclosure())
    async with reach(mcp, transport, era) as c:
        with pytest.raises(MCPError, match="Add ProgressiveDisclosure first"):
            await c.list_tools()


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_middleware_added_twice_is_refused_once_with_the_fix(
        era: Era, transport: Transport, caplog: pytest.LogCaptureFixture) -> None:
    """#34: the second copy's bridge clashed with the first's; the client could not connect
    ("the initialize handshake is not accepted"), was told to rename the bridge, and the
    server logged a 60-line traceback per request."""
    mcp = FastMCP("twice")
    add_basic_tools(mcp)
    mcp.add_middleware(ProgressiveDisclosure())
    mcp.add_middleware(ProgressiveDisclosure())
    async with reach(mcp, transport, era) as c:  # the handshake passes
        for _ in range(3):
            with pytest.raises(MCPError, match=r"added to this server twice.*Add it once"):
                await c.list_tools()
    told = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(told) == 1 and "twice" in told[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info]


async def test_response_cache_in_front_is_refused_whatever_it_caches() -> None:
    """Which methods a ``ResponseCachingMiddleware`` caches is not public: one in front is
    refused even with the three gated methods switched off (the fix is the same)."""
    from fastmcp.server.middleware.caching import CallToolSettings

    mcp = FastMCP("cached")
    add_basic_tools(mcp)
    mcp.add_middleware(ResponseCachingMiddleware(
        list_tools_settings={"enabled": False}, read_resource_settings={"enabled": False},
        call_tool_settings=CallToolSettings(enabled=False)))
    mcp.add_middleware(ProgressiveDisclosure())
    async with Client(mcp) as c:
        with pytest.raises(MCPError, match="Add ProgressiveDisclosure first"):
            await c.list_tools()


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_response_cache_behind_never_replays_a_read_or_a_call(
    era: Era, transport: Transport
) -> None:
    needs_a_followed_caller(transport, era)
    mcp = FastMCP("cached")
    add_basic_tools(mcp)
    mcp.add_middleware(ProgressiveDisclosure())
    mcp.add_middleware(ResponseCachingMiddleware())
    if transport == "memory":
        a_ctx, b_ctx = connect(mcp, era), connect(mcp, era)
        async with a_ctx as a, b_ctx as b:
            await _no_replay(a, b, era)
    else:
        async with run_server_async(mcp) as url, connect(url, era) as a, connect(url, era) as b:
            await _no_replay(a, b, era)


async def _no_replay(a: Client[Any], b: Client[Any], era: Era) -> None:
    assert (await a.list_tools())[0].input_schema == ADD_TYPED  # cached, yet reduced
    await fetch(a, "add")
    assert (await a.call_tool("add", {"a": 1, "b": 2})).data == 3
    if era == "legacy" or not b.transport.__class__.__name__.startswith("StreamableHttp"):
        # b is its own caller (a session or a stream): the cached call does not run for it
        await b.list_tools()
        assert await gated(b)
        await fetch(b, "add")
        assert (await b.call_tool("add", {"a": 1, "b": 2})).data == 3


# -- mounted servers -------------------------------------------------------------------------
def _mounted() -> FastMCP:
    child = build_server(clients=ClientSettings(anonymous="shared"))  # no auth: one grant set
    parent = FastMCP("parent")
    parent.mount(child, namespace="kid")
    return parent


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_mounted_child_gates_and_answers_in_the_parents_names(
    era: Era, transport: Transport
) -> None:
    async with reach(_mounted(), transport, era) as c:
        names = [t.name for t in await c.list_tools()]
        assert "kid_describe_tools" in names and "kid_add" in names
        refused = await c.call_tool("kid_add", {"a": 1, "b": 2}, raise_on_error=False)
        error = (refused.structured_content or {})["error"]
        assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
        assert error["tool_call"]["name"] == "kid_describe_tools"
        read = await c.read_resource(error["resource_uri"])
        assert json.loads(read[0].text)["add"]["inputSchema"]["required"] == ["a", "b"]  # type: ignore[union-attr]
        assert (await c.call_tool("kid_add", {"a": 1, "b": 2})).data == 3
        await c.call_tool("kid_describe_tools", {"tools": ["kid_echo"]})
        prompt = await c.get_prompt("kid_progressive_disclosure_guide")
        assert "progressive disclosure" in prompt.messages[0].content.text  # type: ignore[union-attr]


async def test_wire_param_reads_the_request_fastmcp_received() -> None:
    """``fastmcp_internals.wire_param`` reads FastMCP's private ``_srctx``: fails if it moves."""
    seen: list[Any] = []

    class Spy(Middleware):
        async def on_call_tool(self, context: Any, call_next: Any) -> Any:
            seen.append(wire_param(context.fastmcp_context, "name"))
            return await call_next(context)

    child = FastMCP("child")
    add_basic_tools(child)
    child.add_middleware(Spy())
    parent = FastMCP("parent")
    parent.mount(child, namespace="kid")
    async with Client(parent) as c:
        await c.call_tool("kid_add", {"a": 1, "b": 2})
    assert seen == ["kid_add"]
    assert wire_param(None, "name") is None


# -- SSE -------------------------------------------------------------------------------------
@pytest.mark.parametrize("auth", [True, False], ids=["auth", "no-auth"])
async def test_sse_connections_are_sessions_with_their_own_grants(auth: bool) -> None:
    """Each SSE connection is a handshake-era session: gated, with its own grants (also
    under anonymous="shared", which must never pool authenticated SSE clients)."""
    server = build_server(auth=auth, clients=ClientSettings(anonymous="shared"))
    tokens = ("alice-token", "bob-token") if auth else (None, None)
    async with run_server_async(server, transport="sse") as url:
        async with Client(SSETransport(url, auth=tokens[0]), mode="legacy") as a, Client(
            SSETransport(url, auth=tokens[1]), mode="legacy"
        ) as b:
            await a.list_tools()
            await b.list_tools()
            assert await gated(a)
            await fetch(a, "echo")
            assert not await gated(a, "echo", {"text": "x"})
            assert await gated(b, "echo", {"text": "x"})  # never shares a's grant


# -- hashed backend names --------------------------------------------------------------------
def _app_server() -> FastMCP:
    mcp = FastMCP("apps")
    digest = hash_tool("shop", "refund")

    @mcp.tool(meta={"ui": {"visibility": ["model", "app"]},
                    "fastmcp": {TOOL_HASH_META_KEY: digest}})
    def refund(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    mcp.add_middleware(ProgressiveDisclosure())
    return mcp


@FOLLOWED_ERA
async def test_hashed_backend_name_is_gated_like_the_tool_it_runs(era: Era) -> None:
    hashed = hashed_backend_name("shop", "refund")  # "<hash>_refund" (4.2: "__<hash>_refund")
    plain = _app_server()
    plain.middleware = plain.middleware[:1]  # FastMCP's own DereferenceRefsMiddleware only
    async with connect(plain, era) as c:
        ran = await c.call_tool(hashed, {"order": "7"}, raise_on_error=False)
        assert ran.data == "refunded 7"  # FastMCP itself runs the tool under that name
    async with connect(_app_server(), era) as c:
        await c.list_tools()
        refused = await c.call_tool(hashed, {"order": "7"}, raise_on_error=False)
        error = (refused.structured_content or {})["error"]
        assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
        assert error["tool_call"] == {"name": "describe_tools", "arguments": {"tools": ["refund"]}}
        await fetch(c, "refund")
        assert (await c.call_tool(hashed, {"order": "7"})).data == "refunded 7"


# -- x-mcp-header ----------------------------------------------------------------------------
def _header_server(**options: Any) -> FastMCP:
    """One tool with a property annotated ``x-mcp-header`` (a Mcp-Param-Region header)."""
    mcp = FastMCP("headers")

    @mcp.tool
    def forecast(
        city: str,
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})] = "eu",
    ) -> str:
        """Forecast for a city."""
        return f"{city}@{region}"

    mcp.add_middleware(ProgressiveDisclosure(**options))
    return mcp


@ERA
@pytest.mark.parametrize("level", ["minimal", "skeleton"])
async def test_reduced_listing_keeps_header_properties_with_their_types(
    era: Era, level: str
) -> None:
    async with connect(_header_server(listing=ListingSettings(level=level)), era) as c:
        schema = (await c.list_tools())[0].input_schema
        assert schema["properties"]["region"] == {"type": "string", "x-mcp-header": "Region"}
        assert ("city" in schema["properties"]) is (level == "skeleton")


async def test_full_and_progressive_clients_call_header_tools_over_http_in_any_order() -> None:
    """FastMCP 4.2 checks Mcp-Param-* headers against the schemas it last listed, for
    every client: a full-mode listing and a reduced one must agree on header properties."""
    full = advertise(EXTENSION_ID, {"mode": "full"})
    async with run_server_async(_header_server(clients=ClientSettings(anonymous="shared"))) as url:
        async with connect(url, "modern") as progressive, connect(
            url, "modern", extensions=[full]
        ) as plain:
            for first, second in ((plain, progressive), (progressive, plain)):
                await first.list_tools()
                await second.list_tools()
                await fetch(progressive, "forecast")
                for client in (first, second):
                    done = await client.call_tool("forecast", {"city": "Oslo", "region": "no"})
                    assert done.data == "Oslo@no"


@ERA
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_session_proxy_keeps_one_backend_session_per_client(
    era: Era, transport: Transport
) -> None:
    """Grants survive the proxy, and two clients of one proxy never share them."""
    needs_a_followed_caller(transport, era)
    backend = build_server(clients=proxies_hide_nothing())
    backends = SessionBackends(backend)
    proxy = FastMCPProxy(client_factory=backends)
    tokens: list[str | None] = ["alice-token", "bob-token"]
    if transport == "http" and era == "modern":
        proxy = FastMCPProxy(client_factory=backends,
                             auth=StaticTokenVerifier(tokens=TOKENS))  # identity per principal
    else:
        tokens = [None, None]
    try:
        async with AsyncExitStack() as stack:
            target: Any = proxy
            if transport == "http":
                target = await stack.enter_async_context(run_server_async(proxy))
            a = await stack.enter_async_context(connect(target, era, token=tokens[0]))
            b = await stack.enter_async_context(connect(target, era, token=tokens[1]))
            await a.list_tools()  # a session that lists first is one grants follow
            await b.list_tools()
            assert await gated(a)  # the refusal teaches (and grants) add
            assert (await a.call_tool("add", {"a": 2, "b": 3})).data == 5
            await fetch(a, "echo")
            assert (await a.call_tool("echo", {"text": "x"})).data == "x"
            assert await gated(a, "shout", {"text": "x"})  # only what was fetched or refused
            assert await gated(b, "echo", {"text": "x"})  # b has its own backend session
    finally:
        await backends.aclose()
    assert backends.open_sessions == 0


@pytest.mark.slow  # `fastmcp run` bridging in a process
@ERA
async def test_fastmcp_run_url_bridges_http_to_stdio_and_the_read_works(era: Era) -> None:
    """``fastmcp run http://.../mcp``: the usual stdio bridge to an HTTP server."""
    fastmcp_cli = Path(sys.executable).parent / "fastmcp"
    # 2026-07-28 HTTP without auth has no caller identity: "shared" keeps one grant set
    backend = build_server(clients=proxies_hide_nothing(anonymous="shared"))
    async with run_server_async(backend) as url:
        bridge = StdioTransport(
            command=str(fastmcp_cli), args=["run", url, "--no-banner"],
            env={"FASTMCP_LOG_LEVEL": "WARNING"},
        )
        async with connect(bridge, era) as c:  # type: ignore[arg-type]
            listed = {t.name: t for t in await c.list_tools()}
            assert listed["add"].input_schema == ADD_TYPED
            assert (await fetch(c, "add"))["add"]["inputSchema"]["required"] == ["a", "b"]
            assert await gated(c, "echo", {"text": 5})  # never run ungated
            if era == "modern":  # the grant is the anonymous callers' shared one
                assert (await c.call_tool("add", {"a": 1, "b": 2})).data == 3


@FOLLOWED_ERA
async def test_middleware_on_parent_and_child_gates_once(era: Era) -> None:
    child = build_server()
    parent = FastMCP("parent")
    parent.mount(child, namespace="kid")
    parent.add_middleware(ProgressiveDisclosure())
    async with connect(parent, era) as c:
        await c.list_tools()
        refused = await c.call_tool("kid_add", {"a": 1, "b": 2}, raise_on_error=False)
        error = (refused.structured_content or {})["error"]
        assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
        assert error["tool_call"]["name"] == "describe_tools"  # the parent's own bridge
        described = await fetch(c, "kid_add")
        assert described["kid_add"]["inputSchema"]["required"] == ["a", "b"]  # real schema
        assert (await c.call_tool("kid_add", {"a": 1, "b": 2})).data == 3  # not gated twice


@ERA
@pytest.mark.parametrize(
    ("query", "answer"),
    [("?tools=add&tools=echo", "echo"), ("?tools=a%2Cb", "a,b"), ("?tools=add&x=1", "add"),
     ("", "MISSING_TOOL_SELECTION"), ("?tool=add", "MISSING_TOOL_SELECTION")],
)
async def test_every_read_form_routes_through_a_proxy(era: Era, query: str, answer: str) -> None:
    async with connect(create_proxy(build_server(clients=proxies_hide_nothing())), era) as c:
        read = await c.read_resource(DESCRIPTIONS_URI + query)
        assert answer in read[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("bound", ["max_sessions", "idle_ttl"])
async def test_session_proxy_closes_principal_backends_by_count_and_idle_time(
    bound: str
) -> None:
    """Backend sessions of principals (and streams) have no end the proxy sees: before,
    every one stayed open for the proxy's lifetime. Now at most ``max_sessions`` stay
    open, and one unused for ``idle_ttl`` seconds closes at the next request."""
    now = [0.0]
    limits = {"max_sessions": 1} if bound == "max_sessions" else {"idle_ttl": 60.0}
    backends = SessionBackends(build_server(clients=proxies_hide_nothing()),
                               clock=lambda: now[0], **limits)
    proxy = FastMCPProxy(client_factory=backends, auth=StaticTokenVerifier(tokens=TOKENS))
    try:
        async with run_server_async(proxy) as url:
            async with connect(url, "modern", token="alice-token") as alice:
                await alice.list_tools()
                assert backends.open_sessions == 1
                now[0] = 61.0
                async with connect(url, "modern", token="bob-token") as bob:
                    await bob.list_tools()
                    assert backends.open_sessions == 1  # alice's went (LRU, or idle)
                    await fetch(bob, "echo")
                    assert (await bob.call_tool("echo", {"text": "x"})).data == "x"
                    now[0] = 62.0
                    await alice.list_tools()  # alice is served again, by a new session
                    assert backends.open_sessions == (1 if bound == "max_sessions" else 2)
    finally:
        await backends.aclose()
    assert backends.open_sessions == 0
    with pytest.raises(ValueError, match="max_sessions"):
        SessionBackends(build_server(), max_sessions=0)
    with pytest.raises(ValueError, match="idle_ttl"):
        SessionBackends(build_server(), idle_ttl=float("nan"))


async def test_a_backend_session_closes_with_its_client_session() -> None:
    """``fastmcp_internals.close_with_connection`` uses the connection's async exit stack."""
    backends = SessionBackends(build_server())
    async with connect(FastMCPProxy(client_factory=backends), "legacy") as c:
        await c.list_tools()
        await c.list_resources()
        assert backends.open_sessions == 1  # one backend session for both requests
    with anyio.fail_after(PATIENCE):
        while backends.open_sessions:  # closed by the front connection's exit stack
            await anyio.sleep(0.01)


ROOT = Path(__file__).resolve().parents[1]


async def test_resources_as_tools_reaches_descriptions_and_grants() -> None:
    server = build_server()
    server.add_transform(ResourcesAsTools(server))
    async with connect(server, "legacy") as c:
        listed = {t.name: t for t in await c.list_tools()}
        assert listed["read_resource"].input_schema.get("properties")  # gateway: listed in full
        assert await gated(c)
        read = await c.call_tool("read_resource", {"uri": f"{DESCRIPTIONS_URI}?tools=add"})
        assert '"required":["a","b"]' in read.content[0].text.replace(" ", "")  # type: ignore[union-attr]
        assert not await gated(c)


# docs/deployment.md snippet: rate-limit description fetches per caller, nothing else.
class DescriptionFetchLimit(RateLimitingMiddleware):
    async def on_request(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        uri = str(getattr(context.message, "uri", ""))
        if context.method == "resources/read" and is_descriptions_uri(uri):
            return await super().on_request(context, call_next)
        return await call_next(context)


def _caller_id(context: MiddlewareContext[Any]) -> str:
    return identify(context.fastmcp_context).key or "anonymous"


async def test_rate_limiting_description_fetches() -> None:
    server = build_server()
    progressive = server.middleware.pop()  # the limiter must sit outside (before) it
    server.add_middleware(
        DescriptionFetchLimit(
            max_requests_per_second=0.001, burst_capacity=2, get_client_id=_caller_id
        )
    )
    server.add_middleware(progressive)
    async with connect(server, "legacy") as a, connect(server, "legacy") as b:
        for _ in range(2):
            await a.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        with pytest.raises(Exception, match="Rate limit exceeded"):
            await a.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        assert (await a.call_tool("add", {"a": 1, "b": 1})).data == 2  # calls are not limited
        await b.read_resource(f"{DESCRIPTIONS_URI}?tools=add")  # another caller's own bucket


@pytest.mark.slow  # `fastmcp run` in a process
async def test_demo_server_over_stdio_with_fastmcp_run() -> None:
    fastmcp_cli = Path(sys.executable).parent / "fastmcp"
    transport = StdioTransport(
        command=str(fastmcp_cli),
        args=["run", str(ROOT / "examples" / "demo_server.py"), "--no-banner"],
        env={"FASTMCP_LOG_LEVEL": "WARNING"},
    )
    async with Client(transport, mode="legacy", extensions=[tool_resolution()]) as c:
        names = [t.name for t in await c.list_tools()]
        assert len(names) == 10 and "refund_order" in names and "manage_notes" in names
        described = json.loads(
            (await c.read_resource(f"{DESCRIPTIONS_URI}?tools=get_shipping_quote"))[0].text  # type: ignore[union-attr]
        )
        assert described["get_shipping_quote"]["examples"][0]["input"]["speed"] == "express"
        quote = await c.call_tool(
            "get_shipping_quote", {"destination_zip": "94103", "weight_grams": 2000}
        )
        assert quote.structured_content == {"speed": "ground", "price_cents": 720}
        read = await resolve_tool(c, "manage_notes", {"action": "read", "order_id": "o-500"})
        assert read.read_only and not read.destructive  # tool resolution, handshake-era stdio


@pytest.mark.slow  # the walkthrough and its stdio server as processes
def test_walkthrough_runs_as_the_readme_says() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "walkthrough.py")],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "TOOL_DESCRIPTION_REQUIRED" in out
    assert "is_error=False: refunded 2500 cents" in out
    assert "fewer" in out
    # tool resolution over stdio (2026-07-28): a read of the multi-action tool is read-only
    assert 'action=read: {"readOnlyHint": true, "destructiveHint": false' in out
    assert 'action=delete: {"readOnlyHint": false, "destructiveHint": true' in out
