"""The query's index (``disclosure/index.py``) and what a query takes (issues 33 and 35).

The index ranks as FastMCP's BM25 does, a plural finding its singular (measured better on
LiveMCPBench's public tasks); it is built off the event loop (other clients are served
meanwhile), kept small and bounded, and eleven views of a 2,000-tool catalog keep their
indexes. A task's whole text is cut and ranked, not refused; several queries are answered
in one call, each its best.
"""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.transforms.search import BM25SearchTransform
from fastmcp.tools.base import Tool

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.disclosure import search
from fastmcp_progressive.disclosure.index import Index, singular
from fastmcp_progressive.disclosure.search import (
    FULL_RESULTS,
    MAX_QUERIES,
    MAX_QUERY_CHARS,
    cut_query,
    distinct_words,
)
from fastmcp_progressive.files.store import Definitions, DescriptionStore
from tests.conftest import TOKENS, Era, Transport, answer_of, clients, gated
from tests.corpus import catalog_path, corpus_dir, load_tasks
from tests.disclosure.test_search import first, github_server, github_tool, query
from tests.replay import replay_tool

WORDS = (
    "create", "update", "delete", "list", "read", "write", "fetch", "send", "open", "close",
    "merge", "search", "file", "page", "issue", "branch", "commit", "user", "address", "city",
    "weather", "invoice", "order", "payment", "report", "table", "query", "chart", "image",
    "video", "audio", "note", "event", "calendar", "email", "message", "channel", "repo",
    "project", "task", "label", "comment", "review", "release", "tag", "secret", "key", "token",
    "cluster", "node",
)


def synthetic_tools(count: int, seed: int = 7) -> list[Tool]:
    """``count`` tools with twenty-word descriptions drawn from ``WORDS``."""
    pick = random.Random(seed)
    return [github_tool(f"{pick.choice(WORDS)}_{pick.choice(WORDS)}_{i}",
                        " ".join(pick.choices(WORDS, k=20)) + ".", ["owner", "name"])
            for i in range(count)]


def searcher() -> search.ToolSearch:
    return search.ToolSearch(Definitions(DescriptionStore(None)), lambda tool, sig: "")


class CountedBuilds:
    """Counts ``Index.build`` calls (monkeypatched in for one test)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sizes: list[int] = []
        counter = self

        class Counted(Index):
            @classmethod
            def build(cls, texts: Sequence[str], fold: Callable[[str], str] = singular,
                      **options: Any) -> Index:
                counter.sizes.append(len(texts))
                return super().build(texts, fold, **options)

        monkeypatch.setattr(search, "Index", Counted)


# -- ranking ------------------------------------------------------------------------------
needs_corpus = pytest.mark.skipif(
    not catalog_path("livemcptool").exists()
    or not (corpus_dir() / "livemcpbench-tasks.public.json").exists(),
    reason="shared corpus not present")


def task_tools_found(index: Index, names: Sequence[str], tasks: Sequence[dict[str, Any]]
                     ) -> tuple[int, int]:
    """(task-tool pairs whose tool ``index`` ranks in the top 5, in the top 10) over
    ``tasks``, one query per task text; a task names a tool without its server prefix."""
    top5 = top10 = 0
    for task in tasks:
        top = [names[at].split("__", 1)[-1] for at in index.rank(task["question"])[:10]]
        for tool in dict.fromkeys(task["tools"]):
            top5 += tool in top[:5]
            top10 += tool in top
    return top5, top10


@needs_corpus
async def test_it_ranks_as_fastmcps_bm25_and_each_addition_finds_more_task_tools() -> None:
    """Without folding, stop words or feedback, every LiveMCPBench task text ranks the 527
    tools exactly as FastMCP's ``BM25SearchTransform`` (through its public ``search_tools``)
    ranks the same documents. These documents leave out the listing line (the server's
    add it: there, ``benchmarks/``, 38/48, 44/50 and 46/54). Of 114 task-tool pairs, in the
    top 5 and the top 10: 38 and 51 plain, 41 and 54 with a plural finding its singular,
    45 and 55 with stop words left out and the best matches' words asked for too (the
    default); and on each half of the tasks (even and odd places) more in the top 5 and
    none fewer in the top 10 than with plurals alone: it holds on both halves."""
    specs = json.loads(catalog_path("livemcptool").read_text(encoding="utf-8"))
    kept = searcher()
    catalog = [(spec["name"], kept._document(replay_tool(spec)).text) for spec in specs]
    texts = [f"{name} {text}" for name, text in catalog]
    names = [name for name, _ in catalog]
    reference = FastMCP("reference")
    for name, text in catalog:
        reference.add_tool(Tool(name=name, description=text,
                                parameters={"type": "object", "properties": {}}))
    reference.add_transform(BM25SearchTransform(
        max_results=len(catalog),
        search_result_serializer=lambda found: json.dumps([t.name for t in found])))
    tasks = load_tasks()
    plain = Index.build(texts, lambda word: word, stop=frozenset(), feedback=0)  # no folding
    async with Client(reference) as client:
        for task in tasks:
            words = distinct_words(task["question"])
            theirs = await client.call_tool("search_tools", {"query": words})
            ours = [names[at] for at in plain.rank(words)]
            assert ours == json.loads(theirs.content[0].text), task["question"]
    plurals = Index.build(texts, stop=frozenset(), feedback=0)
    default = Index.build(texts)
    found = {label: task_tools_found(index, names, tasks)
             for label, index in (("plain", plain), ("plurals", plurals), ("default", default))}
    assert found == {"plain": (38, 51), "plurals": (41, 54), "default": (45, 55)}
    for half in (tasks[0::2], tasks[1::2]):
        before = task_tools_found(plurals, names, half)
        after = task_tools_found(default, names, half)
        assert after[0] > before[0] and after[1] >= before[1], (before, after)


def test_a_query_leaves_out_stop_words_unless_it_says_nothing_else() -> None:
    """A long text's "the", "to", "in" said many times no longer outweigh its one telling
    word: the tool every description fills with them loses to the one that says it."""
    texts = ["fill_form: Fill in the form and go to the page in the browser that is open.",
             "geocode_address: Geocode an address."]
    task = "go to the address in the town and then to the page in the town"
    assert Index.build(texts, stop=frozenset(), feedback=0).rank(task)[0] == 0
    assert Index.build(texts, feedback=0).rank(task)[0] == 1
    assert Index.build(texts).rank("the and in to") == [0]  # nothing else said: kept


def test_the_best_matches_words_bring_up_the_step_a_task_does_not_name() -> None:
    """A task that names the route but not the geocoding finds ``geocode_address`` too:
    it shares the best match's words (its server's, "place", "coordinates"); without
    feedback it is not found at all."""
    texts = ["maps__get_route: Route directions between two places by their coordinates.",
             "maps__geocode_address: Coordinates of an address or place name, maps server.",
             "weather__forecast: Weather forecast for a city.",
             "files__write_file: Write a file."]
    task = "Plan a route from the station to the museum"
    assert 1 not in Index.build(texts, feedback=0).rank(task)
    assert Index.build(texts).rank(task)[:2] == [0, 1]


@pytest.mark.parametrize(("transport", "era"), [("memory", "legacy"), ("http", "modern")])
async def test_a_task_text_finds_its_unnamed_step_through_the_server(transport: Transport,
                                                                     era: Era) -> None:
    """Through ``describe_tools``: a task's text, full of words every tool says, answers the
    route first and the geocoding it implies among its matches (before: the form filler,
    which says "the", "to" and "in" most, came first)."""
    server = FastMCP("maps", auth=StaticTokenVerifier(tokens=TOKENS) if transport == "http"
                     else None)
    for name, text in (
            ("maps_get_route", "Route directions between two places by their coordinates."),
            ("maps_geocode_address", "Coordinates of an address or place name."),
            ("browser_fill_form", "Fill in the form on the page that is open in the browser, "
             "to the end, as it is in the page."),
            ("weather_forecast", "Weather forecast for a city."),
            ("files_write_file", "Write a file.")):
        server.add_tool(github_tool(name, text, []))
    server.add_middleware(ProgressiveDisclosure())
    token = ["alice-token"] if transport == "http" else None
    async with clients(server, transport, era, tokens=token) as (c,):
        body = await query(c, "Plan a route to the museum in the town, and then to the station "
                              "in the town, on the way to the hotel")
    found = [*body["tools"], *body.get("more_tools", {})]
    assert found[:2] == ["maps_get_route", "maps_geocode_address"], found


@pytest.mark.parametrize(("word", "folded"), [
    ("queries", "query"), ("files", "file"), ("addresses", "addresse"), ("address", "address"),
    ("status", "status"), ("pages", "page"), ("shoes", "shoe"), ("trees", "tree"), ("bus", "bus"),
    ("stats", "stat"), ("open", "open")])
def test_words_are_made_singular(word: str, folded: str) -> None:
    assert singular(word) == folded


async def test_a_plural_finds_the_tool_that_says_the_singular() -> None:
    """A task says "files", the tool says "file": found (before, no word matched)."""
    server = FastMCP("files")
    for name, text in (("write_file", "Write a file to disk."), ("write_note", "Write a note."),
                       ("get_weather", "Weather for a city.")):
        server.add_tool(github_tool(name, text, []))
    server.add_middleware(ProgressiveDisclosure())
    async with clients(server, "memory", "legacy") as (c,):
        assert first(await query(c, "save the files")) == "write_file"
        assert first(await query(c, "weathers of cities")) == "get_weather"


# -- off the loop, small, bounded -----------------------------------------------------------
async def test_other_clients_are_served_while_a_large_index_builds() -> None:
    """The first query of a 2,000-tool catalog builds its index (and every document) in a
    worker thread: another client's requests are answered meanwhile (before, none were
    while the index server was built on the loop)."""
    server = FastMCP("large")
    for tool in synthetic_tools(2_000):
        server.add_tool(tool)
    server.add_middleware(ProgressiveDisclosure())
    async with clients(server, "memory", "legacy", 2) as (asker, other):
        served = 0
        done = anyio.Event()

        async def ping() -> None:
            nonlocal served
            while not done.is_set():
                await other.ping()
                served += 1

        async with anyio.create_task_group() as group:
            group.start_soon(ping)
            await anyio.sleep(0)
            before = served
            body = await query(asker, "merge a branch and send an email")
            during = served - before
            done.set()
        assert body["tools"]
        assert during >= 20, during


async def test_eleven_views_of_a_2000_tool_catalog_keep_their_small_indexes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33's case: eleven callers each see 2,000 of 2,200 tools. Each view's index is
    built once (a second round builds none), and what each keeps is small: the memory an
    index retains (tracemalloc) is what its ``size`` says, within a quarter, and well under
    2 KB per tool (the FastMCP index server it replaces kept about 13 KB)."""
    builds = CountedBuilds(monkeypatch)
    tools = synthetic_tools(2_200)
    views = [tools[:i * 200] + tools[(i + 1) * 200:] for i in range(11)]
    kept = searcher()
    for view in views:  # the documents, kept per tool, are shared by every view
        for tool in view:
            kept._document(tool)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        await kept.rank(views[0], ["merge a branch"], 10)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    size = kept._indexes[next(iter(kept._indexes))].index.size
    assert 0.75 * size <= retained <= 1.25 * size, (retained, size)
    assert size < 2_000 * len(views[0]), size
    for _ in range(2):
        for view in views:
            assert (await kept.rank(view, ["send an email"], 10))[0]
    assert builds.sizes == [2_000] * 11
    assert kept._indexes.currsize <= search.INDEX_BYTES


async def test_queries_of_one_new_catalog_at_once_build_its_index_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    builds = CountedBuilds(monkeypatch)
    tools, kept = synthetic_tools(500), searcher()
    async with anyio.create_task_group() as group:
        for words in ("merge a branch", "send an email", "open a page", "read a file"):
            group.start_soon(kept.rank, tools, [words], 5)
    assert builds.sizes == [500]


# -- what a query takes -----------------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), [("memory", "legacy"), ("http", "modern")])
async def test_a_task_text_over_the_limit_is_cut_and_ranked(transport: Transport, era: Era
                                                              ) -> None:
    """A model that passes a task's whole text gets the tools its start names, and is told
    the text was cut, where it used to get INVALID_QUERY."""
    text = "Fork a repository, then " + "describe every step you take in detail. " * 60
    assert len(text) > MAX_QUERY_CHARS
    token = ["alice-token"] if transport == "http" else None
    async with clients(github_server(auth=transport == "http"), transport, era,
                       tokens=token) as (c,):
        body = await query(c, text)
    assert "is_error" not in body
    assert first(body) == "fork_repository"
    assert str(MAX_QUERY_CHARS) in body["query_truncated"]


def test_a_query_is_cut_where_a_word_ends() -> None:
    text = "a" * (MAX_QUERY_CHARS - 3) + " repository"
    assert cut_query(text) == "a" * (MAX_QUERY_CHARS - 3)
    assert cut_query("b" * (MAX_QUERY_CHARS + 5)) == "b" * MAX_QUERY_CHARS
    assert cut_query("fork a repo") == "fork a repo"


@pytest.mark.parametrize(("transport", "era"), [("memory", "legacy"), ("http", "modern")])
async def test_several_queries_are_each_answered_with_their_best(transport: Transport, era: Era
                                                                   ) -> None:
    """``queries``: a task's steps in one call. Each query's best match is answered in full
    (and granted), in turns; ``matches`` says which tools each step found."""
    steps = ["create a pull request", "fork a repository", "star a repo"]
    token = ["alice-token"] if transport == "http" else None
    async with clients(github_server(auth=transport == "http"), transport, era,
                       tokens=token) as (c,):
        result = await c.call_tool("describe_tools", {"queries": steps})
        body = answer_of(result)
        if era == "legacy":
            assert not await gated(c, "star_repository", {"owner": "o", "repo": "r"})
        many = answer_of(await c.call_tool("describe_tools", {
            "query": "list issues", "queries": [*steps, "merge a PR", "create a branch"]}))
    assert list(body["tools"])[:3] == ["create_pull_request", "fork_repository",
                                       "star_repository"]
    assert len(body["tools"]) <= FULL_RESULTS
    assert list(body["matches"]) == steps
    assert [names[0] for names in body["matches"].values()] == list(body["tools"])[:3]
    assert all(len(names) <= FULL_RESULTS for names in body["matches"].values())
    shown = {*body["tools"], *body.get("more_tools", {})}
    assert {name for names in body["matches"].values() for name in names} == shown
    assert list(many["matches"]) == ["list issues", *steps, "merge a PR"][:MAX_QUERIES]
    assert "1 past the first" in many["queries_left_off"]
