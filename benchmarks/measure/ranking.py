"""What the listing keeps of a tool's meaning: can a ranker still find a task's tools?

For each LiveMCPBench task a ranker scores the 527 ``livemcptool`` tools over what our
listing shows and over the full definitions; the ratio of task tools found in the top k is
what the listing keeps (issue 19: >= 0.9). Two rankers, so the figure does not rest on one
we wrote: our BM25 (Okapi, k1 1.5, b 0.75; names split at ``_``, ``-`` and camelCase; also
the gateway's) and PyPI ``bm25s`` with English stop words (the ``bench`` extra). A task
names tools without their server prefix: a name on two servers counts when either ranks.

Example:
    ```python
    rows = await measure_ranking(catalog, load_tasks())
    ```
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from fastmcp import Client

from fastmcp_progressive import ListingSettings

from ..results import DEFAULT, RankRow
from .catalogs import Catalog
from .servers import build_server, wire

TOP = (5, 10)
SUMMARY_CHARS = (60, 80, 100)
OURS = "our BM25"
_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def words(text: str) -> list[str]:
    """Lower-cased words, names split at ``_``, ``-`` and camelCase; CJK per character."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


class BM25:
    """Okapi BM25 (k1=1.5, b=0.75) over a few hundred short documents."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.docs, self.k1, self.b = docs, k1, b
        self.avg = sum(map(len, docs)) / max(1, len(docs)) or 1
        df: Counter[str] = Counter(w for d in docs for w in set(d))
        self.idf = {w: math.log(1 + (len(docs) - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.tf = [Counter(d) for d in docs]

    def rank(self, query: Sequence[str]) -> list[int]:
        scores = []
        for i, (tf, doc) in enumerate(zip(self.tf, self.docs, strict=True)):
            norm = self.k1 * (1 - self.b + self.b * len(doc) / self.avg)
            s = sum(self.idf.get(w, 0.0) * tf[w] * (self.k1 + 1) / (tf[w] + norm)
                    for w in set(query) if w in tf)
            scores.append((-s, i))
        return [i for _, i in sorted(scores)]


Ranker = Callable[[list[str]], Callable[[str, int], list[int]]]
"""Indexes ``texts``; answers a query's top-``k`` document indexes."""


def our_bm25(texts: list[str]) -> Callable[[str, int], list[int]]:
    index = BM25([words(t) for t in texts])
    return lambda query, k: index.rank(words(query))[:k]


def bm25s_english(texts: list[str]) -> Callable[[str, int], list[int]]:
    import bm25s

    index = bm25s.BM25()
    index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def top(query: str, k: int) -> list[int]:
        found, _ = index.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                  k=k, show_progress=False)
        return [int(i) for i in found[0]]

    return top


def rankers() -> dict[str, Ranker]:
    """Ours always, ``bm25s`` when installed (the ``bench`` extra)."""
    try:
        import bm25s  # noqa: F401
    except ImportError:
        return {OURS: our_bm25}
    return {OURS: our_bm25, "bm25s, English stop words": bm25s_english}


def full_text(tool: dict[str, Any]) -> str:
    """A tool's full definition as words: name, description, arguments and theirs."""
    parts = [tool["name"], tool.get("description") or ""]
    for name, spec in (tool.get("inputSchema") or {}).get("properties", {}).items():
        parts += [name, str(spec.get("description") or "") if isinstance(spec, dict) else ""]
    return " ".join(parts)


def listed_text(tool: dict[str, Any]) -> str:
    """What a listing shows of a tool: name, one-line summary, listed argument names."""
    properties = (tool.get("inputSchema") or {}).get("properties", {})
    return " ".join([tool["name"], tool.get("description") or "", *properties])


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


async def _listed(catalog: Catalog, chars: int) -> dict[str, dict[str, Any]]:
    server = build_server(catalog, DEFAULT,
                          options={"listing": ListingSettings(summary_max_chars=chars)})
    try:
        async with Client(server.mcp) as client:
            tools = [wire(t) for t in await client.list_tools()]
    finally:
        if server.middleware is not None:
            server.middleware.close()
    return {t["name"]: t for t in tools}


async def measure_ranking(catalog: Catalog, tasks: list[dict[str, Any]]) -> list[RankRow]:
    """Top-5/10 recall per ranker, over the full definitions and over the default listing
    at each of ``SUMMARY_CHARS``."""
    names = list(catalog.names)
    sources: list[tuple[str, int | None, list[str]]] = [
        ("full definitions", None, [full_text(t) for t in catalog.tools])]
    for chars in SUMMARY_CHARS:
        listing = await _listed(catalog, chars)
        sources.append((f"{DEFAULT} listing", chars, [listed_text(listing[n]) for n in names]))
    return [RankRow(catalog.name, label, source, chars, k, *recall(ranker, texts, names, tasks, k))
            for label, ranker in rankers().items()
            for source, chars, texts in sources for k in TOP]
