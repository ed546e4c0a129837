"""Section 7: what one ``tools/resolve`` costs on the server (target: well under 1 ms).

The demo server's ``manage_notes`` (description file cached) resolved over and over in both
eras; a middleware outside ours records wall and CPU time of our whole answer (preemption
on a shared machine inflates the wall-time tail; CPU time is what the answer costs).

Example:
    ```python
    rows = await measure(iterations=2_000)   # one dict per era
    ```
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.resolution.client import resolve_tool, tool_resolution

from ..results import Stats
from .servers import host_client

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGET_US = 1000.0
ARGUMENTS = [{"action": action, "order_id": "o-500"} for action in ("read", "append", "delete")]


class ResolveTimer(Middleware):
    """Records how long the chain below it took for each ``tools/resolve``."""

    def __init__(self) -> None:
        self.wall: list[int] = []
        self.cpu: list[int] = []

    async def on_request(self, context: MiddlewareContext[Any],
                         call_next: CallNext[Any, Any]) -> Any:
        if context.method != "tools/resolve":
            return await call_next(context)
        start, cpu = time.perf_counter_ns(), time.thread_time_ns()
        try:
            return await call_next(context)
        finally:
            self.cpu.append(time.thread_time_ns() - cpu)
            self.wall.append(time.perf_counter_ns() - start)


def demo_server() -> tuple[FastMCP, ResolveTimer]:
    """The demo server with the timer outermost and ours innermost: a module of its own
    each time (a server another test of the same process imported, changed or closed
    under the name ``demo_server`` is not this one)."""
    spec = importlib.util.spec_from_file_location("demo_server", EXAMPLES / "demo_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    server: FastMCP = module.mcp
    timer = ResolveTimer()
    ours = [m for m in server.middleware if isinstance(m, ProgressiveDisclosure)]
    others = [m for m in server.middleware
              if not isinstance(m, (ProgressiveDisclosure, ResolveTimer))]
    server.middleware = [timer, *others, *ours]
    return server, timer


async def _era(era: str, iterations: int) -> dict[str, Any]:
    server, timer = demo_server()
    client_ns: list[int] = []
    async with host_client(server, mode="legacy" if era == "legacy" else "auto",
                      extensions=[tool_resolution()]) as client:
        for args in ARGUMENTS * 5:  # warm up: file parsed, validator built
            await resolve_tool(client, "manage_notes", args)
        timer.wall.clear()
        timer.cpu.clear()
        gc.disable()
        try:
            for i in range(iterations):
                start = time.perf_counter_ns()
                await resolve_tool(client, "manage_notes", ARGUMENTS[i % len(ARGUMENTS)])
                client_ns.append(time.perf_counter_ns() - start)
        finally:
            gc.enable()
    wall, cpu = Stats.from_ns(timer.wall), Stats.from_ns(timer.cpu)
    return {"era": era, "server": asdict(wall), "server_cpu": asdict(cpu),
            "client": asdict(Stats.from_ns(client_ns)),
            "under_target": wall.median_us < TARGET_US and cpu.p95_us < TARGET_US}


async def measure(iterations: int = 2_000) -> list[dict[str, Any]]:
    """Server- and client-side timing of ``iterations`` resolutions, per era."""
    return [await _era(era, iterations) for era in ("legacy", "modern")]
