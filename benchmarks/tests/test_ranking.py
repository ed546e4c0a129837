"""The meaning and selection benchmarks: they count what they say, through real servers,
and the report and targets read them."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.tools.base import Tool

from benchmarks.measure.catalogs import Catalog
from benchmarks.measure.ranking import (
    _parsed,
    listed_text,
    measure_selection,
    names_in,
    place,
    query_names,
    rankers,
    recall,
    task_pairs,
    used_most,
)
from benchmarks.report.selection import coverage, section
from benchmarks.report.targets import judge
from benchmarks.report.tokens import _ranking
from benchmarks.results import FULL_RANKERS, QUERY, SEARCH, RankRow, Results, SelectionPair
from fastmcp_progressive import ListingSettings, ProgressiveDisclosure

NAMES = ["weather__get_forecast", "mail__send_email", "files__read_file", "other__read_file"]
TEXTS = ["get forecast Weather forecast for a city", "send email Send an e-mail message",
         "read file Read a text file", "read file Read a file on another server"]
TASKS = [{"question": "What is the weather forecast in Paris?", "tools": ["get_forecast"]},
         {"question": "Send an email to Bob", "tools": ["send_email", "not_in_catalog"]},
         {"question": "Open my file", "tools": ["read_file"]}]


@pytest.mark.parametrize("label", list(rankers()))
def test_recall_counts_task_tools_in_the_catalog_found_in_the_top_k(label: str) -> None:
    ranker = rankers()[label]
    assert recall(ranker, TEXTS, NAMES, TASKS, 1) == (3, 3)  # a name on two servers: either
    assert recall(ranker, TEXTS, NAMES, TASKS, 4)[1] == 3  # names not in the catalog: left out


def test_listed_text_is_what_the_listing_shows() -> None:
    tool = {"name": "a__b", "description": "Do b.", "inputSchema": {
        "type": "object", "properties": {"city": {"type": "string"}}}}
    assert listed_text(tool) == "a__b Do b. city"


def test_report_and_targets_judge_the_ratio_per_ranker() -> None:
    results = Results(machine={}, config={}, ranking=[
        RankRow("livemcptool", "r", "full definitions", None, 5, 30, 100),
        RankRow("livemcptool", "r", "typed listing", 100, 5, 26, 100),
        RankRow("livemcptool", "r", "typed listing", 60, 5, 20, 100),
    ])
    text = "\n".join(_ranking(results))
    assert "| r | typed listing | 100 | 5 | 26 / 100 | 26.0% | 0.87 |" in text
    assert "| r | 0.87 |" in text  # the summary at the default length
    (target,) = [t for t in judge(results) if "finds tasks' tools" in t.name]
    assert target.met is False and "26 vs 30" in target.measured  # only the default length


# -- selection (issue 28) ------------------------------------------------------------------
def _tool(name: str, description: str, *arguments: str) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {
        "type": "object", "properties": {a: {"type": "string", "description": f"The {a}."}
                                         for a in arguments}}}


CATALOG = Catalog("tiny", (
    _tool("weather__get_forecast", "Weather forecast for a city.", "city"),
    _tool("mail__send_email", "Send an e-mail message to a recipient.", "to", "body"),
    _tool("files__read_file", "Read a text file from disk.", "path"),
    _tool("other__read_file", "Read a file on another server.", "path"),
    _tool("maps__geocode_address", "Turn a street address into coordinates.", "address"),
    _tool("news__get_headlines", "Today's news headlines.", "country"),
))
SELECT_TASKS = [
    {"task_id": "t1", "question": "What is the weather forecast in Paris?",
     "tools": ["get_forecast", "get_forecast"]},
    {"task_id": "t2", "question": "Send an email with the coordinates of this street address",
     "tools": ["send_email", "geocode_address", "not_in_catalog"]},
]


def test_used_most_leaves_the_task_out_and_breaks_ties_in_catalog_order() -> None:
    names = ["a__x", "b__y", "c__z", "d__w"]
    pairs = [(0, "z"), (1, "z"), (1, "w"), (2, "y"), (2, "z")]
    assert used_most(pairs, names, 0, 2) == {"z", "y"}  # z twice; y before w in the catalog
    assert used_most(pairs, names, 2, 1) == {"z"}
    assert used_most(pairs, names, 2, 0) == set()


def test_names_in_collects_definitions_not_their_insides() -> None:
    answer = {"result": [{"name": "a__x", "description": "X.", "inputSchema": {
        "type": "object", "properties": {"name": {"type": "string", "description": "n"}}}},
        {"name": "b__y", "inputSchema": {}}, {"name": "a__x", "description": "again"}],
        "note": {"name": "not a tool"}}
    assert names_in(answer) == ["a__x", "b__y"]


def test_query_names_reads_definitions_then_further_matches() -> None:
    answer = {"tools": {"b__y": {"description": "Y."}, "a__x": {"name": "a__x"}},
              "more_tools": {"c__z": "Z, one line."}}
    assert query_names(answer) == ["b__y", "a__x", "c__z"]
    assert query_names({"tools": {"a__x": {}}}) == ["a__x"]
    assert query_names([{"name": "a__x", "description": "X."}]) == ["a__x"]  # other shapes


async def test_query_names_read_a_real_answer_with_its_further_matches() -> None:
    """``describe_tools`` answers as one text block (no structured content): the names
    read from it include ``more_tools``, not only the full definitions."""
    server = FastMCP("notes")
    for i in range(8):
        server.add_tool(Tool.from_function(lambda: None, name=f"note_{i}",
                                           description=f"Write note number {i}."))
    server.add_middleware(ProgressiveDisclosure())
    async with Client(server) as client:
        result = await client.call_tool("describe_tools", {"query": "write a note"})
    names = query_names(_parsed(result))
    assert len(names) == 8 and set(names) == {f"note_{i}" for i in range(8)}


def test_place_counts_a_name_on_any_server() -> None:
    assert place("read_file", ["mail__send_email", "other__read_file"]) == 2
    assert place("read_file", ["mail__send_email"]) is None
    assert task_pairs(SELECT_TASKS, CATALOG.names) == [
        (0, "get_forecast"), (1, "send_email"), (1, "geocode_address")]


async def test_selection_places_each_pair_through_real_servers() -> None:
    pairs, how = await measure_selection(CATALOG, SELECT_TASKS, ListingSettings(max_tools=3))
    assert [(p.task, p.tool) for p in pairs] == [
        ("t1", "get_forecast"), ("t2", "send_email"), ("t2", "geocode_address")]
    assert all(p.listed_all for p in pairs)  # (d): every tool listed with the budget off
    assert how["listed"] == 3 and how["tasks"] == 2
    assert sum(p.listed for p in pairs) <= 1  # 3 entries: the bridges and at most one tool
    forecast, email, geocode = pairs
    for method in (*FULL_RANKERS[:1], SEARCH, QUERY):
        assert forecast.ranks[method] == 1, method  # every ranker puts the obvious tool first
        assert email.found(method, 2) and geocode.found(method, 3), method
    assert all(p.ours(3) for p in pairs)  # (c): listed, or in the query's top 3


def test_the_report_counts_coverage_and_names_the_misses() -> None:
    full, other = FULL_RANKERS

    def pair(tool: str, listed: bool, popular: bool = False, **ranks: int | None
             ) -> SelectionPair:
        named = {full: ranks.get("a"), other: ranks.get("a2"), SEARCH: ranks.get("b"),
                 QUERY: ranks.get("q")}
        return SelectionPair("livemcptool", tool, f"Question for {tool}?", tool, listed, True,
                             named, popular)

    pairs = [pair("one", False, a=1, a2=2, b=1, q=1), pair("two", True, a=3, b=9),
             pair("three", False, True, a=4, a2=1, q=7), pair("four", False, b=2, q=3),
             pair("five", False)]
    results = Results(machine={}, config={"selection": {"listed": 20, "tasks": 5}},
                      selection=pairs)
    assert coverage(pairs, full, 5) == (2, 3)  # "three": the query has it at 7 only
    assert coverage(pairs, full, 10) == (3, 3)
    assert coverage(pairs, full, 5, warm=True) == (2, 3)  # "two" was listed, is not popular
    text = "\n".join(section(results))
    assert "| (c) ours: listed, or in the query's answer | 3 / 5 (0.60) | 4 / 5 (0.80) |" in text
    assert "| (b) FastMCP BM25SearchTransform (`search_tools`) | 2 / 5 (0.40) | 3 / 5 (0.60) |" \
        in text
    assert "| Question for three? | `three` | 4 | 1 | – | 7 |" in text
    targets = [t for t in judge(results) if "query's top 5" in t.name]
    assert [(t.measured, t.met) for t in targets] == [
        ("2 / 3 (0.67)", False), ("1 / 2 (0.50)", False), ("3 vs 2 of 5 (1.50x)", True)]
