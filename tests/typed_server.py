"""A budgeted catalog whose last tools return typed results, for FastMCP's own ``Client``.

``typed_catalog()`` holds 59 numbered tools, then ``when`` (a ``datetime.date``) and
``spans`` (a ``set[int]``): 61 tools, above the listing budget's threshold, the two typed
ones outside the 20 entries a budgeted listing holds. FastMCP's ``Client`` types a result
by the ``outputSchema`` its listing gave (``"2026-01-05"`` becomes a ``date``).
``python -m tests.typed_server [--plain]`` serves it over stdio (``--plain``: without the
middleware).
"""

from __future__ import annotations

import datetime
import sys

from fastmcp import FastMCP

from fastmcp_progressive import ProgressiveDisclosure

NUMBERED = 59
WHEN = datetime.date(2026, 1, 5)
SPANS = {1, 2, 3}


def typed_catalog(*, progressive: bool = True) -> FastMCP:
    """The 61-tool catalog, with the middleware unless ``progressive`` is False."""
    mcp = FastMCP("typed")
    for i in range(NUMBERED):
        mcp.tool(lambda text: f"ran:{text}", name=f"t{i:02d}", description=f"Tool number {i}.")

    @mcp.tool
    def when(days: int = 0) -> datetime.date:
        """The day of the release, ``days`` later."""
        return WHEN + datetime.timedelta(days=days)

    @mcp.tool
    def spans() -> set[int]:
        """The span ids."""
        return SPANS

    if progressive:
        mcp.add_middleware(ProgressiveDisclosure())
    return mcp


if __name__ == "__main__":
    typed_catalog(progressive="--plain" not in sys.argv).run(show_banner=False)
