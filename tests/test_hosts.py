"""Per-host listing levels, schemas hosts accept, ``_meta`` and always-load pins (issue 9, 3-4).

Hosts that defer tools themselves get the full listing by their ``clientInfo`` name; the
table can be extended, replaced or turned off; every level's schema carries
``properties``; a tool's ``_meta`` survives the reduced listing; a pinned tool is listed
in full and never gated.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server import create_proxy
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool

from fastmcp_progressive import (
    DESCRIPTIONS_URI,
    EXTENSION_ID,
    ClientSettings,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import Caller, identify
from fastmcp_progressive.access.modes import ModePolicy, is_fastmcp_proxy, profile_for
from fastmcp_progressive.disclosure.guidance import PROMPT_NAME
from fastmcp_progressive.hosts import (
    HOST_PROFILES,
    PROXY_CAPABILITIES,
    HostProfile,
)
from fastmcp_progressive.payloads import BRIDGE_TOOL_NAME, instructions
from tests.conftest import (
    ERAS,
    FOLLOWED_IN_MEMORY,
    TRANSPORTS,
    Era,
    Transport,
    build_server,
    connect,
    fetch,
    gated,
    serve_http,
)
from tests.servers import ADD_FULL_TEXT, ADD_TYPED, Q_TYPED

ALL = [(t, e) for t in TRANSPORTS for e in ERAS]


def _info(name: str, version: str = "1.0.0") -> mt.Implementation:
    return mt.Implementation(name=name, version=version)


async def _add_description(client: Any) -> str | None:
    tools = {t.name: t for t in await client.list_tools()}
    description: str | None = tools["add"].description
    return description


async def _add_schema(client: Any) -> dict[str, Any]:
    tools = {t.name: t for t in await client.list_tools()}
    schema: dict[str, Any] = tools["add"].input_schema
    return schema


@pytest.mark.parametrize(("transport", "era"), ALL)
@pytest.mark.parametrize("host", [
    "claude-code", "claude-ai", "github-copilot-developer", "codex-mcp-client",
    "cursor-vscode", "Visual Studio Code", "Visual Studio Code - Insiders", "Code - OSS"])
async def test_hosts_that_defer_tools_get_the_full_listing(
    transport: Transport, era: Era, host: str
) -> None:
    server = build_server()
    target: FastMCP | str = server
    async with serve_http(server) if transport == "http" else nullcontext() as url:
        if url is not None:
            target = url
        async with connect(target, era, client_info=_info(host, "2.0.42")) as c:
            assert await _add_description(c) == ADD_FULL_TEXT
            assert not await gated(c)  # full level: never gated
        async with connect(target, era, client_info=_info("some-other-host")) as c:
            assert await _add_schema(c) == ADD_TYPED
            assert await _add_description(c) != ADD_FULL_TEXT


@pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)
async def test_profiles_extend_replace_and_turn_off(era: Era) -> None:
    acme = HostProfile("acme-*", "skeleton", version="1.*", host="Acme")
    server = build_server(clients=ClientSettings(host_profiles=[acme, *HOST_PROFILES]))
    async with connect(server, era, client_info=_info("acme-agent", "1.4")) as c:
        schema = await _add_schema(c)
        assert schema == {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }
        assert await gated(c)  # skeleton is progressive: still gated
    async with connect(server, era, client_info=_info("acme-agent", "2.0")) as c:
        assert await _add_description(c) != ADD_FULL_TEXT  # version glob: the default
    async with connect(server, era, client_info=_info("claude-code")) as c:
        assert await _add_description(c) == ADD_FULL_TEXT  # the shipped rows still apply
    off = build_server(clients=ClientSettings(host_profiles=()))
    async with connect(off, era, client_info=_info("claude-code")) as c:
        assert await _add_schema(c) == ADD_TYPED
        assert await _add_description(c) != ADD_FULL_TEXT


@pytest.mark.parametrize("era", ERAS)
async def test_operator_and_client_choices_beat_the_table(era: Era) -> None:
    server = build_server(clients=ClientSettings(
        level_resolver=lambda client: "skeleton" if client.name == "x" else None
    ))
    async with connect(server, era, client_info=_info("x")) as c:
        assert "required" in await _add_schema(c)
        assert "description" not in (await _add_schema(c))["properties"]["a"]
    async with serve_http(build_server()) as url:
        transport = StreamableHttpTransport(url, headers={"X-Progressive-Disclosure": "minimal"})
        async with connect(transport, era, client_info=_info("claude-code")) as c:  # type: ignore[arg-type]
            assert await _add_schema(c) == {"type": "object", "properties": {}}


def test_profile_matching_by_era_and_transport() -> None:
    rows = [HostProfile("h", "skeleton", era="modern", transport="http"), HostProfile("h", "full")]
    modern_http = Caller(kind="anonymous", era="modern", transport="http", client_name="h")
    legacy = Caller(kind="session", era="legacy", key="s", client_name="h")
    assert [profile_for(rows, c).level for c in (modern_http, legacy)] == [  # type: ignore[union-attr]
        "skeleton", "full"]
    assert profile_for(rows, Caller(kind="session", era="legacy", key="s")) is None
    policy = ModePolicy(ClientSettings(host_profiles=rows), default_level="skeleton")
    assert policy.level(Caller(kind="session", era="legacy", key="s", client_name="z")) == (
        "skeleton"
    )
    assert policy.level(legacy) == "full"


def test_a_fastmcp_proxy_is_told_by_the_handlers_it_advertises() -> None:
    """FastMCP's ``ProxyClient`` advertises sampling, elicitation and roots (all three,
    both eras); FastMCP's default client, Pydantic AI's defaults and FastMCP's CLI
    (elicitation alone) do not. A proxy is served in full whatever its clients' forwarded
    level header asks; the operator's resolver and the proxy's own client extension still
    decide, as for any client."""
    proxy_caps = frozenset({"sampling", "elicitation", "roots"})

    def caller(name: str | None, caps: frozenset[str], **kw: Any) -> Caller:
        return Caller(kind="anonymous", era="modern", client_name=name, capabilities=caps, **kw)

    assert is_fastmcp_proxy(caller("fastmcp", proxy_caps))
    assert is_fastmcp_proxy(caller("mcp", proxy_caps))  # FastMCP < 4.2: the SDK's name
    for name, caps in (("fastmcp", frozenset()), ("fastmcp", frozenset({"elicitation"})),
                       ("fastmcp", frozenset({"sampling", "elicitation"})),
                       ("cursor", proxy_caps), (None, proxy_caps)):
        assert not is_fastmcp_proxy(caller(name, caps)), (name, caps)
    header = {"x-progressive-disclosure": "typed"}
    policy = ModePolicy()
    assert policy.level(caller("fastmcp", proxy_caps, headers=header)) == "full"
    assert policy.level(caller("mcp", proxy_caps)) == "full"  # FastMCP < 4.2's proxies
    assert policy.level(caller("fastmcp", frozenset(), headers=header)) == "typed"
    assert policy.level(caller("fastmcp", frozenset())) == ListingSettings.level
    asked = caller("fastmcp", proxy_caps, extensions={EXTENSION_ID: {"mode": "progressive"}})
    assert policy.level(asked) == ListingSettings.level
    operator = ModePolicy(ClientSettings(
        level_resolver=lambda c: "progressive" if c.name == "fastmcp" else None))
    assert operator.level(caller("fastmcp", proxy_caps)) == ListingSettings.level


class _Advertised(Middleware):
    """Records the client capabilities of whoever lists tools."""

    def __init__(self) -> None:
        self.seen: set[frozenset[str]] = set()

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        self.seen.add(identify(context.fastmcp_context).capabilities)
        return await call_next(context)


@pytest.mark.parametrize("era", ERAS)
async def test_what_fastmcps_proxy_and_client_advertise(era: Era) -> None:
    """The facts ``hosts.PROXY_CAPABILITIES`` rests on, from FastMCP itself: its proxy's
    backend client advertises all three on both eras (the era mirrors the front's); its
    default ``Client`` none of them. A FastMCP release that changes either fails here
    (roots is deprecated on 2026-07-28, SEP-2577): then revisit ``is_fastmcp_proxy``."""
    mode = "legacy" if era == "legacy" else "auto"
    for through_proxy, expected in ((True, PROXY_CAPABILITIES), (False, frozenset())):
        backend, recorder = FastMCP("backend"), _Advertised()
        backend.tool(lambda: 1, name="one")
        backend.add_middleware(recorder)
        target: Any = create_proxy(backend) if through_proxy else backend
        async with Client(target, mode=mode) as client:
            await client.list_tools()
        assert recorder.seen == {expected}, (through_proxy, recorder.seen)


def test_every_shipped_profile_cites_its_evidence() -> None:
    assert HOST_PROFILES
    for profile in HOST_PROFILES:  # a public source, or the notes that record one
        assert profile.evidence.startswith(("https://github.com/", "shared/notes/")), profile
        assert profile.host


# -- 4. schemas hosts accept -------------------------------------------------------------------
@pytest.mark.parametrize("listing", ["minimal", "skeleton"])
async def test_every_level_lists_properties_even_without_parameters(listing: str) -> None:
    server = build_server(listing=ListingSettings(level=listing))

    @server.tool
    def ping_me() -> str:
        """No parameters at all."""
        return "pong"

    async with connect(server, "legacy") as c:
        for tool in await c.list_tools():
            assert isinstance(tool.input_schema.get("properties"), dict), tool.name


# -- 3. _meta kept, always-load pins -------------------------------------------------------------
def _pinned_server(tmp: Path | None = None, **options: Any) -> FastMCP:
    server = FastMCP("pins")

    @server.tool(meta={"anthropic/alwaysLoad": True, "vendor/x": 1})
    def loaded(q: str) -> str:
        """Always loaded in Claude Code. Listed whole."""
        return q

    @server.tool(meta={"vendor/x": 2})
    def plain(q: str) -> str:
        """Has metadata only."""
        return q

    @server.tool(tags={"always_load"})
    def tagged(q: str) -> str:
        """Pinned by tag. Listed whole."""
        return q

    @server.tool(meta={"io.github.fastmcp-progressive/alwaysLoad": True})
    def flagged(q: str) -> str:
        """Pinned by our meta flag. Listed whole."""
        return q

    @server.tool
    def filed(q: str) -> str:
        """Pinned by its description file. Listed whole."""
        return q

    server.add_middleware(ProgressiveDisclosure(tmp, **options))
    return server


@pytest.mark.parametrize(("transport", "era"), ALL)
async def test_meta_survives_and_pins_list_in_full_and_never_gate(
    transport: Transport, era: Era, tmp_descriptions: Path, write_description: Any
) -> None:
    write_description("filed", {"always_load": True})
    server = _pinned_server(tmp_descriptions)
    async with serve_http(server) if transport == "http" else nullcontext(server) as target:
        async with connect(target, era) as c:  # (modern HTTP: a caller checked by arguments)
            await _check_pins(server, c)


async def _check_pins(server: FastMCP, c: Any) -> None:
    tools = {t.name: t for t in await c.list_tools()}
    assert tools["plain"].meta == {"vendor/x": 2}  # reduced, _meta kept
    assert tools["plain"].input_schema == Q_TYPED
    assert await gated(c, "plain", {})
    for name in ("loaded", "tagged", "flagged", "filed"):
        registered = await server.get_tool(name)
        assert registered is not None
        assert tools[name].input_schema == registered.parameters, name
        assert tools[name].description == registered.description  # not summarized
        assert not await gated(c, name, {"q": "x"}), name
    assert tools["loaded"].meta is not None
    assert tools["loaded"].meta["anthropic/alwaysLoad"] is True
    assert "always_load" not in (await fetch(c, "filed"))["filed"]  # not served


@pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)
async def test_description_file_can_unpin(
    era: Era, tmp_descriptions: Path, write_description: Any
) -> None:
    write_description("loaded", {"always_load": False})
    server = _pinned_server(tmp_descriptions)
    async with connect(server, era) as c:
        tools = {t.name: t for t in await c.list_tools()}
        assert tools["loaded"].input_schema == Q_TYPED
        assert tools["loaded"].meta == {"anthropic/alwaysLoad": True, "vendor/x": 1}
        assert await gated(c, "loaded", {"q": "x"})


async def test_pinned_tools_pass_for_callers_checked_by_arguments() -> None:
    async with serve_http(_pinned_server()) as url, connect(url, "modern") as c:
        result = await c.call_tool("tagged", {}, raise_on_error=False)
        assert result.is_error  # FastMCP's own validation answers, not our refusal
        assert "TOOL_DESCRIPTION_REQUIRED" not in str(result.structured_content)


# -- what each client is told matches what its listing holds ----------------------------------
@pytest.mark.parametrize(("transport", "era"), [("memory", "legacy"), ("http", "legacy")])
@pytest.mark.parametrize("host", ["claude-code", "claude-ai", "codex-mcp-client",
                                  "cursor-vscode", "Visual Studio Code"])
async def test_clients_served_in_full_are_not_taught_the_progressive_workflow(
    transport: Transport, era: Era, host: str
) -> None:
    """A full listing has no ``describe_tools`` and nothing is refused: such a client is not
    told to call it, is not offered the guidance prompt or the workflow resource entry, and
    its advertisement says ``full``; a progressive client on the same server is told all."""
    server = build_server()
    async with serve_http(server) if transport == "http" else nullcontext(server) as target:
        async with connect(target, era, client_info=_info(host)) as full, connect(
                target, era, client_info=_info("some-agent")) as progressive:
            for client, is_full in ((full, True), (progressive, False)):
                result = client.initialize_result
                assert result is not None
                text = result.instructions or ""
                assert text.startswith("Server instructions.")  # the server's own words stay
                assert ("describe_tools" in text) is not is_full
                assert (instructions(BRIDGE_TOOL_NAME) in text) is not is_full
                names = {t.name for t in await client.list_tools()}
                assert ("describe_tools" in names) is not is_full
                settings = (result.capabilities.extensions or {})[EXTENSION_ID]
                assert settings["listing"] == ("full" if is_full else "typed")
                assert settings["bridge_tool"] == (None if is_full else "describe_tools")
                prompts = {p.name for p in await client.list_prompts()}
                assert (PROMPT_NAME in prompts) is not is_full
                uris = {str(r.uri) for r in await client.list_resources()}
                assert (DESCRIPTIONS_URI in uris) is not is_full
                templates = await client.list_resource_templates()
                assert any("tool_descriptions" in t.uri_template
                           for t in templates) is not is_full
            assert "add" in await fetch(full, "add")  # a read still answers it


@pytest.mark.parametrize("era", ERAS)
async def test_a_host_that_defers_gets_the_capped_listing_when_the_server_exceeds_its_cap(
    era: Era,
) -> None:
    """Cursor takes about 40 tools: in full, a 45-tool server would lose tools unseen, so
    Cursor gets the server's level within its cap; VS Code (128) still gets all 45 in full."""
    server = build_server()
    for n in range(42):
        server.add_tool(Tool.from_function(lambda q: q, name=f"extra_{n}",
                                           description=f"Extra tool {n}. More text."))
    async with connect(server, era, client_info=_info("cursor-vscode")) as cursor:
        listed = await cursor.list_tools()
        assert len(listed) <= 40
        assert {"describe_tools", "run_tool"} <= {t.name for t in listed}
    async with connect(server, era, client_info=_info("Visual Studio Code")) as vscode:
        listed = await vscode.list_tools()
        assert len(listed) == 45 and "describe_tools" not in {t.name for t in listed}
        assert not await gated(vscode)
