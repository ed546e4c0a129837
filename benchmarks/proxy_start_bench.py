"""How long ``fastmcp-progressive proxy`` takes to start, above its upstreams' own start.

A host starts the proxy and waits for its answer; the proxy starts its upstreams and waits
for theirs. What the proxy itself costs is the difference: from spawning the proxy to the
first ``tools/list`` answered through it (over stdio, as a host runs it), minus the time the
slowest upstream alone takes from spawn to its own first ``tools/list`` (upstreams start
concurrently). The target (issue 20) is at most 1.0 s of our own time.

Measured for one upstream (``proxy -- COMMAND``) and for three at once (``proxy --config``:
``server-filesystem`` and ``server-memory`` from npm, a Python FastMCP server), each
``--rounds`` times, alternating, median and spread reported. Needs node and npm (the pinned
servers are installed into ``.npm-servers/`` like the tests do).

Example:
    ```console
    $ python -m benchmarks.proxy_start_bench --rounds 5
    ```
"""

from __future__ import annotations

import argparse
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


async def first_listing(command: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds from spawning ``command`` to its first ``tools/list`` answer over stdio."""
    transport = StdioTransport(command[0], command[1:], env={**os.environ, **(env or {})},
                               keep_alive=False)
    started = time.perf_counter()
    async with Client(transport, mode="legacy", init_timeout=120) as client:
        await client.list_tools()
        elapsed = time.perf_counter() - started
    return elapsed


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


def proxy(*args: str) -> list[str]:
    return [sys.executable, "-m", "fastmcp_progressive", "proxy", *args]


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median": round(statistics.median(ordered), 3), "min": round(ordered[0], 3),
            "max": round(ordered[-1], 3)}


async def measure(rounds: int) -> dict[str, Any]:
    env = {"FASTMCP_LOG_LEVEL": "WARNING"}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        servers = upstreams(folder)
        config = folder / "mcp.json"
        config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        alone: dict[str, list[float]] = {name: [] for name in servers}
        one: list[float] = []
        three: list[float] = []
        one_command = [servers["fs"]["command"], *servers["fs"]["args"]]
        for _ in range(rounds):  # interleaved, so machine load falls on every row alike
            for name, entry in servers.items():
                alone[name].append(await first_listing(
                    [entry["command"], *entry["args"]], {**env, **entry.get("env", {})}))
            one.append(await first_listing(proxy("--", *one_command), env))
            three.append(await first_listing(proxy("--config", str(config)), env))
    own_one = [p - u for p, u in zip(one, alone["fs"], strict=True)]
    slowest = [max(alone[n][i] for n in servers) for i in range(rounds)]
    own_three = [p - s for p, s in zip(three, slowest, strict=True)]
    return {
        "rounds": rounds,
        "upstream alone (spawn to first tools/list, s)": {n: summary(v) for n, v in alone.items()},
        "proxy, one upstream (fs)": {"total": summary(one), "own": summary(own_one)},
        "proxy --config, three upstreams": {"total": summary(three), "own": summary(own_three),
                                            "slowest upstream": summary(slowest),
                                            "upstreams one after another": summary(
                                                [sum(alone[n][i] for n in servers)
                                                 for i in range(rounds)])},
        "target": "own time <= 1.0 s (issue 20)",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(measure(args.rounds)), indent=2))


if __name__ == "__main__":
    main()
