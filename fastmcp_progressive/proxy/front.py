"""A progressive front for any MCP server: FastMCP's own proxy with the middleware on.

Hosts such as Claude Desktop or Cursor run MCP servers written in any language, most of
which the user does not own. ``progressive_proxy(target)`` puts such a server (a command
speaking MCP over stdio, or a URL) behind ``fastmcp.server.create_proxy`` and adds
``ProgressiveDisclosure`` to the proxy, so the host gets short listings, the gate and
description files the user writes for the upstream's tools, while the upstream's tools,
resources and prompts are served as they are. ``fastmcp-progressive proxy`` is the same
thing as a command (``serve``).

An upstream that cannot serve is reported by name, never waited on forever: a command
that is not found or exits at start, a URL that does not answer, or a process that dies
mid-session turns every request into an error naming the upstream and what happened
(with the last lines it wrote to stderr). A command the proxy started is not restarted
behind the client's back: its state is gone, so the client is told, and restarting the
proxy (what hosts do with "restart server") starts it again. Starting, naming and
explaining the upstream lives in ``upstream.py``; this module wires it into FastMCP.

Example:
    ```python
    from fastmcp_progressive.proxy import progressive_proxy

    mcp = progressive_proxy(["npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"],
                            descriptions_dir="fs_descriptions")
    mcp.run()  # stdio; or mcp.run(transport="http", port=8000)
    ```
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import Any, Literal

import anyio
from fastmcp import FastMCP
from fastmcp.server import create_proxy
from fastmcp.server.auth import AuthProvider
from fastmcp.server.middleware import Middleware
from fastmcp.server.providers.proxy import FastMCPProxy, ProxyMetadataMiddleware

from fastmcp_progressive.log import get_logger
from fastmcp_progressive.middleware import ProgressiveDisclosure
from fastmcp_progressive.options import fail
from fastmcp_progressive.proxy.command import UpstreamError
from fastmcp_progressive.proxy.failures import UpstreamFailures, UpstreamMetadata
from fastmcp_progressive.proxy.mirrored import Mirrored
from fastmcp_progressive.proxy.roots import RootsForwarding
from fastmcp_progressive.proxy.stdin_relay import StdinRelay
from fastmcp_progressive.proxy.upstream import (
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STARTUP_TIMEOUT,
    Target,
    Upstream,
    is_url,
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

logger = get_logger("proxy")


# -- the Python form ---------------------------------------------------------------------------
def progressive_proxy(
    target: Target,
    *,
    descriptions_dir: str | os.PathLike[str] | None = None,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    auth: AuthProvider | None = None,
    dereference_schemas: bool = False,
    **options: Any,
) -> FastMCP[Any]:
    """A FastMCP server serving ``target`` through FastMCP's proxy, progressive disclosure on.

    Args:
        target: a command line as a list (``["node", "server.js"]``, run over stdio, in
            our environment plus ``env``, in ``cwd``), an ``http(s)://`` URL (streamable
            HTTP, or SSE for a ``/sse`` path), or anything ``create_proxy`` accepts
            (a FastMCP server, a ``Client``, a transport).
        descriptions_dir: description files for the upstream's tools (hot reload applies).
        name: the proxy's server name (default: ``progressive <upstream>``).
        startup_timeout: seconds the upstream may take to start and answer ``initialize``.
        request_timeout: seconds one upstream request may take (``None``: no limit).
        auth: the proxy's own auth (FastMCP ``AuthProvider``); over 2026-07-28 HTTP it is
            what gives callers an identity to gate (see ``ClientSettings.anonymous``).
        dereference_schemas: inline each ``$ref`` of the upstream's schemas (FastMCP's
            ``dereference_schemas``), for clients that cannot follow one. Off by default: a
            client served in full gets the upstream's schemas as they are (``$defs``,
            ``$schema`` and all); a progressive listing inlines its own either way.
        **options: further ``ProgressiveDisclosure`` settings (``listing=ListingSettings(...)``,
            ``clients=ClientSettings(anonymous=...)``, ``exempt_tools``...).

    The proxy owns the upstream process: it starts with the first request (or
    ``await check_upstream(server)``) and stops with the server's lifespan.
    """
    if name is not None and (not isinstance(name, str) or not name.strip()):
        fail("name", "a non-empty server name or None (the default name)", name)
    disclosure = ProgressiveDisclosure(descriptions_dir, **options)
    upstream = Upstream(target, env=env, cwd=cwd, startup_timeout=startup_timeout,
                        request_timeout=request_timeout)

    @asynccontextmanager
    async def stop_upstream(_server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await upstream.close()

    settings: dict[str, Any] = {
        "name": name or f"progressive {upstream.label.strip('`')}",
        "provider_error_strategy": "raise",  # an unreachable upstream must not list as empty
        "lifespan": stop_upstream,
        "auth": auth,
        "dereference_schemas": dereference_schemas,
    }
    if upstream.proxy_target is None:  # a command or URL: its one connected client
        server: FastMCP[Any] = FastMCPProxy(client_factory=upstream.connected, **settings)
    else:
        server = create_proxy(upstream.proxy_target, **settings)
    # Outermost first: failures named; then the middleware, outside FastMCP's proxy
    # metadata middleware so the upstream's instructions are kept and ours appended.
    failures = UpstreamFailures(upstream)
    roots = RootsForwarding(lambda: [upstream])
    ours: tuple[Middleware, ...] = (failures, roots, disclosure)
    if upstream.proxy_target is None:  # its completions and subscriptions, if it has them
        mirrored = Mirrored(server, upstream)
        upstream.on_resource_updated = mirrored.updated
        ours = (mirrored, *ours)
    server.middleware[:] = [
        *ours,
        *(UpstreamMetadata(m, upstream) if isinstance(m, ProxyMetadataMiddleware) else m
          for m in server.middleware if m not in ours),
    ]
    return server


def upstream_of(server: FastMCP[Any]) -> Upstream:
    """The upstream a ``progressive_proxy`` server serves."""
    for middleware in server.middleware:
        if isinstance(middleware, UpstreamFailures):
            return middleware.upstream
    raise ValueError(f"{server.name!r} was not made by progressive_proxy")


async def check_upstream(server: FastMCP[Any]) -> int:
    """Start (or reach) the upstream of a ``progressive_proxy`` server now; its tool count.

    Raises ``UpstreamError`` with a message naming the upstream if it cannot serve, so a
    command line or service can fail at start rather than on the first request.
    """
    return await upstream_of(server).check()


# -- the command -----------------------------------------------------------------------------
def parse_listen(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` -> (host, port); the host defaults to 127.0.0.1 (local only)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--http takes [HOST:]PORT with a port from 1 to 65535, not {text!r}")
    return host, int(port)


async def serve(
    target: Target | None = None,
    *,
    config: Any = None,
    http: tuple[str, int] | None = None,
    host_origin_protection: bool | Literal["auto"] = "auto",
    **settings: Any,
) -> None:
    """Start the upstream(s), then serve over stdio (or streamable HTTP at ``http``).

    ``target`` is one upstream (``progressive_proxy``); ``config`` an ``mcpServers`` file or
    dict (``gateway.progressive_gateway``), whose servers start concurrently: those that
    fail are named and the others served (``UpstreamError`` only when none can start).
    SIGTERM, SIGINT and SIGHUP stop us at any point, start-up included (what started is
    stopped, rather than waiting out the start-up timeout), over stdio with the host's
    stdin still open too (``StdinRelay``), and the upstreams are always
    stopped before we return: hosts close our stdin and send SIGTERM shortly after, and
    each upstream runs in its own process group, so dying on that signal would leave it
    running. Over HTTP, uvicorn (FastMCP's server) stops on SIGINT and SIGTERM itself, as
    under ``fastmcp run``: it is given ``HTTP_STOP_GRACE`` s to do so before we cancel it,
    since cancelling it mid-serve makes it log its lifespan's ``CancelledError``.

    Over HTTP, FastMCP's Host/Origin guard is on (``host_origin_protection``, default
    ``"auto"``: for a loopback bind, a request whose ``Host`` or ``Origin`` is not that
    address or ``localhost`` is refused with 421), against DNS rebinding: a web page the
    user opens could otherwise reach the local gateway, and every upstream behind it.
    ``False`` turns it off (a reverse proxy in front that rewrites ``Host``).
    """
    from fastmcp_progressive.proxy.gateway import progressive_gateway, upstreams_of

    if config is not None:
        server = progressive_gateway(config, **settings)
        upstreams = list(upstreams_of(server))
    else:
        server = progressive_proxy(target, **settings)  # type: ignore[arg-type]
        upstreams = [upstream_of(server)]
    failed: list[Exception] = []  # raised as itself, not in the task group's ExceptionGroup
    stdin = StdinRelay()  # a signal ends it, or the SDK's thread reading stdin never returns
    with _stop_signals() as signals:
        try:
            async with anyio.create_task_group() as group:
                serving_http = anyio.Event()
                stopped = anyio.Event()

                async def stop_on_signal() -> None:
                    async for signum in signals:
                        stdin.end()
                        if serving_http.is_set():
                            if signum not in UVICORN_STOP_SIGNALS:  # SIGHUP: stop it alike
                                signal.raise_signal(signal.SIGTERM)
                            with anyio.move_on_after(HTTP_STOP_GRACE):
                                await stopped.wait()
                        group.cancel_scope.cancel()
                        return

                group.start_soon(stop_on_signal)
                try:
                    await _start(server, upstreams, gateway=config is not None)
                    if http is None:
                        async with stdin.relaying():
                            await server.run_async(transport="stdio", show_banner=False)
                    else:
                        host, port = http
                        serving_http.set()
                        await server.run_async(transport="http", host=host, port=port,
                                               show_banner=False,
                                               host_origin_protection=host_origin_protection)
                except Exception as exc:
                    failed.append(exc)
                finally:
                    stopped.set()
                    group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                for upstream in upstreams:
                    await upstream.close()
    if failed:
        raise failed[0]


HTTP_STOP_GRACE = 5.0
"""Seconds uvicorn gets to stop on a signal by itself (FastMCP gives it 2 for its open
connections) before we cancel it."""
UVICORN_STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


async def _start(server: FastMCP[Any], upstreams: list[Upstream], *, gateway: bool) -> None:
    """Start the upstream (or a gateway's, concurrently) and log what serves."""
    from fastmcp_progressive.proxy.gateway import upstreams_of

    started = time.monotonic()
    if not gateway:
        tools = await upstreams[0].check()
        logger.info("serving %s (%d tools) with progressive disclosure",
                    upstreams[0].label, tools)
        return
    await upstreams_of(server).start_all()
    serving = [u for u in upstreams if u.state == "serving"]
    if not serving:
        raise UpstreamError("no upstream MCP server could start: " + "; ".join(
            u.reason or u.label for u in upstreams))
    logger.info("serving %d of %d upstream MCP servers (%d tools) with progressive "
                "disclosure, started in %.2f s", len(serving), len(upstreams),
                sum(u.tool_count or 0 for u in serving), time.monotonic() - started)


def _stop_signals() -> Any:
    """A receiver of SIGTERM/SIGINT/SIGHUP (none on Windows, where Ctrl-C raises as usual).

    SIGHUP too: a closed terminal or a host that hangs up would otherwise kill us without
    stopping the upstreams, whose own children then keep running.
    """
    if sys.platform == "win32":
        return nullcontext(_no_signals())
    return anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


async def _no_signals() -> AsyncIterator[int]:
    await anyio.sleep_forever()
    yield 0  # pragma: no cover
