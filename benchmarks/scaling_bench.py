"""Section 4: the scaling targets (issue 14) at 100 / 1,000 / 10,000 tools, against plain.

Every figure is a ratio to plain FastMCP measured in the same run, interleaved
(``timing.alternate``: back to back, alternating which side goes first), in memory unless
the case says otherwise. Per catalog size (synthetic, ``synthetic.py``, one description
file per tool for ours):

- ``local``: a repeated ``tools/list``; reads of 5 and 20 cached descriptions against a
  static resource of the very same bytes; a granted and a refused ``tools/call``;
- ``local, legacy``: a granted call over the handshake era (grants per session);
- ``listing middleware``: a refused call and a read of 5 with another middleware hooking
  ``tools/list`` next to ours (a pass-through timer);
- ``mounted`` (up to ``GATEWAY_MAX_TOOLS``): the catalog on a child server mounted on a
  gateway (FastMCP hands out fresh tool objects per request there), ours on the gateway:
  listing, read of 5, granted call;
- ``proxied`` (up to ``PROXY_MAX_TOOLS``): listing and read of 5 behind ``create_proxy``;
- ``http legacy`` / ``http`` / ``http+auth`` (up to ``HTTP_MAX_TOOLS``): granted calls
  over streamable HTTP: the handshake era, 2026-07-28 anonymous (every call's arguments
  checked against the schema) and 2026-07-28 with a bearer token (grants per principal
  in the session-state store).

``tools/list`` rows also carry a server-side time: FastMCP's ``list_tools`` with its
middleware chain, ours included, seen by a pass-through listing hook placed outermost
for that row only (the wire form, the SDK's serialization and the transport are not in
it; the client-side time has them).

Also: the first listing of a server with 235 description files once its start-up preload
is done and while it still runs; the size of an answer naming 32 unknown tools; and the
memory each of ours' caches holds per entry (tracemalloc), next to its bound.

Example:
    ```python
    rows, memory, facts = await measure(SMOKE_BUDGET)
    ```
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import mcp_types as mt
from fastmcp import Client, FastMCP
from fastmcp.resources.types import TextResource
from fastmcp.server import create_proxy
from fastmcp.server.auth import AuthProvider
from fastmcp.tools.base import Tool, ToolResult
from key_value.aio.stores.memory import MemoryStore
from pydantic import AnyUrl

from fastmcp_progressive import (
    CacheSettings,
    GrantSettings,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.payloads import resource_uri_for
from tests.replay import replay_tool

from . import probes
from .corpus import Catalog
from .fixtures import write_descriptions
from .latency_bench import TRANSPORTS, Transport, _auth, call_arguments, connect, unread_calls
from .replay import DEFAULT, ReplayServer, build_server
from .results import MemoryRow, ScalingRow, Stats
from .scenarios import read_selection, scenario_for
from .synthetic import synthetic_catalog
from .timing import ListingObserver, Probe, ServerTimer, alternate, time_once

SIZES = (100, 1_000, 10_000)
HTTP_MAX_TOOLS = 10_000
HTTP_PAGE_SIZE = 1_000
"""Over HTTP both sides list in pages of this many tools (FastMCP's ``list_page_size``): a
10,000-tool listing in one answer (~8 MiB plain, ~1.8 MiB ours) exceeds the client's 1 MiB
limit per server-sent event. Up to 1,000 tools that is one page, as without it."""
HTTP_CASES = ("http legacy", "http", "http+auth")
GATEWAY_MAX_TOOLS = 1_000  # mounted: every call and read resolves names through the mount
PROXY_MAX_TOOLS = 100  # proxied: each listing and lookup goes to the backend and back
UNKNOWN_NAMES = 32
MEMORY_TOOLS = 1_000


@dataclass(frozen=True)
class ScalingBudget:
    """Sizes and iterations (after warm-up) per operation."""

    sizes: tuple[int, ...]
    lists: int
    reads: int
    calls: int
    hooked: int
    first_lists: int
    memory_tools: int


FULL = ScalingBudget(SIZES, lists=10, reads=60, calls=200, hooked=40, first_lists=12,
                     memory_tools=MEMORY_TOOLS)
SMOKE = ScalingBudget((100,), lists=3, reads=5, calls=10, hooked=3, first_lists=2,
                      memory_tools=100)


def _lists_for(size: int, base: int) -> int:
    return max(5, min(base, 20_000 // size))


def _calls_for(size: int, base: int) -> int:
    """Calls resolve their tool by scanning the catalog (FastMCP, plain and ours alike):
    fewer of them at 10,000 tools."""
    return max(min(base, 60), min(base, 200_000 // size))


def _http_calls_for(size: int, base: int) -> int:
    """A 2026-07-28 HTTP call makes the client list the catalog's first page again (it
    keeps no output schemas between calls), plain and ours alike; a handshake-era one
    does not, and gets as many calls as in memory."""
    return max(10, min(base, 20_000 // size))


def _hooked_for(size: int, base: int) -> int:
    """Fewer iterations where a listing middleware makes each one list the catalog."""
    return max(min(base, 10), min(base, 100_000 // size))


@dataclass
class _Side:
    server: ReplayServer
    timer: ServerTimer


class _Servers:
    """Plain and ours for one catalog size, per shape and auth, built once and shared by
    the cases (a 10,000-tool server takes seconds to build). Ours is built first; plain
    then serves ours' answers to the timed reads as static resources (same bytes)."""

    def __init__(self, catalog: Catalog, files: Path) -> None:
        self.catalog = catalog
        self.files = files
        self.uris = [resource_uri_for(read_selection(catalog, n)) for n in (5, 20)]
        self._pairs: dict[tuple[str, bool, str], tuple[_Side, _Side]] = {}
        self._child: FastMCP | None = None

    async def pair(self, shape: str, transport: Transport) -> tuple[_Side, _Side]:
        """(plain, ours) serving the catalog as ``shape`` with ``transport``'s auth."""
        # an app is served over HTTP once (its session manager runs once): a pair each
        key = (shape, transport.auth, transport.name if transport.http else "")
        if key not in self._pairs:
            auth = _auth(transport)
            ours = self._side(shape, ours=True, bodies={}, auth=auth, http=transport.http)
            async with Client(ours.server.mcp) as client:
                bodies = {uri: await _text(client, uri) for uri in self.uris}
            plain = self._side(shape, ours=False, bodies=bodies, auth=auth,
                               http=transport.http)
            self._pairs[key] = (plain, ours)
        return self._pairs[key]

    def _side(self, shape: str, *, ours: bool, bodies: dict[str, str],
              auth: AuthProvider | None, http: bool) -> _Side:
        timer = ServerTimer()
        if shape == "local":
            server = build_server(self.catalog, DEFAULT if ours else "plain",
                                  descriptions_dir=self.files if ours else None,
                                  outer=[timer], static_resources=bodies, auth=auth,
                                  list_page_size=HTTP_PAGE_SIZE if http else None)
            return _Side(server, timer)
        if self._child is None:  # one plain child behind both gateways
            self._child = build_server(self.catalog, "plain").mcp
        gateway: FastMCP = FastMCP("gateway", auth=auth)
        if shape == "mounted":
            gateway.mount(self._child)
        else:
            gateway = create_proxy(self._child, name="gateway")
        for uri, text in bodies.items():
            gateway.add_resource(TextResource(uri=AnyUrl(uri), name=f"static-{len(uri)}",
                                              text=text, mime_type="application/json"))
        gateway.add_middleware(timer)
        middleware = ProgressiveDisclosure(self.files) if ours else None
        if middleware is not None:
            gateway.add_middleware(middleware)
        return _Side(ReplayServer(DEFAULT if ours else "plain", gateway, middleware), timer)


async def _text(client: Client[Any], uri: str) -> str:
    result = await client.read_resource_mcp(uri)
    return "".join(getattr(c, "text", "") for c in result.contents)


@contextmanager
def _listing_timers(*servers: FastMCP) -> Iterator[list[ListingObserver]]:
    """A listing timer outermost in each server while the block runs (a listing hook
    makes ours check reads and calls against it, so it is there for listings only)."""
    timers = [ListingObserver() for _ in servers]
    for server, timer in zip(servers, timers, strict=True):
        server.middleware.insert(0, timer)
    try:
        yield timers
    finally:
        for server, timer in zip(servers, timers, strict=True):
            server.middleware.remove(timer)


@contextmanager
def _listing_hook(*servers: FastMCP) -> Iterator[None]:
    """A pass-through ``on_list_tools`` middleware in each server while the block runs."""
    hooks = [ListingObserver() for _ in servers]
    for server, hook in zip(servers, hooks, strict=True):
        server.add_middleware(hook)
    try:
        yield
    finally:
        for server, hook in zip(servers, hooks, strict=True):
            server.middleware.remove(hook)


async def _case(servers: _Servers, shape: str, case: str, transport: Transport,
                ops: Sequence[str], budget: ScalingBudget, *,
                listing_hook: bool = False) -> list[ScalingRow]:
    """Time ``ops`` for plain and ours on one shape and transport, interleaved."""
    catalog = servers.catalog
    size = len(catalog.tools)
    target = scenario_for(catalog).tools(1)[0]
    uris = {n: resource_uri_for(read_selection(catalog, n)) for n in (5, 20)}
    unread = unread_calls(catalog, {target, *read_selection(catalog, 20)})
    plain, ours = await servers.pair(shape, transport)
    rows: list[ScalingRow] = []
    async with AsyncExitStack() as stack:
        o = await stack.enter_async_context(connect(ours.server, transport))
        p = await stack.enter_async_context(connect(plain.server, transport))
        for client in (p, o):
            await client.list_tools_mcp(cache_mode="bypass")
        for uri in (*uris.values(), resource_uri_for([target])):
            await o.read_resource_mcp(uri)  # this client's grants: the reads it times
        await ours.server.settle()
        if listing_hook:
            stack.enter_context(_listing_hook(plain.server.mcp, ours.server.mcp))

        warmup = 1 if size >= 10_000 else 3  # a 10,000-tool listing takes seconds

        async def row(op: str, plain_probe: Probe, ours_probe: Probe, iterations: int) -> None:
            ps, os_ = await alternate(plain_probe, ours_probe, iterations=iterations,
                                      warmup=warmup)
            rows.append(ScalingRow(case, op, ps.stats(), os_.stats(), ps.server_stats(),
                                   os_.server_stats(), tools=size))

        for op in ops:
            if op == "tools/list":  # each sample from a collected heap: no side pays for
                # the other's garbage (a 10,000-tool listing leaves millions of objects)
                with _listing_timers(plain.server.mcp, ours.server.mcp) as (pt, ot):
                    await row(op, probes.listing(p, pt, gc.collect),
                              probes.listing(o, ot, gc.collect), _lists_for(size, budget.lists))
            elif op.startswith("resources/read"):
                uri = uris[int(op.split()[1])]
                await row(op, probes.read(p, uri, plain.timer), probes.read(o, uri, ours.timer),
                          _hooked_for(size, budget.hooked) if listing_hook else budget.reads)
            elif op == "tools/call (granted)":
                arguments = call_arguments(catalog, target)
                await row(op, probes.call(p, target, arguments, plain.timer),
                          probes.call(o, target, arguments, ours.timer),
                          _http_calls_for(size, budget.calls)
                          if transport.http and not transport.legacy
                          else _calls_for(size, budget.calls))
            else:  # refused: a refusal grants its tool, so never the same tool twice
                iterations = (_hooked_for(size, budget.hooked) if listing_hook
                              else _calls_for(size, budget.calls))
                await row(op, probes.call_each(p, unread, plain.timer),
                          probes.call_each(o, unread, ours.timer),
                          max(1, min(iterations, len(unread) - warmup)))
    return rows


async def _size_rows(size: int, budget: ScalingBudget) -> list[ScalingRow]:
    catalog = synthetic_catalog(size)
    memory, legacy = TRANSPORTS["memory"], Transport("memory legacy", legacy=True)
    plans: list[tuple[str, str, Transport, tuple[str, ...], bool]] = [
        ("local", "local", memory, ("tools/list", "resources/read 5", "resources/read 20",
                                    "tools/call (granted)", "tools/call (refused)"), False),
        ("local", "local, legacy", legacy, ("tools/call (granted)",), False),
        ("local", "listing middleware", memory,
         ("tools/call (refused)", "resources/read 5"), True),
    ]
    if size <= GATEWAY_MAX_TOOLS:
        plans.append(("mounted", "mounted", memory,
                      ("tools/list", "resources/read 5", "tools/call (granted)"), False))
    if size <= PROXY_MAX_TOOLS:
        plans.append(("proxied", "proxied", memory, ("tools/list", "resources/read 5"), False))
    if size <= HTTP_MAX_TOOLS:
        for name in HTTP_CASES:
            plans.append(("local", name, TRANSPORTS[name], ("tools/call (granted)",), False))
    rows: list[ScalingRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        servers = _Servers(catalog, write_descriptions(catalog, Path(tmp)))
        for shape, case, transport, ops, hooked in plans:
            began = time.perf_counter()
            measured = await _case(servers, shape, case, transport, ops, budget,
                                   listing_hook=hooked)
            rows += [_hit(r) for r in measured]
            print(f"[bench]   {size:,} tools, {case}: {time.perf_counter() - began:.1f} s",
                  file=sys.stderr, flush=True)
    return rows


def _hit(row: ScalingRow) -> ScalingRow:
    """Reads here always hit the file cache: say so in the operation's name."""
    if row.op.startswith("resources/read") and not row.op.endswith(")"):
        return replace(row, op=f"{row.op} (hit)")
    return row


# -- first listing and start-up -----------------------------------------------------------
async def first_listing(catalog: Catalog, iterations: int) -> tuple[list[ScalingRow],
                                                                    dict[str, float]]:
    """The first ``tools/list`` of fresh servers with a description file per tool.

    ``after start-up``: ours' preload thread (started by its constructor) has finished
    when the client lists, as for any server started before its first client connects;
    ``racing the preload``: the client lists as soon as it is connected.
    Facts: the constructor's time and the preload's duration, medians.
    """
    rows: list[ScalingRow] = []
    built_ns: list[int] = []
    preload_ns: list[int] = []
    with tempfile.TemporaryDirectory(prefix="bench-first-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        for _ in range(5):  # what start-up pays for ours: the constructor, nothing else
            began = time.perf_counter_ns()
            middleware = ProgressiveDisclosure(files)
            built_ns.append(time.perf_counter_ns() - began)
            await asyncio.to_thread(middleware.preload.done.wait, 60.0)
        for label, wait in (("after start-up", True), ("racing the preload", False)):
            plain_ns: list[int] = []
            ours_ns: list[int] = []
            for i in range(iterations):
                plain = build_server(catalog, "plain")
                ours = build_server(catalog, DEFAULT, descriptions_dir=files)
                async with Client(plain.mcp) as p, Client(ours.mcp) as o:
                    if wait:
                        took = await ours.preloaded()
                        if took is not None:
                            preload_ns.append(int(took * 1e9))
                    order = [(p, plain_ns), (o, ours_ns)]
                    if i % 2:
                        order.reverse()
                    for client, into in order:
                        into.append(await time_once(probes.listing(client)))
            rows.append(ScalingRow("first listing", f"tools/list, {label}",
                                   Stats.from_ns(plain_ns), Stats.from_ns(ours_ns),
                                   tools=len(catalog.tools)))
    facts = {"constructor_us": Stats.from_ns(built_ns).median_us}
    if preload_ns:
        facts["preload_ms"] = Stats.from_ns(preload_ns).median_us / 1e3
    return rows, facts


# -- unknown names ------------------------------------------------------------------------
async def unknown_names(sizes: Sequence[int]) -> dict[str, float]:
    """Bytes and time of a read naming ``UNKNOWN_NAMES`` tools that do not exist."""
    facts: dict[str, float] = {}
    uri = resource_uri_for([f"no_such_tool_{i}" for i in range(UNKNOWN_NAMES)])
    for size in sizes:
        ours = build_server(synthetic_catalog(size), DEFAULT)
        async with Client(ours.mcp) as client:
            text = await _text(client, uri)
            times = [await time_once(probes.read(client, uri)) for _ in range(5)]
        facts[f"unknown_bytes_{size}"] = float(len(text.encode("utf-8")))
        facts[f"unknown_ms_{size}"] = Stats.from_ns(times).median_us / 1e3
    return facts


# -- memory per cache entry -------------------------------------------------------------------
def _traced_kib(before: int) -> float:
    gc.collect()
    return (tracemalloc.get_traced_memory()[0] - before) / 1024


async def cache_memory(size: int) -> list[MemoryRow]:
    """tracemalloc's view of what each of ours' caches holds per entry, at ``size`` tools."""
    catalog = synthetic_catalog(size)
    rows: list[MemoryRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        server = build_server(catalog, "plain")
        tools = list(await server.mcp.list_tools(run_middleware=False))
        middleware = ProgressiveDisclosure(files, caches=CacheSettings(preload=False))
        lister, store, definitions = middleware.lister, middleware.store, middleware.definitions
        signatures = store.signatures()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for name, sig in signatures.items():
                lister.file_line(name, sig)
            parsed = store.cached()
            kib_parsed = _traced_kib(before)
            with store._lock:
                store._cache.clear()
            kib_lines = _traced_kib(before)
            rows.append(MemoryRow("parsed description files", parsed, int(store._cache.maxsize),
                                  kib_parsed - kib_lines, "`cache_size`"))
            rows.append(MemoryRow("listing lines", len(signatures), int(lister._lines.maxsize),
                                  kib_lines, "`listing_cache_size`"))
            before = tracemalloc.get_traced_memory()[0]
            bare = ProgressiveDisclosure(caches=CacheSettings(preload=False)).lister  # no files
            reduced = bare.reduce(tools)
            for tool in reduced:
                tool.to_mcp_tool(name=tool.name)
            del reduced
            rows.append(MemoryRow("reduced tools + wire forms", len(bare._memo),
                                  bare._memo.maxsize, _traced_kib(before),
                                  "`listing_cache_size`"))
            before = tracemalloc.get_traced_memory()[0]
            picked = tools[: definitions._memo.maxsize]
            for tool in picked:
                definitions.for_tool(tool)
            rows.append(MemoryRow("full definitions", len(definitions._memo),
                                  definitions._memo.maxsize, _traced_kib(before),
                                  "`definition_cache_size`"))
            grants = GrantStore()
            before = tracemalloc.get_traced_memory()[0]
            until = time.time() + 3600
            for i in range(int(grants._confirmed.maxsize)):
                grants._confirm(f"user:{i:064x}|tool_{i % 100}", until)
            rows.append(MemoryRow("confirmed store grants", grants.confirmed(),
                                  int(grants._confirmed.maxsize), _traced_kib(before),
                                  "fixed"))
        finally:
            tracemalloc.stop()
    return rows


async def grant_lookups(repeats: int = 2_000) -> dict[str, float]:
    """``GrantStore.has`` for a principal: confirmed in memory, and asking the store."""
    kv = MemoryStore()
    grants = GrantStore(GrantSettings(store=kv))
    caller = Caller(kind="principal", era="modern", key="user:" + "0" * 64)
    await grants.add(caller, ["tool"])
    facts: dict[str, float] = {}
    for label, forget in (("confirmed", False), ("store", True)):
        took: list[int] = []
        for _ in range(repeats):
            if forget:
                grants._confirmed.clear()
            began = time.perf_counter_ns()
            await grants.has(caller, "tool")
            took.append(time.perf_counter_ns() - began)
        facts[f"grant_lookup_{label}_us"] = Stats.from_ns(took).median_us
    return facts


def load_average() -> float:
    """The 1-minute load average (the machine is shared: reported with the figures)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


async def measure(budget: ScalingBudget, first_catalog: Catalog | None = None
                  ) -> tuple[list[ScalingRow], list[MemoryRow], dict[str, float]]:
    """Every scaling row, the cache memory rows and the facts (see module docstring)."""
    facts: dict[str, float] = {"load_start": load_average()}
    rows: list[ScalingRow] = []
    for size in budget.sizes:
        rows += await _size_rows(size, budget)
        facts[f"load_after_{size}"] = load_average()
    if first_catalog is not None:
        first, started = await first_listing(first_catalog, budget.first_lists)
        rows += first
        facts.update(started)
    facts.update(await unknown_names(budget.sizes))
    memory = await cache_memory(budget.memory_tools)
    facts.update(await grant_lookups())
    largest = max(budget.sizes)
    rows += await grouped_rows(largest, max(1, min(GROUPED_GROUPS, largest // 100)),
                               iterations=max(3, budget.reads // 3))
    facts["load_end"] = load_average()
    return rows, memory, facts


# -- groups and a tool cap at 10,000 tools in 100 groups (issue 20) ---------------------------
GROUPED_TOOLS = 10_000
GROUPED_GROUPS = 100
GROUPED_CAP = 40


GROUPED_CASE = "groups, capped"
"""The ``case`` of ``grouped_rows`` (rendered in a section of its own)."""


def _grouped_server(catalog: Catalog, groups: int, *, ours: bool,
                    bodies: dict[str, str]) -> FastMCP:
    """The catalog on one server, tool ``i`` tagged ``g<i % groups>`` (its group); ours
    capped at ``GROUPED_CAP``. Plain also gets ``describe_tools``, a tool answering the
    bytes ours answers for the same call, so both sides time a tool call of equal output."""
    server = FastMCP("grouped")
    for i, spec in enumerate(catalog.tools):
        tool = replay_tool(dict(spec))
        server.add_tool(tool.model_copy(update={"tags": {f"g{i % groups:02d}"}}))
    if ours:
        server.add_middleware(ProgressiveDisclosure(
            listing=ListingSettings(max_tools=GROUPED_CAP),
            caches=CacheSettings(preload=False)))
        return server

    async def describe_tools(tools: list[str] | None = None,
                             groups: list[str] | None = None) -> ToolResult:
        key = "groups" if groups else "tools"
        return ToolResult(content=[mt.TextContent(type="text", text=bodies[key])])

    server.add_tool(Tool.from_function(describe_tools, name="describe_tools"))
    return server


async def grouped_rows(tools: int = GROUPED_TOOLS, groups: int = GROUPED_GROUPS,
                       iterations: int = 20) -> list[ScalingRow]:
    """Capped listing, ``groups/list``, a group read and a describe of 5 at 10,000 tools in
    100 groups (the full run), each against plain FastMCP in the same run (interleaved): the capped
    listing and ``groups/list`` against plain's (whole) ``tools/list``, the group read and
    the describe against a plain tool call answering the same bytes."""
    from fastmcp_progressive.resolution.client import grouping, list_groups

    catalog = synthetic_catalog(tools)
    names = [t["name"] for t in catalog.tools]
    five = {"tools": names[7:12]}
    group = {"groups": [f"g{7 % groups:02d}"]}
    ours_server = _grouped_server(catalog, groups, ours=True, bodies={})
    rows: list[ScalingRow] = []
    async with Client(ours_server, extensions=[grouping()]) as o:
        await o.list_tools()
        bodies = {
            "tools": (await o.call_tool("describe_tools", five)).content[0].text,  # type: ignore[union-attr]
            "groups": (await o.call_tool("describe_tools", group)).content[0].text,  # type: ignore[union-attr]
        }
        plain_server = _grouped_server(catalog, groups, ours=False, bodies=bodies)
        async with Client(plain_server) as p:
            await p.list_tools()

            async def row(op: str, plain: Probe, ours: Probe, n: int) -> None:
                ps, os_ = await alternate(plain, ours, iterations=n, warmup=1)
                rows.append(ScalingRow(GROUPED_CASE, op, ps.stats(), os_.stats(), tools=tools))

            def listing(client: Client[Any]) -> Probe:
                return Probe(lambda: client.list_tools_mcp(cache_mode="bypass"),
                             prepare=gc.collect)

            await row(f"tools/list (capped at {GROUPED_CAP} vs all)", listing(p), listing(o),
                      max(3, iterations // 4))
            await row("groups/list (vs plain tools/list)", listing(p),
                      Probe(lambda: list_groups(o), prepare=gc.collect), max(3, iterations // 4))
            await row(f"describe_tools(groups=[1 of {groups}])",
                      Probe(lambda: p.call_tool("describe_tools", group)),
                      Probe(lambda: o.call_tool("describe_tools", group)), iterations)
            await row("describe_tools(tools=[5])",
                      Probe(lambda: p.call_tool("describe_tools", five)),
                      Probe(lambda: o.call_tool("describe_tools", five)), iterations)
    return rows


if __name__ == "__main__" and sys.argv[1:] == ["--grouped"]:
    for r in asyncio.run(grouped_rows()):
        print(f"{r.op}: plain {r.plain.median_us / 1e3:.2f} ms, ours {r.ours.median_us / 1e3:.2f}"
              f" ms, ratio {r.ratio_median:.2f}x (p95 {r.ratio_p95:.2f}x)")
