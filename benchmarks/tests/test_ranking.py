"""The meaning and selection benchmarks: they count what they say, through real servers,
and the report and targets read them."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import FastMCP
from fastmcp.tools.base import Tool

from benchmarks.measure.catalogs import Catalog
from benchmarks.measure.ranking import (
    _parsed,
    full_text,
    history_tools,
    in_use_answers,
    listed_text,
    measure_selection,
    names_in,
    place,
    query_names,
    rankers,
    recall,
    search_answers,
    task_pairs,
)
from benchmarks.measure.servers import host_client
from benchmarks.report.selection import coverage, section
from benchmarks.report.targets import judge
from benchmarks.report.tokens import _ranking
from benchmarks.results import (
    FULL_RANKERS,
    QUERY,
    QUERY_IN_USE,
    SEARCH,
    RankRow,
    Results,
    SelectionPair,
)
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
    {"task_id": "t3", "question": "Today's headlines, and the weather forecast for Rome",
     "tools": ["get_forecast", "get_headlines"]},
]
BUDGETED = Catalog("budgeted", (
    *(_tool(f"filler__tool_{i}", f"Filler number {i}.") for i in range(50)), *CATALOG.tools))
"""Above the budget's threshold (50 tools), the task tools last: a new server's listing
(its first 18 tools and the two bridges) holds none of them."""


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
    async with host_client(server) as client:  # a generic host: FastMCP's own gets no query
        result = await client.call_tool("describe_tools", {"query": "write a note"})
    names = query_names(_parsed(result))
    assert len(names) == 8 and set(names) == {f"note_{i}" for i in range(8)}


def test_place_counts_a_name_on_any_server() -> None:
    assert place("read_file", ["mail__send_email", "other__read_file"]) == 2
    assert place("read_file", ["mail__send_email"]) is None
    assert task_pairs(SELECT_TASKS, CATALOG.names) == [
        (0, "get_forecast"), (1, "send_email"), (1, "geocode_address"), (2, "get_forecast"),
        (2, "get_headlines")]


async def test_selection_places_each_pair_through_real_servers() -> None:
    pairs, how = await measure_selection(BUDGETED, SELECT_TASKS)
    assert [(p.task, p.tool) for p in pairs] == [
        ("t1", "get_forecast"), ("t2", "send_email"), ("t2", "geocode_address"),
        ("t3", "get_forecast"), ("t3", "get_headlines")]
    assert all(p.listed_all for p in pairs)  # every tool listed with the budget off
    assert how["listed"] == 20 and how["listed_tools"] == 18 and how["tasks"] == 3
    assert not any(p.listed for p in pairs)  # a new server lists its first tools
    forecast, email, geocode = pairs[:3]
    for method in (*FULL_RANKERS[:1], SEARCH, QUERY, QUERY_IN_USE):
        assert forecast.ranks[method] == 1, method  # every ranker puts the obvious tool first
        assert email.found(method, 2) and geocode.found(method, 3), method
    assert all(p.ours(3) and p.ours_in_use(3) for p in pairs[:3])
    # in use: listed when ANOTHER task called it (t1's and t3's forecast), never by its own
    assert [p.listed_in_use for p in pairs] == [True, False, False, True, False]


async def test_a_server_in_use_lists_what_its_earlier_callers_called() -> None:
    """Through the real server: the other tasks' calls reach a new caller's listing (the
    snapshot of call counts is taken after them), in place of the catalog's first tools."""
    tasks = [{"question": "Weather forecast?", "tools": ["get_forecast"]},
             {"question": "Headlines?", "tools": ["get_headlines"]},
             {"question": "Headlines again?", "tools": ["get_headlines"]}]
    listed, answers = await in_use_answers(BUDGETED, tasks, ListingSettings())
    named = [{n for n in names if not n.startswith("filler__")} - {"describe_tools", "run_tool"}
             for names in listed]
    assert named == [{"news__get_headlines"},  # the forecast: only this task called it
                     {"news__get_headlines", "weather__get_forecast"},
                     {"news__get_headlines", "weather__get_forecast"}]
    assert [len(names) for names in listed] == [20, 20, 20]  # fillers made room
    assert answers[0][0] == "weather__get_forecast"  # and the query answers on that server


async def test_a_capped_history_caller_is_refused() -> None:
    """An int budget caps every host's listing, the history caller's too: its listing
    would take the snapshot before any call, so the server in use is not measured."""
    with pytest.raises(ValueError, match="snapshot"):
        await measure_selection(BUDGETED, SELECT_TASKS, ListingSettings(max_tools=20))


def test_history_calls_each_named_tool_once_a_shared_name_on_its_first_server() -> None:
    assert [[s["name"] for s in task] for task in history_tools(CATALOG, SELECT_TASKS)] == [
        ["weather__get_forecast"], ["mail__send_email", "maps__geocode_address"],
        ["weather__get_forecast", "news__get_headlines"]]
    assert history_tools(CATALOG, [{"tools": ["read_file"]}]) == [[CATALOG.tools[2]]]


async def test_fastmcp_bm25_ranks_the_full_definitions() -> None:
    """``BM25SearchTransform`` is a full-definition yardstick: over the catalog it answers
    as over documents holding ``full_text`` alone."""
    questions = [t["question"] for t in SELECT_TASKS] + ["read a file", "coordinates"]
    texts = [{"name": t["name"], "description": full_text(t).split(" ", 1)[1],
              "inputSchema": {"type": "object"}} for t in CATALOG.tools]
    assert await search_answers(CATALOG.tools, questions) == await search_answers(texts,
                                                                                  questions)


def test_the_report_counts_coverage_per_yardstick_new_and_in_use() -> None:
    full, other = FULL_RANKERS

    def pair(tool: str, listed: bool, in_use: bool = False, **ranks: int | None
             ) -> SelectionPair:
        named = {full: ranks.get("a"), other: ranks.get("a2"), SEARCH: ranks.get("b"),
                 QUERY: ranks.get("q"), QUERY_IN_USE: ranks.get("u")}
        return SelectionPair("livemcptool", tool, f"Question for {tool}?", tool, listed, True,
                             named, in_use)

    pairs = [pair("one", False, a=1, a2=2, b=1, q=1, u=1), pair("two", True, a=3, b=9),
             pair("three", False, True, a=4, a2=1, q=7, u=7),
             pair("four", False, b=2, q=3, u=3), pair("five", False)]
    results = Results(machine={}, config={"selection": {"listed": 20, "tasks": 5}},
                      selection=pairs)
    assert coverage(pairs, full, 5) == (2, 3)  # "three": the query has it at 7 only
    assert coverage(pairs, full, 10) == (3, 3)
    assert coverage(pairs, full, 5, in_use=True) == (2, 3)  # "two" listed when new only
    assert coverage(pairs, SEARCH, 5, in_use=True) == (2, 2)
    text = "\n".join(section(results))
    assert "| ours, new server: listed or in the query's answer | 3 / 5 (0.60) | 4 / 5 (0.80) |" \
        in text
    assert "| ours, server in use: listed or in the query's answer | 3 / 5 (0.60) " \
        "| 3 / 5 (0.60) |" in text
    assert f"| {SEARCH} | 2 / 5 (0.40) | 3 / 5 (0.60) |" in text
    assert f"| {SEARCH} | 2 / 2 (1.00) | 3 / 3 (1.00) | 2 / 2 (1.00) | 2 / 3 (0.67) |" in text
    assert "finds 2-3 pairs in its top 5" in text  # the yardsticks' own ceiling
    targets = [t for t in judge(results) if "query's top 5" in t.name or "in use" in t.name]
    assert [(t.measured, t.met) for t in targets] == [
        ("2 / 3 (0.67)", False), ("1 / 2 (0.50)", False), ("3 vs 2 of 5 (1.50x)", True),
        ("3 vs 2 of 5 (1.50x)", True)]
