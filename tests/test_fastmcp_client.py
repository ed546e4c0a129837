"""FastMCP's own ``Client`` on a budgeted server: typed results, no extra listing (#33).

FastMCP's ``Client`` types ``result.data`` by the ``outputSchema`` of the tool in its last
listing, and lists again before parsing when the called name is not in it (so does the MCP
SDK's ``ClientSession.validate_tool_result``). Above 50 tools a progressive listing holds
20 entries and drops ``outputSchema``: a tool outside them came back untyped
(``'2026-01-05'`` for a ``datetime.date``) and every call of it carried a ``tools/list``.
The host profile ``fastmcp`` (``hosts.py``) lists such a client every tool with its output
schema. Driven as FastMCP's ``Client`` introduces itself (``clientInfo`` ``fastmcp``), in
memory, over streamable HTTP, over stdio and through a FastMCP proxy, both protocol eras:
the same ``result.data`` as from the plain server, and the same number of ``tools/list``
requests (every client session of the process counted, a proxy's backend sessions too).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy
from mcp.client.session import ClientSession

from fastmcp_progressive.access.modes import profile_for
from fastmcp_progressive.hosts import BUDGET, HOST_PROFILES
from tests.conftest import ERAS, TRANSPORT_ERA, Era, Transport, served
from tests.spies import Calls, count_calls
from tests.typed_server import NUMBERED, SPANS, WHEN, typed_catalog

ROOT = Path(__file__).resolve().parents[1]

Reach = Callable[[bool], AbstractAsyncContextManager[Client[Any]]]
"""Opens FastMCP's default ``Client`` on the catalog (True: with the middleware)."""


def mode(era: Era) -> str:
    return "legacy" if era == "legacy" else "auto"


async def typed_calls(client: Client[Any]) -> list[Any]:
    """The issue's calls: ``when`` twice and ``spans`` (a list on the wire) once, by name,
    with no listing first (as an app that knows its tools does)."""
    return [(await client.call_tool("when", {})).data,
            (await client.call_tool("when", {"days": 0})).data,
            (await client.call_tool("spans", {})).data]


async def compare(reach: Reach, lists: Calls, *, bridges: int = 1) -> None:
    """The budgeted server answers as the plain one: same data, same listings (with
    ``bridges`` of ours listed: none to a client served in full)."""
    async with reach(False) as plain:
        plain_data = await typed_calls(plain)
    plain_lists, lists.count = lists.count, 0
    async with reach(True) as budgeted:
        data = await typed_calls(budgeted)
        budgeted_lists = lists.count
        listed = {t.name: t for t in await budgeted.list_tools()}
    assert plain_data[:2] == [WHEN, WHEN] and sorted(plain_data[2]) == sorted(SPANS)
    assert data == plain_data
    assert budgeted_lists == plain_lists
    assert len(listed) == NUMBERED + 2 + bridges > BUDGET  # every tool, and the bridge
    assert listed["when"].output_schema is not None
    assert listed["when"].output_schema == next(
        t for t in await typed_catalog(progressive=False).list_tools()
        if t.name == "when").output_schema


@pytest.fixture
def lists(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Every ``tools/list`` a client session of this process sends."""
    return count_calls(monkeypatch, ClientSession, "list_tools")


def test_fastmcp_clients_get_every_tool_with_its_output_schema() -> None:
    """The shipped row: FastMCP's default client name (its CLI over stdio matches the row
    before it, which also lists every tool with its output schema)."""
    for transport in ("stdio", None):
        facts = _Facts(transport)
        row = profile_for(HOST_PROFILES, facts)
        assert row is not None and row.name == "fastmcp"
        assert row.max_tools is None and row.output_schema


@pytest.mark.asyncio
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_typed_results_as_from_the_plain_server(
        transport: Transport, era: Era, lists: Calls) -> None:
    """In memory and over streamable HTTP: ``when`` is a ``date``, ``spans`` a ``set``,
    and no call carries a ``tools/list`` the plain server's client does not send."""
    @asynccontextmanager
    async def reach(progressive: bool) -> AsyncIterator[Client[Any]]:
        async with served(typed_catalog(progressive=progressive), transport) as target, \
                Client(target, mode=mode(era)) as client:
            yield client

    await compare(reach, lists)


@pytest.mark.asyncio
@pytest.mark.parametrize("era", ERAS)
async def test_typed_results_through_a_fastmcp_proxy(era: Era, lists: Calls) -> None:
    """``create_proxy`` in front: its backend client is FastMCP's too (a new session per
    request), recognised as a proxy and served in full; the proxy's own client gets the
    plain server's typed results."""
    @asynccontextmanager
    async def reach(progressive: bool) -> AsyncIterator[Client[Any]]:
        proxy: FastMCP[Any] = create_proxy(typed_catalog(progressive=progressive))
        async with Client(proxy, mode=mode(era)) as client:
            yield client

    await compare(reach, lists, bridges=0)


@pytest.mark.slow  # a server process per client
@pytest.mark.asyncio
@pytest.mark.parametrize("era", ERAS)
async def test_typed_results_over_stdio(era: Era, lists: Calls) -> None:
    @asynccontextmanager
    async def reach(progressive: bool) -> AsyncIterator[Client[Any]]:
        args = ["-m", "tests.typed_server", *([] if progressive else ["--plain"])]
        transport = StdioTransport(command=sys.executable, args=args, cwd=str(ROOT),
                                   env={"FASTMCP_LOG_LEVEL": "WARNING"})
        async with Client(transport, mode=mode(era), init_timeout=120) as client:
            yield client

    await compare(reach, lists)


class _Facts:
    """FastMCP's default ``clientInfo``, over ``channel`` (``"stdio"`` or in memory)."""

    def __init__(self, channel: str | None) -> None:
        self.client_name, self.client_version, self.era = "fastmcp", "4.2.3", "legacy"
        self.capabilities = frozenset({"elicitation"} if channel else ())
        self.channel = channel
        self.transport = "stdio" if channel else "duplex"
