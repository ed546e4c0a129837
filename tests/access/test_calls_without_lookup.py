"""Calls without a lookup of ours (#26): a followable caller's call of a tool it was
granted, and a call judged by its arguments against the tool as last found, run on
FastMCP's own lookup; FastMCP's call path still decides what exists and what it may see.

FastMCP's lookup of one name scans its catalog (about 0.1 ms at 1,000 tools); before #26
a granted call paid it twice, ours then FastMCP's. Now the gate runs a grant this process
holds without asking (``access/gate.py``, rule 0), so:

- a granted call asks FastMCP's ``get_tool`` once (its own call path), a refused one more;
- a granted tool hidden afterwards (``mcp.disable``, its component ``auth``) or removed
  answers FastMCP's "Unknown tool" and its body never runs, for every caller kind that
  keeps grants: a handshake-era session in memory and over HTTP, a principal (2026-07-28
  with a token) over HTTP;
- a caller judged by its arguments (2026-07-28 without auth) has them checked against the
  tool the server's own provider holds under its name, read by key without a scan
  (``access/gate.py:registered``): a tool replaced is judged anew, one hidden or removed
  answers "Unknown tool", and a refusal's definition always comes from a fresh lookup;
- a read never grants our own bridges (a server-wide transform may list them under other
  names), so the dispatch bridge never runs as a granted tool passing its inner call
  unchecked: a call of it is still answered by us.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.auth import AuthContext
from fastmcp.server.transforms import Namespace

from fastmcp_progressive import ListingSettings, ProgressiveDisclosure
from tests.conftest import Era, Transport, build_server, clients, fetch, gated
from tests.spies import count_calls

FOLLOWED: list[tuple[Transport, Era, str | None]] = [
    ("memory", "legacy", None),
    ("http", "legacy", None),
    ("http", "modern", "alice-token"),
]
"""Callers that keep grants: a session in memory and over HTTP, a principal over HTTP."""


class Switch:
    """A component ``auth`` check the test turns off: the tool disappears for everyone."""

    def __init__(self) -> None:
        self.allowed = True

    def __call__(self, context: AuthContext) -> bool:
        return self.allowed


def _server(switch: Switch, runs: list[str], token: str | None) -> FastMCP:
    mcp = build_server(auth=token is not None)

    @mcp.tool(auth=switch)
    def guarded(text: str) -> str:
        """Say a text back, while the switch allows it."""
        runs.append(text)
        return text

    return mcp


@asynccontextmanager
async def _granted(mcp: FastMCP, transport: Transport, era: Era, token: str | None,
                   *names: str) -> AsyncIterator[Client[Any]]:
    """A client of ``mcp`` that has read ``names`` (so it holds their grants)."""
    async with clients(mcp, transport, era, tokens=[token]) as (client,):
        body = await fetch(client, *names)
        assert all("inputSchema" in body[name] for name in names), body
        yield client


def _unknown(result: Any, name: str) -> bool:
    return result.is_error and f"Unknown tool: {name!r}" in result.content[0].text


@pytest.mark.parametrize(("transport", "era", "token"), FOLLOWED)
async def test_a_granted_call_asks_fastmcp_for_its_tool_once(
        monkeypatch: pytest.MonkeyPatch, transport: Transport, era: Era, token: str | None
) -> None:
    mcp = build_server(auth=token is not None)
    async with _granted(mcp, transport, era, token, "add") as client:
        lookups = count_calls(monkeypatch, mcp, "get_tool")
        assert not await gated(client, "add")
        assert lookups.count == 1  # FastMCP's own call path; before #26 ours came first
        lookups.count = 0
        assert await gated(client, "echo", {"text": "x"})  # not granted: the gate looks
        assert lookups.count == 1  # it up (FastMCP's call path never runs for a refusal)


@pytest.mark.parametrize(("transport", "era", "token"), FOLLOWED)
async def test_a_granted_tool_disabled_afterwards_does_not_run(
        transport: Transport, era: Era, token: str | None) -> None:
    switch, runs = Switch(), []
    mcp = _server(switch, runs, token)
    async with _granted(mcp, transport, era, token, "guarded") as client:
        assert (await client.call_tool("guarded", {"text": "one"})).data == "one"
        mcp.disable(names={"guarded"})
        result = await client.call_tool("guarded", {"text": "two"}, raise_on_error=False)
        assert _unknown(result, "guarded")
        assert runs == ["one"]


@pytest.mark.parametrize(("transport", "era", "token"), FOLLOWED)
async def test_a_granted_tool_its_auth_hides_afterwards_does_not_run(
        transport: Transport, era: Era, token: str | None) -> None:
    switch, runs = Switch(), []
    mcp = _server(switch, runs, token)
    async with _granted(mcp, transport, era, token, "guarded") as client:
        switch.allowed = False
        result = await client.call_tool("guarded", {"text": "two"}, raise_on_error=False)
        assert _unknown(result, "guarded")
        assert runs == []


@pytest.mark.parametrize(("transport", "era", "token"), FOLLOWED)
async def test_a_granted_tool_removed_afterwards_answers_unknown(
        transport: Transport, era: Era, token: str | None) -> None:
    switch, runs = Switch(), []
    mcp = _server(switch, runs, token)
    async with _granted(mcp, transport, era, token, "guarded") as client:
        mcp.local_provider.remove_tool("guarded")
        result = await client.call_tool("guarded", {"text": "two"}, raise_on_error=False)
        assert _unknown(result, "guarded")
        assert runs == []


@pytest.mark.parametrize(("transport", "era", "token"), FOLLOWED)
async def test_a_grant_is_the_callers_own(transport: Transport, era: Era,
                                          token: str | None) -> None:
    """Another caller of the same kind is still refused: a grant held by one never runs
    another's call (bob has a token of his own over HTTP)."""
    mcp = build_server(auth=token is not None)
    other = "bob-token" if token else None
    async with clients(mcp, transport, era, 2, tokens=[token, other]) as (alice, bob):
        await fetch(alice, "add")
        assert not await gated(alice, "add")
        assert await gated(bob, "add")


@pytest.mark.parametrize(("transport", "era", "token"), FOLLOWED)
async def test_a_read_never_grants_our_bridges(transport: Transport, era: Era,
                                               token: str | None) -> None:
    """Under a server-wide ``Namespace`` our dispatch bridge answers as ``ns_run_tool``, a
    name that is not its own. A read describes it and grants nothing: were it granted, the
    call would run it as a plain tool and its inner call of ``ns_echo`` would pass as
    nested, unread. It is answered by us, and ``ns_echo`` is still refused."""
    middleware = ProgressiveDisclosure(listing=ListingSettings(max_tools=3))
    mcp = build_server(auth=token is not None, middleware=middleware)
    mcp.add_transform(Namespace("ns"))
    async with _granted(mcp, transport, era, token, "ns_run_tool", "ns_describe_tools") as client:
        result = await client.call_tool("ns_run_tool", {"name": "ns_echo",
                                                        "arguments": {"text": "hi"}},
                                        raise_on_error=False)
        assert result.is_error, result.content
        assert result.structured_content["error"]["code"] == "TOOL_DESCRIPTION_REQUIRED"


# -- callers judged by their arguments: the tool as last found, while it still is ----------
JUDGED: list[tuple[Transport, Era]] = [("memory", "modern"), ("http", "modern")]
"""2026-07-28 without auth: every call judged by its arguments (``anonymous="validate"``)."""


@pytest.mark.parametrize(("transport", "era"), JUDGED)
async def test_a_judged_call_asks_fastmcp_for_its_tool_once_after_the_first(
        monkeypatch: pytest.MonkeyPatch, transport: Transport, era: Era) -> None:
    mcp = build_server()
    async with clients(mcp, transport, era) as (client,):
        assert not await gated(client, "add")  # the first call looks it up: kept
        lookups = count_calls(monkeypatch, mcp, "get_tool")
        assert not await gated(client, "add")
        assert lookups.count == 1  # FastMCP's own call path; before #26 ours came first
        lookups.count = 0
        assert await gated(client, "add", {"a": "not a number", "b": 2})
        assert lookups.count == 1  # a refusal hands the definition over: looked up afresh


@pytest.mark.parametrize(("transport", "era"), JUDGED)
async def test_a_judged_call_of_a_tool_replaced_is_judged_by_the_new_one(
        transport: Transport, era: Era) -> None:
    """``add`` replaced by one taking ``x``: arguments that fit the old one are refused
    with the new definition (the kept tool is no longer the one registered)."""
    mcp = build_server()
    async with clients(mcp, transport, era) as (client,):
        assert not await gated(client, "add")
        mcp.local_provider.remove_tool("add")

        @mcp.tool
        def add(x: int) -> int:
            """Add one."""
            return x + 1

        result = await client.call_tool("add", {"a": 1, "b": 2}, raise_on_error=False)
        error = result.structured_content["error"]
        assert error["code"] == "TOOL_DESCRIPTION_REQUIRED"
        assert set(error["definition"]["inputSchema"]["properties"]) == {"x"}
        assert (await client.call_tool("add", {"x": 1})).data == 2


@pytest.mark.parametrize(("transport", "era"), JUDGED)
async def test_a_judged_call_of_a_tool_hidden_afterwards_does_not_run(
        transport: Transport, era: Era) -> None:
    """Kept or not, a tool disabled, hidden by its ``auth`` or removed answers FastMCP's
    "Unknown tool", and arguments that do not fit it hand over no definition."""
    switch, runs = Switch(), []
    mcp = _server(switch, runs, None)
    async with clients(mcp, transport, era) as (client,):
        assert (await client.call_tool("guarded", {"text": "one"})).data == "one"
        switch.allowed = False
        for arguments in ({"text": "two"}, {}):
            result = await client.call_tool("guarded", arguments, raise_on_error=False)
            assert _unknown(result, "guarded"), result.content
        switch.allowed = True
        mcp.disable(names={"guarded"})
        for arguments in ({"text": "three"}, {}):
            result = await client.call_tool("guarded", arguments, raise_on_error=False)
            assert _unknown(result, "guarded"), result.content
        mcp.local_provider.remove_tool("guarded")
        result = await client.call_tool("guarded", {"text": "four"}, raise_on_error=False)
        assert _unknown(result, "guarded")
        assert runs == ["one"]
