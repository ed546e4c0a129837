"""Old module paths kept for one release: each warns once, naming where it moved.

The package was flat until 0.2 (``fastmcp_progressive.guidance``); it is now grouped into
wings (``fastmcp_progressive.disclosure.guidance``). The paths the README or examples once
documented still import, as stubs that re-export the new module and call ``moved``.
"""

from __future__ import annotations

import warnings

MOVED: dict[str, str] = {  # old path -> new path
    "fastmcp_progressive.backend_sessions": "fastmcp_progressive.proxy.backend_sessions",
    "fastmcp_progressive.caller": "fastmcp_progressive.access.caller",
    "fastmcp_progressive.client": "fastmcp_progressive.resolution.client",
    "fastmcp_progressive.gateway": "fastmcp_progressive.proxy.gateway",
    "fastmcp_progressive.guidance": "fastmcp_progressive.disclosure.guidance",
    "fastmcp_progressive.selection": "fastmcp_progressive.disclosure.selection",
    "fastmcp_progressive.tokens": "fastmcp_progressive.cli.tokens",
}


def moved(old: str) -> None:
    """Warn (``DeprecationWarning``, at the importer's line) that ``old`` moved."""
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release; "
        f"import from {MOVED[old]} instead",
        DeprecationWarning,
        stacklevel=3,
    )
