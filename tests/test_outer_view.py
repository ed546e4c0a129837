"""No route reaches a tool the server the client talks to hides (issue 33).

The middleware sits on a mounted child (``docs/deployment.md``); the parent hides one of
the child's tools in each of the ways FastMCP offers: ``disable``, a ``Visibility``
transform, ``AuthMiddleware``, a tenant filter of the user's own, and session visibility
(``ctx.disable_components``). Through the parent, ``run_tool``, a query, a read, a
``describe_tools`` by name and its suggestions must all answer as if the tool did not exist,
while the tool the parent shows stays reachable through each of them. MCP Apps' app-only
tools are the app's: neither ranked by a query nor run by ``run_tool``. A caller shown
every tool has no ``run_tool``: it calls each tool by name, through every server in front.
Behind a FastMCP proxy the backend cannot see what the proxy hides: it serves the proxy in
full (no route, no definition), and says so once, naming the fix (the middleware on the proxy).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp.server import create_proxy
from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.middleware.authorization import AuthMiddleware
from fastmcp.server.transforms import Visibility
from fastmcp.tools.base import Tool
from fastmcp.utilities.authorization import restrict_tag
from mcp.shared.exceptions import MCPError

from fastmcp_progressive import DESCRIPTIONS_URI, ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.proxy import progressive_proxy
from tests.conftest import (
    ERAS,
    GENERIC_HOST,
    TRANSPORT_ERA,
    TRANSPORTS,
    Era,
    Transport,
    clients,
    connect,
    serve_http,
    served,
)

ERA = pytest.mark.parametrize("era", ERAS)

ran: list[str] = []


def _add_platypus_tools(server: FastMCP) -> None:
    """The tool a server in front hides (``platypus_purge``) and one it shows."""

    def purge() -> str:
        ran.append("purge")
        return "PURGE RAN"

    def count() -> int:
        ran.append("count")
        return 7

    server.tool(purge, name="platypus_purge", tags={"purge"},
                description="Purge every platypus record.")
    server.tool(count, name="platypus_count", description="Count the platypus records.")


def _child(*, budget: int | None = 3) -> FastMCP:
    """A child with the middleware, its listing budgeted (``run_tool`` offered), and two
    tools a query for "platypus" finds: one the parent hides, one it shows."""
    child = FastMCP("child")
    _add_platypus_tools(child)
    for i in range(6):
        child.tool(lambda: "x", name=f"filler_{i}", description=f"Filler tool number {i}.")
    child.add_middleware(ProgressiveDisclosure(listing=ListingSettings(max_tools=budget)))
    return child


class TenantFilter(Middleware):
    """A user's own listing filter: this tenant never sees purge tools."""

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Sequence[Tool]]) -> Sequence[Tool]:
        return [t for t in await call_next(context) if "purge" not in t.name]


def _hide_by_disable(parent: FastMCP) -> None:
    parent.disable(names={"kid_platypus_purge"})


def _hide_by_visibility(parent: FastMCP) -> None:
    parent.add_transform(Visibility(False, tags={"purge"}))


def _hide_by_auth(parent: FastMCP) -> None:
    parent.add_middleware(AuthMiddleware(auth=restrict_tag("purge", scopes=["admin"])))


def _hide_by_tenant_filter(parent: FastMCP) -> None:
    parent.add_middleware(TenantFilter())


def _hide_by_session(parent: FastMCP) -> None:
    @parent.tool
    async def sign_in_as_guest(ctx: Context) -> str:
        await ctx.disable_components(names={"kid_platypus_purge"})
        return "guest"


HIDERS: dict[str, Callable[[FastMCP], None]] = {
    "disable": _hide_by_disable,
    "visibility": _hide_by_visibility,
    "auth": _hide_by_auth,
    "tenant-filter": _hide_by_tenant_filter,
    "session": _hide_by_session,
}


def _parent(hide: str) -> FastMCP:
    parent = FastMCP("parent")
    parent.mount(_child(), namespace="kid")
    HIDERS[hide](parent)
    return parent


def _body(result: Any) -> Any:
    return json.loads(result.content[0].text)


@pytest.mark.parametrize("hide", list(HIDERS))
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_no_route_through_a_parent_reaches_a_tool_it_hides(
        hide: str, transport: Transport) -> None:
    ran.clear()
    async with served(_parent(hide), transport) as target, \
            connect(target, "legacy") as client:
        if hide == "session":
            await client.call_tool("sign_in_as_guest", {})
        names = {t.name for t in await client.list_tools()}
        assert "kid_platypus_purge" not in names and "kid_run_tool" in names
        # run_tool: refused like an unknown tool, and the tool never ran
        purge = await client.call_tool("kid_run_tool", {"name": "platypus_purge"},
                                       raise_on_error=False)
        assert purge.is_error and _body(purge)["error"]["code"] == "UNKNOWN_TOOL"
        assert "PURGE RAN" not in purge.content[0].text  # type: ignore[union-attr]
        # the query neither describes nor names it
        found = await client.call_tool("kid_describe_tools", {"query": "platypus purge records"})
        assert "platypus_purge" not in found.content[0].text  # type: ignore[union-attr]
        assert "platypus_count" in found.content[0].text  # type: ignore[union-attr]
        # by name: unknown, and no suggestion names it
        named = _body(await client.call_tool("kid_describe_tools",
                                             {"tools": ["platypus_purge", "platypus_purg"]}))
        assert "inputSchema" not in json.dumps(named)
        assert "platypus_purge\"]" not in json.dumps(named["platypus_purg"])
        read = await client.read_resource("resource://kid//tool_descriptions?tools=platypus_purge")
        assert "inputSchema" not in read[0].text  # type: ignore[union-attr]
        # what the parent shows stays reachable through the same routes
        counted = await client.call_tool("kid_run_tool", {"name": "platypus_count"})
        assert not counted.is_error and ran == ["count"]


@ERA
async def test_a_nested_mount_answers_within_the_outermost_view(era: Era) -> None:
    """Grandparent -> parent -> child: the grandparent's hiding holds two mounts out."""
    ran.clear()
    middle = FastMCP("middle")
    middle.mount(_child(), namespace="kid")
    top = FastMCP("top")
    top.mount(middle, namespace="mid")
    top.disable(names={"mid_kid_platypus_purge"})
    async with connect(top, era) as client:
        purge = await client.call_tool("mid_kid_run_tool", {"name": "platypus_purge"},
                                       raise_on_error=False)
        assert purge.is_error and ran == []
        found = await client.call_tool("mid_kid_describe_tools", {"query": "platypus purge"})
        assert "platypus_purge" not in found.content[0].text  # type: ignore[union-attr]
        assert not (await client.call_tool("mid_kid_run_tool",
                                           {"name": "platypus_count"})).is_error


@ERA
async def test_app_only_tools_are_neither_ranked_nor_run(era: Era) -> None:
    ran.clear()
    server = _child()
    server.tool(lambda: ran.append("widget") or "w", name="platypus_widget_refresh",
                description="Refresh the platypus widget.",
                meta={"ui": {"visibility": ["app"]}})
    async with connect(server, era) as client:
        found = await client.call_tool("describe_tools", {"query": "refresh platypus widget"})
        assert "platypus_widget_refresh" not in found.content[0].text  # type: ignore[union-attr]
        refused = await client.call_tool("run_tool", {"name": "platypus_widget_refresh"},
                                         raise_on_error=False)
        assert refused.is_error and _body(refused)["error"]["code"] == "UNKNOWN_TOOL"
        assert ran == []


def _backend() -> FastMCP:
    """The issue's proxied backend: 61 tools (the default budget applies), the middleware on
    the backend alone."""
    backend = FastMCP("backend")
    _add_platypus_tools(backend)
    for i in range(59):
        backend.tool(lambda: "x", name=f"filler_{i}", description=f"Filler tool number {i}.")
    backend.add_middleware(ProgressiveDisclosure())
    return backend


def _proxy_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "FastMCP proxy" in r.getMessage()]


async def _nothing_of_the_hidden_tool(client: Client[Any]) -> None:
    """Through the proxy: no route of ours, no definition of the tool it hides, by any name
    or read; the tool it shows runs by its own name."""
    names = {t.name for t in await client.list_tools()}
    assert "platypus_purge" not in names and "platypus_count" in names
    assert not names & {"describe_tools", "run_tool"}
    for bridge, args in (("describe_tools", {"tools": ["platypus_purge"]}),
                         ("describe_tools", {"query": "platypus purge"}),
                         ("run_tool", {"name": "platypus_purge"})):
        answer = await client.call_tool(bridge, args, raise_on_error=False)
        assert answer.is_error and "inputSchema" not in answer.content[0].text  # type: ignore[union-attr]
    with pytest.raises(MCPError):
        await client.read_resource(f"{DESCRIPTIONS_URI}?tools=platypus_purge")
    direct = await client.call_tool("platypus_purge", {}, raise_on_error=False)
    assert direct.is_error
    assert (await client.call_tool("platypus_count", {})).data == 7
    assert ran == ["count"]


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_a_fastmcp_proxy_that_hides_a_tool_never_gets_its_definition(
        transport: Transport, era: Era, caplog: pytest.LogCaptureFixture) -> None:
    """``create_proxy`` in front of a backend with the middleware (in memory, or the backend
    over streamable HTTP); the proxy hides a tool. The backend cannot see the proxy's view,
    so it serves FastMCP's proxy in full, like a client in ``full_clients``: no
    ``describe_tools`` or read returns the hidden tool's definition (before: both did), and
    the server says so once, with the fix."""
    ran.clear()
    async with served(_backend(), transport) as target:
        proxy = create_proxy(target)
        proxy.disable(names={"platypus_purge"})
        for _ in range(2):  # two front sessions: several backend sessions, one warning
            async with connect(proxy, era) as client:
                await _nothing_of_the_hidden_tool(client)
                ran.clear()
    warned = _proxy_warnings(caplog)
    assert len(warned) == 1 and "put ProgressiveDisclosure on the proxy" in warned[0]


@pytest.mark.slow  # `fastmcp run` bridging in a process
async def test_fastmcp_run_url_is_served_in_full(caplog: pytest.LogCaptureFixture) -> None:
    """``fastmcp run http://.../mcp``, the usual stdio bridge to an HTTP server, is a FastMCP
    proxy too: its clients get the backend's tools as registered and no route of ours."""
    fastmcp_cli = Path(sys.executable).parent / "fastmcp"
    async with serve_http(_backend()) as url:
        bridge = StdioTransport(command=str(fastmcp_cli), args=["run", url, "--no-banner"],
                                env={"FASTMCP_LOG_LEVEL": "WARNING"})
        async with connect(bridge, "legacy") as client:  # type: ignore[arg-type]
            listed = {t.name: t for t in await client.list_tools()}
    assert len(listed) == 61 and not {"describe_tools", "run_tool"} & set(listed)
    assert listed["platypus_count"].output_schema is not None  # as registered
    assert len(_proxy_warnings(caplog)) == 1


@ERA
async def test_a_proxy_forwards_its_clients_headers_but_not_their_level(era: Era) -> None:
    """Over HTTP a FastMCP proxy forwards its clients' headers to the backend, the level
    header among them: a client of the proxy must not ask the backend for a progressive
    level (and the routes that come with it)."""
    ran.clear()
    async with serve_http(_backend()) as backend_url:
        proxy = create_proxy(backend_url)
        proxy.disable(names={"platypus_purge"})
        async with serve_http(proxy) as proxy_url:
            transport = StreamableHttpTransport(proxy_url,
                                                headers={"X-Progressive-Disclosure": "typed"})
            async with Client(transport, mode="legacy" if era == "legacy" else "auto",
                              client_info=GENERIC_HOST) as client:
                await _nothing_of_the_hidden_tool(client)


@ERA
async def test_fastmcps_own_client_keeps_its_saving_and_no_warning(
        era: Era, caplog: pytest.LogCaptureFixture) -> None:
    """FastMCP's default ``Client`` (also Pydantic AI's, with its defaults) advertises none
    of a proxy's handlers: it is served the progressive listing, unwarned."""
    ran.clear()
    async with Client(_backend(), mode="legacy" if era == "legacy" else "auto") as client:
        listed = {t.name: t for t in await client.list_tools()}
        assert "describe_tools" in listed  # progressive: the bridge is listed
        assert listed["platypus_purge"].input_schema == {"type": "object", "properties": {}}
    assert _proxy_warnings(caplog) == []


@ERA
async def test_the_middleware_on_the_proxy_answers_within_its_view(era: Era) -> None:
    """The fix the warning names: the middleware on the proxy, the server clients talk to.
    Its routes answer within what the proxy shows, and the backend's middleware, serving the
    proxy in full, never gates twice."""
    ran.clear()
    proxy = create_proxy(_backend())
    proxy.disable(names={"platypus_purge"})
    proxy.add_middleware(ProgressiveDisclosure())
    async with connect(proxy, era) as client:
        names = {t.name for t in await client.list_tools()}
        assert "describe_tools" in names and "platypus_purge" not in names
        named = _body(await client.call_tool("describe_tools", {"tools": ["platypus_purge"]}))
        assert "inputSchema" not in json.dumps(named)
        purge = await client.call_tool("run_tool", {"name": "platypus_purge"},
                                       raise_on_error=False)
        assert purge.is_error and ran == []
        found = await client.call_tool("describe_tools", {"query": "platypus purge records"})
        assert "platypus_purge" not in found.content[0].text  # type: ignore[union-attr]
        assert (await client.call_tool("run_tool", {"name": "platypus_count"})).data == 7


async def test_run_tool_still_runs_for_a_budgeted_caller() -> None:
    ran.clear()
    async with Client(_child()) as client:
        assert (await client.call_tool("run_tool", {"name": "platypus_count"})).data == 7
        assert ran == ["count"]


async def test_run_tool_as_a_sessions_first_request_is_judged_by_its_arguments() -> None:
    """A host that opens a session (or a server process) per call (LangChain's
    ``get_tools()``): ``run_tool`` is its first request, in a process that never listed.
    Deciding whether it is offered must not list for it, or the session looks like one
    that listed and is refused forever instead of judged by its arguments."""
    ran.clear()
    async with clients(_child(), "memory", "legacy", list_first=False) as (client,):
        result = await client.call_tool("run_tool", {"name": "platypus_count"})
    assert not result.is_error and ran == ["count"]



@ERA
async def test_our_proxy_asks_an_upstream_with_the_middleware_for_everything(
        era: Era, caplog: pytest.LogCaptureFixture) -> None:
    """``progressive_proxy`` discloses itself, so it asks its upstream for the full listing
    (the extension in ``full`` mode): an upstream with the middleware serves it every
    definition, and does not take it for a FastMCP proxy hiding tools (no warning)."""
    ran.clear()
    async with serve_http(_backend()) as url:
        front = progressive_proxy(url)
        async with connect(front, era) as client:
            names = {t.name for t in await client.list_tools()}
            assert "describe_tools" in names  # the front's own bridge, not the upstream's
            described = _body(await client.call_tool("describe_tools",
                                                     {"tools": ["platypus_count"]}))
            assert "inputSchema" in json.dumps(described)
            assert (await client.call_tool("platypus_count", {})).data == 7
    assert _proxy_warnings(caplog) == []
