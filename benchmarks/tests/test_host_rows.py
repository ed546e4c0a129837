"""The hosts benchmark turns a driver summary into a row and judges the 85% target right."""

from __future__ import annotations

from typing import Any

from benchmarks.host_bench import row, without_descriptions
from benchmarks.host_report import section, target_rows
from benchmarks.results import HostRow, Results
from fastmcp_progressive.tokens import count

CHAT_TOOL = {"type": "function", "function": {"name": "issue_read", "description": "Read one.",
                                               "parameters": {"type": "object",
                                                              "properties": {}}}}
RESPONSES_TOOL = {"type": "function", "name": "issue_read", "description": "Read one.",
                  "parameters": {"type": "object", "properties": {}}, "strict": False}


def _summary(tools: list[Any]) -> dict[str, Any]:
    return {"tools_arrays": [tools], "steps_to_first_success": 2, "refusals": 1,
            "body_ran": True, "arguments_intact": True, "arguments_declared": "open",
            "client_info": [{"name": "mcp", "version": "0.1.0"}]}


def test_descriptions_are_removed_in_both_tool_formats() -> None:
    for tool in (CHAT_TOOL, RESPONSES_TOOL):
        (stripped,) = without_descriptions([tool])
        assert "Read one." not in str(stripped) and "issue_read" in str(stripped)


def test_row_counts_the_array_as_sent_and_without_descriptions() -> None:
    measured = row("h", "c", "default", _summary([CHAT_TOOL]))
    assert measured.tokens == count([CHAT_TOOL])
    assert measured.floor_tokens == count(without_descriptions([CHAT_TOOL]))
    assert measured.floor_tokens < measured.tokens
    assert (measured.client, measured.steps_to_first_success) == ("mcp 0.1.0", 2)


def _host(listing: str, tokens: int, sent: int = 118) -> HostRow:
    return HostRow(host="h", catalog="github-mcp-server", listing=listing, tools_sent=sent,
                   tokens=tokens, steps_to_first_success=1, refusals=0, body_ran=True,
                   arguments_intact=True, client="mcp 0.1.0", floor_tokens=tokens // 2,
                   arguments_declared="open")


def test_target_needs_85_percent_and_every_name() -> None:
    results = Results(machine={}, config={})
    results.hosts = [_host("plain", 10_000), _host("default", 1_600)]
    assert target_rows(results)[0][3] is False
    results.hosts = [_host("plain", 10_000), _host("default", 1_500)]
    assert target_rows(results)[0][3] is True
    results.hosts = [_host("plain", 10_000), _host("default", 1_000, sent=100)]
    assert target_rows(results)[0][3] is False


def test_section_renders_only_when_hosts_were_measured() -> None:
    results = Results(machine={}, config={})
    assert section(results) == []
    results.hosts = [_host("plain", 10_000), _host("default", 1_600)]
    text = "\n".join(section(results))
    assert "What hosts send the model" in text and "1,600 (-84%)" in text
