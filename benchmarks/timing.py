"""Timing plain FastMCP against ours fairly: alternately, in one process, one loop.

A ratio is only honest when both sides see the same machine state, so every iteration
runs the plain probe and ours back to back, swapping which goes first each time (drift,
GC and frequency changes hit both alike). Client-side time is one ``perf_counter_ns``
around the awaited request. Server-side time comes from ``ServerTimer``, a middleware
added before ours: it measures the middleware chain below it (our hook plus FastMCP's
handler) and excludes JSON-RPC framing, the transport and the wire serialization.

Example:
    ```python
    plain_ns, ours_ns = await alternate(Probe(lambda: a.list_tools()),
                                        Probe(lambda: b.list_tools()), iterations=50)
    ```
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from .results import Stats


class ServerTimer(Middleware):
    """Records how long the rest of the chain took for the last read or call.

    It deliberately has no ``on_list_tools``: ours treats any middleware that overrides
    that hook as a possible listing filter and then checks visibility by listing the
    whole catalog (``catalog.py``), so a listing timer would slow the very reads and
    calls it times. ``ListingObserver`` exists to measure exactly that effect.
    """

    def __init__(self) -> None:
        self.last_ns: dict[str, int] = {}

    async def _timed(self, kind: str, context: Any, call_next: CallNext[Any, Any]) -> Any:
        start = time.perf_counter_ns()
        try:
            return await call_next(context)
        finally:
            self.last_ns[kind] = time.perf_counter_ns() - start

    async def on_read_resource(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        return await self._timed("resources/read", context, call_next)

    async def on_call_tool(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        return await self._timed("tools/call", context, call_next)

    def take(self, kind: str) -> int | None:
        """The last duration recorded for ``kind`` (and forget it), or None."""
        return self.last_ns.pop(kind, None)


class ListingObserver(ServerTimer):
    """A ``ServerTimer`` that also times ``tools/list``: a pass-through listing hook."""

    async def on_list_tools(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
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


async def time_once(probe: Probe) -> int:
    """Nanoseconds one run of ``probe`` takes (its ``prepare`` untimed)."""
    if probe.prepare is not None:
        probe.prepare()
    start = time.perf_counter_ns()
    await probe.run()
    return time.perf_counter_ns() - start


async def _once(probe: Probe, into: Samples | None) -> None:
    elapsed = await time_once(probe)
    server = probe.server() if probe.server is not None else None
    if into is not None:
        into.client.append(elapsed)
        if server is not None:
            into.server.append(server)


async def rotate(probes: Sequence[Probe], *, iterations: int, warmup: int = 3) -> list[Samples]:
    """Run every probe once per iteration, starting from a different one each time."""
    samples = [Samples() for _ in probes]
    gc.collect()
    for i in range(warmup + iterations):
        record = i >= warmup
        for step in range(len(probes)):
            k = (i + step) % len(probes)
            await _once(probes[k], samples[k] if record else None)
    return samples


async def alternate(
    plain: Probe, ours: Probe, *, iterations: int, warmup: int = 3
) -> tuple[Samples, Samples]:
    """Run both probes ``iterations`` times, alternating which one goes first."""
    plain_samples, ours_samples = await rotate([plain, ours], iterations=iterations,
                                               warmup=warmup)
    return plain_samples, ours_samples


async def repeat(probe: Probe, *, iterations: int, warmup: int = 1) -> Samples:
    """Time one probe on its own (for measurements without a plain counterpart)."""
    samples = Samples()
    gc.collect()
    for i in range(warmup + iterations):
        await _once(probe, samples if i >= warmup else None)
    return samples
