"""What one ``tools/resolve`` costs on the server, for a tool whose description file is cached.

The demo server's ``manage_notes`` (three rules in ``examples/tool_descriptions``) is
resolved over and over by a real in-memory ``fastmcp.Client`` in both protocol eras,
cycling through its actions. Server-side time comes from ``ResolveTimer``, a middleware
added before ours: it covers our whole answer (capability check, FastMCP's visibility
lookup, the file's stat and LRU hit, schema validation, matching, the bound) and excludes
JSON-RPC framing and the transport. It records wall time and this thread's CPU time: on a
machine shared with other work, preemption inflates the wall-time tail, while CPU time is
what the answer itself costs. Client-side time is one ``perf_counter_ns`` around the
awaited request. The target: well under a millisecond server side (median and p95 CPU
time, median wall time).

    python -m benchmarks.resolve_bench            # 2,000 resolutions per era
    python -m benchmarks.resolve_bench --json -n 500
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.resolution.client import resolve_tool, tool_resolution

from .quiet import quiet_logs
from .results import Stats

ROOT = Path(__file__).resolve().parent.parent
TARGET_US = 1000.0
ARGUMENTS = [{"action": action, "order_id": "o-500"} for action in ("read", "append", "delete")]


class ResolveTimer(Middleware):
    """Records how long the chain below it took for each ``tools/resolve``."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self.cpu_samples: list[int] = []

    async def on_request(self, context: MiddlewareContext[Any],
                         call_next: CallNext[Any, Any]) -> Any:
        if context.method != "tools/resolve":
            return await call_next(context)
        start, cpu = time.perf_counter_ns(), time.thread_time_ns()
        try:
            return await call_next(context)
        finally:
            self.cpu_samples.append(time.thread_time_ns() - cpu)
            self.samples.append(time.perf_counter_ns() - start)


def demo_server() -> tuple[FastMCP, ResolveTimer]:
    """The demo server's tools and description files, with the timer outside our middleware."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import demo_server
    finally:
        sys.path.pop(0)
    server: FastMCP = demo_server.mcp
    timer = ResolveTimer()
    ours = [m for m in server.middleware if isinstance(m, ProgressiveDisclosure)]
    others = [m for m in server.middleware
              if not isinstance(m, (ProgressiveDisclosure, ResolveTimer))]
    server.middleware = [timer, *others, *ours]  # the timer outermost, ours innermost
    return server, timer


async def measure(era: str, iterations: int) -> dict[str, Any]:
    """Server- and client-side timing of ``iterations`` resolutions in one era."""
    server, timer = demo_server()
    client_ns: list[int] = []
    mode = "legacy" if era == "legacy" else "auto"
    async with Client(server, mode=mode, extensions=[tool_resolution()]) as client:
        for args in ARGUMENTS * 5:  # warm up: file parsed, validator built
            await resolve_tool(client, "manage_notes", args)
        timer.samples.clear()
        timer.cpu_samples.clear()
        gc.disable()
        try:
            for i in range(iterations):
                start = time.perf_counter_ns()
                await resolve_tool(client, "manage_notes", ARGUMENTS[i % len(ARGUMENTS)])
                client_ns.append(time.perf_counter_ns() - start)
        finally:
            gc.enable()
    wall, cpu = Stats.from_ns(timer.samples), Stats.from_ns(timer.cpu_samples)
    return {
        "era": era,
        "server": asdict(wall),
        "server_cpu": asdict(cpu),
        "client": asdict(Stats.from_ns(client_ns)),
        "under_target": wall.median_us < TARGET_US and cpu.p95_us < TARGET_US,
    }


async def run(iterations: int) -> list[dict[str, Any]]:
    return [await measure(era, iterations) for era in ("legacy", "modern")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--iterations", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    quiet_logs()
    results = asyncio.run(run(args.iterations))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for row in results:
            s, u, c = row["server"], row["server_cpu"], row["client"]
            print(f"{row['era']:>7}: server wall median {s['median_us']:.0f} us, p95 "
                  f"{s['p95_us']:.0f} us | server CPU median {u['median_us']:.0f} us, p95 "
                  f"{u['p95_us']:.0f} us | client median {c['median_us']:.0f} us | "
                  f"n={s['n']} | under 1 ms: {row['under_target']}")
    return 0 if all(row["under_target"] for row in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
