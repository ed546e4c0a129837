"""What the listing keeps of a tool's meaning: can a ranker still find a task's tools?

A host that defers tools (claude.ai ranks them by BM25 over names and descriptions) or a
model scanning the list chooses from what ``tools/list`` shows. So for each task of
LiveMCPBench (``livemcpbench-tasks.public.json``: a question and the tools annotators used)
an offline BM25 ranker scores the 527 ``livemcptool`` tools, once over what our listing
shows (name, one-line summary, the listed argument names) and once over the full
definitions (name, full description, every argument name and description), and we count
how many of the tasks' tools land in the top 5 and top 10. The ratio of the two is what
the listing keeps (target: >= 0.9).

Two rankers, because with 114 task tools a ranker's details move the counts by a few
either way: the BM25 ``gateway_bench.py`` ranks the gateway's groups with (Okapi, k1 = 1.5,
b = 0.75; names split at ``_``, ``-`` and camelCase; thirty lines of our own, exact and
offline), and PyPI ``bm25s`` as its README uses it (English stop words), in the ``bench``
extra (it needs numpy), so the figure does not rest on a ranker we wrote.

A task names tools without their server prefix (the catalog is ``<server>__<tool>``); a
name found on two servers counts as found when either ranks; names missing from the
catalog are left out (5 of the annotations over all 95 tasks).

Example:
    ```python
    rows = await measure_ranking(catalog, tasks)   # one RankRow per listing and k
    ```
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastmcp import Client

from fastmcp_progressive import ListingSettings

from .corpus import Catalog, corpus_dir
from .gateway_bench import BM25, words
from .replay import DEFAULT, build_server
from .results import RankRow

TASKS_FILE = "livemcpbench-tasks.public.json"
RANK_CATALOG = "livemcptool"
TOP = (5, 10)
SUMMARY_CHARS = (60, 80, 100)
"""``summary_max_chars`` values compared (the default is 100)."""


def load_tasks() -> list[dict[str, Any]]:
    path = corpus_dir() / TASKS_FILE
    tasks: list[dict[str, Any]] = json.loads(Path(path).read_text(encoding="utf-8"))
    return tasks


def full_text(tool: dict[str, Any]) -> str:
    """A tool's full definition as words: name, description, arguments and theirs."""
    parts = [tool["name"], tool.get("description") or ""]
    for name, spec in (tool.get("inputSchema") or {}).get("properties", {}).items():
        parts.append(name)
        if isinstance(spec, dict):
            parts.append(str(spec.get("description") or ""))
    return " ".join(parts)


def listed_text(tool: dict[str, Any]) -> str:
    """What a listing shows of a tool: name, one-line summary, listed argument names."""
    properties = (tool.get("inputSchema") or {}).get("properties", {})
    return " ".join([tool["name"], tool.get("description") or "", *properties])


Ranker = Callable[[list[str]], Callable[[str, int], list[int]]]
"""Indexes ``texts``; answers a query's top-``k`` document indexes."""


def shared_bm25(texts: list[str]) -> Callable[[str, int], list[int]]:
    """``gateway_bench``'s BM25 and word splitting (names split at ``_``/``-``/camelCase)."""
    index = BM25([words(t) for t in texts])
    return lambda query, k: index.rank(words(query))[:k]


def bm25s_english(texts: list[str]) -> Callable[[str, int], list[int]]:
    """PyPI ``bm25s`` as its README uses it (Lucene scoring, English stop words)."""
    import bm25s

    index = bm25s.BM25()
    index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                show_progress=False)

    def top(query: str, k: int) -> list[int]:
        found, _ = index.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                  k=k, show_progress=False)
        return [int(i) for i in found[0]]

    return top


def rankers() -> dict[str, Ranker]:
    """The rankers to measure with: ours always, ``bm25s`` when installed (``bench``)."""
    out: dict[str, Ranker] = {"BM25 (gateway_bench)": shared_bm25}
    try:
        import bm25s  # noqa: F401
    except ImportError:
        return out
    out["bm25s, English stop words"] = bm25s_english
    return out


def recall(ranker: Ranker, texts: list[str], names: list[str], tasks: list[dict[str, Any]],
           k: int) -> tuple[int, int]:
    """(task tools found in the top ``k``, task tools in the catalog) over all tasks."""
    top_of = ranker(texts)
    short = [n.split("__", 1)[-1] for n in names]
    found = total = 0
    for task in tasks:
        top = {short[i] for i in top_of(task["question"], k)}
        for tool in dict.fromkeys(task["tools"]):
            if tool in short:
                total += 1
                found += tool in top
    return found, total


async def _listed(catalog: Catalog, chars: int) -> list[dict[str, Any]]:
    server = build_server(catalog, DEFAULT,
                          options={"listing": ListingSettings(summary_max_chars=chars)})
    try:
        async with Client(server.mcp) as client:
            tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json")
                     for t in await client.list_tools()]
    finally:
        if server.middleware is not None:
            server.middleware.close()
    names = set(catalog.names)
    return [t for t in tools if t["name"] in names]


async def measure_ranking(catalog: Catalog, tasks: list[dict[str, Any]]) -> list[RankRow]:
    """Top-5/10 recall, per ranker, from the full definitions and from the default listing
    at each ``summary_max_chars`` in ``SUMMARY_CHARS``."""
    names = list(catalog.names)
    listings = {chars: {t["name"]: t for t in await _listed(catalog, chars)}
                for chars in SUMMARY_CHARS}
    full = [full_text(t) for t in catalog.tools]
    rows: list[RankRow] = []
    for label, ranker in rankers().items():
        for k in TOP:
            found, total = recall(ranker, full, names, tasks, k)
            rows.append(RankRow(catalog.name, label, "full definitions", None, k, found, total))
        for chars, listed in listings.items():
            texts = [listed_text(listed[n]) for n in names]
            for k in TOP:
                found, total = recall(ranker, texts, names, tasks, k)
                rows.append(RankRow(catalog.name, label, f"{DEFAULT} listing", chars, k,
                                    found, total))
    return rows
