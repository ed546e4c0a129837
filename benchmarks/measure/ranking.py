"""Can a model's caller find a task's tools? Ranking and selection on LiveMCPBench's tasks.

Meaning (issue 19): for each LiveMCPBench task a ranker scores the 527 ``livemcptool`` tools
over what our listing shows and over the full definitions; the ratio of task tools found in
the top k is what the listing keeps (>= 0.9). Two rankers, so the figure does not rest on
one we wrote: our BM25 (Okapi, k1 1.5, b 0.75; names split at ``_``, ``-`` and camelCase;
also the gateway's) and PyPI ``bm25s`` with English stop words (the ``bench`` extra).

Selection (issue 28): per task-tool pair, where the tool is (a) in a ranker's top k over
the full definitions: ours, ``bm25s``, and FastMCP's ``BM25SearchTransform`` (it indexes a
tool's name, description, argument names and theirs: the same text), answering the task's
question on a plain FastMCP server (``search_tools`` called through ``fastmcp.Client``);
(b) in the listing a new caller of ours gets by default, or in ours' answer to
``describe_tools({"query": <question>})``, both through the real server and client, on a
new server and on a server in use (``in_use_answers``: per task, a server whose earlier
callers ran the other tasks); (c) in the listing with the budget off. Without a ``query``
argument on the bridge (before it landed) a stand-in answers: an index server of FastMCP's
own BM25 over the text decision 3 names. A task names tools without their server prefix: a
name on two servers counts when either ranks.

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
from contextlib import closing
from typing import Any

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform

from fastmcp_progressive import ListingSettings
from fastmcp_progressive.disclosure.listing import summarize
from tests.replay import placeholder, replay_tool

from ..results import (
    DEFAULT,
    FULL_RANKERS,
    QUERY,
    QUERY_IN_USE,
    SEARCH,
    RankRow,
    SelectionPair,
)
from .catalogs import Catalog
from .servers import ReplayServer, build_server, host_client, wire

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
    with closing(build_server(catalog, DEFAULT, listing=ListingSettings(
            summary_max_chars=chars, max_tools=None))) as server:
        async with host_client(server.mcp) as client:
            tools = [wire(t) for t in await client.list_tools()]
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
    async with host_client(mcp) as client:
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
    with closing(build_server(catalog, DEFAULT, listing=listing)) as server:
        async with host_client(server.mcp) as client:
            return [t.name for t in await client.list_tools()]


async def ours_answers(catalog: Catalog, questions: Sequence[str],
                       listing: ListingSettings) -> tuple[list[list[str]], list[list[str]] | None]:
    """Per question, a new caller of ours (a new ``fastmcp.Client`` on one server): the
    names its listing holds, and the names in the answer to ``describe_tools({"query":
    question})`` (``None`` for all when the bridge takes no query yet)."""
    listed: list[list[str]] = []
    answers: list[list[str]] = []
    queried = True
    with closing(build_server(catalog, DEFAULT, listing=listing)) as server:
        for question in questions:
            async with host_client(server.mcp) as client:
                tools = await client.list_tools()
                listed.append([t.name for t in tools])
                queried = queried and _has_query(tools)
                if queried:
                    result = await client.call_tool("describe_tools", {"query": question})
                    answers.append(query_names(_parsed(result)))
    return listed, answers if queried else None


HISTORY_CLIENT = mt.Implementation(name="mcp-use", version="1.0")
"""Who ran a server in use's history: a host the host table lists every tool to
(``hosts.py``: mcp-use, ``max_tools=None``). A capped listing takes the snapshot of call
counts (``toolcap.py``: at most hourly, at the first ``popular()``), and the MCP SDK lists
before validating a call's result, so a budgeted history caller would take it at no calls
and its hour would have to pass; an uncapped one leaves it to the new caller's listing."""


def history_tools(catalog: Catalog, tasks: Sequence[dict[str, Any]]
                  ) -> list[list[dict[str, Any]]]:
    """Per task, the catalog tools its caller calls: each tool it names once, a name on
    several servers the first in catalog order (so its calls add up on one tool)."""
    first: dict[str, dict[str, Any]] = {}
    for spec in catalog.tools:
        first.setdefault(short_name(spec["name"]), spec)
    return [[first[t] for t in dict.fromkeys(task["tools"]) if t in first] for task in tasks]


async def run_history(server: ReplayServer, history: Sequence[Sequence[dict[str, Any]]]
                      ) -> None:
    """Earlier callers on ``server``, as a client runs a task: one caller lists, then per
    task reads the definitions of the task's tools (``describe_tools``) and calls each with
    arguments its input schema accepts. Raises when that caller's listing was capped (its
    listing would have taken the snapshot of call counts before any call)."""
    async with host_client(server.mcp, client_info=HISTORY_CLIENT) as client:
        listed = [t.name for t in await client.list_tools()]
        missing = {spec["name"] for task in history for spec in task} - set(listed)
        if missing:
            raise ValueError(f"the history caller's listing left out {len(missing)} tools "
                             "(a capped listing takes the snapshot of call counts first): "
                             "measure a server in use with a budget its host row lifts")
        for task in history:
            if not task:
                continue
            await client.call_tool("describe_tools", {"tools": [s["name"] for s in task]})
            for spec in task:
                await client.call_tool(spec["name"],
                                       placeholder(spec.get("inputSchema") or {"type": "object"}))


async def in_use_answers(catalog: Catalog, tasks: Sequence[dict[str, Any]],
                         listing: ListingSettings
                         ) -> tuple[list[list[str]], list[list[str]]]:
    """Per task, a server in use: a new server (``listing``) whose earlier callers ran every
    OTHER task (``run_history``), then a new ``fastmcp.Client``: the names its listing holds
    and those in the answer to ``describe_tools({"query": question})``."""
    history = history_tools(catalog, tasks)
    listed: list[list[str]] = []
    answers: list[list[str]] = []
    for i, task in enumerate(tasks):
        with closing(build_server(catalog, DEFAULT, listing=listing)) as server:
            await run_history(server, history[:i] + history[i + 1:])
            async with host_client(server.mcp) as client:
                listed.append([t.name for t in await client.list_tools()])
                result = await client.call_tool("describe_tools", {"query": task["question"]})
                answers.append(query_names(_parsed(result)))
    return listed, answers


async def measure_selection(catalog: Catalog, tasks: list[dict[str, Any]],
                            listing: ListingSettings | None = None
                            ) -> tuple[list[SelectionPair], dict[str, Any]]:
    """Every task-tool pair placed by each method, and how ours ran (``config``). Ours
    runs with ``listing`` (default: the package's default), on a new server and on a
    server in use (``in_use_answers``)."""
    names, questions = catalog.names, [t["question"] for t in tasks]
    full_texts = [full_text(t) for t in catalog.tools]
    ranked: dict[str, list[list[str]]] = {}
    for method, ranker in ((FULL_OURS, our_bm25),
                           (FULL_BM25S, rankers().get("bm25s, English stop words"))):
        if ranker is not None:
            top = ranker(full_texts)
            ranked[method] = [[names[i] for i in top(q, DEPTH)] for q in questions]
    ranked[SEARCH] = await search_answers(catalog.tools, questions)
    listing = listing or ListingSettings()
    listed, answers = await ours_answers(catalog, questions, listing)
    ranked[QUERY] = answers if answers is not None else await stand_in_answers(catalog, questions)
    in_use, ranked[QUERY_IN_USE] = await in_use_answers(catalog, tasks, listing)
    every = {short_name(n) for n in await _listed_names(catalog, ListingSettings(max_tools=None))}
    tool_names = set(names)
    how = {"listing": f"ListingSettings(max_tools={listing.max_tools!r})",
           "listed": len(listed[0]) if listed else 0,
           "listed_tools": sum(1 for n in (listed[0] if listed else ()) if n in tool_names),
           "query": "the bridge's own answer: full definitions first, then further matches "
                    "one line each" if answers is not None
           else "a stand-in: FastMCP's BM25 over decision 3's text, no query argument yet",
           "in_use": "per task, a server whose earlier caller ran every other task, "
                     "describe_tools then each tool, before the new caller listed; that "
                     f"caller identifies as {HISTORY_CLIENT.name}, whose listing the host "
                     "table never caps, so its own listing takes no snapshot of call counts",
           "tasks": len(tasks)}
    pairs = [SelectionPair(catalog.name, tasks[i].get("task_id", str(i)), questions[i], tool,
                           place(tool, listed[i]) is not None, tool in every,
                           {method: place(tool, answer[i]) for method, answer in ranked.items()},
                           place(tool, in_use[i]) is not None)
             for i, tool in task_pairs(tasks, names)]
    return pairs, how
