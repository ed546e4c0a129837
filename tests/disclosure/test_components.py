"""Where the package's own components live: in the server's own ``LocalProvider``.

FastMCP asks every provider, each in a task of its own, for the tool of every call and
every name a read resolves; a provider of ours would cost each of those lookups. These
tests pin that the resource, template, bridge and prompt are plain local components, that
a tool the user registered under a bridge's name is refused (naming the setting), and that
``close()`` takes ours out again.
"""

from __future__ import annotations

import pytest
from fastmcp import Client, FastMCP
from mcp.shared.exceptions import MCPError

from fastmcp_progressive import DESCRIPTIONS_URI, ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.disclosure.components import TEMPLATE_URI
from tests.conftest import ERAS, Era, build_server, connect

ERA = pytest.mark.parametrize("era", ERAS)
GUIDE = "progressive_disclosure_guide"


@ERA
async def test_components_join_the_servers_own_provider_and_add_none(era: Era) -> None:
    mcp = build_server()
    before = list(mcp.providers)
    async with connect(mcp, era) as client:
        await client.list_tools()
        names = {t.name for t in await client.list_tools()}
        uris = {str(r.uri) for r in await client.list_resources()}
        templates = {t.uri_template for t in await client.list_resource_templates()}
        prompts = {p.name for p in await client.list_prompts()}
    assert list(mcp.providers) == before
    assert "describe_tools" in names and DESCRIPTIONS_URI in uris
    assert TEMPLATE_URI in templates and GUIDE in prompts
    local = mcp.local_provider
    assert await local.get_tool("describe_tools") is not None
    assert await local.get_resource(DESCRIPTIONS_URI) is not None
    assert await local.get_prompt(GUIDE) is not None


@pytest.mark.parametrize("field", ["bridge_tool", "dispatch_tool"])
async def test_a_server_tool_of_a_bridges_name_is_refused_naming_the_field(field: str) -> None:
    """#27: a bridge named like one of the server's tools was accepted, and every refusal
    then pointed the model at the server's tool. Refused at each request, naming the field,
    until renamed; nothing of ours is added meanwhile."""
    name = "describe_tools" if field == "bridge_tool" else "run_tool"
    mcp = FastMCP("user-bridge")

    def theirs(tools: list[str]) -> str:
        """The user's own tool of that name."""
        return "the user's answer"

    mcp.tool(theirs, name=name)
    capped = ListingSettings(max_tools=3)  # the dispatch bridge is added only when capped
    mcp.add_middleware(ProgressiveDisclosure(listing=capped))
    for _ in range(2):  # the first request and every one after it
        with pytest.raises(MCPError, match=rf"added\.{field} is '{name}', the name of a tool"):
            async with Client(mcp, mode="legacy") as client:
                await client.list_tools()
    assert await mcp.local_provider.get_resource(DESCRIPTIONS_URI) is None
    tool = await mcp.local_provider.get_tool(name)
    assert tool is not None and "user's own" in (tool.description or "")


@ERA
async def test_a_server_tool_of_the_bridges_name_lets_the_client_connect_and_hear_why(
        era: Era, caplog: pytest.LogCaptureFixture) -> None:
    """#34: the refusal failed the handshake ("the initialize handshake is not accepted"
    in the 2026-07-28 era) and logged a traceback per request; now the client connects,
    each request says the fix, and the server logs it once."""
    mcp = FastMCP("user-bridge")

    def describe_tools(tools: list[str]) -> str:
        """The user's own tool of that name."""
        return "the user's answer"

    mcp.tool(describe_tools)
    mcp.add_middleware(ProgressiveDisclosure())
    async with connect(mcp, era) as client:
        for _ in range(3):
            with pytest.raises(MCPError, match=r"added\.bridge_tool is 'describe_tools'"):
                await client.list_tools()
    told = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(told) == 1 and "bridge_tool='progressive_describe_tools'" in told[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info]


@ERA
async def test_close_takes_out_what_the_middleware_added_and_only_that(era: Era) -> None:
    middleware = ProgressiveDisclosure()
    mcp = build_server(middleware=middleware)
    async with connect(mcp, era) as client:
        await client.list_tools()
    middleware.close()
    mcp.middleware.remove(middleware)
    async with connect(mcp, era) as client:
        names = {t.name for t in await client.list_tools()}
        uris = {str(r.uri) for r in await client.list_resources()}
        templates = {t.uri_template for t in await client.list_resource_templates()}
        prompts = {p.name for p in await client.list_prompts()}
    assert names == {"add", "echo", "shout"}
    assert DESCRIPTIONS_URI not in uris and TEMPLATE_URI not in templates
    assert GUIDE not in prompts


@ERA
async def test_close_leaves_a_tool_the_user_registered_later_under_the_bridges_name(
    era: Era,
) -> None:
    middleware = ProgressiveDisclosure()
    mcp = build_server(middleware=middleware)
    async with connect(mcp, era) as client:
        await client.list_tools()

    def describe_tools(tools: list[str]) -> str:
        """The user's replacement."""
        return "theirs"

    mcp.local_provider.remove_tool("describe_tools")
    mcp.tool(describe_tools)
    middleware.close()
    tool = await mcp.local_provider.get_tool("describe_tools")
    assert tool is not None and tool.description == "The user's replacement."
