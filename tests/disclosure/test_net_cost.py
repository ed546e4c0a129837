"""Never a silent net cost: what the middleware adds is small, and a server where it costs
more than it saves says so once, with the ``tokens`` command's figures (#26).

Every client of a progressive server is sent the bridge tool, the descriptions resource and
its template, the guidance prompt and the instructions paragraph once. A 4-tool server's
listing saved 107 tokens while these added 355 (448 with the bridge): its clients paid more
than without the middleware, and nothing said so.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.auth import require_scopes
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.cli.tokens import Tokens, token_report
from fastmcp_progressive.disclosure import cost
from fastmcp_progressive.disclosure.cost import NetCost
from tests.conftest import TOKENS, connect, serve_http
from tests.hosts.serve import demo_server
from tests.parts import parts
from tests.waiting import PATIENCE

pytest.importorskip("bpe_openai")

DEADLINE = PATIENCE  # the start-up check (a tokenizer load) on a loaded machine


def four_tools() -> FastMCP:
    mcp = FastMCP("four")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @mcp.tool
    def sub(a: int, b: int) -> int:
        """Subtract b from a."""
        return a - b

    @mcp.tool
    def mul(a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b

    @mcp.tool
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    mcp.add_middleware(ProgressiveDisclosure())
    return mcp


def ours(server: FastMCP) -> ProgressiveDisclosure:
    return next(m for m in server.middleware if isinstance(m, ProgressiveDisclosure))


def checked(net_cost: NetCost) -> None:
    """Wait (with a deadline) for the check the first listing started."""
    assert net_cost.done.wait(DEADLINE), "the start-up check did not finish"


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "costs each client" in r.getMessage()]


async def listed_twice(server: FastMCP) -> None:
    async with Client(server) as client:
        await client.list_tools()
    checked(parts(ours(server)).net_cost)
    async with Client(server) as client:
        await client.list_tools()


async def test_a_server_it_costs_more_than_it_saves_says_so_once_with_both_figures(
        caplog: pytest.LogCaptureFixture) -> None:
    server = four_tools()
    try:
        await listed_twice(server)
        report = await token_report(server, None, None, Tokens())
    finally:
        ours(server).close()
    listing, added = report["listing"], report["overhead"]
    assert listing["without"] - listing["with"] < sum(added.values())  # a real net cost
    [warning] = warnings_of(caplog)
    figures = parts(ours(server)).net_cost.cost
    assert figures is not None and figures.unit == "bytes" and figures.net < 0
    assert figures.summary() in warning  # in bytes; `tokens` prints o200k tokens
    assert f"instructions +{figures.added['instructions']}" in warning
    assert "With 4 tools, a plain listing is cheaper" in warning


async def test_a_server_it_saves_on_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    server = demo_server()
    try:
        await listed_twice(server)
    finally:
        ours(server).close()
    assert warnings_of(caplog) == []
    figures = parts(ours(server)).net_cost.cost
    assert figures is not None and figures.net > 0


async def test_the_check_loads_no_tokenizer(caplog: pytest.LogCaptureFixture,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The 4-tool server, whose sides are close: the check decides in bytes, and the
    server's process never loads o200k_base (about 140 MB resident) for a notice: with the
    tokenizer not importable it warns all the same."""
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # as if it were not installed
    server = four_tools()
    try:
        await listed_twice(server)
    finally:
        ours(server).close()
    assert not hasattr(cost, "encoder")  # #35: no tokenizer memo in the server's modules
    [warning] = warnings_of(caplog)
    assert " bytes (saves " in warning


async def test_the_whole_catalog_is_judged_not_the_first_callers_view(
        caplog: pytest.LogCaptureFixture) -> None:
    """62 tools, 60 of them behind component auth: the first caller may see 2, whose
    listing alone would cost more than it saves; the catalog is budgeted, so no notice."""
    server = FastMCP("many", auth=StaticTokenVerifier(tokens=TOKENS))
    for i in range(62):
        server.tool(lambda text: text, name=f"t{i:02d}", description=f"Tool {i}.",
                    auth=None if i < 2 else require_scopes("admin"))
    server.add_middleware(ProgressiveDisclosure())
    try:
        async with serve_http(server) as url, connect(url, "modern", token="alice-token") as c:
            assert len(await c.list_tools()) == 3  # t00, t01 and the bridge
        checked(parts(ours(server)).net_cost)
    finally:
        ours(server).close()
    assert warnings_of(caplog) == [] and parts(ours(server)).net_cost.cost is None


async def test_what_the_middleware_adds_is_small_and_names_the_bridge() -> None:
    """Measured in o200k tokens on the 4-tool server: bridge as listed 93 -> 65 (its two
    arguments marked ``nullable`` for smolagents: +7), resources/list
    202 -> 78, resources/templates/list 208 -> 43, prompts/list 43 -> 34, instructions
    110 -> 55. The bounds leave a few tokens for wording, not for a paragraph."""
    server = four_tools()
    try:
        async with Client(server) as client:
            tools = await client.list_tools()
            instructions = client.instructions or ""
        tokens = Tokens()
        report = await token_report(server, None, None, tokens)
    finally:
        ours(server).close()
    bridge = next(t for t in tools if t.name == "describe_tools")
    wire = json.dumps(bridge.model_dump(by_alias=True, exclude_none=True, mode="json"),
                      separators=(",", ":"))
    assert tokens.text(wire) <= 68
    assert "title" not in json.loads(wire) and "additionalProperties" not in wire
    added = report["overhead"]
    assert added["resources_list"] <= 80 and added["templates_list"] <= 50
    assert added["prompts_list"] <= 40 and added["instructions"] <= 60
    assert "describe_tools" in instructions  # hosts that pass it on rarely read resources
    assert "TOOL_DESCRIPTION_REQUIRED" in instructions


async def test_the_check_runs_once_off_the_loop_in_no_thread_of_ours(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """#35: the check ran in a daemon thread of its own; now the first listing awaits it in
    a worker thread (``anyio.to_thread``): done when that listing answers, counted once."""
    threads: list[str] = []  # one per measure
    real = cost.measure

    def spy(*args: Any) -> cost.Cost:
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(cost, "measure", spy)
    server = four_tools()
    middleware = ours(server)
    try:
        async with Client(server) as client:
            await client.list_tools()
            assert parts(middleware).net_cost.done.is_set()  # awaited by the first listing
            await client.list_tools()  # a second listing starts nothing
        [name] = threads  # measured once
        assert name != threading.current_thread().name and not name.startswith("fastmcp-")
        assert parts(middleware).net_cost.cost is not None
    finally:
        middleware.close()
