"""One pass per ``tools/call`` (#35): the middleware gathers the call's facts once and the
gate only decides on them.

Before #35 ``on_call_tool`` handed ``Gate.decide`` closures (``find``, ``recall``) that
called back into the middleware, and ``decide`` re-entered the lookup (a recalled tool
made it call itself again). Now:

- ``Gate.decide`` takes a frozen ``CallFacts`` (caller, name, the tool found or None,
  arguments, server facts) and looks nothing up: it runs here with plain facts and no
  middleware or server;
- each ``tools/call`` looks the called name up at most once in our middleware, so FastMCP's
  ``get_tool`` is asked for it once per call on every path the middleware answers (a
  refusal, ``describe_tools``, ``run_tool``) or runs on a grant held or a tool as last
  found, and at most twice (ours, then FastMCP's own call path) otherwise. An unknown name
  on a plain server was asked three times before (a second lookup of ours, meant for a
  proxy that refreshes its cache on a miss, ran on every server).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest
from fastmcp import FastMCP
from fastmcp.tools.base import Tool

from fastmcp_progressive import (
    ClientSettings,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import Caller, note_request
from fastmcp_progressive.access.gate import CallFacts, Found, Gate, ServerFacts
from fastmcp_progressive.files.store import Definitions
from tests.conftest import Era, build_server, clients, connect, fetch


def refund(order: int) -> str:
    """Refund one order."""
    return f"refunded {order}"


class Anchor:
    """A live connection: weakly referable, with the scratch ``state`` dict."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}


def _gate() -> Gate:
    return Gate(definitions=Definitions(None), clients=ClientSettings(host_profiles=()))


async def test_decide_takes_plain_facts_and_looks_nothing_up() -> None:
    """No middleware, no server: a session caller, the tool already found."""
    gate, anchor = _gate(), Anchor()
    caller = Caller(kind="session", era="legacy", key="s1", client_name="host", anchor=anchor)
    note_request(caller, "tools/list")  # a host that keeps its session
    tool = Tool.from_function(refund)
    facts = CallFacts(caller, "refund", Found(tool, "refund"), {"order": 7}, ServerFacts())
    assert not any(callable(getattr(facts, f.name)) for f in dataclasses.fields(facts))
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.name = "other"  # type: ignore[misc]

    refused = await gate.decide(facts)
    assert refused.outcome == "refuse"
    assert refused.definition is not None and refused.definition["name"] == "refund"
    assert (await gate.decide(facts)).outcome == "run"  # the refusal granted it
    assert gate.runs_unlooked(caller, "refund", ServerFacts())  # rule 0 from now on
    assert (await gate.decide(CallFacts(caller, "refund", held=True))).outcome == "run"
    unknown = CallFacts(caller, "nope", Found(None, "nope"), {}, ServerFacts())
    assert (await gate.decide(unknown)).outcome == "unknown"


async def test_a_recalled_tool_that_cannot_settle_a_call_asks_to_look_again() -> None:
    """The tool as last found lets a call go on, never refuses it: the gate asks the
    middleware for a fresh lookup instead of looking the tool up itself."""
    gate = _gate()
    anonymous = Caller(kind="anonymous", era="modern")
    tool = Tool.from_function(refund)
    fits = CallFacts(anonymous, "refund", Found(tool, "refund"), {"order": 7}, recalled=True)
    assert (await gate.decide(fits)).outcome == "run_checked"
    misfit = dataclasses.replace(fits, arguments={"order": "seven"})
    assert (await gate.decide(misfit)).outcome == "look_again"
    fresh = await gate.decide(dataclasses.replace(misfit, recalled=False))
    assert fresh.outcome == "refuse" and fresh.problem is not None


class Lookups:
    """FastMCP's ``get_tool`` on one server, counted per name."""

    def __init__(self, mcp: FastMCP, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: Counter[str] = Counter()
        original = mcp.get_tool

        async def spy(name: str, *args: Any, **kwargs: Any) -> Any:
            self.names[name] += 1
            return await original(name, *args, **kwargs)

        monkeypatch.setattr(mcp, "get_tool", spy)

    async def of(self, client: Any, name: str, arguments: dict[str, Any]) -> int:
        """How often ``name`` was looked up while one call of it was served."""
        self.names.clear()
        await client.call_tool(name, arguments, raise_on_error=False)
        return self.names[name]


CASES: dict[Era, dict[str, int]] = {
    "legacy": {"granted": 1, "refused": 1, "granted, arguments wrong": 1, "describe_tools": 1,
               "run_tool": 1, "unknown": 2, "pinned": 2},
    "modern": {"fits": 1, "does not fit": 1, "describe_tools": 1,
               "run_tool": 1, "unknown": 2, "pinned, first call": 1},
}
"""Lookups of the called name per call: 1 where our middleware answers or runs the call
without a lookup of its own; 2 (ours, then FastMCP's own call path) otherwise. A call
judged by its arguments reads the registered tool by key (``access/gate.py:registered``),
its first call too (2 before #35: a memo of the last lookup needed one to fill it)."""


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_tools_call_looks_its_tool_up_once(monkeypatch: pytest.MonkeyPatch,
                                                   era: Era) -> None:
    mcp = build_server(middleware=ProgressiveDisclosure(listing=ListingSettings(max_tools=3)))

    @mcp.tool(tags={"always_load"})
    def pinned(text: str) -> str:
        """Say a text back; never gated."""
        return text

    lookups = Lookups(mcp, monkeypatch)
    async with clients(mcp, "memory", era) as (client,):
        await fetch(client, "add")
        await client.call_tool("add", {"a": 1, "b": 2})
        if era == "legacy":
            counts = {
                "granted": await lookups.of(client, "add", {"a": 1, "b": 2}),
                "refused": await lookups.of(client, "echo", {"text": "x"}),
                "granted, arguments wrong": await lookups.of(client, "add", {"a": "x"}),
            }
        else:
            counts = {
                "fits": await lookups.of(client, "add", {"a": 1, "b": 2}),
                "does not fit": await lookups.of(client, "add", {"a": "x"}),
            }
        counts["describe_tools"] = await lookups.of(client, "describe_tools", {"tools": ["echo"]})
        counts["run_tool"] = await lookups.of(client, "run_tool", {"name": "add",
                                                                   "arguments": {"a": 1}})
        counts["unknown"] = await lookups.of(client, "nope", {})
        counts["pinned" if era == "legacy" else "pinned, first call"] = await lookups.of(
            client, "pinned", {"text": "x"})
    assert counts == CASES[era]


async def test_a_session_opened_by_its_call_is_judged_on_the_tool_as_registered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A host opening a handshake-era session per call: each call is judged by its
    arguments on the tool the server's own provider holds (FastMCP's own call path the one
    lookup), first call included; arguments that do not fit are refused on a fresh one."""
    mcp = build_server()
    lookups = Lookups(mcp, monkeypatch)
    counts, results = [], []
    for arguments in ({"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": "x"}):
        async with connect(mcp, "legacy") as client:  # a new session per call, its only request
            lookups.names.clear()
            results.append(await client.call_tool("add", arguments, raise_on_error=False))
            counts.append(lookups.names["add"])
    assert counts == [1, 1, 1]  # 2 before: ours (no tool as last found yet), then FastMCP's
    assert [r.data for r in results[:2]] == [3, 7]  # judged by their arguments: they ran
    error = results[2].structured_content["error"]  # refused on a fresh lookup (ours)
    assert error["code"] == "TOOL_DESCRIPTION_REQUIRED" and "invalid_arguments" in error
