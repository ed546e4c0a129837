"""The server the reliability tests run, in process or as a replica subprocess.

``make_server`` builds a FastMCP app with bearer-token auth (``StaticTokenVerifier``) and
``ProgressiveDisclosure`` on, with:

- ``add``, ``echo``, ``shout``: plain tools (the same as ``tests/conftest.py``);
- ``t00`` .. ``tNN`` (``tools=N``): ``tNN(x) -> x + NN``, one per load-test client;
- ``hidden=True``: tools a caller must never learn about: ``secret_disabled``
  (``mcp.disable``), ``internal_ops`` (tag hidden by a ``Visibility`` transform),
  ``admin_wipe`` (component auth, scope ``admin``) and ``beta`` (hidden, unlocked per
  session by the ``unlock_beta`` tool through ``ctx.enable_components``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from fastmcp import Context, FastMCP
from fastmcp.server.auth import require_scopes
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.transforms import Visibility

from fastmcp_progressive import ProgressiveDisclosure
from tests.servers import add_basic_tools

USERS = 64
TOKENS: dict[str, dict[str, Any]] = {
    "alice-token": {"client_id": "agent", "sub": "alice", "scopes": []},
    "bob-token": {"client_id": "agent", "sub": "bob", "scopes": []},
    "admin-token": {"client_id": "agent", "sub": "root", "scopes": ["admin"]},
    **{f"user-{i}-token": {"client_id": "agent", "sub": f"user{i}", "scopes": []}
       for i in range(USERS)},
}
HIDDEN_TOOLS = ("secret_disabled", "internal_ops", "admin_wipe", "beta")


def numbered_tool(i: int) -> Callable[[int], int]:
    def tool(x: int) -> int:
        return x + i

    tool.__name__ = f"t{i:02d}"
    tool.__doc__ = f"Add {i} to x. Numbered tool {i} of the load test."
    return tool


def make_server(
    *,
    descriptions_dir: str | os.PathLike[str] | None = None,
    tools: int = 0,
    hidden: bool = False,
    auth: bool = True,
    middleware: ProgressiveDisclosure | None = None,
    **options: Any,
) -> FastMCP:
    mcp = FastMCP("reliability", auth=StaticTokenVerifier(tokens=TOKENS) if auth else None)

    add_basic_tools(mcp)

    for i in range(tools):
        mcp.tool(numbered_tool(i))

    if hidden:
        _add_hidden_tools(mcp)

    mcp.add_middleware(
        middleware or ProgressiveDisclosure(descriptions_dir=descriptions_dir, **options)
    )
    return mcp


def _add_hidden_tools(mcp: FastMCP) -> None:
    @mcp.tool
    def secret_disabled() -> str:
        """A tool the operator disabled."""
        return "disabled tool ran"

    @mcp.tool(tags={"internal"})
    def internal_ops() -> str:
        """A tool hidden by a Visibility transform."""
        return "internal tool ran"

    @mcp.tool(auth=require_scopes("admin"))
    def admin_wipe() -> str:
        """A tool only the admin scope may see."""
        return "wiped"

    @mcp.tool(tags={"beta"})
    def beta() -> str:
        """A tool each session unlocks for itself."""
        return "beta ran"

    @mcp.tool
    async def unlock_beta(ctx: Context) -> str:
        """Unlock the beta tool for this session."""
        await ctx.enable_components(tags={"beta"})
        return "unlocked"

    mcp.disable(names={"secret_disabled"})
    mcp.add_transform(Visibility(False, tags={"internal", "beta"}))
