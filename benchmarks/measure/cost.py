"""Section 2: what ours costs per request on a real catalog, as a ratio against plain.

Plain and ours (default level with every tool listed, ``max_tools=None``, as plain lists
them; a description file per tool) connected at once and timed
alternately: listings (repeated and cold), granted and refused calls, reads of 1, 5 and 20
definitions from a warm or a touched file cache, per transport; then with another listing
middleware next to ours, and a listing per corpus catalog. The method as the reader sees it
is written once, in the report (``report/cost.py``).

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
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastmcp import Client

from fastmcp_progressive.payloads import resource_uri_for

from ..results import DEFAULT, LatencyRow
from .catalogs import Catalog, read_selection, scenario_for
from .servers import (
    TRANSPORTS,
    Transport,
    build_server,
    connect,
    host_client,
    sample_arguments,
    text_of,
    unread_calls,
    write_descriptions,
)
from .timing import (
    ListingObserver,
    Probe,
    ServerTimer,
    call,
    call_each,
    compared,
    compared_fresh,
    listing,
    read,
)

READ_SIZES = (1, 5, 20)


@dataclass(frozen=True)
class Budget:
    """Iterations per operation (after warm-up)."""

    lists: int
    calls: int
    reads: int
    cold: int
    http_cold: int
    per_catalog_lists: int = 0


FULL = Budget(lists=60, calls=300, reads=150, cold=15, http_cold=6, per_catalog_lists=40)
SMOKE = Budget(lists=5, calls=10, reads=5, cold=2, http_cold=1)


class Toucher:
    """Gives files a new, never-seen mtime before each read (untimed): what an edit looks
    like to ours' caches, without changing the bytes served."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths, self.clock = paths, time.time_ns()

    def __call__(self) -> None:
        for path in self.paths:
            self.clock += 1_000
            os.utime(path, ns=(self.clock, self.clock))


class _Pair:
    """Plain and ours for one transport, each with its timer (a ``ListingObserver`` when
    ``listing_hook``: another listing middleware next to ours)."""

    def __init__(self, catalog: Catalog, files: Path | None, bodies: dict[str, str],
                 transport: Transport, *, listing_hook: bool = False) -> None:
        timer = ListingObserver if listing_hook else ServerTimer
        self.plain_timer, self.ours_timer = timer(), timer()
        self.plain = build_server(catalog, "plain", outer=[self.plain_timer],
                                  static_resources=bodies, auth=transport.verifier())
        self.ours = build_server(catalog, DEFAULT, descriptions_dir=files,
                                 outer=[self.ours_timer], auth=transport.verifier())

    @asynccontextmanager
    async def connected(self, transport: Transport, warm: Sequence[str] = ()
                        ) -> AsyncIterator[tuple[Client[Any], Client[Any]]]:
        """Both connected, listed once, ours having read ``warm`` and settled."""
        async with connect(self.plain, transport) as p, connect(self.ours, transport) as o:
            for client in (p, o):
                await client.list_tools_mcp(cache_mode="bypass")
            for uri in warm:
                await o.read_resource_mcp(uri)
            await self.ours.settle()
            yield p, o


async def static_bodies(catalog: Catalog, files: Path) -> dict[str, str]:
    """The JSON ours answers for each read size, for plain to serve as static text."""
    bodies: dict[str, str] = {}
    async with host_client(build_server(catalog, DEFAULT, descriptions_dir=files).mcp) as client:
        for size in READ_SIZES:
            uri = resource_uri_for(read_selection(catalog, size))
            bodies[uri] = text_of((await client.read_resource_mcp(uri)).contents)
    return bodies


async def _transport_rows(catalog: Catalog, files: Path, bodies: dict[str, str],
                          transport: Transport, budget: Budget) -> list[LatencyRow]:
    pair = _Pair(catalog, files, bodies, transport)
    target = scenario_for(catalog).tools(1)[0]
    case = transport.name
    async with pair.connected(transport, [resource_uri_for([target])]) as (p, o):
        rows = [await compared(case, "tools/list", listing(p), listing(o), budget.lists)]
        arguments = sample_arguments(catalog.tool(target))
        rows.append(await compared(case, "tools/call (granted)",
                                   call(p, target, arguments, pair.plain_timer),
                                   call(o, target, arguments, pair.ours_timer), budget.calls))
        if transport.gated:
            unread = unread_calls(catalog, {target})
            rows.append(await compared(case, "tools/call (refused)",
                                       call_each(p, unread, pair.plain_timer),
                                       call_each(o, unread, pair.ours_timer),
                                       max(1, min(budget.calls, len(unread) - 3))))
        for size in READ_SIZES:
            names = read_selection(catalog, size)
            uri = resource_uri_for(names)
            for cache in ("hit", "miss"):
                touch = Toucher([files / f"{n}.json" for n in names]) if cache == "miss" else None
                rows.append(await compared(case, f"resources/read {len(names)} ({cache})",
                                           read(p, uri, pair.plain_timer),
                                           read(o, uri, pair.ours_timer, prepare=touch),
                                           budget.reads))
    return rows


async def cold_listing(catalog: Catalog, files: Path | None, transport: Transport,
                       iterations: int) -> LatencyRow:
    """The first ``tools/list`` of freshly built servers (ours' preload waited for,
    untimed; without files ours summarizes the registered descriptions only)."""
    @asynccontextmanager
    async def fresh() -> AsyncIterator[tuple[Probe, Probe]]:
        pair = _Pair(catalog, files, {}, transport)
        async with connect(pair.plain, transport) as p, connect(pair.ours, transport) as o:
            await pair.ours.preloaded()
            yield listing(p), listing(o)

    op = "tools/list (cold)" if files is not None else "tools/list (cold, no files)"
    return await compared_fresh(transport.name, op, iterations, fresh)


async def measure(catalog: Catalog, *, budget: Budget,
                  transports: Sequence[str] = tuple(TRANSPORTS)) -> list[LatencyRow]:
    """Every transport's rows, then the listing-middleware rows, for ``catalog``."""
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
        rows += await _listing_hook_cost(catalog, files, bodies, budget)
    return rows


async def _listing_hook_cost(catalog: Catalog, files: Path, bodies: dict[str, str],
                             budget: Budget) -> list[LatencyRow]:
    """Reads and refused calls when another middleware also hooks ``tools/list``: ours
    cannot know it does not filter, so it checks each tool against the caller's listing.
    Refusals in the handshake era (where ours gates in memory), reads in both."""
    five = read_selection(catalog, 5)
    uri = resource_uri_for(five)
    rows: list[LatencyRow] = []
    for transport in (TRANSPORTS["memory"], Transport("memory legacy", legacy=True)):
        pair = _Pair(catalog, files, bodies, transport, listing_hook=True)
        case = f"{transport.name} + listing middleware"
        async with pair.connected(transport, [uri]) as (p, o):
            if transport.gated:
                unread = unread_calls(catalog, set(five))
                rows.append(await compared(case, "tools/call (refused)",
                                           call_each(p, unread, pair.plain_timer),
                                           call_each(o, unread, pair.ours_timer),
                                           max(1, min(budget.calls, len(unread) - 3))))
            rows.append(await compared(case, f"resources/read {len(five)} (hit)",
                                       read(p, uri, pair.plain_timer),
                                       read(o, uri, pair.ours_timer), budget.reads))
    return rows


async def listing_per_catalog(catalogs: Sequence[Catalog], iterations: int) -> list[LatencyRow]:
    """In-memory ``tools/list`` ratio for every catalog (default level, every tool, no files)."""
    rows: list[LatencyRow] = []
    for catalog in catalogs:
        plain, ours = build_server(catalog, "plain"), build_server(catalog, DEFAULT)
        async with host_client(plain.mcp) as p, host_client(ours.mcp) as o:
            rows.append(await compared("memory", f"tools/list {catalog.name} "
                                       f"({len(catalog.tools)})", listing(p), listing(o),
                                       iterations))
    return rows
