"""Section 4: issue 14's targets at 100 / 1,000 / 10,000 tools, as ratios against plain.

Synthetic catalogs, a description file per tool for ours (default level), every case timed
interleaved against plain in the same run: in memory in both eras, with another listing
middleware, mounted, proxied, and over streamable HTTP in three ways (``_size_rows`` lists
the cases); and the lookup floor: plain's static read after FastMCP's own ``get_tool`` for
each name the read selects, the least any read that asks FastMCP per name can cost, beside
FastMCP's own lookup and listing times (``fastmcp_lookups``). Also: the first listing
during and after ours' start-up preload; reads of unknown, hidden and known names; memory
per cache entry; a capped listing in 100 groups. The method is written once, in the report
(``report/cost.py``).

Example:
    ```python
    rows, memory, facts = await measure(SMOKE)
    ```
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.server import create_proxy
from fastmcp.server.auth import require_scopes
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult
from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive import (
    GrantSettings,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.payloads import resource_uri_for
from fastmcp_progressive.resolution.client import grouping, list_groups
from tests.parts import names_cached, parts
from tests.replay import replay_tool

from ..results import DEFAULT, FIRST_LISTING_CASE, GROUPED_CASE, LatencyRow, MemoryRow, Stats
from .catalogs import Catalog, read_selection, scenario_for, synthetic_catalog
from .servers import (
    EVERY_TOOL,
    TRANSPORTS,
    ReplayServer,
    Transport,
    add_static,
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
    repeated,
    rotate,
)

SIZES = (100, 1_000, 10_000)
HTTP_PAGE_SIZE = 1_000
HTTP_CASES = ("http legacy", "http", "http+auth")
GATEWAY_MAX_TOOLS = 1_000  # mounted: every call and read resolves names through the mount
PROXY_MAX_TOOLS = 100  # proxied: each listing and lookup goes to the backend and back
UNKNOWN_NAMES = 32
GROUPED_GROUPS = 100
GROUPED_CAP = 40


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
                     memory_tools=1_000)
SMOKE = ScalingBudget((100,), lists=3, reads=5, calls=10, hooked=3, first_lists=2,
                      memory_tools=100)


def _iterations(op: str, size: int, budget: ScalingBudget, transport: Transport,
                hooked: bool) -> int:
    """Fewer iterations where each costs more at scale: a listing; a call (FastMCP scans the
    catalog for its tool); a 2026-07-28 HTTP call (the client lists the first page again);
    anything with a listing middleware (each request lists the catalog)."""
    if hooked:
        return max(min(budget.hooked, 10), min(budget.hooked, 100_000 // size))
    if op == "tools/list":
        return max(5, min(budget.lists, 20_000 // size))
    if op.startswith("resources/read"):
        return budget.reads
    if transport.http and not transport.legacy and op == "tools/call (granted)":
        return max(10, min(budget.calls, 20_000 // size))
    return max(min(budget.calls, 60), min(budget.calls, 200_000 // size))


class LookupFloor(Middleware):
    """Before a read of one of ``names``' URIs, FastMCP's own ``get_tool`` for each name
    it selects (what a read that asks FastMCP per name pays at least, issue 26), then the
    plain static resource of the same bytes."""

    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = names

    async def on_read_resource(self, context: MiddlewareContext[Any],
                               call_next: CallNext[Any, Any]) -> Any:
        ctx = context.fastmcp_context
        if ctx is not None:
            for name in self.names.get(str(context.message.uri), ()):
                await ctx.fastmcp.get_tool(name)
        return await call_next(context)


@dataclass
class _Side:
    server: ReplayServer
    timer: ServerTimer


class _Servers:
    """Plain and ours for one size, per shape and auth, built once and shared by the cases
    (a 10,000-tool server takes seconds to build). Ours first; plain then serves ours'
    answers to the timed reads as static resources (same bytes)."""

    def __init__(self, catalog: Catalog, files: Path) -> None:
        self.catalog, self.files = catalog, files
        self.uris = {n: resource_uri_for(read_selection(catalog, n)) for n in (5, 20)}
        self._pairs: dict[tuple[str, bool, str], tuple[_Side, _Side]] = {}
        self._child: FastMCP | None = None
        self._bodies: dict[str, str] = {}

    async def pair(self, shape: str, transport: Transport) -> tuple[_Side, _Side]:
        # an app is served over HTTP once (its session manager runs once): a pair each
        key = (shape, transport.auth, transport.name if transport.http else "")
        if key not in self._pairs and shape == "floor":  # plain with lookups in ours' place
            plain, _ = await self.pair("local", transport)
            timer = ServerTimer()
            names = {self.uris[n]: read_selection(self.catalog, n) for n in self.uris}
            floor = build_server(self.catalog, "plain", outer=[timer, LookupFloor(names)],
                                 static_resources=self._bodies)
            self._pairs[key] = (plain, _Side(floor, timer))
        if key not in self._pairs:
            ours = self._side(shape, True, {}, transport)
            async with host_client(ours.server.mcp) as client:
                bodies = {uri: text_of((await client.read_resource_mcp(uri)).contents)
                          for uri in self.uris.values()}
            self._bodies = bodies
            self._pairs[key] = (self._side(shape, False, bodies, transport), ours)
        return self._pairs[key]

    def _side(self, shape: str, ours: bool, bodies: dict[str, str],
              transport: Transport) -> _Side:
        timer = ServerTimer()
        if shape == "local":
            return _Side(build_server(
                self.catalog, DEFAULT if ours else "plain",
                descriptions_dir=self.files if ours else None, outer=[timer],
                static_resources=bodies, auth=transport.verifier(),
                list_page_size=HTTP_PAGE_SIZE if transport.http else None), timer)
        if self._child is None:  # one plain child behind both gateways
            self._child = build_server(self.catalog, "plain").mcp
        gateway = FastMCP("gateway", auth=transport.verifier())
        if shape == "mounted":
            gateway.mount(self._child)
        else:
            gateway = create_proxy(self._child, name="gateway")
        add_static(gateway, bodies)
        gateway.add_middleware(timer)
        middleware = ProgressiveDisclosure(self.files, listing=EVERY_TOOL) if ours else None
        if middleware is not None:
            gateway.add_middleware(middleware)
        return _Side(ReplayServer(DEFAULT if ours else "plain", gateway, middleware), timer)


@contextmanager
def _hooked(*servers: FastMCP, first: bool) -> Iterator[list[ListingObserver]]:
    """A pass-through listing hook in each server while the block runs: outermost (a
    listing's server clock) or last (another listing middleware next to ours)."""
    hooks = [ListingObserver() for _ in servers]
    for server, hook in zip(servers, hooks, strict=True):
        server.middleware.insert(0 if first else len(server.middleware), hook)
    try:
        yield hooks
    finally:
        for server, hook in zip(servers, hooks, strict=True):
            server.middleware.remove(hook)


async def _case(servers: _Servers, shape: str, case: str, transport: Transport,
                ops: Sequence[str], budget: ScalingBudget, hooked: bool) -> list[LatencyRow]:
    """Time ``ops`` for plain and ours on one shape and transport, interleaved."""
    catalog = servers.catalog
    size = len(catalog.tools)
    target = scenario_for(catalog).tools(1)[0]
    unread = unread_calls(catalog, {target, *read_selection(catalog, 20)})
    plain, ours = await servers.pair(shape, transport)
    warmup = 1 if size >= 10_000 else 3  # a 10,000-tool listing takes seconds
    rows: list[LatencyRow] = []
    async with AsyncExitStack() as stack:
        o = await stack.enter_async_context(connect(ours.server, transport))
        p = await stack.enter_async_context(connect(plain.server, transport))
        for client in (p, o):
            await client.list_tools_mcp(cache_mode="bypass")
        for uri in (*servers.uris.values(), resource_uri_for([target])):
            if ours.server.middleware is not None or uri in servers.uris.values():
                await o.read_resource_mcp(uri)  # this client's grants: the reads it times
        await ours.server.settle()
        if hooked:
            stack.enter_context(_hooked(plain.server.mcp, ours.server.mcp, first=False))
        for op in ops:
            n = _iterations(op, size, budget, transport, hooked)
            if op == "tools/list":  # from a collected heap: no side pays the other's garbage
                with _hooked(plain.server.mcp, ours.server.mcp, first=True) as (pt, ot):
                    pair = listing(p, pt, gc.collect), listing(o, ot, gc.collect)
                    rows.append(await compared(case, op, *pair, n, warmup=warmup, tools=size))
                continue
            if op.startswith("resources/read"):
                uri = servers.uris[int(op.split()[1])]
                pair = read(p, uri, plain.timer), read(o, uri, ours.timer)
                op = f"{op} (hit)"
            elif op == "tools/call (granted)":
                arguments = sample_arguments(catalog.tool(target))
                pair = call(p, target, arguments, plain.timer), call(o, target, arguments,
                                                                     ours.timer)
            else:  # refused: a refusal grants its tool, so never the same tool twice
                pair = call_each(p, unread, plain.timer), call_each(o, unread, ours.timer)
                n = max(1, min(n, len(unread) - warmup))
            rows.append(await compared(case, op, *pair, n, warmup=warmup, tools=size))
    return rows


async def _size_rows(size: int, budget: ScalingBudget) -> list[LatencyRow]:
    catalog = synthetic_catalog(size)
    memory = TRANSPORTS["memory"]
    legacy = Transport("memory legacy", legacy=True)  # ours gates it (2026-07-28: anonymous)
    plans: list[tuple[str, str, Transport, tuple[str, ...], bool]] = [
        ("local", "local", memory, ("tools/list", "resources/read 5", "resources/read 20",
                                    "tools/call (granted)"), False),
        ("local", "local, legacy", legacy, ("tools/call (granted)", "tools/call (refused)"),
         False),
        ("local", "listing middleware", memory, ("resources/read 5",), True),
        ("local", "listing middleware, legacy", legacy, ("tools/call (refused)",), True),
        ("floor", "lookup floor", memory, ("resources/read 5", "resources/read 20"), False),
    ]
    if size <= GATEWAY_MAX_TOOLS:
        plans.append(("mounted", "mounted", memory,
                      ("tools/list", "resources/read 5", "tools/call (granted)"), False))
    if size <= PROXY_MAX_TOOLS:
        plans.append(("proxied", "proxied", memory, ("tools/list", "resources/read 5"), False))
    plans += [("local", name, TRANSPORTS[name], ("tools/call (granted)",), False)
              for name in HTTP_CASES]
    rows: list[LatencyRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        servers = _Servers(catalog, write_descriptions(catalog, Path(tmp)))
        for shape, case, transport, ops, hooked in plans:
            began = time.perf_counter()
            rows += await _case(servers, shape, case, transport, ops, budget, hooked)
            print(f"[bench]   {size:,} tools, {case}: {time.perf_counter() - began:.1f} s",
                  file=sys.stderr, flush=True)
    return rows


async def first_listing(catalog: Catalog, iterations: int
                        ) -> tuple[list[LatencyRow], dict[str, float]]:
    """The first ``tools/list`` of fresh servers with a file per tool, once ours' start-up
    preload is done and while it still runs; facts: the constructor's and the preload's
    median durations."""
    built_ns: list[int] = []
    preload_ns: list[int] = []
    rows: list[LatencyRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-first-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        for _ in range(5):  # what start-up pays for ours: the constructor, nothing else
            began = time.perf_counter_ns()
            middleware = ProgressiveDisclosure(files)
            built_ns.append(time.perf_counter_ns() - began)
            middleware.close()  # nothing runs in the background before a request (#35)
        for label, wait in (("after start-up", True), ("racing the preload", False)):
            @asynccontextmanager
            async def fresh(wait: bool = wait) -> AsyncIterator[tuple[Probe, Probe]]:
                plain = build_server(catalog, "plain")
                ours = build_server(catalog, DEFAULT, descriptions_dir=files)
                async with host_client(plain.mcp) as p, host_client(ours.mcp) as o:
                    took = await ours.preloaded() if wait else None
                    if took is not None:
                        preload_ns.append(int(took * 1e9))
                    yield listing(p), listing(o)

            rows.append(await compared_fresh(FIRST_LISTING_CASE, f"tools/list, {label}",
                                             iterations, fresh, tools=len(catalog.tools)))
    facts = {"constructor_us": Stats.from_ns(built_ns).median_us}
    if preload_ns:
        facts["preload_ms"] = Stats.from_ns(preload_ns).median_us / 1e3
    return rows, facts


def _secret(x: int) -> int:
    """A tool the anonymous caller may not see."""
    return x


async def unknown_names(sizes: Sequence[int], rounds: int = 15) -> dict[str, float]:
    """Per size: the bytes and median time of a read naming 32 tools that do not exist, and
    the time of a read of one unknown name (a typo of a real one: its suggestions list the
    caller's tools), of one known name, and of one hidden by auth (answered like unknown)."""
    facts: dict[str, float] = {}
    for size in sizes:
        catalog = synthetic_catalog(size)
        ours = build_server(catalog, DEFAULT)
        ours.mcp.add_tool(Tool.from_function(_secret, name="secret", auth=require_scopes("a")))
        known = catalog.names[size // 2]
        uris = {"unknown": resource_uri_for([f"no_such_tool_{i}" for i in range(UNKNOWN_NAMES)]),
                "typo": resource_uri_for([known[:-1] + "x"]), "known": resource_uri_for([known]),
                "hidden": resource_uri_for(["secret"])}
        async with host_client(ours.mcp) as client:
            text = text_of((await client.read_resource_mcp(uris["unknown"])).contents)
            samples = await rotate([read(client, uri) for uri in uris.values()],
                                   iterations=rounds, warmup=1)
        facts[f"unknown_bytes_{size}"] = float(len(text.encode("utf-8")))
        for kind, measured in zip(uris, samples, strict=True):
            facts[f"{kind}_ms_{size}"] = measured.stats().median_us / 1e3
    return facts


async def fastmcp_lookups(sizes: Sequence[int], rounds: int = 200) -> dict[str, float]:
    """Per size, on a plain server: the median µs of FastMCP's own ``get_tool`` of one
    name (mid-catalog) and of its ``list_tools`` without middleware (one listing instead
    of N lookups, issue 26's idea (c))."""
    facts: dict[str, float] = {}
    for size in sizes:
        catalog = synthetic_catalog(size)
        mcp = build_server(catalog, "plain").mcp
        name = catalog.names[size // 2]
        lookup = await repeated(Probe(partial(mcp.get_tool, name)),
                                max(20, rounds * 100 // size))
        listed = await repeated(Probe(partial(mcp.list_tools, run_middleware=False)),
                                max(5, rounds * 10 // size))
        facts[f"lookup_us_{size}"] = lookup.median_us
        facts[f"list_us_{size}"] = listed.median_us
    return facts


def _traced_kib(before: int) -> float:
    gc.collect()
    return (tracemalloc.get_traced_memory()[0] - before) / 1024


async def cache_memory(size: int) -> list[MemoryRow]:
    """tracemalloc's view of what each of ours' caches holds per entry, at ``size`` tools."""
    catalog = synthetic_catalog(size)
    rows: list[MemoryRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        tools = list(await build_server(catalog, "plain").mcp.list_tools(run_middleware=False))
        middleware = ProgressiveDisclosure(files, listing=ListingSettings(preload=False))
        lister, store, definitions = (parts(middleware).lister, middleware.store,
                                      parts(middleware).definitions)
        signatures = store.signatures()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for name, sig in signatures.items():
                lister.file_facts(name, sig)
            parsed = names_cached(store)
            kib_parsed = _traced_kib(before)
            with store._lock:
                store._cache.clear()
            kib_lines = _traced_kib(before)
            rows.append(MemoryRow("parsed description files", parsed, int(store._cache.maxsize),
                                  kib_parsed - kib_lines, "`cache_size`"))
            rows.append(MemoryRow("listing lines", len(signatures), int(lister._lines.maxsize),
                                  kib_lines, "`listing_cache_size`"))
            before = tracemalloc.get_traced_memory()[0]
            no_files = ProgressiveDisclosure(listing=ListingSettings(preload=False))
            bare = parts(no_files).lister
            reduced = bare.reduce(tools)
            for tool in reduced:
                tool.to_mcp_tool(name=tool.name)
            del reduced
            rows.append(MemoryRow("reduced tools + wire forms", len(bare._memo),
                                  bare._memo.maxsize, _traced_kib(before),
                                  "`listing_cache_size`"))
            before = tracemalloc.get_traced_memory()[0]
            for tool in tools[: int(store._cache.maxsize)]:
                definitions.for_tool(tool)  # kept in the store's entries, with their files
            rows.append(MemoryRow("full definitions (and their parsed files)", names_cached(store),
                                  int(store._cache.maxsize), _traced_kib(before),
                                  "`definition_cache_size`"))
            grants = GrantStore()
            before = tracemalloc.get_traced_memory()[0]
            until = time.time() + 3600
            for i in range(int(grants._until.maxsize)):
                grants._confirm(f"user:{i:064x}|tool_{i % 100}", until)
            rows.append(MemoryRow("confirmed store grants", len(grants._until),
                                  int(grants._until.maxsize), _traced_kib(before), "fixed"))
        finally:
            tracemalloc.stop()
    return rows


async def grant_lookups(repeats: int = 2_000) -> dict[str, float]:
    """``GrantStore.has`` for a principal: confirmed in memory, and asking the store."""
    grants = GrantStore(GrantSettings(store=MemoryStore()))
    caller = Caller(kind="principal", era="modern", key="user:" + "0" * 64)
    await grants.add(caller, ["tool"])
    confirmed = await repeated(Probe(lambda: grants.has(caller, "tool")), repeats)
    store = await repeated(Probe(lambda: grants.has(caller, "tool"),
                                 prepare=grants._until.clear), repeats)
    return {"grant_lookup_confirmed_us": confirmed.median_us,
            "grant_lookup_store_us": store.median_us}


def _grouped_server(catalog: Catalog, groups: int, *, ours: bool,
                    bodies: dict[str, str]) -> FastMCP:
    """The catalog on one server, tool ``i`` tagged ``g<i % groups>``; ours capped at
    ``GROUPED_CAP``. Plain gets a ``describe_tools`` answering the bytes ours answers, so
    both sides time a tool call of equal output."""
    server = FastMCP("grouped")
    for i, spec in enumerate(catalog.tools):
        server.add_tool(replay_tool(dict(spec)).model_copy(update={"tags": {f"g{i % groups:02d}"}}))
    if ours:
        server.add_middleware(ProgressiveDisclosure(
            listing=ListingSettings(max_tools=GROUPED_CAP, preload=False)))
        return server

    async def describe_tools(tools: list[str] | None = None,
                             groups: list[str] | None = None) -> ToolResult:
        text = bodies["groups" if groups else "tools"]
        return ToolResult(content=[mt.TextContent(type="text", text=text)])

    server.add_tool(Tool.from_function(describe_tools, name="describe_tools"))
    return server


async def grouped_rows(tools: int, groups: int, iterations: int) -> list[LatencyRow]:
    """Capped listing and ``groups/list`` against plain's whole ``tools/list``; a group read
    and a describe of 5 against a plain tool call answering the same bytes."""
    catalog = synthetic_catalog(tools)
    five = {"tools": catalog.names[7:12]}
    group = {"groups": [f"g{7 % groups:02d}"]}
    rows: list[LatencyRow] = []
    async with host_client(_grouped_server(catalog, groups, ours=True, bodies={}),
                      extensions=[grouping()]) as o:
        await o.list_tools()
        bodies = {key: text_of((await o.call_tool("describe_tools", args)).content)
                  for key, args in (("tools", five), ("groups", group))}
        async with host_client(_grouped_server(catalog, groups, ours=False, bodies=bodies)) as p:
            await p.list_tools()
            few = max(3, iterations // 4)
            cases: list[tuple[str, Probe, Probe, int]] = [
                (f"tools/list (capped at {GROUPED_CAP} vs all)", listing(p, None, gc.collect),
                 listing(o, None, gc.collect), few),
                ("groups/list (vs plain tools/list)", listing(p, None, gc.collect),
                 Probe(lambda: list_groups(o), prepare=gc.collect), few),
                (f"describe_tools(groups=[1 of {groups}])",
                 Probe(lambda: p.call_tool("describe_tools", group)),
                 Probe(lambda: o.call_tool("describe_tools", group)), iterations),
                ("describe_tools(tools=[5])", Probe(lambda: p.call_tool("describe_tools", five)),
                 Probe(lambda: o.call_tool("describe_tools", five)), iterations)]
            for op, plain, mine, n in cases:
                rows.append(await compared(GROUPED_CASE, op, plain, mine, n, warmup=1,
                                           tools=tools))
    return rows


def load_average() -> float:
    """The 1-minute load average (the machine is shared: reported with the figures)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


async def measure(budget: ScalingBudget, first_catalog: Catalog | None = None
                  ) -> tuple[list[LatencyRow], list[MemoryRow], dict[str, float]]:
    """Every scaling row, the cache memory rows and the facts (see the module docstring)."""
    facts: dict[str, float] = {"load_start": load_average()}
    rows: list[LatencyRow] = []
    for size in budget.sizes:
        rows += await _size_rows(size, budget)
        facts[f"load_after_{size}"] = load_average()
    if first_catalog is not None:
        first, started = await first_listing(first_catalog, budget.first_lists)
        rows += first
        facts.update(started)
    facts.update(await unknown_names(budget.sizes))
    facts.update(await fastmcp_lookups(budget.sizes))
    memory = await cache_memory(budget.memory_tools)
    facts.update(await grant_lookups())
    largest = max(budget.sizes)
    rows += await grouped_rows(largest, max(1, min(GROUPED_GROUPS, largest // 100)),
                               iterations=max(3, budget.reads // 3))
    facts["load_end"] = load_average()
    return rows, memory, facts
