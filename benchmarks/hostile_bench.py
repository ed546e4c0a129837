"""What hostile input costs: the attacks of issue 21, plain FastMCP against ours.

Each row is one attack, timed end to end by a real in-memory ``fastmcp.Client`` on the
2026-07-28 protocol without auth (the caller the server cannot follow, whose arguments are
checked), plain FastMCP and ours side by side, best of ``--repeat`` runs:

- ``unique-items``: a ``set[str]`` tool called with 14,000 strings and one int;
- ``backtracking-pattern``: a 27-character string against ``pattern`` ``^(\\w+\\s?)*$``;
- each also through ``tools/resolve`` (ours only: plain FastMCP has no such method);
- ``changing-descriptions``: memory our memos keep after 200 listings (and reads of every
  definition) of a proxied upstream whose 20 tool descriptions (5 KB) change on every
  listing (tracemalloc; before issue 21: one memo entry per tool per listing);
- ``long-client-names``: memory the client-level memo keeps after 40 clients with 2 MB
  names (before: 78 MiB);
- ``orphan-files``: median ``tools/list`` of 10 tools with 50,000 description files of
  tools that do not exist in the folder, plain against ours (before: 774 ms against 1 ms).

The target: ours within a few milliseconds of plain FastMCP (the check is FastMCP's own
validation). Before issue 21 these took 4.2 s and 6.7 s on the benchmark machine.

    python -m benchmarks.hostile_bench            # prints JSON
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import time
import tracemalloc
from typing import Annotated, Any

from fastmcp import Client, FastMCP
from fastmcp.tools.base import Tool
from pydantic import Field, TypeAdapter

from fastmcp_progressive import ProgressiveDisclosure, ResolutionSettings
from fastmcp_progressive.resolution.client import (
    ResolveToolParams,
    ResolveToolRequest,
    tool_resolution,
)

from .quiet import quiet_logs

RAW = TypeAdapter(dict[str, Any])
ATTACKS: dict[str, tuple[str, dict[str, Any]]] = {
    "unique-items": ("tags", {"labels": [f"s{i}" for i in range(14_000)] + [1]}),
    "backtracking-pattern": ("words", {"text": "a" * 26 + "!"}),
}


def attacked(progressive: bool) -> FastMCP:
    """The two tools the attacks aim at, plain or with ours (each resolvable by a hook)."""
    mcp = FastMCP("attacked")

    @mcp.tool
    def tags(labels: set[str]) -> int:
        """Count distinct labels."""
        return len(labels)

    @mcp.tool
    def words(text: Annotated[str, Field(pattern=r"^(\w+\s?)*$")]) -> int:
        """Count words."""
        return len(text.split())

    if progressive:
        hooks = {name: (lambda args: None) for name in ("tags", "words")}
        mcp.add_middleware(ProgressiveDisclosure(
            resolution=ResolutionSettings(resolvers=hooks)))
    return mcp


async def _best(run: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return min(times)


async def _attack(name: str, arguments: dict[str, Any], repeat: int) -> dict[str, float]:
    row: dict[str, float] = {}
    for label, progressive in (("plain_call_s", False), ("ours_call_s", True)):
        async with Client(attacked(progressive), extensions=[tool_resolution()]) as client:
            async def call() -> None:
                await client.call_tool_mcp(name, arguments)

            async def resolve() -> None:
                request = ResolveToolRequest(params=ResolveToolParams.model_construct(
                    name=name, arguments=arguments))
                with contextlib.suppress(Exception):  # the refusal is the expected answer
                    await client.session.send_request(request, RAW)

            row[label] = await _best(call, repeat)
            if progressive:
                row["ours_resolve_s"] = await _best(resolve, repeat)
    return {k: round(v, 4) for k, v in row.items()}


async def measure(repeat: int) -> dict[str, Any]:
    """Seconds per attack: plain call, our call, our ``tools/resolve``."""
    return {attack: await _attack(name, arguments, repeat)
            for attack, (name, arguments) in ATTACKS.items()}


async def changing_descriptions(listings: int = 200, tools: int = 20) -> dict[str, Any]:
    """MiB kept by our memos after ``listings`` listings of an ever-changing upstream."""
    from fastmcp.server import create_proxy

    from tests.test_bounded_memory import changing_upstream

    proxy = create_proxy(changing_upstream(tools))
    middleware = ProgressiveDisclosure()
    proxy.add_middleware(middleware)
    names = [f"tool_{i}" for i in range(tools)]
    async with Client(proxy) as client:
        await client.list_tools()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(listings):
            await client.list_tools()
            await client.call_tool("describe_tools", {"tools": names})
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
    return {"listings": listings, "tools": tools, "kept_mib": round(kept / 2**20, 2),
            "listing_memo_entries": len(middleware.lister._memo),
            "definition_memo_entries": len(middleware.definitions._memo)}


def long_client_names(clients: int = 40) -> dict[str, Any]:
    """MiB the client-level memo keeps after ``clients`` 2 MB client names."""
    from fastmcp_progressive.access.caller import Caller
    from fastmcp_progressive.access.modes import ModePolicy

    policy = ModePolicy()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(clients):
        policy.level(Caller(kind="anonymous", era="modern",
                            client_name=f"{i}" + "n" * 2 * 2**20))
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return {"clients": clients, "kept_mib": round(kept / 2**20, 3)}


async def orphan_files(orphans: int = 50_000, listings: int = 20) -> dict[str, Any]:
    """Median seconds per ``tools/list`` with ``orphans`` unrelated description files."""
    import statistics
    import tempfile
    from pathlib import Path

    from fastmcp_progressive import CacheSettings

    def server(folder: Path | None) -> FastMCP:
        mcp = FastMCP("orphans")
        for i in range(10):
            mcp.add_tool(Tool.from_function(_tool, name=f"tool_{i}"))
        if folder is not None:
            mcp.add_middleware(ProgressiveDisclosure(folder, caches=CacheSettings(preload=False)))
        return mcp

    row: dict[str, Any] = {"orphans": orphans}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(orphans):
            (folder / f"gone_{i}.json").write_text('{"summary": "no such tool"}')
        for label, target in (("plain_list_s", server(None)), ("ours_list_s", server(folder))):
            async with Client(target) as client:
                await client.list_tools_mcp()
                times = []
                for _ in range(listings):
                    start = time.perf_counter()
                    await client.list_tools_mcp(cache_mode="bypass")
                    times.append(time.perf_counter() - start)
            row[label] = round(statistics.median(times), 4)
    return row


def _tool(x: int) -> int:
    return x


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    quiet_logs()
    print(json.dumps({
        "attacks": asyncio.run(measure(args.repeat)),
        "changing-descriptions": asyncio.run(changing_descriptions()),
        "long-client-names": long_client_names(),
        "orphan-files": asyncio.run(orphan_files()),
    }, indent=2))


if __name__ == "__main__":
    main()
