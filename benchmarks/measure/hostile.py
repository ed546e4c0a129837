"""Section 8: what the attacks of issue 21 cost, plain FastMCP against ours.

Two argument-check attacks (a 14,000-item ``set[str]``, a backtracking ``pattern``) through
a call and ``tools/resolve``, best of ``repeat``; memory our memos keep under an upstream
whose descriptions always change and under 2 MB client names; a listing beside 50,000
description files of tools that do not exist.

Example:
    ```python
    result = await measure(repeat=3)
    ```
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from fastmcp import FastMCP
from fastmcp.server import create_proxy
from fastmcp.tools.base import Tool
from pydantic import Field, TypeAdapter

from fastmcp_progressive import ListingSettings, ProgressiveDisclosure, ResolutionSettings
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.resolution.client import (
    ResolveToolParams,
    ResolveToolRequest,
    tool_resolution,
)
from tests.parts import names_cached, parts
from tests.test_caches import changing_upstream

from .scale import traced_kib
from .servers import host_client
from .timing import listing, repeated

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
        mcp.add_middleware(ProgressiveDisclosure(resolution=ResolutionSettings(resolvers=hooks)))
    return mcp


async def _best(run: Callable[[], Awaitable[Any]], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return round(min(times), 4)


async def _attack(name: str, arguments: dict[str, Any], repeat: int) -> dict[str, float]:
    row: dict[str, float] = {}
    for side, progressive in (("plain", False), ("ours", True)):
        async with host_client(attacked(progressive), extensions=[tool_resolution()]) as client:
            async def resolve() -> None:
                request = ResolveToolRequest(params=ResolveToolParams.model_construct(
                    name=name, arguments=arguments))
                with contextlib.suppress(Exception):  # the refusal is the expected answer
                    await client.session.send_request(request, RAW)

            row[f"{side}_call_s"] = await _best(lambda: client.call_tool_mcp(name, arguments),
                                                repeat)
            if progressive:
                row["ours_resolve_s"] = await _best(resolve, repeat)
    return row


async def changing_descriptions(listings: int = 200, tools: int = 20) -> dict[str, Any]:
    """MiB kept by our memos after ``listings`` listings of an ever-changing upstream."""
    proxy = create_proxy(changing_upstream(tools))
    middleware = ProgressiveDisclosure()
    proxy.add_middleware(middleware)
    names = [f"tool_{i}" for i in range(tools)]
    async with host_client(proxy) as client:
        await client.list_tools()

        async def churn() -> None:
            for _ in range(listings):
                await client.list_tools()
                await client.call_tool("describe_tools", {"tools": names})

        _, kept = await traced_kib(churn)
    return {"listings": listings, "tools": tools, "kept_mib": round(kept / 1024, 2),
            "listing_memo_entries": len(parts(middleware).lister._memo),
            "definition_memo_entries": names_cached(parts(middleware).store)}


async def long_client_names(clients: int = 40) -> dict[str, Any]:
    """MiB the client-level memo keeps after ``clients`` 2 MB client names."""
    policy = ModePolicy()

    async def connect_all() -> None:
        for i in range(clients):
            policy.level(Caller(kind="anonymous", era="modern",
                                client_name=f"{i}" + "n" * 2 * 2**20))

    _, kept = await traced_kib(connect_all)
    return {"clients": clients, "kept_mib": round(kept / 1024, 3)}


def _tool(x: int) -> int:
    return x


async def orphan_files(orphans: int = 50_000, listings: int = 20) -> dict[str, Any]:
    """Median seconds per ``tools/list`` with ``orphans`` unrelated description files."""
    def server(folder: Path | None) -> FastMCP:
        mcp = FastMCP("orphans")
        for i in range(10):
            mcp.add_tool(Tool.from_function(_tool, name=f"tool_{i}"))
        if folder is not None:
            mcp.add_middleware(ProgressiveDisclosure(
                folder, listing=ListingSettings(preload=False)))
        return mcp

    row: dict[str, Any] = {"orphans": orphans}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(orphans):
            (Path(tmp) / f"gone_{i}.json").write_text('{"summary": "no such tool"}')
        for side, target in (("plain", server(None)), ("ours", server(Path(tmp)))):
            async with host_client(target) as client:
                took = await repeated(listing(client), listings)
            row[f"{side}_list_s"] = round(took.median_us / 1e6, 4)
    return row


async def measure(repeat: int = 3) -> dict[str, Any]:
    return {"attacks": {attack: await _attack(name, arguments, repeat)
                        for attack, (name, arguments) in ATTACKS.items()},
            "changing-descriptions": await changing_descriptions(),
            "long-client-names": await long_client_names(),
            "orphan-files": await orphan_files()}


