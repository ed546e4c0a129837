"""A progressive front for any MCP server, or for many (``proxy --config mcpServers.json``).

Imports everything below it, the middleware included; only ``cli`` imports it.

Modules: ``front`` (``progressive_proxy``, ``serve``), ``upstream`` (start, name and explain
an upstream), ``command`` (an upstream command's transport), ``process_groups`` (its process
group stopped, even once the proxy is gone), ``forwarding`` (what an upstream asks or says
reaches only its own caller),
``failures`` (an upstream's failures named, as a tool or JSON-RPC error),
``gateway`` (many upstreams, one front), ``config`` (its ``mcpServers`` file read and
checked), ``stdin_relay`` (a signal ends the stdio server), ``roots`` (the host's roots forwarded),
``stderr_tail`` (an upstream's stderr, kept bounded), ``backend_sessions`` (one backend
session per client), ``mirrored`` (the upstream's completions and resource subscriptions).

Example:
    ```python
    from fastmcp_progressive.proxy import progressive_proxy
    ```
"""

from __future__ import annotations

from fastmcp_progressive.proxy.front import (
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STARTUP_TIMEOUT,
    Target,
    UpstreamError,
    check_upstream,
    is_url,
    parse_listen,
    progressive_proxy,
    serve,
    upstream_of,
)

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "Target",
    "UpstreamError",
    "check_upstream",
    "is_url",
    "parse_listen",
    "progressive_proxy",
    "serve",
    "upstream_of",
]

