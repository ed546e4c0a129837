"""Gateway scale (issue 20): the LiveMCPTool gateway's listings, a tool cap, and a ranker.

Measured on ``gateway.gateway()`` (70 servers, 527 tools, each server a mounted group)
with an in-memory ``fastmcp.Client``, from what the client receives:

- tokens (o200k) of the ``tools/list`` result, plain FastMCP and ours at each level,
  uncapped, beside mcpproxy-go's published cuts (``schema_deferred``: 29.7% at 45 tools,
  34.8% at 527 LiveMCPTool tools); the 45-tool figure is set beside our cut on the corpus'
  45-tool catalog (playwright-mcp);
- the capped listing (``ListingSettings(max_tools=40)``) and ``groups/list``;
- a ranker: an offline BM25 over (a) the plain listing's tool names alone and (b) the
  capped listing's group lines (the bridge's description) plus its listed tools. For each
  LiveMCPBench public task and each tool it needs, a hit is a top-k entry that is that tool
  or (b) the group holding it: the model reads the group's tools next.

Run: ``python -m benchmarks.gateway_bench`` (prints JSON; ``--markdown`` a table).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastmcp import Client, FastMCP

from fastmcp_progressive import ListingSettings, ProgressiveDisclosure
from fastmcp_progressive.cli.tokens import count
from fastmcp_progressive.resolution.client import grouping, list_groups
from tests.corpus import catalog_path, catalog_tools
from tests.replay import replay_tool

from .gateway import gateway, load_servers, load_tasks

CAP = 40
MCPPROXY = {"45 tools (playwright-mcp here)": 0.297, "527 LiveMCPTool": 0.348}
"""mcpproxy-go's published listing cuts (``schema_deferred``)."""
KS = (1, 3, 5)


def _wire(tools: Sequence[Any]) -> list[dict[str, Any]]:
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]


def listing_tokens(tools: Sequence[Any]) -> int:
    """o200k tokens of a ``tools/list`` result's ``tools`` as compact UTF-8 JSON."""
    return count({"tools": _wire(tools)}, ascii=False)


async def _listed(server: FastMCP, **client: Any) -> list[Any]:
    async with Client(server, **client) as c:
        return list(await c.list_tools())


def _ours(level: str = "typed", max_tools: int | None = None) -> ProgressiveDisclosure:
    return ProgressiveDisclosure(listing=ListingSettings(level=level,  # type: ignore[arg-type]
                                                         max_tools=max_tools))


async def token_rows() -> list[dict[str, Any]]:
    """Plain vs ours per level (uncapped) on the gateway and on the 45-tool catalog."""
    rows: list[dict[str, Any]] = []
    servers = load_servers()
    playwright = FastMCP("playwright")
    for spec in catalog_tools(catalog_path("playwright-mcp")):
        playwright.add_tool(replay_tool(spec))
    for label, build, published in (
        ("livemcptool (527 tools, 70 servers)", lambda m: gateway(m, servers),
         MCPPROXY["527 LiveMCPTool"]),
        ("playwright-mcp (45 tools)", lambda m: _with(playwright, m),
         MCPPROXY["45 tools (playwright-mcp here)"]),
    ):
        plain = listing_tokens(await _listed(build(None)))
        for level in ("typed", "minimal", "skeleton"):
            ours = listing_tokens(await _listed(build(_ours(level))))
            rows.append({"catalog": label, "level": level, "plain": plain, "ours": ours,
                         "cut": round(1 - ours / plain, 3), "mcpproxy_go_cut": published})
    return rows


def _with(server: FastMCP, middleware: Any) -> FastMCP:
    server.middleware[:] = [m for m in server.middleware
                            if not isinstance(m, ProgressiveDisclosure)]
    if middleware is not None:
        server.add_middleware(middleware)
    return server


async def capped() -> dict[str, Any]:
    """The capped listing: its size and tokens, its group lines, ``groups/list``."""
    server = gateway(_ours(max_tools=CAP))
    async with Client(server, extensions=[grouping()]) as client:
        tools = list(await client.list_tools())
        groups = await list_groups(client)
    bridge = next(t for t in tools if t.name == "describe_tools")
    async with Client(gateway(_ours(max_tools=CAP))) as plain_client:
        unmarked = list(await plain_client.list_tools())
    return {"tools": len(tools), "tokens": listing_tokens(unmarked),
            "tokens_with_group_meta": listing_tokens(tools),
            "bridge_description_tokens": count(bridge.description or "", ascii=False),
            "groups": len(groups), "groups_list_tokens": count({"groups": groups}, ascii=False),
            "listed": [t.name for t in tools], "bridge_description": bridge.description}


# -- the ranker -----------------------------------------------------------------------------
_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def words(text: str) -> list[str]:
    """Lower-cased words, names split at ``_``, ``-`` and camelCase; CJK per character."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


@dataclass
class BM25:
    """Okapi BM25 (k1=1.5, b=0.75) over a few hundred short documents."""

    docs: list[list[str]]
    k1: float = 1.5
    b: float = 0.75

    def __post_init__(self) -> None:
        self.avg = sum(map(len, self.docs)) / max(1, len(self.docs))
        df: Counter[str] = Counter(w for d in self.docs for w in set(d))
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.tf = [Counter(d) for d in self.docs]

    def rank(self, query: Sequence[str]) -> list[int]:
        scores = []
        for i, (tf, doc) in enumerate(zip(self.tf, self.docs, strict=True)):
            norm = self.k1 * (1 - self.b + self.b * len(doc) / (self.avg or 1))
            s = sum(self.idf.get(w, 0.0) * tf[w] * (self.k1 + 1) / (tf[w] + norm)
                    for w in set(query) if w in tf)
            scores.append((-s, i))
        return [i for _, i in sorted(scores)]


def _hits(index: BM25, entries: list[set[str]], tasks: list[dict[str, Any]]
          ) -> dict[str, float]:
    """Share of (task, needed tool) pairs with an entry leading to the tool in the top k."""
    found = dict.fromkeys(KS, 0)
    pairs = 0
    for task in tasks:
        order = index.rank(words(task["question"]))
        for needed in task["tools"]:
            pairs += 1
            for k in KS:
                if any(needed in entries[i] for i in order[:k]):
                    found[k] += 1
    return {f"top{k}": round(found[k] / max(1, pairs), 3) for k in KS} | {"pairs": pairs}


def ranker(listed: list[str], bridge_description: str) -> dict[str, Any]:
    """Plain names alone vs group lines plus the capped listing's tools."""
    servers = load_servers()
    tasks = load_tasks()
    short = {f"{s['server']}_{t['name']}": t["name"] for s in servers for t in s["tools"]}
    members = {s["server"]: {t["name"] for t in s["tools"]} for s in servers}
    by_name = {f"{s['server']}_{t['name']}": t for s in servers for t in s["tools"]}
    plain_docs = [words(name) for name in short]
    plain_entries = [{short[name]} for name in short]
    ours_docs: list[list[str]] = []
    ours_entries: list[set[str]] = []
    for line in bridge_description.split("\nGroups:\n", 1)[-1].splitlines():
        group, _, text = line.partition(": ")
        if group in members:
            ours_docs.append(words(f"{group} {text}"))
            ours_entries.append(members[group])
    for name in listed:
        if name in by_name:
            ours_docs.append(words(f"{name} {by_name[name].get('description') or ''}"[:400]))
            ours_entries.append({short[name]})
    return {"plain_names": _hits(BM25(plain_docs), plain_entries, tasks),
            "groups_plus_listed": _hits(BM25(ours_docs), ours_entries, tasks),
            "tasks": len(tasks)}


async def measure() -> dict[str, Any]:
    rows = await token_rows()
    cap = await capped()
    return {"levels": rows, "capped": {k: v for k, v in cap.items()
                                       if k not in ("listed", "bridge_description")},
            "ranker": ranker(cap["listed"], cap["bridge_description"] or "")}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| catalog | level | plain tokens | ours | cut | mcpproxy-go cut |",
             "|---|---|---:|---:|---:|---:|"]
    for r in result["levels"]:
        lines.append(f"| {r['catalog']} | {r['level']} | {r['plain']:,} | {r['ours']:,} | "
                     f"{r['cut']:.1%} | {r['mcpproxy_go_cut']:.1%} |")
    c = result["capped"]
    lines += ["", f"Capped at {CAP}: {c['tools']} entries, {c['tokens']:,} tokens "
              f"({c['tokens_with_group_meta']:,} with group `_meta`), of which the bridge's "
              f"group lines {c['bridge_description_tokens']:,}; `groups/list`: "
              f"{c['groups']} groups, {c['groups_list_tokens']:,} tokens.", "",
              "| ranker (BM25, LiveMCPBench public tasks) | top 1 | top 3 | top 5 |",
              "|---|---:|---:|---:|"]
    for label, key in (("plain listing, names alone", "plain_names"),
                       ("group lines + capped listing", "groups_plus_listed")):
        h = result["ranker"][key]
        lines.append(f"| {label} | {h['top1']:.1%} | {h['top3']:.1%} | {h['top5']:.1%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    result = asyncio.run(measure())
    print(markdown(result) if args.markdown else json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
