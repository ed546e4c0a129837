"""The gate that teaches, and callers the server cannot follow (issue 9, behaviour 1, 2, 5).

- A refusal carries the tool's full definition and grants it to an identified caller, so
  call -> refused -> call again runs, in every host, without reading anything.
- Callers no grant can follow (2026-07-28 HTTP without auth, ``stateless_http=True``, a
  new session per tool call as LangChain's ``get_tools()`` opens) are judged by the call:
  arguments that fit the full schema run, others get the teaching refusal.
- Texts name the bridge tool first, the resource second.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.context import Context
from fastmcp.tools.base import ToolResult
from fastmcp.utilities.tests import temporary_settings

from fastmcp_progressive import (
    DESCRIPTIONS_URI,
    AddedComponents,
    ClientSettings,
)
from fastmcp_progressive.access.caller import identify
from fastmcp_progressive.disclosure.guidance import PROMPT_NAME
from fastmcp_progressive.fastmcp_internals import connection_state
from fastmcp_progressive.files import store
from fastmcp_progressive.payloads import instructions, resource_description
from tests.conftest import (
    ERAS,
    FOLLOWED_IN_MEMORY,
    TRANSPORTS,
    Era,
    Transport,
    build_server,
    clients,
    connect,
    fetch,
    gated,
    serve_http,
)
from tests.spies import count_calls, count_calls_everywhere

ALL = [(t, e) for t in TRANSPORTS for e in ERAS if t == "http" or e in FOLLOWED_IN_MEMORY]


def _refusal(result: Any) -> dict[str, Any]:
    assert result.is_error
    body = result.structured_content
    assert json.loads(result.content[0].text) == body  # text and structuredContent agree
    error: dict[str, Any] = body["error"]
    assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
    return error


# -- 1. a refusal teaches ------------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), ALL)
async def test_refusal_carries_the_definition_and_the_next_call_runs(
    transport: Transport, era: Era
) -> None:
    server = build_server(auth=transport == "http")  # modern HTTP callers need an identity
    tokens: list[str | None] = ["alice-token", "bob-token"] if transport == "http" else [None] * 2
    async with clients(server, transport, era, 2, tokens=tokens) as (c, reader):
        error = _refusal(await c.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False))
        assert error["resource_uri"] == f"{DESCRIPTIONS_URI}?tools=add"  # spec fields kept
        assert error["tool_call"] == {"name": "describe_tools", "arguments": {"tools": ["add"]}}
        assert set(error) == {"code", "message", "resource_uri", "tool_call", "definition"}
        assert error["definition"] == (await fetch(reader, "add"))["add"]  # what a read returns
        assert error["definition"]["inputSchema"]["required"] == ["a", "b"]

        assert (await c.call_tool("add", {"a": 1, "b": 2})).data == 3  # the refusal granted
        assert await gated(c, "echo", {"text": "x"})  # only the refused tool, nothing more


@pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)
async def test_refusal_names_the_bridge_first_and_copes_without_it(era: Era) -> None:
    async with clients(build_server(), "memory", era) as (c,):
        message = _refusal(await c.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False))[
            "message"
        ]
    assert message.index("describe_tools") < message.index("resource_uri")
    no_bridge = build_server(added=AddedComponents(bridge_tool=None))
    async with clients(no_bridge, "memory", era) as (c,):
        error = _refusal(await c.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False))
    assert "tool_call" not in error and "describe_tools" not in error["message"]
    assert error["definition"]["name"] == "add"


# -- 2. callers the server cannot follow -----------------------------------------------------
async def test_modern_http_without_auth_is_validated_not_open() -> None:
    async with serve_http(build_server()) as url, connect(url, "modern") as c:
        await c.list_tools()
        error = _refusal(await c.call_tool("add", {"a": 1}, raise_on_error=False))
        assert "'b' is a required property" in error["invalid_arguments"]
        assert error["definition"]["inputSchema"]["required"] == ["a", "b"]
        error = _refusal(await c.call_tool("add", {"a": 1, "b": "two"}, raise_on_error=False))
        assert error["invalid_arguments"].startswith("arguments.b:")
        assert (await c.call_tool("add", {"a": 1, "b": 2})).data == 3  # fits: runs at once
        assert (await c.call_tool("add", {"a": 2, "b": 2})).data == 4  # no grant needed


async def test_legacy_stateless_http_is_validated() -> None:
    with temporary_settings(stateless_http=True):
        async with serve_http(build_server()) as url:
            async with Client(StreamableHttpTransport(url), mode="legacy") as c:
                await c.list_tools()
                error = _refusal(await c.call_tool("echo", {"txt": "x"}, raise_on_error=False))
                assert "'text' is a required property" in error["invalid_arguments"]
                assert (await c.call_tool("echo", {"text": "x", "times": 2})).data == "xx"


@asynccontextmanager
async def _target(server: FastMCP, transport: Transport) -> AsyncIterator[FastMCP | str]:
    async with AsyncExitStack() as stack:
        if transport == "http":
            yield await stack.enter_async_context(serve_http(server))
        else:
            yield server


async def _one_call(target: FastMCP | str, era: Era, name: str, args: dict[str, Any]) -> Any:
    """One tool call in a brand-new session, as LangChain's ``get_tools()`` tools make it."""
    async with connect(target, era) as session:
        return await session.call_tool(name, args, raise_on_error=False)


@pytest.mark.parametrize(("transport", "era"), [("memory", "legacy"), ("http", "legacy"),
                                                ("memory", "modern")])
async def test_a_new_session_per_call_is_never_locked_out(transport: Transport, era: Era) -> None:
    async with _target(build_server(), transport) as target:
        # the model calls first, with guessed arguments: taught, not refused forever
        error = _refusal(await _one_call(target, era, "add", {"x": 1, "y": 2}))
        schema = error["definition"]["inputSchema"]
        assert schema["required"] == ["a", "b"]
        assert "invalid_arguments" in error
        # next step, next session: the arguments the definition taught run
        assert (await _one_call(target, era, "add", {"a": 1, "b": 2})).data == 3
        # a grant made through the bridge in its own session is gone, but valid calls run
        described = await _one_call(target, era, "describe_tools", {"tools": ["echo"]})
        assert not described.is_error
        assert (await _one_call(target, era, "echo", {"text": "hi"})).data == "hi"
        assert _refusal(await _one_call(target, era, "echo", {}))["invalid_arguments"]


@pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)
async def test_a_session_that_engages_first_keeps_the_spec_gate(era: Era) -> None:
    server = build_server()
    async with connect(server, era) as c:
        await c.list_resources()
        assert await gated(c)  # valid arguments, but this caller is followed: fetch first
        assert not await gated(c)  # ... and the refusal counted as the fetch
    async with connect(server, era) as c:
        await c.call_tool("describe_tools", {"tools": ["add"]})  # the bridge engages too
        assert not await gated(c)
        assert await gated(c, "echo", {"text": "x"})


async def test_per_call_sessions_follow_the_anonymous_policy() -> None:
    full = build_server(clients=ClientSettings(anonymous="full"))
    result = await _one_call(full, "legacy", "add", {"x": 1})
    assert "TOOL_DESCRIPTION_REQUIRED" not in str(result.structured_content)  # not gated
    shared = build_server(clients=ClientSettings(anonymous="shared"))
    assert _refusal(await _one_call(shared, "legacy", "add", {"a": 1, "b": 2}))
    assert (await _one_call(shared, "legacy", "add", {"a": 1, "b": 2})).data == 3  # shared set


async def test_first_request_mark_lives_on_the_connection() -> None:
    """``connection_state`` reads the legacy connection's scratch dict (FastMCP internals)."""
    seen: list[dict[str, Any] | None] = []
    server = build_server()

    @server.tool
    def probe(ctx: Context) -> str:
        seen.append(connection_state(identify(ctx).anchor))
        return "ok"

    async with connect(server, "legacy") as c:
        await c.list_tools()
        await c.call_tool("describe_tools", {"tools": ["probe"]})
        await c.call_tool("probe", {})
    assert isinstance(seen[0], dict)
    assert seen[0]["fastmcp_progressive.first_request"] == "other"
    assert connection_state(object()) is None


# -- 5. texts name the bridge first ----------------------------------------------------------
def _bridge_before_resource(text: str) -> bool:
    return text.index("describe_tools") < text.index(f"{DESCRIPTIONS_URI}?tools=")


@pytest.mark.parametrize(("transport", "era"), ALL)
async def test_texts_name_the_bridge_first(transport: Transport, era: Era) -> None:
    async with _target(build_server(), transport) as target, connect(target, era) as c:
        assert c.instructions is not None
        assert _bridge_before_resource(c.instructions)
        resource = next(r for r in await c.list_resources() if r.name == "tool_descriptions")
        assert _bridge_before_resource(resource.description or "")
        prompt = await c.get_prompt(PROMPT_NAME)
        assert _bridge_before_resource(prompt.messages[0].content.text)  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_texts_without_the_bridge_name_only_the_resource(era: Era) -> None:
    async with connect(build_server(added=AddedComponents(bridge_tool=None)), era) as c:
        assert c.instructions is not None
        assert "describe_tools" not in c.instructions
        assert f"{DESCRIPTIONS_URI}?tools=" in c.instructions
        resource = next(r for r in await c.list_resources() if r.name == "tool_descriptions")
        assert "describe_tools" not in (resource.description or "")


@pytest.mark.parametrize("make", [instructions, resource_description])
def test_text_builders_take_a_renamed_bridge(make: Callable[[str | None], str]) -> None:
    text = make("learn_tools")
    assert text.index("learn_tools") < text.index(f"{DESCRIPTIONS_URI}?tools=")


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_housekeeping_requests_do_not_count_as_engaging(transport: Transport) -> None:
    # handshake era only: 2026-07-28 has neither ping nor logging/setLevel
    async with _target(build_server(), transport) as target, connect(target, "legacy") as c:
        await c.ping()
        await c.set_logging_level("info")
        assert (await c.call_tool("add", {"a": 1, "b": 2})).data == 3  # one-call: checked


@pytest.mark.parametrize("era", FOLLOWED_IN_MEMORY)
async def test_a_refusal_writes_its_json_once(monkeypatch: pytest.MonkeyPatch, era: Era) -> None:
    """A refusal's CPU (#35: at most 1.5x plain's call): its body is written to JSON once,
    as its own text; the definition inside is not written on its own beforehand (a read
    needs that text, a refusal never does), nor is the body written to JSON and parsed
    back by ``ToolResult(...)`` (its guard for a tool's return value: ours is JSON values)."""
    server = build_server()
    async with clients(server, "memory", era) as (c,):
        written = count_calls_everywhere(monkeypatch, store, "compact_json")
        results = count_calls(monkeypatch, ToolResult, "__init__")
        refusal = await c.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False)
        counts = (written.count, results.count)
        assert _refusal(refusal)["definition"] == (await fetch(c, "add"))["add"]
    assert counts == (1, 0)
