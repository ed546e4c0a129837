"""Section 3: how ours scales with catalog size, caller count and file edits.

Listing time and memory of synthetic catalogs up to 10,000 tools (plain, ours without and
with a description file per tool, every tool listed: ``max_tools=None``); grants held for
100,000 sessions and principals; the time from a description-file write to the first read
serving it, for three kinds of write (the last keeps size, inode and mtime: only the file
watcher can see it). The method is written once, in the report (``report/cost.py``).

Example:
    ```python
    rows = await listing_scale((10, 100), iterations=5)
    ```
"""

from __future__ import annotations

import gc
import hashlib
import os
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path

from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive import GrantSettings
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.payloads import resource_uri_for

from ..results import DEFAULT, FileEditRow, GrantScaleRow, ListingScaleRow, Stats
from .catalogs import Catalog, synthetic_catalog
from .servers import (
    ReplayServer,
    build_server,
    host_client,
    rewrite_marker,
    text_of,
    write_descriptions,
)
from .timing import ListingObserver, listing, rotate, time_once

LISTING_SIZES = (10, 100, 1_000, 10_000)
VARIANTS = ("plain", "ours", "ours+files")
GRANTS_EACH = {"session": 3, "principal": 1}
EDITS = ("atomic replace", "in place", "in place, same size and mtime")
EDIT_DEADLINE_S = 3.0


def _build(catalog: Catalog, variant: str, files: Path,
           observer: ListingObserver | None = None) -> ReplayServer:
    outer = [observer] if observer is not None else []
    if variant == "plain":
        return build_server(catalog, "plain", outer=outer)
    return build_server(catalog, DEFAULT, outer=outer,
                        descriptions_dir=files if variant == "ours+files" else None)


async def traced_kib(work: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """(peak, still held) KiB tracemalloc sees while and after ``work`` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        await work()
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - before) / 1024, (current - before) / 1024


async def listing_scale(sizes: Sequence[int] = LISTING_SIZES, *,
                        iterations: int = 20) -> list[ListingScaleRow]:
    """Listing time and memory per synthetic catalog size and variant."""
    rows: list[ListingScaleRow] = []
    for size in sizes:
        catalog = synthetic_catalog(size)
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
            files = write_descriptions(catalog, Path(tmp))
            observers = [ListingObserver() for _ in VARIANTS]
            servers = [_build(catalog, v, files, o) for v, o in zip(VARIANTS, observers,
                                                                   strict=True)]
            async with AsyncExitStack() as stack:
                clients = [await stack.enter_async_context(host_client(s.mcp)) for s in servers]
                cold = []
                for server, client in zip(servers, clients, strict=True):
                    cold.append(await time_once(listing(client)))
                    await server.settle()
                samples = await rotate(
                    [listing(c, o) for c, o in zip(clients, observers, strict=True)],
                    iterations=max(3, min(iterations, 20_000 // size)), warmup=1)
            for variant, first, measured in zip(VARIANTS, cold, samples, strict=True):
                fresh = _build(catalog, variant, files)

                async def first_listing(server: ReplayServer = fresh) -> None:
                    async with host_client(server.mcp) as client:
                        await client.list_tools_mcp(cache_mode="bypass")
                        await server.settle()

                peak, retained = await traced_kib(first_listing)
                server_stats = measured.server_stats()
                rows.append(ListingScaleRow(
                    tools=size, variant=variant, cold_ms=first / 1e6, warm=measured.stats(),
                    server_ms=server_stats.median_us / 1e3 if server_stats else 0.0,
                    peak_kib=peak, retained_kib=retained))
    return rows


def _callers(kind: str, count: int, offset: int = 0) -> list[Caller]:
    ids = range(offset, offset + count)
    if kind == "session":
        return [Caller(kind="session", era="legacy", key=f"{i:032x}") for i in ids]
    return [Caller(kind="principal", era="modern",
                   key="user:" + hashlib.sha256(f"principal-{i}".encode()).hexdigest())
            for i in ids]


async def _per_call(callers: list[Caller], each: Callable[[Caller], Awaitable[object]],
                    batch: int = 100) -> Stats:
    """Time per call of ``each``, from batches of ``batch`` (one clock read per batch)."""
    per: list[int] = []
    for start in range(0, len(callers), batch):
        chunk = callers[start:start + batch]
        began = time.perf_counter_ns()
        for caller in chunk:
            await each(caller)
        per.append((time.perf_counter_ns() - began) // len(chunk))
    return Stats.from_ns(per)


async def grant_scale(callers: int = 100_000, *, batches: int = 50) -> list[GrantScaleRow]:
    """Memory, write and lookup time of grants for ``callers`` sessions, then principals."""
    return [await _grants(kind, callers, batches) for kind in ("session", "principal")]


async def _grants(kind: str, callers: int, batches: int) -> GrantScaleRow:
    """The fill is traced (for memory), which slows it; writes are timed untraced, on
    newcomers to the filled store."""
    tools = [f"tool_{i}" for i in range(GRANTS_EACH[kind])]
    people = _callers(kind, callers)
    store = GrantStore(GrantSettings(max_sessions=max(callers, 100_000),
                                     store=MemoryStore() if kind == "principal" else None))

    async def fill() -> None:
        for caller in people:
            await store.add(caller, tools)

    began = time.perf_counter()
    _, used_kib = await traced_kib(fill)
    fill_s = time.perf_counter() - began
    picks = people[:: max(1, callers // (batches * 100))][: batches * 100]
    return GrantScaleRow(
        kind=kind, callers=callers, grants_each=len(tools), fill_s=fill_s,
        memory_mib=used_kib / 1024,
        hit=await _per_call(picks, lambda c: store.has(c, tools[0])),
        miss=await _per_call(picks, lambda c: store.has(c, "never_granted")),
        write=await _per_call(_callers(kind, max(1, batches // 5) * 100, offset=10**9),
                              lambda c: store.add(c, ["tool_new"])))


def _write(path: Path, marker: str, how: str) -> None:
    before = os.stat(path)
    rewrite_marker(path, marker, atomic=how == "atomic replace")
    if how == "in place, same size and mtime":
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


async def file_edits(catalog: Catalog, *, trials: int) -> list[FileEditRow]:
    """Write-to-served time for each kind of write, reading back to back until served."""
    rows: list[FileEditRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-edit-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        server = build_server(catalog, DEFAULT, descriptions_dir=files)
        name = catalog.names[0]
        uri = resource_uri_for([name])
        async with host_client(server.mcp) as client:
            await client.read_resource_mcp(uri)
            await server.settle()
            version = 10
            for how in EDITS:
                times: list[int] = []
                reads_needed: list[int] = []
                for _ in range(trials):
                    version += 1
                    _write(files / f"{name}.json", f"v{version}", how)
                    began = time.perf_counter_ns()
                    reads = 0
                    while time.perf_counter_ns() - began < EDIT_DEADLINE_S * 1e9:
                        reads += 1
                        result = await client.read_resource_mcp(uri)
                        if f"[v{version}]" in text_of(result.contents):
                            times.append(time.perf_counter_ns() - began)
                            reads_needed.append(reads)
                            break
                rows.append(FileEditRow(
                    how=how, trials=trials, served=len(times),
                    write_to_served=Stats.from_ns(times) if times else None,
                    max_reads=max(reads_needed, default=0),
                    stale_reads=sum(r - 1 for r in reads_needed)))
    return rows
