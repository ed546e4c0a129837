"""The tools test servers share, in one place: the three plain tools every test server has
(conftest and reliability use them), numbered tools for a large catalog, the tool hidden
from everyone but an admin, and a listing filter of a user's own that hides one of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.server.auth import require_scopes
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool

from fastmcp_progressive import ClientSettings

FILTERED_TOOL = "shout"
"""The tool ``ListFilter`` hides."""


def proxies_hide_nothing(**settings: Any) -> ClientSettings:
    """A backend whose operator says its FastMCP proxies hide nothing: its resolver asks
    the progressive level for FastMCP's client name, which a proxy is otherwise served in
    full under (``access/modes.py:is_fastmcp_proxy``). For tests of what crosses a proxy (reads,
    grants, backend sessions); the test clients connect under the MCP SDK's name."""
    return ClientSettings(
        level_resolver=lambda client: "progressive" if client.name in PROXY_NAMES else None,
        **settings)


PROXY_NAMES = ("fastmcp", "mcp")
"""The names a FastMCP proxy connects under: FastMCP's from 4.2, the MCP SDK's before."""


def add_basic_tools(mcp: FastMCP) -> None:
    """``add``, ``echo`` and ``shout``: small, typed, with multi-sentence descriptions."""

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers. Returns their sum as an integer."""
        return a + b

    @mcp.tool
    def echo(text: str, times: int = 1) -> str:
        """Repeat a text. Useful for checking connectivity."""
        return text * times

    @mcp.tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()


def add_numbered_tools(mcp: FastMCP, count: int, name: str, description: str) -> None:
    """``count`` argument-less tools named ``name.format(i)`` and described
    ``description.format(i)``: a large catalog of near-identical names."""
    for i in range(count):
        mcp.add_tool(Tool.from_function(lambda: "x", name=name.format(i),
                                        description=description.format(i)))


def add_admin_only_tool(mcp: FastMCP) -> None:
    """``wipe``, the hidden tool: only a token with the ``admin`` scope may see it (none of
    conftest's ``TOKENS`` has it), so to alice and bob it must answer like an unknown name."""

    @mcp.tool(auth=require_scopes("admin"))
    def wipe() -> str:
        """Delete everything."""
        return "wiped"


ADD_TYPED = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
"""``add`` at the default (``typed``) listing level: its arguments, no constraints."""
ADD_FULL_TEXT = "Add two integers. Returns their sum as an integer."
"""``add``'s registered description: what a full listing shows (a reduced one cuts it)."""
Q_TYPED = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
"""A ``(q: str)`` tool at the default listing level."""


class ListFilter(Middleware):
    """A listing filter in ``on_list_tools`` (a tenant or role filter of a user's own) that
    hides ``FILTERED_TOOL`` and counts the tools it is shown."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self.seen.append(len(tools))
        return [t for t in tools if t.name != FILTERED_TOOL]
