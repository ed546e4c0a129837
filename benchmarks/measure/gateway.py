"""Section 5: the LiveMCPTool gateway (issue 20): listings per level, a tool cap, a ranker.

LiveMCPBench's 70 servers (527 tools) behind one front (``tests.replay.gateway``), each a
group: listing tokens plain and per level beside mcpproxy-go's published cuts, the listing
capped at 40 and ``groups/list``, and our BM25 over the plain names against the capped
listing's group lines plus its tools.

Example:
    ```python
    result = await measure()   # {"levels": [...], "capped": {...}, "ranker": {...}}
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastmcp import FastMCP

from fastmcp_progressive import ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.resolution.client import grouping, list_groups
from tests.corpus import load_servers, load_tasks
from tests.replay import gateway, replay_tool

from .catalogs import load_corpus
from .ranking import BM25, words
from .servers import PROGRESSIVE, host_client, wire
from .tokens import counter

CAP = 40
MCPPROXY = {"livemcptool": 0.348, "playwright-mcp": 0.297}
"""mcpproxy-go's published listing cuts (``schema_deferred``)."""
KS = (1, 3, 5)


def listing_tokens(tools: Sequence[Any]) -> int:
    """o200k tokens of a ``tools/list`` result's ``tools`` as compact UTF-8 JSON."""
    return counter().json({"tools": [wire(t) for t in tools]}, ascii=False)


async def _listed(server: FastMCP, **client: Any) -> list[Any]:
    async with host_client(server, **client) as c:
        return list(await c.list_tools())


def _ours(level: str = "typed", max_tools: int | None = None) -> ProgressiveDisclosure:
    return ProgressiveDisclosure(listing=ListingSettings(level=level,  # type: ignore[arg-type]
                                                         max_tools=max_tools))


def _playwright(middleware: ProgressiveDisclosure | None) -> FastMCP:
    server = FastMCP("playwright")
    for spec in load_corpus(["playwright-mcp"])[0].tools:
        server.add_tool(replay_tool(spec))
    if middleware is not None:
        server.add_middleware(middleware)
    return server


async def level_rows() -> list[dict[str, Any]]:
    """Plain against ours per level (uncapped), on the gateway and on the 45-tool catalog."""
    servers = load_servers()
    builds: list[tuple[str, Callable[[ProgressiveDisclosure | None], FastMCP]]] = [
        (f"livemcptool ({sum(len(s['tools']) for s in servers)} tools, {len(servers)} servers)",
         lambda m: gateway(m, servers)), ("playwright-mcp (45 tools)", _playwright)]
    rows: list[dict[str, Any]] = []
    for label, build in builds:
        plain = listing_tokens(await _listed(build(None)))
        for level in PROGRESSIVE:
            ours = listing_tokens(await _listed(build(_ours(level))))
            rows.append({"catalog": label, "level": level, "plain": plain, "ours": ours,
                         "cut": round(1 - ours / plain, 3),
                         "mcpproxy_go_cut": MCPPROXY[label.split()[0]]})
    return rows


async def capped() -> dict[str, Any]:
    """The capped listing: its size and tokens, its group lines, ``groups/list``."""
    async with host_client(gateway(_ours(max_tools=CAP)), extensions=[grouping()]) as client:
        tools = list(await client.list_tools())
        groups = await list_groups(client)
    bridge = next(t for t in tools if t.name == "describe_tools")
    unmarked = await _listed(gateway(_ours(max_tools=CAP)))
    return {"tools": len(tools), "tokens": listing_tokens(unmarked),
            "tokens_with_group_meta": listing_tokens(tools),
            "bridge_description_tokens": counter().json(bridge.description or "", ascii=False),
            "groups": len(groups), "groups_list_tokens": counter().json(
                {"groups": groups}, ascii=False),
            "listed": [t.name for t in tools], "bridge_description": bridge.description or ""}


def _hits(index: BM25, entries: list[set[str]], tasks: list[dict[str, Any]]) -> dict[str, float]:
    """Share of (task, needed tool) pairs with an entry leading to the tool in the top k."""
    found = dict.fromkeys(KS, 0)
    pairs = 0
    for task in tasks:
        order = index.rank(words(task["question"]))
        for needed in task["tools"]:
            pairs += 1
            for k in KS:
                found[k] += any(needed in entries[i] for i in order[:k])
    return {f"top{k}": round(found[k] / max(1, pairs), 3) for k in KS} | {"pairs": pairs}


def ranker(listed: list[str], bridge_description: str) -> dict[str, Any]:
    """Plain names alone against group lines plus the capped listing's tools."""
    servers, tasks = load_servers(), load_tasks()
    by_name = {f"{s['server']}_{t['name']}": t for s in servers for t in s["tools"]}
    members = {s["server"]: {t["name"] for t in s["tools"]} for s in servers}
    docs: list[list[str]] = []
    entries: list[set[str]] = []
    for line in bridge_description.split("\nGroups:\n", 1)[-1].splitlines():
        group, _, text = line.partition(": ")
        if group in members:
            docs.append(words(f"{group} {text}"))
            entries.append(members[group])
    for name in (n for n in listed if n in by_name):
        docs.append(words(f"{name} {by_name[name].get('description') or ''}"[:400]))
        entries.append({by_name[name]["name"]})
    return {"plain_names": _hits(BM25([words(n) for n in by_name]),
                                 [{t["name"]} for t in by_name.values()], tasks),
            "groups_plus_listed": _hits(BM25(docs), entries, tasks), "tasks": len(tasks)}


async def measure() -> dict[str, Any]:
    rows = await level_rows()
    cap = await capped()
    return {"levels": rows,
            "capped": {k: v for k, v in cap.items() if k not in ("listed", "bridge_description")},
            "ranker": ranker(cap["listed"], cap["bridge_description"])}
