"""Catalog lookups at scale: what a read or a refusal costs at 10,000 tools.

Three figures, each a ratio to plain FastMCP serving the same bytes in the same run
(in-memory client, 2026-07-28 era for reads, handshake era for the refusal, probes
interleaved round by round, medians with the interquartile range):

- **read of 20** descriptions against a static resource holding the same JSON text;
- with another middleware hooking ``tools/list`` (a pass-through ``on_list_tools``): a
  **refused call** against a plain call of the same tool, and a **read of 5** against a
  static resource of the same text, both on a plain server with that middleware;
- the **size of the answer** to a read naming 32 unknown tools;
- the cost of reading a name **hidden by component auth** against an **unknown** name
  (``--not-found``): the two answers are the same bytes and should cost the same;
- what an unknown name's ``available_tools`` costs (``--unknown``): a read of one unknown
  name (the caller's listing, then the closest ten) against a read of one known name, and a
  read of 32 unknown names, at ``--tools`` tools.

Run: ``python -m benchmarks.lookup_bench [--tools 10000] [--rounds 30]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.resources.types import TextResource
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool
from pydantic import AnyUrl

from fastmcp_progressive import DESCRIPTIONS_URI, ProgressiveDisclosure

Probe = Callable[[], Awaitable[Any]]


class PassThroughListing(Middleware):
    """Another middleware with an ``on_list_tools`` hook that keeps every tool."""

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Sequence[Tool]]) -> Sequence[Tool]:
        return await call_next(context)


def _square(x: int) -> int:
    """Square a number. Returns x times x."""
    return x * x


def build(tools: int, *, ours: bool, listing_middleware: bool) -> FastMCP:
    server = FastMCP("lookup-bench")
    base = Tool.from_function(_square)
    for i in range(tools):
        server.add_tool(base.model_copy(update={
            "name": f"tool_{i:05d}", "description": f"Tool number {i}. Squares x."}))
    if ours:
        server.add_middleware(ProgressiveDisclosure())
    if listing_middleware:
        server.add_middleware(PassThroughListing())
    return server


def add_static(server: FastMCP, uri: str, text: str) -> None:
    server.add_resource(TextResource(uri=AnyUrl(uri), name=uri.rsplit("/", 1)[-1], text=text,
                                     mime_type="application/json"))


def names(count: int, start: int = 0, step: int = 97) -> list[str]:
    return [f"tool_{(start + i * step) % 10_000:05d}" for i in range(count)]


def query(selected: Sequence[str]) -> str:
    return f"{DESCRIPTIONS_URI}?tools=" + ",".join(selected)


async def text_of(client: Client[Any], uri: str) -> str:
    return (await client.read_resource(uri))[0].text  # type: ignore[union-attr,no-any-return]


async def interleaved(probes: dict[str, Probe], rounds: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in probes}
    for probe in probes.values():  # warm-up
        await probe()
    for _ in range(rounds):
        for name, probe in probes.items():
            started = time.perf_counter()
            await probe()
            samples[name].append(time.perf_counter() - started)
    return samples


def ratio(samples: dict[str, list[float]], ours: str, plain: str) -> dict[str, float]:
    mine, theirs = statistics.median(samples[ours]), statistics.median(samples[plain])
    q = statistics.quantiles
    return {
        "ours_ms": round(mine * 1000, 3),
        "plain_ms": round(theirs * 1000, 3),
        "ratio": round(mine / theirs, 2),
        "ours_iqr_ms": [round(v * 1000, 3) for v in q(samples[ours], n=4)[::2]],
        "plain_iqr_ms": [round(v * 1000, 3) for v in q(samples[plain], n=4)[::2]],
    }


async def run(tools: int, rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {"tools": tools, "rounds": rounds}
    twenty, five = names(20), names(5, start=3)

    # (a) read of 20 against a static resource of the same bytes, on the same server
    server = build(tools, ours=True, listing_middleware=False)
    async with Client(server) as client:
        add_static(server, "resource:///static20", await text_of(client, query(twenty)))
        samples = await interleaved({
            "read20": lambda: client.read_resource(query(twenty)),
            "static20": lambda: client.read_resource("resource:///static20"),
        }, rounds)
        results["read_of_20_vs_static"] = ratio(samples, "read20", "static20")
        unknown = await text_of(client, query([f"nope_{i}" for i in range(32)]))
        results["unknown_32_names_bytes"] = len(unknown.encode())

    # (b) another listing middleware present: a refused call and a read of 5
    ours = build(tools, ours=True, listing_middleware=True)
    plain = build(tools, ours=False, listing_middleware=True)
    async with Client(ours, mode="legacy") as mine, Client(plain, mode="legacy") as theirs:
        add_static(plain, "resource:///static5", await text_of(mine, query(five)))
        # a refusal grants the tool it refuses, so each round refuses a tool of its own
        fresh = iter(names(rounds + 2, start=11, step=13))

        async def refuse() -> None:
            refused = await mine.call_tool(next(fresh), {"x": 3}, raise_on_error=False)
            assert "TOOL_DESCRIPTION_REQUIRED" in json.dumps(refused.structured_content)

        samples = await interleaved({
            "refused": refuse,
            "plain_call": lambda: theirs.call_tool("tool_00007", {"x": 3}),
            "read5": lambda: mine.read_resource(query(five)),
            "static5": lambda: theirs.read_resource("resource:///static5"),
        }, rounds)
        results["refused_call_vs_plain_call"] = ratio(samples, "refused", "plain_call")
        results["read_of_5_vs_static"] = ratio(samples, "read5", "static5")
    return results


async def not_found(tools: int, rounds: int) -> dict[str, Any]:
    """A read of a tool hidden by ``auth`` (no token: denied) against an unknown name."""
    from fastmcp.server.auth import require_scopes

    server = build(tools, ours=True, listing_middleware=False)
    server.add_tool(Tool.from_function(_square, name="secret", auth=require_scopes("admin")))
    async with Client(server) as client:
        hidden, unknown = query(["secret"]), query(["nosuch"])
        assert "not found" in await text_of(client, hidden)
        samples = await interleaved({
            "hidden": lambda: client.read_resource(hidden),
            "unknown": lambda: client.read_resource(unknown),
        }, rounds)
    return {"tools": tools, "hidden_vs_unknown": ratio(samples, "hidden", "unknown")}


async def unknown_names(tools: int, rounds: int) -> dict[str, Any]:
    """A read of one unknown name (a typo of a real one) and of 32, against a known name."""
    server = build(tools, ours=True, listing_middleware=False)
    async with Client(server) as client:
        known, typo = query(["tool_00042"]), query(["tool_0o042"])
        many = query([f"nope_{i}" for i in range(32)])
        assert json.loads(await text_of(client, typo))["tool_0o042"]["available_tools"]
        samples = await interleaved({
            "unknown": lambda: client.read_resource(typo),
            "unknown32": lambda: client.read_resource(many),
            "known": lambda: client.read_resource(known),
        }, rounds)
    return {
        "tools": tools,
        "unknown_vs_known": ratio(samples, "unknown", "known"),
        "unknown_32_vs_known": ratio(samples, "unknown32", "known"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--not-found", action="store_true",
                        help="only compare a hidden name with an unknown one")
    parser.add_argument("--unknown", action="store_true",
                        help="only time unknown names (their available_tools)")
    args = parser.parse_args()
    scenario = not_found if args.not_found else unknown_names if args.unknown else run
    print(json.dumps(asyncio.run(scenario(args.tools, args.rounds)), indent=2))


if __name__ == "__main__":
    main()
