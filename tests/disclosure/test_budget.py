"""The budgeted default listing (``disclosure/toolcap.py``, ``ListingSettings.max_tools``).

Through real protocol paths: ``fastmcp.Client`` in memory and over streamable HTTP, both
protocol eras. A server whose caller may see at most ``BUDGET_THRESHOLD`` tools lists
exactly what it listed before the budget existed (byte for byte: the demo server, two
corpus catalogs); a larger one lists at most ``BUDGET`` entries: pinned tools, the tools
the caller described, this server's most called, then the server's own order, and the two
bridges. ``max_tools=None`` lists every tool, an int caps always, and a host profile
chooses for its clients (its own cap, or every tool: mcp-use, whose default agent has one
tool round, also has its calls judged by their arguments). Describing a tool puts it in a
followable caller's listing without ``notifications/tools/list_changed`` (Semantic Kernel
deadlocks on it); a description file's edit still sends one. ``run_tool`` declares
``arguments`` as a plain object (smolagents types anything else as a string).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool
from mcp.client.extension import advertise

from fastmcp_progressive import (
    EXTENSION_ID,
    HOST_PROFILES,
    ClientSettings,
    HostProfile,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import caller_of
from fastmcp_progressive.access.modes import profile_for
from fastmcp_progressive.disclosure import toolcap
from fastmcp_progressive.hosts import BUDGET, BUDGET_THRESHOLD
from tests.conftest import (
    GENERIC_HOST,
    TOKENS,
    TRANSPORT_ERA,
    TRANSPORTS,
    Era,
    Transport,
    connect,
    serve_http,
    served,
)
from tests.corpus import catalog_path, catalog_tools, corpus_dir
from tests.hosts.serve import demo_server
from tests.parts import parts
from tests.replay import replay_tool
from tests.waiting import ListChangedRecorder, watcher_ready

ROOT = Path(__file__).resolve().parents[2]
BRIDGES = {"describe_tools", "run_tool"}


def numbered(count: int, folder: Path | None = None, *, pinned: str | None = None,
             **options: Any) -> FastMCP:
    """``count`` tools ``t00``, ``t01``... (each takes ``text``), ``pinned`` pinned."""
    mcp = FastMCP("numbered", auth=options.pop("auth", None))
    for i in range(count):
        name = f"t{i:02d}"
        mcp.tool(lambda text: f"ran:{text}", name=name, description=f"Tool number {i}.",
                 tags={"always_load"} if name == pinned else set())
    mcp.add_middleware(ProgressiveDisclosure(folder, **options))
    return mcp


def replayed(catalog: str, **options: Any) -> FastMCP:
    if not catalog_path(catalog).exists():
        pytest.skip(f"no corpus catalog {catalog} in {corpus_dir()}")
    mcp = FastMCP(catalog)
    for spec in catalog_tools(catalog_path(catalog)):
        mcp.add_tool(replay_tool(spec))
    mcp.add_middleware(ProgressiveDisclosure(**options))
    return mcp


def demo(**options: Any) -> FastMCP:
    """``examples/demo_server.py``'s server with its middleware made with ``options``."""
    server = demo_server()
    shipped = next(m for m in server.middleware if isinstance(m, ProgressiveDisclosure))
    server.middleware.remove(shipped)
    shipped.close()
    server.add_middleware(ProgressiveDisclosure(ROOT / "examples" / "tool_descriptions",
                                                **options))
    return server




async def listed(server: FastMCP, transport: Transport, era: Era,
                 **client: Any) -> list[dict[str, Any]]:
    async with served(server, transport) as target, connect(target, era, **client) as c:
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                for t in await c.list_tools()]


def names(listing: list[dict[str, Any]]) -> list[str]:
    return [t["name"] for t in listing]


# -- small servers: unchanged; large ones: within the budget --------------------------------
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
@pytest.mark.parametrize("server", ["demo", "notion-mcp-server", "playwright-mcp", "50 tools"])
async def test_small_servers_list_exactly_as_without_a_budget(
        server: str, transport: Transport, era: Era) -> None:
    """The default (``"auto"``) listing of a server at or below the threshold is the
    listing with the budget off, byte for byte: the demo server (8 tools), notion (24),
    playwright (45) and 50 tools."""
    def make(**options: Any) -> FastMCP:
        if server == "demo":
            return demo(**options)
        if server == "50 tools":
            return numbered(BUDGET_THRESHOLD, **options)
        return replayed(server, **options)

    assert ListingSettings().max_tools == "auto"
    default = await listed(make(), transport, era)
    auto = await listed(make(listing=ListingSettings(max_tools="auto")), transport, era)
    off = await listed(make(listing=ListingSettings(max_tools=None)), transport, era)
    assert json.dumps(default) == json.dumps(auto) == json.dumps(off)
    assert "run_tool" not in names(default) and "describe_tools" in names(default)
    assert len(default) <= BUDGET_THRESHOLD + 1


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_above_the_threshold_the_default_lists_the_budget(
        transport: Transport, era: Era) -> None:
    """51 tools: ``BUDGET`` entries (the first tools in the server's order, then the two
    bridges, the bridge naming how to find the rest); ``max_tools=None`` lists all 51."""
    default = await listed(numbered(BUDGET_THRESHOLD + 1), transport, era)
    assert len(default) == BUDGET
    assert names(default) == [f"t{i:02d}" for i in range(BUDGET - 2)] + [
        "describe_tools", "run_tool"]
    bridge = default[-2]
    assert bridge["description"].startswith("Only some tools are listed.")
    off = await listed(numbered(BUDGET_THRESHOLD + 1, listing=ListingSettings(max_tools=None)),
                       transport, era)
    assert names(off) == [f"t{i:02d}" for i in range(BUDGET_THRESHOLD + 1)] + [
        "describe_tools"]
    capped = await listed(numbered(30, listing=ListingSettings(max_tools=10)), transport, era)
    assert len(capped) == 10  # an int caps always, below the threshold too


async def test_a_large_corpus_catalog_lists_the_budget() -> None:
    """github-mcp-server (117 tools) by default: 20 entries, every tool reachable by name
    through run_tool; with the budget off: all 117 and the bridge."""
    server = replayed("github-mcp-server")
    listing = await listed(server, "memory", "modern")
    assert len(listing) == BUDGET and set(names(listing)) >= BRIDGES
    unlisted = next(t["name"] for t in catalog_tools(catalog_path("github-mcp-server"))
                    if t["name"] not in names(listing))
    async with connect(server, "modern") as client:  # judged by its arguments: it runs
        result = await client.call_tool("run_tool", {"name": unlisted, "arguments": {}},
                                        raise_on_error=False)
    assert "ok" in result.content[0].text or "invalid_arguments" in result.content[0].text
    off = await listed(replayed("github-mcp-server", listing=ListingSettings(max_tools=None)),
                       "memory", "legacy")
    assert len(off) == 118 and "run_tool" not in names(off)


# -- what the budget holds ------------------------------------------------------------------
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_pins_then_described_then_most_called_then_server_order(
        transport: Transport, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new caller's budget, before any call was counted: pinned tools, then the server's
    own first tools; once calls are counted (the hourly snapshot, made immediate here):
    the most called first; a described tool joins the describing session's listing."""
    monkeypatch.setattr(toolcap, "POPULAR_REFRESH", 0.0)
    server = numbered(60, pinned="t55")
    async with served(server, transport) as target:
        first = names(await listed_at(target))
        assert first == [*(f"t{i:02d}" for i in range(BUDGET - 3)), "t55", *sorted(BRIDGES)]
        async with connect(target, "modern") as anonymous:  # judged by arguments: runs
            for name in ("t40", "t40", "t40", "t41", "t41", "t42"):
                await anonymous.call_tool(name, {"text": "x"})
        popular = names(await listed_at(target))
        head = ["t40", "t41", "t42"]
        rest = [f"t{i:02d}" for i in range(BUDGET - 3 - len(head))]
        assert popular == [*rest, "t40", "t41", "t42", "t55", *sorted(BRIDGES)]
        async with connect(target, "legacy") as session:
            own = names([t.model_dump() for t in await session.list_tools()])
            assert "t50" not in own
            await session.call_tool("describe_tools", {"tools": ["t50"]})
            grown = [t.name for t in await session.list_tools()]
            assert "t50" in grown and len(grown) == BUDGET
            assert {"t55", "t40", "t41", "t42"} <= set(grown)  # the last of the rest left
            assert (await session.call_tool("t50", {"text": "y"})).content[0].text == "ran:y"


class HideFromRestricted(Middleware):
    """A listing filter of a user's own: the client named ``restricted`` never sees ``t45``."""

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Sequence[Tool]]) -> Sequence[Tool]:
        tools = await call_next(context)
        if caller_of(context.fastmcp_context).client_name == "restricted":
            return [t for t in tools if t.name != "t45"]
        return tools


async def test_the_most_called_count_only_calls_that_ran(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's budget starts from the most called tools: calls that ran, not a hidden
    name a caller sent (the gate leaves it to FastMCP's answer) nor a call FastMCP's own
    validation refused (a client served in full sends any arguments)."""
    monkeypatch.setattr(toolcap, "POPULAR_REFRESH", 0.0)
    server = numbered(60)
    server.add_middleware(HideFromRestricted())
    full = [advertise(EXTENSION_ID, {"mode": "full"})]
    async with connect(server, "legacy", **info("restricted")) as restricted:
        assert "t45" not in {t.name for t in await restricted.list_tools()}  # followed
        async with connect(server, "legacy", extensions=full) as everything:
            for _ in range(3):
                await restricted.call_tool("t45", {"text": "x"}, raise_on_error=False)
                refused = await everything.call_tool("t50", {"wrong": 1}, raise_on_error=False)
                assert refused.is_error
        async with connect(server, "modern") as anonymous:  # judged by arguments: runs
            assert (await anonymous.call_tool("t51", {"text": "x"})).content[0].text == "ran:x"
    newcomer = names(await listed_at(server))
    assert newcomer == [*(f"t{i:02d}" for i in range(BUDGET - 3)), "t51", *sorted(BRIDGES)]


async def listed_at(target: FastMCP | str) -> list[dict[str, Any]]:
    async with connect(target, "legacy") as client:
        return [t.model_dump() for t in await client.list_tools()]


# -- host profiles choose -------------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_a_host_profile_chooses_its_own_cap_or_every_tool(
        transport: Transport, era: Era) -> None:
    profiles = [HostProfile("big-host", None, max_tools=None),
                HostProfile("small-host", None, max_tools=10), *HOST_PROFILES]
    server = numbered(60, clients=ClientSettings(host_profiles=profiles))
    async with served(server, transport) as target:
        assert len(await listed_at_era(target, era, **info("big-host"))) == 61
        assert len(await listed_at_era(target, era, **info("small-host"))) == 10
        assert len(await listed_at_era(target, era, **info("other"))) == BUDGET
        assert len(await listed_at_era(target, era, **info("claude-code"))) == 60  # full
    small = numbered(30, clients=ClientSettings(host_profiles=profiles))
    assert len(await listed(small, transport, era, **info("small-host"))) == 10
    capped = numbered(60, listing=ListingSettings(max_tools=30),
                      clients=ClientSettings(host_profiles=profiles))
    assert len(await listed(capped, transport, era, **info("big-host"))) == 30  # int: always


async def listed_at_era(target: FastMCP | str, era: Era, **client: Any) -> list[Any]:
    async with connect(target, era, **client) as c:
        return list(await c.list_tools())


def info(name: str, version: str = "1") -> dict[str, Any]:
    return {"client_info": mt.Implementation(name=name, version=version)}


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_mcp_use_gets_every_tool_and_its_first_call_runs(
        transport: Transport, era: Era) -> None:
    """mcp-use's agent allows one tool round and the answer (max_steps=5): every tool is
    listed and a first call with fitting arguments runs; one that does not fit is
    refused with the definition and what did not fit."""
    mcp_use = info("mcp-use", "1.7.1")
    row = profile_for(HOST_PROFILES, _Facts("mcp-use", "1.7.1"))
    assert row is not None and row.max_tools is None and row.judged_by_arguments
    server = numbered(60)
    async with served(server, transport) as target, connect(target, era, **mcp_use) as c:
        tools = {t.name: t for t in await c.list_tools()}
        assert len(tools) == 61 and "run_tool" not in tools
        assert (await c.call_tool("t59", {"text": "go"})).content[0].text == "ran:go"
        refused = await c.call_tool("t58", {}, raise_on_error=False)
        body = json.loads(refused.content[0].text)["error"]
        assert body["code"] == "TOOL_DESCRIPTION_REQUIRED" and "invalid_arguments" in body


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_mcp_uses_documented_row_gives_it_the_budget_and_still_judges_its_calls(
        transport: Transport, era: Era) -> None:
    """With ``MCPAgent(..., max_steps=8)`` the docs give mcp-use the budget (its row without
    ``max_tools=None``): ``BUDGET`` entries, and a tool outside them runs through
    ``run_tool`` at its first call (two tool rounds, the search and the call)."""
    documented = HostProfile("mcp-use", None, judged_by_arguments=True)
    server = numbered(60, clients=ClientSettings(host_profiles=[documented, *HOST_PROFILES]))
    async with (served(server, transport) as target,
                connect(target, era, **info("mcp-use", "1.7.1")) as c):
        tools = {t.name for t in await c.list_tools()}
        assert len(tools) == BUDGET and "run_tool" in tools and "t59" not in tools
        ran = await c.call_tool("run_tool", {"name": "t59", "arguments": {"text": "go"}})
        assert "ran:go" in ran.content[0].text


class _Facts:
    def __init__(self, name: str, version: str) -> None:
        self.client_name, self.client_version = name, version
        self.era, self.capabilities = "legacy", frozenset[str]()
        self.channel, self.transport = None, None


# -- describing: into the listing, without tools/list_changed --------------------------------
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_describing_adds_to_the_listing_without_list_changed(
        tmp_descriptions: Path, transport: Transport) -> None:
    """A handshake session describes an unlisted tool: it joins its listing and no
    ``tools/list_changed`` is sent (Semantic Kernel deadlocks on one); a description
    file's edit still sends one, so the recorder hears what is sent."""
    server = numbered(60, tmp_descriptions)
    middleware = next(m for m in server.middleware if isinstance(m, ProgressiveDisclosure))
    recorder = ListChangedRecorder()
    try:
        async with served(server, transport) as target, connect(
                target, "legacy", message_handler=recorder) as client:
            assert "t50" not in {t.name for t in await client.list_tools()}
            await client.call_tool("describe_tools", {"tools": ["t50"]})
            await client.ping()  # anything sent during the describe arrived before this
            assert recorder.count == 0
            assert "t50" in {t.name for t in await client.list_tools()}
            await watcher_ready(middleware)
            (tmp_descriptions / "t50.json").write_text(json.dumps({"summary": "Fifty."}),
                                                       "utf-8")
            await recorder.next(10)  # hot reload's notification stays
    finally:
        middleware.close()


async def test_a_principal_describing_gets_no_list_changed_either() -> None:
    """2026-07-28 over HTTP with a token: the principal's listing grows, silently."""
    server = numbered(60, auth=StaticTokenVerifier(tokens=TOKENS))
    recorder = ListChangedRecorder()
    async with serve_http(server) as url:
        transport = StreamableHttpTransport(url, auth="alice-token")
        async with connect_transport(transport, recorder) as client:
            assert "t50" not in {t.name for t in await client.list_tools()}
            await client.call_tool("describe_tools", {"tools": ["t50"]})
            assert "t50" in {t.name for t in await client.list_tools()}
            assert recorder.count == 0  # sent during the describe: it came before these


@asynccontextmanager
async def connect_transport(transport: Any, handler: Any) -> AsyncIterator[Any]:
    from fastmcp import Client

    async with Client(transport, message_handler=handler, client_info=GENERIC_HOST) as client:
        yield client


# -- run_tool's schema ------------------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_run_tool_declares_arguments_as_a_plain_object(
        transport: Transport, era: Era) -> None:
    """mcpadapt (smolagents) types an input without one plain ``type`` as a string, and
    smolagents then rejects the model's object: ``arguments`` is ``{"type": "object"}``."""
    listing = {t["name"]: t for t in await listed(numbered(60), transport, era)}
    schema = listing["run_tool"]["inputSchema"]
    assert schema["type"] == "object" and schema["required"] == ["name"]
    assert schema["properties"]["name"] == {"type": "string"}
    arguments = schema["properties"]["arguments"]
    assert arguments["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf", "$ref"} & set(arguments)


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_without_groups_the_bridge_offers_no_groups(transport: Transport, era: Era) -> None:
    """60 tools in no group: the budget's bridge names no groups, so its description has no
    empty ``Groups:`` header and its schema no ``groups`` argument (which could only answer
    ``available_groups: []``); with groups (60 tagged tools) it has both."""
    bridge = {t["name"]: t for t in await listed(numbered(60), transport, era)}["describe_tools"]
    assert "Groups:" not in bridge["description"] and "groups=" not in bridge["description"]
    assert bridge["description"].endswith("when it is not listed.")
    assert set(bridge["inputSchema"]["properties"]) == {"tools", "query", "queries"}
    tagged = FastMCP("tagged")
    for i in range(60):
        tagged.tool(lambda text: text, name=f"t{i:02d}", description=f"Tool {i}.",
                    tags={"even" if i % 2 == 0 else "odd"})
    tagged.add_middleware(ProgressiveDisclosure())
    grouped = {t["name"]: t for t in await listed(tagged, transport, era)}["describe_tools"]
    assert "\nGroups:\neven: " in grouped["description"]
    assert set(grouped["inputSchema"]["properties"]) == {"tools", "groups", "query", "queries"}


# -- the start-up cost check ------------------------------------------------------------------
async def test_a_budgeted_listing_is_not_warned_about_as_a_cost() -> None:
    """60 one-word tools: every tool listed would cost more than plain, which the start-up
    check warns about; the default lists 20 entries of them, so there is no check (its
    advice, "a plain listing is cheaper", would be wrong). With the budget off it runs."""
    budgeted = numbered(60)
    every_tool = numbered(60, listing=ListingSettings(max_tools=None))
    for server in (budgeted, every_tool):
        async with connect(server, "legacy") as client:
            await client.list_tools()
    for server in (budgeted, every_tool):
        assert parts(ours(server)).net_cost.done.wait(30.0)
    assert parts(ours(budgeted)).net_cost.cost is None  # the catalog is budgeted: not measured
    assert parts(ours(every_tool)).net_cost.cost is not None


def ours(server: FastMCP) -> ProgressiveDisclosure:
    return next(m for m in server.middleware if isinstance(m, ProgressiveDisclosure))


def test_the_tokens_command_says_a_listing_is_budgeted(tmp_path: Path) -> None:
    """``fastmcp-progressive tokens`` counts the listing a client gets: 20 entries of a
    60-tool server, said to be the budget's, not "20 tools"."""
    from tests.cli_runner import run_cli

    (tmp_path / "app.py").write_text(
        "from fastmcp import FastMCP\nmcp = FastMCP('many')\nfor i in range(60):\n"
        "    mcp.tool(lambda text: text, name=f't{i:02d}', description=f'Tool {i}.')\n",
        "utf-8")
    ran = run_cli("tokens", "app.py:mcp", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout
    assert "(60 tools)" in ran.stdout
    assert "(20 entries within the listing budget;" in ran.stdout
