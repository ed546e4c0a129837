"""The hosts benchmark turns a driver summary into a row and judges issue 28's targets right:
the whole session of a first use >= 80% below plain where plain loads, and the tool run with
the model's exact arguments within 3 model requests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from benchmarks.measure.hosts import row, without_descriptions
from benchmarks.measure.tokens import counter
from benchmarks.report.hosts import headline, section
from benchmarks.report.targets import judge
from benchmarks.results import HostRow, Results

CHAT_TOOL = {"type": "function", "function": {"name": "issue_read", "description": "Read one.",
                                               "parameters": {"type": "object",
                                                              "properties": {}}}}
RESPONSES_TOOL = {"type": "function", "name": "issue_read", "description": "Read one.",
                  "parameters": {"type": "object", "properties": {}}, "strict": False}
CATALOG = "github-mcp-server"
SESSION = f"h: {CATALOG}, default, unlisted tool, whole session of a first use"
FIRST_USE = f"h: {CATALOG}, default, unlisted tool, first use"


def _summary(tools: list[Any], **more: Any) -> dict[str, Any]:
    return {"tools_arrays": [tools], "steps_to_first_success": 2, "refusals": 1,
            "body_ran": True, "arguments_intact": True, "arguments_declared": "open",
            "client_info": [{"name": "mcp", "version": "0.1.0"}], "session_tokens": 900,
            "requests": 3, "target_listed": False, **more}


def test_descriptions_are_removed_in_both_tool_formats() -> None:
    for tool in (CHAT_TOOL, RESPONSES_TOOL):
        (stripped,) = without_descriptions([tool])
        assert "Read one." not in str(stripped) and "issue_read" in str(stripped)


def test_row_counts_the_array_as_sent_and_keeps_the_target() -> None:
    measured = row("h", "c", "default", _summary([CHAT_TOOL]), "unlisted")
    assert measured.tokens == counter().json([CHAT_TOOL])
    assert measured.floor_tokens == counter().json(without_descriptions([CHAT_TOOL]))
    assert (measured.client, measured.steps_to_first_success) == ("mcp 0.1.0", 2)
    assert (measured.session_tokens, measured.requests) == (900, 3)
    assert (measured.target, measured.transport, measured.target_listed) == (
        "unlisted", "stdio", False)


def test_a_host_that_ends_on_its_last_tool_round_counts_that_rounds_request() -> None:
    """AutoGen with max_tool_iterations ends after the call ran, before showing it."""
    moves = [{"step": 1, "kind": "call"}, {"step": 2, "kind": "call"}]
    ended = row("h", "c", "default", _summary([CHAT_TOOL], steps_to_first_success=None,
                                              model_moves=moves, requests=2))
    assert ended.steps_to_first_success == 2
    never = row("h", "c", "default", _summary([CHAT_TOOL], steps_to_first_success=None,
                                              model_moves=moves, body_ran=False))
    assert never.steps_to_first_success is None


def _host(listing: str, session: int, target: str = "unlisted", requests: int = 2,
          step: int | None = 1, tokens: int = 1_000) -> HostRow:
    return HostRow(host="h", catalog=CATALOG, listing=listing, tools_sent=20, tokens=tokens,
                   steps_to_first_success=step, refusals=0, body_ran=True,
                   arguments_intact=True, client="mcp 0.1.0", session_tokens=session,
                   requests=requests, target=target, transport="stdio")


def _met(results: Results) -> dict[str, bool | None]:
    return {t.name: t.met for t in judge(results) if t.name.startswith("h:")}


def test_session_target_needs_80_percent() -> None:
    results = Results(machine={}, config={})
    assert _met(results) == {}
    results.hosts = [_host("plain", 50_000), _host("default", 10_001, requests=3, step=2)]
    assert _met(results)[SESSION] is False
    results.hosts[1] = _host("default", 10_000, requests=3, step=2)
    assert _met(results)[SESSION] is True


def test_a_plain_listing_that_does_not_load_leaves_the_session_unjudged() -> None:
    results = Results(machine={}, config={})
    results.hosts = [_host("plain", 0, requests=0, step=None, tokens=-1),
                     _host("default", 9_000, requests=3, step=2)]
    assert _met(results)[SESSION] is None
    assert _met(results)[FIRST_USE] is True


def test_first_use_needs_the_exact_arguments_within_three_requests() -> None:
    results = Results(machine={}, config={})
    results.hosts = [_host("plain", 50_000), _host("default", 9_000, requests=4, step=3)]
    assert _met(results)[FIRST_USE] is False
    results.hosts[1] = _host("default", 9_000, requests=3, step=2)
    assert _met(results)[FIRST_USE] is True
    results.hosts[1] = replace(results.hosts[1], arguments_intact=False)
    assert _met(results)[FIRST_USE] is False


def test_section_renders_only_when_hosts_were_measured() -> None:
    results = Results(machine={}, config={})
    assert section(results, "figures") == [] and headline(results) == []
    results.hosts = [_host("plain", 30_000), _host("default", 3_000, requests=3, step=2),
                     _host("plain", 0, "listed", requests=0, step=None, tokens=-1),
                     _host("default", 2_000, "listed")]
    text = "\n".join(section(results, "figures"))
    assert "What hosts send the model" in text and "30,000 / 3,000 (-90%)" in text
    assert "plain cannot load / 2,000" in text and "2 of 3" in text
    assert "-90% to -90%" in headline(results)[0]


def test_http_rows_get_their_own_table_and_are_not_judged() -> None:
    results = Results(machine={}, config={})
    results.hosts = [_host("plain", 30_000), _host("default", 3_000, requests=3, step=2),
                     replace(_host("plain", 30_000), transport="http"),
                     replace(_host("default", 20_000, requests=4, step=3), transport="http")]
    text = "\n".join(section(results, "figures"))
    assert f"### {CATALOG}, over http" in text and "30,000 / 20,000 (-33%)" in text
    assert "h/github-mcp-server/unlisted/http" in text  # named among the misses
    assert _met(results) == {SESSION: True, FIRST_USE: True}


def test_a_documented_setting_is_its_own_path_judged_but_not_in_the_headline() -> None:
    """mcp-use with its documented setting: a row of its own, held to the same targets; the
    headline and the figure stay about the one-line default."""
    assert row("h", "c", "plain", _summary([CHAT_TOOL]), setting="s").setting == "s"
    results = Results(machine={}, config={})
    results.hosts = [_host("plain", 50_000), _host("default", 25_000),
                     replace(_host("plain", 50_000), setting="mcp-use-budget"),
                     replace(_host("default", 9_000, requests=3, step=2),
                             setting="mcp-use-budget")]
    met = {t.name: t.met for t in judge(results)}
    assert met[SESSION] is False
    assert met[f"h + mcp-use-budget: {CATALOG}, default, unlisted tool, whole session of a "
               "first use"] is True
    assert headline(results)[0].startswith("- **What hosts send the model** (1 agent ")
    assert "-50% to -50%" in headline(results)[0]
    text = "\n".join(section(results, "figures"))
    assert "| h + mcp-use-budget |" in text and "50,000 / 9,000 (-82%)" in text
    assert "`mcp-use-budget`: `MCPAgent(..., max_steps=8)`" in text
