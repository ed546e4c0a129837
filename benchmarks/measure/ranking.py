"""Can a model's caller find a task's tools? Ranking and selection on LiveMCPBench's tasks.

Meaning (issue 19): for each LiveMCPBench task a ranker scores the 527 ``livemcptool`` tools
over what our listing shows and over the full definitions; the ratio of task tools found in
the top k is what the listing keeps (>= 0.9). Two rankers, so the figure does not rest on
one we wrote: our BM25 (Okapi, k1 1.5, b 0.75; names split at ``_``, ``-`` and camelCase;
also the gateway's) and PyPI ``bm25s`` with English stop words (the ``bench`` extra).

Selection (issue 28): per task-tool pair, where the tool is (a) in a ranker's top k over
the full definitions, (b) among FastMCP's ``BM25SearchTransform`` results for the task's
question (a plain FastMCP server, ``search_tools`` called through ``fastmcp.Client``),
(c) in the listing a new caller of ours gets by default, or in ours' answer to
``describe_tools({"query": <question>})``, both through the real server and client, and
(d) in the listing with the budget off. Without a ``query`` argument on the bridge (before
it landed) a stand-in answers: an index server of FastMCP's own BM25 over the text decision
3 names. A task names tools without their server prefix: a name on two servers counts when
either ranks.

Example:
    ```python
    rows = await measure_ranking(catalog, load_tasks())
    pairs, how = await measure_selection(catalog, load_tasks())
    ```
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform

from fastmcp_progressive import ListingSettings
from fastmcp_progressive.disclosure.listing import summarize
from tests.replay import replay_tool

from ..results import DEFAULT, FULL_RANKERS, QUERY, SEARCH, RankRow, SelectionPair
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
                                  k=min(k, len(texts)), show_progress=False)
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
                          listing=ListingSettings(summary_max_chars=chars, max_tools=None))
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


# -- selection (issue 28) -------------------------------------------------------------------
DEPTH = 10
"""Every ranked method answers its top 10; its top 5 is the first half."""
STAND_IN_CAP = 20
"""The cap the listing stands in with while the default lists every tool (no budget yet)."""
FULL_OURS, FULL_BM25S = FULL_RANKERS


def short_name(name: str) -> str:
    """A tool's name without its server prefix (``server__tool``), as tasks name it."""
    return name.split("__", 1)[-1]


def place(tool: str, answer: Sequence[str]) -> int | None:
    """``tool``'s 1-based place in ``answer`` (full names), ``None`` when absent."""
    return next((i for i, name in enumerate(answer, 1) if short_name(name) == tool), None)


def task_pairs(tasks: list[dict[str, Any]], names: Sequence[str]) -> list[tuple[int, str]]:
    """(task index, tool) for each distinct tool a task names that the catalog has."""
    short = {short_name(n) for n in names}
    return [(i, tool) for i, task in enumerate(tasks)
            for tool in dict.fromkeys(task["tools"]) if tool in short]


def names_in(answer: Any) -> list[str]:
    """The tool names an answer holds, in order: every JSON object with a ``name`` and a
    definition's ``inputSchema`` or ``description``, found through lists and other objects
    (a definition's own insides are not searched)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("name"), str) and ("inputSchema" in value
                                                       or "description" in value):
                found.append(value["name"])
                return
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(answer)
    return list(dict.fromkeys(found))


def query_names(answer: Any) -> list[str]:
    """The names a query's answer holds, best first: its full definitions (``tools``, a
    map by name), then the further matches (``more_tools``, one line each); another shape
    through ``names_in``."""
    if isinstance(answer, dict) and isinstance(answer.get("tools"), dict):
        more = answer.get("more_tools")
        return list(dict.fromkeys([*answer["tools"], *(more if isinstance(more, dict) else ())]))
    return names_in(answer)


def _parsed(result: Any) -> Any:
    """A tool call's answer as JSON: its structured content, else its text parsed (one
    block, as ``describe_tools`` answers: that JSON; several: the list of them)."""
    if result.structured_content is not None:
        return result.structured_content
    out = []
    for block in result.content:
        text = getattr(block, "text", None)
        if text:
            try:
                out.append(json.loads(text))
            except ValueError:
                continue
    return out[0] if len(out) == 1 else out


async def search_answers(tools: Sequence[dict[str, Any]], questions: Sequence[str],
                         depth: int = DEPTH) -> list[list[str]]:
    """FastMCP's ``BM25SearchTransform`` answering each question through ``fastmcp.Client``
    on a plain FastMCP server holding ``tools`` (``max_results=depth``)."""
    mcp = FastMCP("search")
    for spec in tools:
        mcp.add_tool(replay_tool(spec))
    mcp.add_transform(BM25SearchTransform(max_results=depth))
    async with Client(mcp) as client:
        return [names_in(_parsed(await client.call_tool("search_tools", {"query": q})))
                for q in questions]


def stand_in_text(tool: dict[str, Any]) -> str:
    """What decision 3 ranks a tool over: its name split into words, its listing summary,
    its argument names and its description text (here the registered one: no files)."""
    name = " ".join(words(tool["name"]))
    description = tool.get("description") or ""
    properties = (tool.get("inputSchema") or {}).get("properties", {})
    return " ".join([name, summarize(description or tool["name"], 100), *properties,
                     description])


async def stand_in_answers(catalog: Catalog, questions: Sequence[str], depth: int = DEPTH,
                           text: Callable[[dict[str, Any]], str] = stand_in_text
                           ) -> list[list[str]]:
    """The query's stand-in: FastMCP's BM25 over one document per tool (``text``)."""
    documents = [{"name": t["name"], "description": text(t),
                  "inputSchema": {"type": "object"}} for t in catalog.tools]
    return await search_answers(documents, questions, depth)


def _has_query(tools: Sequence[Any]) -> bool:
    bridge = next((t for t in tools if t.name == "describe_tools"), None)
    schema = wire(bridge).get("inputSchema", {}) if bridge is not None else {}
    return "query" in schema.get("properties", {})


async def _listed_names(catalog: Catalog, listing: ListingSettings) -> list[str]:
    server = build_server(catalog, DEFAULT, listing=listing)
    try:
        async with Client(server.mcp) as client:
            return [t.name for t in await client.list_tools()]
    finally:
        if server.middleware is not None:
            server.middleware.close()


async def ours_answers(catalog: Catalog, questions: Sequence[str],
                       listing: ListingSettings) -> tuple[list[list[str]], list[list[str]] | None]:
    """Per question, a new caller of ours (a new ``fastmcp.Client`` on one server): the
    names its listing holds, and the names in the answer to ``describe_tools({"query":
    question})`` (``None`` for all when the bridge takes no query yet)."""
    server = build_server(catalog, DEFAULT, listing=listing)
    listed: list[list[str]] = []
    answers: list[list[str]] = []
    queried = True
    try:
        for question in questions:
            async with Client(server.mcp) as client:
                tools = await client.list_tools()
                listed.append([t.name for t in tools])
                queried = queried and _has_query(tools)
                if queried:
                    result = await client.call_tool("describe_tools", {"query": question})
                    answers.append(query_names(_parsed(result)))
    finally:
        if server.middleware is not None:
            server.middleware.close()
    return listed, answers if queried else None


async def measure_selection(catalog: Catalog, tasks: list[dict[str, Any]],
                            listing: ListingSettings | None = None
                            ) -> tuple[list[SelectionPair], dict[str, Any]]:
    """Every task-tool pair placed by each method, and how ours ran (``config``). Ours
    runs with ``listing`` (default: the package's default, or ``STAND_IN_CAP`` while that
    default lists every tool of ``catalog``)."""
    names, questions = catalog.names, [t["question"] for t in tasks]
    full_texts = [full_text(t) for t in catalog.tools]
    ranked: dict[str, list[list[str]]] = {}
    for method, ranker in ((FULL_OURS, our_bm25),
                           (FULL_BM25S, rankers().get("bm25s, English stop words"))):
        if ranker is not None:
            top = ranker(full_texts)
            ranked[method] = [[names[i] for i in top(q, DEPTH)] for q in questions]
    ranked[SEARCH] = await search_answers(catalog.tools, questions)
    label = "given"
    if listing is None:
        listing, label = ListingSettings(), "default"
        if len(await _listed_names(catalog, listing)) >= len(names):
            listing, label = ListingSettings(max_tools=STAND_IN_CAP), "stand-in"
    listed, answers = await ours_answers(catalog, questions, listing)
    ranked[QUERY] = answers if answers is not None else await stand_in_answers(catalog, questions)
    every = {short_name(n) for n in await _listed_names(catalog, ListingSettings(max_tools=None))}
    how = {"listing": f"ListingSettings(max_tools={listing.max_tools!r})" + (
               " (the default)" if label == "default" else " (standing in for the default)"
               if label == "stand-in" else ""),
           "listed": len(listed[0]) if listed else 0,
           "query": "the bridge's own answer: full definitions first, then further matches "
                    "one line each" if answers is not None
           else "a stand-in: FastMCP's BM25 over decision 3's text, no query argument yet",
           "tasks": len(tasks)}
    found = task_pairs(tasks, names)
    slots = sum(1 for n in (listed[0] if listed else ()) if n in set(names))
    how["popular_slots"] = slots
    pairs = [SelectionPair(catalog.name, tasks[i].get("task_id", str(i)), questions[i], tool,
                           place(tool, listed[i]) is not None, tool in every,
                           {method: place(tool, answer[i]) for method, answer in ranked.items()},
                           tool in used_most(found, names, i, slots))
             for i, tool in found]
    return pairs, how


def used_most(pairs: Sequence[tuple[int, str]], names: Sequence[str], task: int, slots: int
              ) -> set[str]:
    """The ``slots`` tools (short names) the tasks other than ``task`` use most, ties in
    catalog order, as ``toolcap.py`` ranks a server's most called tools: what a warm
    server's listing would start a new caller with, had its callers run the other tasks
    (an estimate, not measured through a server: the call counts are snapshotted at most
    hourly)."""
    counts = Counter(tool for i, tool in pairs if i != task)
    order = {short_name(n): i for i, n in reversed(list(enumerate(names)))}
    return set(sorted(counts, key=lambda t: (-counts[t], order[t]))[:slots])
