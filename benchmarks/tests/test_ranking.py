"""The meaning benchmark: recall counts what it says, and the report and targets read it."""

from __future__ import annotations

import pytest

from benchmarks.measure.ranking import listed_text, rankers, recall
from benchmarks.report.targets import judge
from benchmarks.report.tokens import _ranking
from benchmarks.results import RankRow, Results

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
