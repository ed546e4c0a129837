"""Which FastMCP the suite runs against, for the few assertions that differ by release.

CI runs the whole suite on the default install (the newest release, fastmcp 4.2.x) and the
release-sensitive files on the oldest supported one (fastmcp 4.1.2); see ``.ci/run``.
"""

from __future__ import annotations

import fastmcp

FASTMCP_VERSION = tuple(int(part) for part in fastmcp.__version__.split(".")[:2])

HIDDEN_LISTING_IN_MODERN_HTTP_CALL = FASTMCP_VERSION < (4, 2)
"""FastMCP < 4.2 runs the server's own tools/list inside every 2026-07-28 HTTP tools/call
(to validate Mcp-Param-* headers); 4.2 validates against a cache of listed schemas."""

SERVER_KEEPS_LISTED_TOOLS = FASTMCP_VERSION >= (4, 2)
"""FastMCP >= 4.2 keeps the wire form of the last listed tools server-wide (its cache of
listed input schemas): a constant, replaced by every listing, not a per-session leak."""
