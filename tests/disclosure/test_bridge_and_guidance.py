"""The bridge tool for hosts that cannot read resources, the advertised extension, guidance."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.context import Context
from fastmcp.tools.base import Tool, ToolResult
from mcp.client.extension import advertise

from fastmcp_progressive import (
    DESCRIPTIONS_URI,
    EXTENSION_ID,
    AddedComponents,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.disclosure.bridge import bridge_tool, dispatch_tool
from fastmcp_progressive.disclosure.guidance import (
    PROMPT_NAME,
    SYSTEM_PROMPT,
    agent_guidance,
    system_prompt,
)
from fastmcp_progressive.payloads import is_descriptions_uri
from tests.conftest import (
    ERAS,
    FOLLOWED_IN_MEMORY,
    Era,
    answer_of,
    build_server,
    clients,
    connect,
    gated,
)
from tests.parts import parts

TRANSPORT_ERA = [(t, e) for t in ("memory", "http") for e in ERAS
                 if t == "http" or e in FOLLOWED_IN_MEMORY]


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_client_that_never_reads_resources_uses_the_bridge(transport: Any, era: Era) -> None:
    server = build_server(auth=transport == "http")
    token = ["alice-token"] if transport == "http" else None
    async with clients(server, transport, era, tokens=token) as (c,):
        refused = await c.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False)
        hint = refused.structured_content["error"]["tool_call"]  # type: ignore[index]
        assert hint == {"name": "describe_tools", "arguments": {"tools": ["add"]}}
        described = await c.call_tool(hint["name"], hint["arguments"])
        assert described.structured_content is None  # the JSON once, as text
        assert answer_of(described)["add"]["inputSchema"]["required"] == ["a", "b"]
        assert (await c.call_tool("add", {"a": 1, "b": 2})).data == 3
        assert await gated(c, "echo", {"text": "x"})


async def test_bridge_bad_arguments_and_unknown_names() -> None:
    async with connect(build_server(), "modern") as c:
        empty = await c.call_tool("describe_tools", {"tools": []}, raise_on_error=False)
        assert empty.is_error
        assert empty.structured_content["error"]["code"] == "MISSING_TOOL_SELECTION"  # type: ignore[index]
        wrong = await c.call_tool("describe_tools", {"tools": 7}, raise_on_error=False)
        assert wrong.structured_content["error"]["code"] == "MISSING_TOOL_SELECTION"  # type: ignore[index]
        text = answer_of(await c.call_tool("describe_tools", {"tools": "add, nope"}))
        assert set(text) == {"add", "nope"}
        assert text["nope"]["error"] == "Tool 'nope' not found"
        names = [f"x{i}" for i in range(100)]
        many = await c.call_tool("describe_tools", {"tools": names}, raise_on_error=False)
        assert many.structured_content["error"]["code"] == "TOO_MANY_TOOLS"  # type: ignore[index]


async def test_bridge_can_be_turned_off() -> None:
    async with connect(build_server(added=AddedComponents(bridge_tool=None)), "legacy") as c:
        await c.list_tools()
        assert "describe_tools" not in [t.name for t in await c.list_tools()]
        refused = await c.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False)
        assert "tool_call" not in refused.structured_content["error"]  # type: ignore[index]


@pytest.mark.parametrize("era", ERAS)
async def test_server_advertises_the_extension(era: Era) -> None:
    async with connect(build_server(), era) as c:
        capabilities = c.server_capabilities
        assert capabilities is not None
        settings = (capabilities.extensions or {})[EXTENSION_ID]
    assert settings == {"resource": DESCRIPTIONS_URI, "listing": "typed",
                        "bridge_tool": "describe_tools"}


@pytest.mark.parametrize("era", ERAS)
async def test_guidance_helper_and_prompt(era: Era) -> None:
    async with connect(build_server(), era) as c:
        text = agent_guidance(await c.list_tools(), await c.list_resources())
        prompts = [p.name for p in await c.list_prompts()]
        served = await c.get_prompt(PROMPT_NAME)
    assert text == system_prompt("describe_tools")
    assert f"{DESCRIPTIONS_URI}?tools=TOOL_NAME" in text
    assert "describe_tools" in text
    assert PROMPT_NAME in prompts
    assert served.messages[0].content.text == text  # type: ignore[union-attr]


async def test_guidance_helper_says_nothing_for_other_servers() -> None:
    server = build_server()
    full = advertise(EXTENSION_ID, {"mode": "full"})
    async with Client(server, extensions=[full]) as c:
        tools = await c.list_tools()
    assert agent_guidance(tools, []) is None
    assert agent_guidance(tools, [{"uri": "file:///x"}]) is None
    assert agent_guidance([], [{"uri": DESCRIPTIONS_URI}]) == system_prompt(None)


def test_exported_system_prompt_is_ready_to_use() -> None:
    """The constant is finished text (no placeholder left to fill) naming the default
    bridge tool; ``system_prompt`` still fills in another bridge name, or none."""
    assert re.findall(r"\{\w+\}", SYSTEM_PROMPT) == []  # no {bridge}-style placeholder
    assert 'call describe_tools with {"tools": ["TOOL_NAME"]}' in SYSTEM_PROMPT
    assert 'describe_tools with {"query": "what you need"}' in SYSTEM_PROMPT
    assert system_prompt("describe_tools") == SYSTEM_PROMPT
    custom = system_prompt("kid_describe_tools")
    assert 'call kid_describe_tools with {"tools"' in custom and "describe_tools with" in custom
    assert re.findall(r"\{\w+\}", custom) == []
    without = system_prompt(None)
    assert "describe_tools" not in without and re.findall(r"\{\w+\}", without) == []
    assert "?tools=TOOL_NAME" in without


def test_guidance_prompt_can_be_turned_off() -> None:
    assert parts(ProgressiveDisclosure(added=AddedComponents(guidance_prompt=False))
                 ).components.prompt is None


async def test_a_tool_named_error_is_described_not_mistaken_for_an_error_body() -> None:
    server = build_server()

    @server.tool
    def error(message: str) -> str:
        """Record an error message."""
        return message

    async with connect(server, "modern") as c:
        via_bridge = await c.call_tool("describe_tools", {"tools": ["error"]})
        assert not via_bridge.is_error
        assert answer_of(via_bridge)["error"]["name"] == "error"
        assert (await c.call_tool("error", {"message": "m"})).data == "m"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_instructions_false_still_advertises_the_extension(era: str) -> None:
    from fastmcp_progressive import EXTENSION_ID
    from fastmcp_progressive.payloads import BRIDGE_TOOL_NAME, instructions

    server = FastMCP("t", instructions="Own words.")
    server.add_middleware(ProgressiveDisclosure(added=AddedComponents(instructions=False)))
    async with connect(server, era) as c:  # type: ignore[arg-type]
        capabilities = c.server_capabilities
        assert capabilities is not None
        assert EXTENSION_ID in (capabilities.extensions or {})
        assert c.instructions == "Own words."
        assert instructions(BRIDGE_TOOL_NAME) not in c.instructions


LONG = "t" * 300


async def test_names_longer_than_256_characters_can_be_unlocked_through_the_bridge() -> None:
    server = build_server()
    server.add_tool(Tool.from_function(lambda: "long", name=LONG, description="Long name."))
    async with connect(server, "legacy") as c:
        assert LONG in [t.name for t in await c.list_tools()]
        body = answer_of(await c.call_tool("describe_tools", {"tools": [LONG]}))
        assert body[LONG]["name"] == LONG
        assert not await gated(c, LONG, {})


def test_guidance_recognises_the_resource_by_every_address_a_read_accepts() -> None:
    for uri in ("resource:///tool_descriptions", "resource:///tool_descriptions/",
                "resource://tool_descriptions", "resource:///tool_descriptions#top",
                "resource:///tool_descriptions?tools=a"):
        assert is_descriptions_uri(uri)
        assert agent_guidance([], [{"uri": uri}]) == system_prompt(None), uri
    assert agent_guidance([], [{"uri": "resource:///tool_descriptionsx"}]) is None


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_bridge_answers_carry_their_json_once_as_text(transport: Any, era: Era) -> None:
    """A host that shows the model the whole ``CallToolResult`` (LlamaIndex's
    ``MCPToolSpec`` shows its ``str()``) would pay for a body in structuredContent twice:
    describe_tools' answers (names, a query, groups) are their JSON text alone. Refusals
    keep structuredContent, the same JSON; run_tool passes the tool's own result through."""
    server = build_server(auth=transport == "http", listing=ListingSettings(max_tools=3))
    token = ["alice-token"] if transport == "http" else None
    async with clients(server, transport, era, tokens=token) as (c,):
        for arguments in ({"tools": ["add"]}, {"query": "add two integers"},
                          {"groups": ["misc"]}, {"tools": ["add"], "groups": ["misc"]}):
            answer = await c.call_tool("describe_tools", arguments)
            assert answer.structured_content is None, arguments
            assert [block.type for block in answer.content] == ["text"]
            assert answer_of(answer) == json.loads(answer.content[0].text)  # type: ignore[union-attr]
        assert "add" in answer_of(answer)["tools"]
        refused = await c.call_tool("describe_tools", {"tools": []}, raise_on_error=False)
        assert refused.is_error and refused.structured_content == answer_of(refused)
        ran = await c.call_tool("run_tool", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert ran.structured_content == {"result": 3}


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
@pytest.mark.parametrize("capped", [False, True])
async def test_bridge_arguments_can_be_left_out_or_null(transport: Any, era: Era,
                                                        capped: bool) -> None:
    """smolagents sends no call that leaves out a listed argument not marked ``nullable``
    (``smolagents/tools.py:1404-1407``): every optional bridge argument is listed so, with
    one plain ``type`` (a type list breaks Semantic Kernel, AutoGen and DSPy); a call that
    leaves them out or sends ``null`` for them is answered."""
    listing = ListingSettings(max_tools=3 if capped else None)
    server = build_server(auth=transport == "http", listing=listing)
    token = ["alice-token"] if transport == "http" else None
    async with clients(server, transport, era, tokens=token) as (c,):
        listed = {t.name: t.input_schema for t in await c.list_tools()}
        schema = listed["describe_tools"]  # no groups here: no groups argument (#33)
        expected = ["tools", "query", "queries"] if capped else ["tools", "query"]
        assert list(schema["properties"]) == expected and "required" not in schema
        for spec in schema["properties"].values():
            assert spec["nullable"] is True and isinstance(spec["type"], str)
            assert "default" not in spec and "anyOf" not in spec
        if capped:
            run = listed["run_tool"]
            assert run["required"] == ["name"] and "nullable" not in run["properties"]["name"]
            assert run["properties"]["arguments"] == {
                "type": "object", "additionalProperties": True, "nullable": True}
        for arguments in ({"query": "add two integers"},
                          {"query": "add two integers", "tools": None, "groups": None}):
            found = await c.call_tool("describe_tools", arguments)
            assert "add" in answer_of(found)["tools"]
        named = await c.call_tool("describe_tools", {"tools": ["add"], "query": None})
        assert set(answer_of(named)) == {"add"}


async def test_bridge_tools_themselves_accept_null_for_optional_arguments() -> None:
    """FastMCP validates a call that reaches a bridge's own body against its registered
    signature: ``null`` must pass there too, and reach the answer as left out."""
    seen: list[dict[str, Any] | None] = []

    async def answer(ctx: Any, arguments: dict[str, Any] | None) -> ToolResult:
        seen.append(arguments)
        return ToolResult(content=[])

    server = FastMCP("bridges")
    async with Context(server):
        await bridge_tool("describe_tools", answer).run({"tools": None, "groups": None,
                                                          "query": "add"})
        await dispatch_tool("run_tool", answer).run({"name": "add", "arguments": None})
    assert seen == [{"query": "add"}, {"name": "add", "arguments": {}}]
