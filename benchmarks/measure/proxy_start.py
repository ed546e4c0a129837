"""Section 6: how long ``fastmcp-progressive proxy`` takes to start, above its upstreams'.

From spawning the proxy to its first ``tools/list`` answer over stdio, minus the slowest
upstream's own spawn-to-first-listing time (issue 20's target for the rest: at most 1.0 s),
for one upstream and for three (two npm servers and a Python one), interleaved, with the
imports the proxy pays. Needs node and npm (installed like the tests do).

Example:
    ```python
    result = await measure(rounds=5)
    ```
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from tests.npm_servers import ensure_installed

PY_UPSTREAM = """
from fastmcp import FastMCP
mcp = FastMCP("calc")

@mcp.tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

mcp.run(show_banner=False)
"""
ENV = {"FASTMCP_LOG_LEVEL": "WARNING"}
_FASTMCP = "import fastmcp.server.providers.proxy, fastmcp.client.transports, fastmcp.mcp_config"
IMPORTS = {"fastmcp": _FASTMCP, "fastmcp and ours": f"{_FASTMCP}, fastmcp_progressive.proxy"}
"""What the proxy imports before it serves: FastMCP's server and client stack, then ours."""


async def first_listing(command: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds from spawning ``command`` to its first ``tools/list`` answer over stdio."""
    transport = StdioTransport(command[0], command[1:], env={**os.environ, **ENV, **(env or {})},
                               keep_alive=False)
    started = time.perf_counter()
    async with Client(transport, mode="legacy", init_timeout=120) as client:
        await client.list_tools()
        return time.perf_counter() - started


async def imported(code: str) -> float:
    """Seconds a fresh interpreter takes to run ``code`` (its imports)."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", code)
    await process.wait()
    return time.perf_counter() - started


def upstreams(folder: Path) -> dict[str, dict[str, Any]]:
    """The three upstreams, as ``mcpServers`` entries."""
    npm = ensure_installed()
    (folder / "files").mkdir(exist_ok=True)
    app = folder / "calc_upstream.py"
    app.write_text(PY_UPSTREAM, encoding="utf-8")
    return {
        "fs": {"command": npm["server-filesystem"][0],
               "args": [*npm["server-filesystem"][1:], str(folder / "files")]},
        "memory": {"command": npm["server-memory"][0], "args": npm["server-memory"][1:],
                   "env": {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}},
        "calc": {"command": sys.executable, "args": [str(app)]},
    }


def summary(samples: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(samples), 3), "min": round(min(samples), 3),
            "max": round(max(samples), 3)}


async def measure(rounds: int = 5) -> dict[str, Any]:
    proxy = [sys.executable, "-m", "fastmcp_progressive", "proxy"]
    with tempfile.TemporaryDirectory() as tmp:
        servers = upstreams(Path(tmp))
        config = Path(tmp) / "mcp.json"
        config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        alone: dict[str, list[float]] = {name: [] for name in servers}
        one: list[float] = []
        three: list[float] = []
        imports: dict[str, list[float]] = {name: [] for name in IMPORTS}
        for _ in range(rounds):  # interleaved: machine load falls on every row alike
            for name, entry in servers.items():
                alone[name].append(await first_listing([entry["command"], *entry["args"]],
                                                       entry.get("env")))
            one.append(await first_listing([*proxy, "--", servers["fs"]["command"],
                                            *servers["fs"]["args"]]))
            three.append(await first_listing([*proxy, "--config", str(config)]))
            for name, code in IMPORTS.items():
                imports[name].append(await imported(code))
    slowest = [max(alone[n][i] for n in servers) for i in range(rounds)]
    return {
        "rounds": rounds,
        "imports (s)": {name: summary(v) for name, v in imports.items()},
        "upstream alone (spawn to first tools/list, s)": {n: summary(v) for n, v in alone.items()},
        "proxy, one upstream (fs)": {"total": summary(one), "own": summary(
            [p - u for p, u in zip(one, alone["fs"], strict=True)])},
        "proxy --config, three upstreams": {
            "total": summary(three),
            "own": summary([p - s for p, s in zip(three, slowest, strict=True)]),
            "slowest upstream": summary(slowest),
            "upstreams one after another": summary(
                [sum(alone[n][i] for n in servers) for i in range(rounds)])},
    }
