"""How the command finds the server it works on: imported, or proxied for ``tokens``.

``extract``, ``check`` and ``tokens`` take SERVER the way ``fastmcp run`` does and load it
with FastMCP's own loader (``load_server``): imported, never started. ``tokens`` also counts
servers it cannot import (``counted_server``): a URL, an ``mcpServers`` file (Claude
Desktop's, Cursor's, VS Code's) or a command given after ``--``, each through what
``proxy`` serves for it, their upstreams started for the count and stopped after.

Example:
    ```python
    async with counted_server(["npx", "-y", "@modelcontextprotocol/server-memory"]) as mcp:
        report = await token_report(mcp, None, None)
    ```
"""

from __future__ import annotations

import json
import shlex
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastmcp import FastMCP

from fastmcp_progressive.proxy.front import (
    UpstreamError,
    check_upstream,
    is_url,
    progressive_proxy,
    upstream_of,
)

__all__ = ["TOKENS_SERVER_HELP", "CliError", "counted_server", "is_mcp_servers_file",
           "load_server"]


class CliError(Exception):
    """A reason the command cannot run at all (exit status 2)."""


# -- loading the server ------------------------------------------------------------------
async def load_server(spec: str) -> FastMCP[Any]:
    """The FastMCP server SERVER names, through the loader ``fastmcp run`` uses."""
    from fastmcp.utilities.mcp_server_config import MCPServerConfig
    from fastmcp.utilities.mcp_server_config.v1.sources.filesystem import FileSystemSource

    try:
        if spec.endswith(".json"):
            server = await MCPServerConfig.from_file(Path(spec)).source.load_server()
        else:
            server = await FileSystemSource(path=spec).load_server()
    except SystemExit:  # the loader reports its own error, then exits
        raise CliError(f"could not load a server from {spec!r}") from None
    except Exception as exc:
        raise CliError(f"could not load a server from {spec!r}: {exc}") from exc
    if not isinstance(server, FastMCP):
        raise CliError(f"{spec!r} is not a FastMCP server ({type(server).__name__})")
    return server


TOKENS_SERVER_HELP = (
    "the server, as `fastmcp run` takes it: app.py, app.py:mcp, fastmcp.json, an mcpServers "
    "file (counted through the gateway `proxy --config` serves) or a URL (a running server, "
    "counted through `proxy URL`); or, after --, a command speaking MCP over stdio (counted "
    "through `proxy -- COMMAND`)")


def is_mcp_servers_file(spec: str) -> bool:
    """Whether ``spec`` names an ``mcpServers`` JSON file (``fastmcp run`` tells it from a
    ``fastmcp.json`` the same way: by its ``mcpServers`` key), or VS Code's ``servers``."""
    if not spec.endswith(".json"):
        return False
    try:
        data = json.loads(Path(spec).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # the loader names what is wrong with it
    return isinstance(data, dict) and ("mcpServers" in data
                                       or isinstance(data.get("servers"), dict))


@asynccontextmanager
async def counted_server(spec: str | Sequence[str]) -> AsyncIterator[FastMCP[Any]]:
    """The server ``tokens`` counts. A file is imported (``load_server``); a URL (a running
    server), a command (given after ``--``) and an ``mcpServers`` file are what ``proxy``
    serves for them, the progressive proxy or gateway, whose listing without the middleware
    is the plain one (what ``fastmcp run`` serves for the same SERVER): their upstreams
    start for the count and stop after."""
    from fastmcp_progressive.proxy.gateway import progressive_gateway, upstreams_of

    one = not isinstance(spec, str) or is_url(spec)  # one upstream: a command or a URL
    if isinstance(spec, str) and not one and not is_mcp_servers_file(spec):
        yield await load_server(spec)
        return
    try:
        server = progressive_proxy(spec if isinstance(spec, str) else list(spec)) if one \
            else progressive_gateway(Path(str(spec)))
    except ValueError as exc:  # a configuration FastMCP's MCPConfig or ours refuses
        raise CliError(f"could not load {_shown(spec)!r}: {exc}") from None
    upstreams = [upstream_of(server)] if one else list(upstreams_of(server))
    try:
        if one:
            await check_upstream(server)
        else:
            await upstreams_of(server).start_all()
            if not any(u.state == "serving" for u in upstreams):
                raise UpstreamError("no upstream MCP server could start: " + "; ".join(
                    u.reason or u.label for u in upstreams))
        yield server
    except UpstreamError as exc:
        raise CliError(str(exc)) from None
    finally:
        for upstream in upstreams:
            await upstream.close()


def _shown(spec: str | Sequence[str]) -> str:
    return spec if isinstance(spec, str) else shlex.join(spec)
