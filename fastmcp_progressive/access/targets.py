"""Which tool a ``tools/call`` will run, resolved the way FastMCP resolves it.

FastMCP runs a call named ``<hash>_<tool>`` (the backend name of an app-visible tool; the
hash is in the listing's ``_meta``) by looking the hash up when the plain name finds
nothing. ``get_tool`` alone does not know such names, so a gate that asked only
``get_tool`` would take them for unknown tools and let them run. The gate asks this
function instead and checks the grant of the tool that will really run.

Example:
    ```python
    target = await hashed_target(ctx, "1a2b3c4d_refund_order")  # the refund_order tool
    ```
"""

from __future__ import annotations

from fastmcp.server.context import Context
from fastmcp.server.providers.addressing import parse_hashed_backend_name
from fastmcp.tools.base import Tool


async def hashed_target(ctx: Context, name: str) -> Tool | None:
    """The tool a hashed backend name runs; None when ``name`` is a plain name or unknown."""
    hashed = parse_hashed_backend_name(name)
    if hashed is None or await ctx.fastmcp.get_tool(name) is not None:
        return None  # a plain name (a real tool of that exact name wins, as in FastMCP)
    digest, local_name = hashed
    return await ctx.fastmcp.get_tool_by_hash(digest, local_name)
