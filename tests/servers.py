"""The tools test servers share, in one place: the three plain tools every test server has
(conftest and reliability use them) and the tool hidden from everyone but an admin."""

from __future__ import annotations

from fastmcp import FastMCP
from fastmcp.server.auth import require_scopes


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
