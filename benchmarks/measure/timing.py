"""Timing plain FastMCP against ours fairly: alternately, in one process, one loop.

A ratio is only honest when both sides see the same machine state, so every iteration runs
the plain probe and ours back to back, swapping which goes first (drift, GC and frequency
changes hit both alike). Client-side time is one ``perf_counter_ns`` around the awaited raw
request (``*_mcp`` calls: no convenience parsing to dilute a ratio; listings bypass the
client's cache). Server-side time comes from ``ServerTimer``, a middleware placed before
ours: the chain below it (our hook plus FastMCP's handler), without JSON-RPC framing, the
transport or serialization.

Example:
    ```python
    row = await compared("memory", "tools/list", listing(plain), listing(ours), iterations=50)
    ```
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from fastmcp import Client
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from ..results import LatencyRow, Stats


class ServerTimer(Middleware):
    """Records how long the rest of the chain took for the last read or call.

    It has no ``on_list_tools`` on purpose: ours treats any middleware overriding that hook
    as a possible listing filter and checks visibility by listing the catalog, so a listing
    timer would slow the very reads and calls it times (``ListingObserver`` measures that).
    """

    def __init__(self) -> None:
        self.last_ns: dict[str, int] = {}

    async def _timed(self, kind: str, context: Any, call_next: CallNext[Any, Any]) -> Any:
        start = time.perf_counter_ns()
        try:
            return await call_next(context)
        finally:
            self.last_ns[kind] = time.perf_counter_ns() - start

    async def on_read_resource(self, context: MiddlewareContext[Any],
                               call_next: CallNext[Any, Any]) -> Any:
        return await self._timed("resources/read", context, call_next)

    async def on_call_tool(self, context: MiddlewareContext[Any],
                           call_next: CallNext[Any, Any]) -> Any:
        return await self._timed("tools/call", context, call_next)

    def take(self, kind: str) -> int | None:
        """The last duration recorded for ``kind`` (and forget it), or None."""
        return self.last_ns.pop(kind, None)


class ListingObserver(ServerTimer):
    """A ``ServerTimer`` that also times ``tools/list``: a pass-through listing hook."""

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        return await self._timed("tools/list", context, call_next)


@dataclass
class Probe:
    """One side of a comparison: the request, an untimed setup, an optional server clock."""

    run: Callable[[], Awaitable[Any]]
    prepare: Callable[[], Any] | None = None
    server: Callable[[], int | None] | None = None


@dataclass
class Samples:
    """Client-side (and server-side, when probed) durations in nanoseconds."""

    client: list[int] = field(default_factory=list)
    server: list[int] = field(default_factory=list)

    def stats(self) -> Stats:
        return Stats.from_ns(self.client)

    def server_stats(self) -> Stats | None:
        return Stats.from_ns(self.server) if self.server else None


def _clock(timer: ServerTimer | None, kind: str) -> Callable[[], int | None] | None:
    return (lambda: timer.take(kind)) if timer is not None else None


def listing(client: Client[Any], timer: ServerTimer | None = None,
            prepare: Callable[[], Any] | None = None) -> Probe:
    """``tools/list`` (its first page), the client's cache bypassed."""
    return Probe(lambda: client.list_tools_mcp(cache_mode="bypass"), prepare,
                 _clock(timer, "tools/list"))


def call(client: Client[Any], name: str, arguments: dict[str, Any],
         timer: ServerTimer | None = None) -> Probe:
    return Probe(lambda: client.call_tool_mcp(name, arguments), None, _clock(timer, "tools/call"))


def read(client: Client[Any], uri: str, timer: ServerTimer | None = None,
         prepare: Callable[[], Any] | None = None) -> Probe:
    return Probe(lambda: client.read_resource_mcp(uri), prepare, _clock(timer, "resources/read"))


def call_each(client: Client[Any], calls: list[tuple[str, dict[str, Any]]],
              timer: ServerTimer | None = None) -> Probe:
    """``tools/call`` of the next of ``calls`` each time: ours grants a tool when it refuses
    it (the refusal carries the definition), so a refusal is timed on unseen tools only."""
    turn = count()

    def run() -> Awaitable[Any]:
        name, arguments = calls[next(turn) % len(calls)]
        return client.call_tool_mcp(name, arguments)

    return Probe(run, None, _clock(timer, "tools/call"))


async def time_once(probe: Probe) -> int:
    """Nanoseconds one run of ``probe`` takes (its ``prepare`` untimed)."""
    if probe.prepare is not None:
        probe.prepare()
    start = time.perf_counter_ns()
    await probe.run()
    return time.perf_counter_ns() - start


async def rotate(probes: Sequence[Probe], *, iterations: int, warmup: int = 3) -> list[Samples]:
    """Run every probe once per iteration, starting from a different one each time."""
    samples = [Samples() for _ in probes]
    gc.collect()
    for i in range(warmup + iterations):
        for step in range(len(probes)):
            k = (i + step) % len(probes)
            elapsed = await time_once(probes[k])
            server = probes[k].server() if probes[k].server is not None else None  # type: ignore[misc]
            if i >= warmup:
                samples[k].client.append(elapsed)
                if server is not None:
                    samples[k].server.append(server)
    return samples


async def compared(case: str, op: str, plain: Probe, ours: Probe, iterations: int, *,
                   warmup: int = 3, tools: int = 0) -> LatencyRow:
    """Both probes ``iterations`` times, alternating which goes first, as a row."""
    ps, os_ = await rotate([plain, ours], iterations=iterations, warmup=warmup)
    return LatencyRow(case, op, ps.stats(), os_.stats(), ps.server_stats(), os_.server_stats(),
                      tools=tools)


async def compared_fresh(case: str, op: str, iterations: int,
                         pair: Callable[[], AbstractAsyncContextManager[tuple[Probe, Probe]]],
                         *, tools: int = 0) -> LatencyRow:
    """The first request of freshly built (plain, ours) pairs, alternating which goes first."""
    plain_ns: list[int] = []
    ours_ns: list[int] = []
    for i in range(iterations):
        async with pair() as (plain, ours):
            order = [(plain, plain_ns), (ours, ours_ns)][:: -1 if i % 2 else 1]
            for probe, into in order:
                into.append(await time_once(probe))
    return LatencyRow(case, op, Stats.from_ns(plain_ns), Stats.from_ns(ours_ns), tools=tools)


async def repeated(probe: Probe, iterations: int, *, warmup: int = 1) -> Stats:
    """One probe on its own (for measurements without a plain counterpart)."""
    return (await rotate([probe], iterations=iterations, warmup=warmup))[0].stats()
