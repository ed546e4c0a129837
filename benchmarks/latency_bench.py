"""Section 2: what ours costs per request, as a ratio against plain FastMCP.

Two servers replay the same catalog: plain FastMCP, and ours at the default level with a
description file per tool. Both carry a ``ServerTimer`` outside everything else, and
both are connected at once, so each iteration times plain and ours back to back
(``timing.alternate``). Operations:

- ``tools/list``: a repeated listing (ours goes through its memo path), client cache
  bypassed; ``tools/list (cold)``: the first listing of freshly built servers;
- ``tools/call (granted)``: a tool whose description was read, called with arguments;
  ``tools/call (refused)``: ours answers ``TOOL_DESCRIPTION_REQUIRED`` where plain runs
  the tool (only where ours gates); a refusal grants its tool, so each iteration calls
  another tool the caller has not seen (at most one per catalog tool);
- ``resources/read N (hit|miss)``: full definitions of N tools, their description files
  unchanged, or touched (a new mtime, as an edit gives) before each read so every cache
  misses. Plain FastMCP has no such resource, so its side serves the very same JSON as a
  static resource: the ratio is the price of building definitions on demand.

Transports: in memory (modern; grants per client stream), streamable HTTP on
127.0.0.1 modern without auth (no grants; arguments checked: ``anonymous="validate"``), HTTP legacy
(``Mcp-Session-Id``; grants per session) and HTTP modern with a bearer token (grants per
principal, in FastMCP's session-state store). HTTP servers run in this process
(``run_server_async``), so client and server share the CPU, as in-memory ones do.

Example:
    ```python
    rows = await measure(catalog, budget=SMOKE, transports=("memory",))
    ```
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.utilities.tests import run_server_async, temporary_settings

from fastmcp_progressive.payloads import resource_uri_for

from . import probes
from .corpus import Catalog
from .fixtures import sample_arguments, write_descriptions
from .replay import DEFAULT, ReplayServer, build_server
from .results import LatencyRow, Stats
from .scenarios import read_selection, scenario_for
from .timing import ListingObserver, Probe, ServerTimer, alternate, time_once

READ_SIZES = (1, 5, 20)
TOKEN = "bench-token"


@dataclass(frozen=True)
class Budget:
    """Iterations per operation (after warm-up)."""

    lists: int
    calls: int
    reads: int
    cold: int
    http_cold: int


FULL = Budget(lists=60, calls=300, reads=150, cold=15, http_cold=6)
SMOKE = Budget(lists=5, calls=10, reads=5, cold=2, http_cold=1)


@dataclass(frozen=True)
class Transport:
    """How the client reaches the servers, and whether ours gates there."""

    name: str
    http: bool = False
    legacy: bool = False
    auth: bool = False

    @property
    def gated(self) -> bool:
        return not self.http or self.legacy or self.auth


TRANSPORTS: dict[str, Transport] = {
    "memory": Transport("memory"),
    "http": Transport("http", http=True),
    "http legacy": Transport("http legacy", http=True, legacy=True),
    "http+auth": Transport("http+auth", http=True, auth=True),
}


@asynccontextmanager
async def connect(server: ReplayServer, transport: Transport) -> AsyncIterator[Client[Any]]:
    """A connected client for ``server`` over ``transport``."""
    mode = "legacy" if transport.legacy else "auto"
    if not transport.http:
        async with Client(server.mcp, mode=mode) as client:
            yield client
        return
    with temporary_settings(log_level="WARNING"):
        async with run_server_async(server.mcp) as url:
            http = StreamableHttpTransport(url, auth=TOKEN if transport.auth else None)
            async with Client(http, mode=mode) as client:
                yield client


def _auth(transport: Transport) -> StaticTokenVerifier | None:
    if not transport.auth:
        return None
    return StaticTokenVerifier(tokens={TOKEN: {"client_id": "bench", "sub": "bench-user"}})


def call_arguments(catalog: Catalog, name: str) -> dict[str, Any]:
    """Arguments for a call: required ones, else the first property (a call with arguments)."""
    tool = catalog.tool(name)
    arguments = sample_arguments(tool)
    properties = (tool.get("inputSchema") or {}).get("properties") or {}
    if not arguments and properties:
        first = next(iter(properties))
        arguments = {first: sample_arguments({"inputSchema": {"properties": properties,
                                                              "required": [first]}})[first]}
    return arguments


def unread_calls(catalog: Catalog, read: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """A call with arguments for every tool not in ``read``: each refused only once."""
    return [(n, call_arguments(catalog, n)) for n in catalog.names if n not in read]


class _Pair:
    """Plain and ours, built for one transport, with their timers and read URIs.

    ``listing_hook``: time with a ``ListingObserver`` (it also passes ``tools/list``
    through), to show what any listing middleware placed next to ours costs.
    """

    def __init__(self, catalog: Catalog, files: Path | None, bodies: dict[str, str],
                 transport: Transport, *, listing_hook: bool = False) -> None:
        timer = ListingObserver if listing_hook else ServerTimer
        self.plain_timer, self.ours_timer = timer(), timer()
        self.plain = build_server(catalog, "plain", outer=[self.plain_timer],
                                  static_resources=bodies, auth=_auth(transport))
        self.ours = build_server(catalog, DEFAULT, descriptions_dir=files,
                                 outer=[self.ours_timer], auth=_auth(transport))



class Toucher:
    """Gives files a new, never-seen mtime: their next read is a cache miss everywhere.

    This is what an edit looks like to ours (a new stat signature), without changing the
    content, so hit and miss serve identical bytes. Called untimed, before each read.
    """

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.clock = time.time_ns()

    def __call__(self) -> None:
        for path in self.paths:
            self.clock += 1_000
            os.utime(path, ns=(self.clock, self.clock))


async def static_bodies(catalog: Catalog, files: Path) -> dict[str, str]:
    """The JSON ours answers for each read size, for plain to serve as static text."""
    server = build_server(catalog, DEFAULT, descriptions_dir=files)
    bodies: dict[str, str] = {}
    async with Client(server.mcp) as client:
        for size in READ_SIZES:
            uri = resource_uri_for(read_selection(catalog, size))
            result = await client.read_resource_mcp(uri)
            bodies[uri] = "".join(getattr(c, "text", "") for c in result.contents)
    return bodies


async def _transport_rows(catalog: Catalog, files: Path, bodies: dict[str, str],
                          transport: Transport, budget: Budget) -> list[LatencyRow]:
    pair = _Pair(catalog, files, bodies, transport)
    target = scenario_for(catalog).tools(1)[0]
    rows: list[LatencyRow] = []
    async with AsyncExitStack() as stack:
        p = await stack.enter_async_context(connect(pair.plain, transport))
        o = await stack.enter_async_context(connect(pair.ours, transport))
        for client in (p, o):
            await client.list_tools_mcp(cache_mode="bypass")
        await o.read_resource_mcp(resource_uri_for([target]))
        await pair.ours.settle()

        async def row(op: str, plain: Probe, ours: Probe, iterations: int) -> None:
            ps, os_ = await alternate(plain, ours, iterations=iterations)
            rows.append(LatencyRow(transport.name, op, ps.stats(), os_.stats(),
                                   ps.server_stats(), os_.server_stats()))

        await row("tools/list", probes.listing(p), probes.listing(o), budget.lists)
        arguments = call_arguments(catalog, target)
        await row("tools/call (granted)", probes.call(p, target, arguments, pair.plain_timer),
                  probes.call(o, target, arguments, pair.ours_timer), budget.calls)
        if transport.gated:
            unread = unread_calls(catalog, {target})
            await row("tools/call (refused)", probes.call_each(p, unread, pair.plain_timer),
                      probes.call_each(o, unread, pair.ours_timer),
                      max(1, min(budget.calls, len(unread) - 3)))

        for size in READ_SIZES:
            names = read_selection(catalog, size)
            uri = resource_uri_for(names)
            for cache in ("hit", "miss"):
                touch = Toucher([files / f"{n}.json" for n in names])
                await row(f"resources/read {len(names)} ({cache})",
                          probes.read(p, uri, pair.plain_timer),
                          probes.read(o, uri, pair.ours_timer,
                                      prepare=touch if cache == "miss" else None),
                          budget.reads)
    return rows


async def cold_listing(catalog: Catalog, files: Path | None, transport: Transport,
                       iterations: int) -> LatencyRow:
    """The first ``tools/list`` of freshly built servers, plain and ours alternately.

    With ``files`` ours needs every description file's summary for that first listing; it
    reads them in a background thread from construction on (its start-up preload), and
    this waits for that thread (untimed) as a server started before its first client
    does. Section 4 also times a listing racing the preload. Without files ours
    summarizes the registered descriptions only.
    """
    plain_ns: list[int] = []
    ours_ns: list[int] = []
    for i in range(iterations):
        pair = _Pair(catalog, files, {}, transport)
        async with AsyncExitStack() as stack:
            p = await stack.enter_async_context(connect(pair.plain, transport))
            o = await stack.enter_async_context(connect(pair.ours, transport))
            await pair.ours.preloaded()
            order = [(p, plain_ns), (o, ours_ns)]
            if i % 2:
                order.reverse()
            for client, into in order:
                into.append(await time_once(probes.listing(client)))
    op = "tools/list (cold)" if files is not None else "tools/list (cold, no files)"
    return LatencyRow(transport.name, op, Stats.from_ns(plain_ns), Stats.from_ns(ours_ns))


async def measure(catalog: Catalog, *, budget: Budget,
                  transports: Sequence[str] = tuple(TRANSPORTS)) -> list[LatencyRow]:
    """All latency rows for ``catalog`` over the named transports."""
    rows: list[LatencyRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-descriptions-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        bodies = await static_bodies(catalog, files)
        for name in transports:
            transport = TRANSPORTS[name]
            rows += await _transport_rows(catalog, files, bodies, transport, budget)
            if name == "memory":
                rows.append(await cold_listing(catalog, files, transport, budget.cold))
                rows.append(await cold_listing(catalog, None, transport, budget.cold))
            elif name == "http":
                rows.append(await cold_listing(catalog, files, transport, budget.http_cold))
    return rows


async def listing_hook_cost(catalog: Catalog, *, budget: Budget) -> list[LatencyRow]:
    """Reads and refused calls when another middleware also hooks ``tools/list``.

    Ours cannot know whether such a middleware filters the listing, so it then checks
    each selected tool against the caller's full listing (``Catalog.tool``): correct, and
    this measures its price. In memory, same method as the main rows.
    """
    rows: list[LatencyRow] = []
    transport = TRANSPORTS["memory"]
    with tempfile.TemporaryDirectory(prefix="bench-descriptions-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        bodies = await static_bodies(catalog, files)
        pair = _Pair(catalog, files, bodies, transport, listing_hook=True)
        uri = resource_uri_for(read_selection(catalog, 5))
        async with connect(pair.plain, transport) as p, connect(pair.ours, transport) as o:
            await o.read_resource_mcp(uri)
            await pair.ours.settle()
            unread = unread_calls(catalog, set(read_selection(catalog, 5)))
            cases = {
                "tools/call (refused)": (
                    probes.call_each(p, unread, pair.plain_timer),
                    probes.call_each(o, unread, pair.ours_timer),
                    max(1, min(budget.calls, len(unread) - 3))),
                f"resources/read {len(read_selection(catalog, 5))} (hit)": (
                    probes.read(p, uri, pair.plain_timer),
                    probes.read(o, uri, pair.ours_timer),
                    budget.reads),
            }
            for op, (plain, ours, iterations) in cases.items():
                ps, os_ = await alternate(plain, ours, iterations=iterations)
                rows.append(LatencyRow(f"{transport.name} + listing middleware", op, ps.stats(),
                                       os_.stats(), ps.server_stats(), os_.server_stats()))
    return rows


async def listing_per_catalog(catalogs: Sequence[Catalog], iterations: int) -> list[LatencyRow]:
    """In-memory ``tools/list`` ratio for every catalog (default level, no files)."""
    rows: list[LatencyRow] = []
    for catalog in catalogs:
        plain = build_server(catalog, "plain")
        ours = build_server(catalog, DEFAULT)
        async with Client(plain.mcp) as p, Client(ours.mcp) as o:
            ps, os_ = await alternate(probes.listing(p), probes.listing(o),
                                      iterations=iterations)
        rows.append(LatencyRow("memory", f"tools/list {catalog.name} ({len(catalog.tools)})",
                               ps.stats(), os_.stats()))
    return rows
