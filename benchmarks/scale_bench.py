"""Section 3: how ours scales with catalog size, caller count and file edits.

- **Listing**: synthetic catalogs of 10 to 10,000 tools, in memory. Per size and variant
  (plain, ours without files, ours with a description file per tool): the first listing
  (cold), repeated listings (rotated with the other variants), the server-side time of
  the listing chain (a pass-through timer outside ours), and tracemalloc's peak for a
  fresh server's first listing plus what the server still holds after the client left.
- **Grants**: 100,000 handshake-era sessions (in-memory TTL cache, three tools each) and
  100,000 principals (FastMCP's default session-state ``MemoryStore``, one tool each:
  its ~0.1 ms puts make three per principal too slow to trace in a ten-minute run):
  traced memory of the filled store, and ``GrantStore.has`` time for granted and
  ungranted tools.
- **File edits**: from writing a description file to the first ``resources/read`` that
  serves the new text, reading back to back (no sleeps; bounded by a deadline). Three
  kinds of write: atomic replace (new inode), in place (same inode, new mtime), and in
  place with size and mtime unchanged, as a filesystem with a coarse clock presents a
  quick same-length edit: only the description-file watcher can notice that one.

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
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path

from fastmcp import Client
from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive import GrantSettings
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.payloads import resource_uri_for

from . import probes
from .corpus import Catalog
from .fixtures import rewrite_marker, write_descriptions
from .replay import DEFAULT, ReplayServer, build_server
from .results import FileEditRow, GrantScaleRow, ListingScaleRow, Stats
from .synthetic import synthetic_catalog
from .timing import ListingObserver, rotate, time_once

LISTING_SIZES = (10, 100, 1_000, 10_000)
VARIANTS = ("plain", "ours", "ours+files")
GRANTS_EACH = {"session": 3, "principal": 1}
EDIT_DEADLINE_S = 3.0


def _iterations_for(size: int, base: int) -> int:
    return max(3, min(base, 20_000 // size))


def _build(catalog: Catalog, variant: str, files: Path,
           observer: ListingObserver | None = None) -> ReplayServer:
    outer = [observer] if observer is not None else []
    if variant == "plain":
        return build_server(catalog, "plain", outer=outer)
    directory = files if variant == "ours+files" else None
    return build_server(catalog, DEFAULT, descriptions_dir=directory, outer=outer)


async def _memory(catalog: Catalog, variant: str, files: Path) -> tuple[float, float]:
    """(peak KiB, retained KiB) of a fresh server's first listing, traced by tracemalloc.

    Peak covers connecting, the listing round trip and the client's parsing; retained is
    what is still allocated once the client has disconnected: the server's own caches
    (ours keeps a reduced copy of every tool and, with files, parsed descriptions).
    """
    server = _build(catalog, variant, files)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        async with Client(server.mcp) as client:
            await client.list_tools_mcp(cache_mode="bypass")
            await server.settle()
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
            servers = [_build(catalog, v, files, o)
                       for v, o in zip(VARIANTS, observers, strict=True)]
            async with AsyncExitStack() as stack:
                clients = [await stack.enter_async_context(Client(s.mcp)) for s in servers]
                cold = []
                for server, client in zip(servers, clients, strict=True):
                    cold.append(await time_once(probes.listing(client)))
                    await server.settle()
                samples = await rotate(
                    [probes.listing(c, o) for c, o in zip(clients, observers, strict=True)],
                    iterations=_iterations_for(size, iterations), warmup=1)
            for variant, first, measured in zip(VARIANTS, cold, samples, strict=True):
                peak, retained = await _memory(catalog, variant, files)
                server_stats = measured.server_stats()
                rows.append(ListingScaleRow(
                    tools=size, variant=variant, cold_ms=first / 1e6, warm=measured.stats(),
                    server_ms=server_stats.median_us / 1e3 if server_stats else 0.0,
                    peak_kib=peak, retained_kib=retained,
                ))
    return rows


def _callers(kind: str, count: int, offset: int = 0) -> list[Caller]:
    ids = range(offset, offset + count)
    if kind == "session":
        return [Caller(kind="session", era="legacy", key=f"{i:032x}") for i in ids]
    return [
        Caller(kind="principal", era="modern",
               key="user:" + hashlib.sha256(f"principal-{i}".encode()).hexdigest())
        for i in ids
    ]


async def _lookups(store: GrantStore, callers: list[Caller], tool: str,
                   batches: int, batch: int = 100) -> Stats:
    """Per-lookup time, from batches of ``batch`` lookups (one clock read per batch)."""
    per_lookup: list[int] = []
    step = max(1, len(callers) // (batches * batch))
    picks = callers[::step][: batches * batch]
    for start in range(0, len(picks), batch):
        chunk = picks[start:start + batch]
        began = time.perf_counter_ns()
        for caller in chunk:
            await store.has(caller, tool)
        per_lookup.append((time.perf_counter_ns() - began) // len(chunk))
    return Stats.from_ns(per_lookup)


async def _writes(store: GrantStore, kind: str, batches: int, batch: int = 100) -> Stats:
    """Per-grant ``add`` time for new callers joining the filled store (untraced)."""
    newcomers = _callers(kind, batches * batch, offset=10**9)
    per_write: list[int] = []
    for start in range(0, len(newcomers), batch):
        chunk = newcomers[start:start + batch]
        began = time.perf_counter_ns()
        for caller in chunk:
            await store.add(caller, ["tool_new"])
        per_write.append((time.perf_counter_ns() - began) // len(chunk))
    return Stats.from_ns(per_write)


async def grant_scale(callers: int = 100_000, *, batches: int = 50) -> list[GrantScaleRow]:
    """Memory, write and lookup time of grants for ``callers`` sessions, then principals.

    The fill is traced by tracemalloc (for memory), which slows it several times over, so
    write time is measured separately, untraced, on newcomers to the filled store.
    """
    rows: list[GrantScaleRow] = []
    for kind in ("session", "principal"):
        tools = [f"tool_{i}" for i in range(GRANTS_EACH[kind])]
        people = _callers(kind, callers)
        kv = MemoryStore() if kind == "principal" else None
        store = GrantStore(GrantSettings(max_sessions=max(callers, 100_000), store=kv))
        gc.collect()
        tracemalloc.start()
        began = time.perf_counter()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for caller in people:
                await store.add(caller, tools)
            gc.collect()
            used = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        fill_s = time.perf_counter() - began
        hit = await _lookups(store, people, tools[0], batches)
        miss = await _lookups(store, people, "never_granted", batches)
        write = await _writes(store, kind, max(1, batches // 5))
        rows.append(GrantScaleRow(kind=kind, callers=callers, grants_each=len(tools),
                                  fill_s=fill_s, memory_mib=used / 2**20, write=write,
                                  hit=hit, miss=miss))
    return rows


def _write(path: Path, marker: str, how: str) -> None:
    if how == "atomic replace":
        rewrite_marker(path, marker, atomic=True)
        return
    before = os.stat(path)
    rewrite_marker(path, marker, atomic=False)
    if how == "in place, same size and mtime":
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


async def file_edits(catalog: Catalog, *, trials: int) -> list[FileEditRow]:
    """Write-to-served time for each kind of write, reading back to back until served."""
    rows: list[FileEditRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-edit-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        server = build_server(catalog, DEFAULT, descriptions_dir=files)
        name = catalog.names[0]
        path = files / f"{name}.json"
        uri = resource_uri_for([name])
        async with Client(server.mcp) as client:
            await client.read_resource_mcp(uri)
            await server.settle()
            version = 10
            for how in ("atomic replace", "in place", "in place, same size and mtime"):
                times: list[int] = []
                reads_needed: list[int] = []
                for _ in range(trials):
                    version += 1
                    marker = f"v{version}"
                    _write(path, marker, how)
                    began = time.perf_counter_ns()
                    reads, served = 0, False
                    while time.perf_counter_ns() - began < EDIT_DEADLINE_S * 1e9:
                        result = await client.read_resource_mcp(uri)
                        reads += 1
                        text = "".join(getattr(c, "text", "") for c in result.contents)
                        if f"[{marker}]" in text:
                            served = True
                            break
                    if served:
                        times.append(time.perf_counter_ns() - began)
                        reads_needed.append(reads)
                rows.append(FileEditRow(
                    how=how, trials=trials, served=len(times),
                    write_to_served=Stats.from_ns(times) if times else None,
                    max_reads=max(reads_needed, default=0),
                    stale_reads=sum(r - 1 for r in reads_needed),
                ))
    return rows
