"""The scripted model plays the part the matrix relies on (no frameworks needed here)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from fastmcp_progressive.disclosure.bridge import bridge_description_with_groups
from fastmcp_progressive.payloads import DISPATCH_TOOL_NAME
from tests.hosts.model import (
    Exchange,
    Script,
    ScriptedModel,
    chat_exchanges,
    decide,
    refusal,
)

SCRIPT = Script("add", {"a": 1, "b": 2}, success="= 3")
OFFERED = ["add", "describe_tools"]


def _refused(**error: Any) -> str:
    return json.dumps({"error": {"code": "TOOL_DESCRIPTION_REQUIRED", **error}})


def test_first_move_calls_the_target_with_the_scripted_arguments() -> None:
    move = decide(SCRIPT, [], OFFERED)
    assert (move.kind, move.name, move.arguments) == ("call", "add", {"a": 1, "b": 2})


def test_a_refusal_carrying_the_definition_leads_straight_back_to_the_tool() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {}}}
    output = _refused(definition={"name": "add", "inputSchema": schema},
                      tool_call={"name": "describe_tools", "arguments": {"tools": ["add"]}})
    move = decide(SCRIPT, [Exchange("c1", "add", "{}", output)], OFFERED)
    assert (move.kind, move.name, move.why) == ("call", "add", "refusal-carried-definition")


def test_a_definition_that_does_not_declare_the_arguments_teaches_nothing() -> None:
    output = _refused(definition={"name": "add", "inputSchema": {"type": "object"}})
    move = decide(SCRIPT, [Exchange("c1", "add", "{}", output)], OFFERED)
    assert move.why == "stuck-on-refusal"


def test_a_refusal_naming_the_bridge_makes_that_call_then_the_tool() -> None:
    output = _refused(tool_call={"name": "describe_tools", "arguments": {"tools": ["add"]}})
    history = [Exchange("c1", "add", "{}", output)]
    move = decide(SCRIPT, history, OFFERED)
    assert (move.name, move.arguments) == ("describe_tools", {"tools": ["add"]})
    history.append(Exchange("c2", "describe_tools", "{}", "{}"))
    assert decide(SCRIPT, history, OFFERED).name == "add"


def test_a_refusal_pointing_only_at_a_resource_leaves_the_model_stuck() -> None:
    output = _refused(resource_uri="resource:///tool_descriptions?tools=add")
    move = decide(SCRIPT, [Exchange("c1", "add", "{}", output)], ["add"])
    assert move.kind == "answer" and move.why == "stuck-on-refusal"


def test_success_ends_with_text() -> None:
    move = decide(SCRIPT, [Exchange("c1", "add", "{}", "1 + 2 = 3")], OFFERED)
    assert move.kind == "answer" and move.why == "success"


def test_prefixed_tool_names_are_found() -> None:
    assert decide(SCRIPT, [], ["server_add"]).name == "server_add"


def test_refusal_is_read_through_host_wrappers() -> None:
    inner = _refused(tool_call={"name": "describe_tools"})
    wrapped = f"Error: ToolException({inner!r})\n Please fix your mistakes."
    error = refusal(wrapped)
    assert error is not None and error["tool_call"] == {"name": "describe_tools"}
    escaped = json.dumps(json.dumps({"error": {"code": "TOOL_DESCRIPTION_REQUIRED",
                                               "tool_call": {"name": "x"}}}, indent=2))
    found = refusal(escaped)
    assert found is not None and found["tool_call"] == {"name": "x"}


def test_endpoint_records_requests_and_the_step_of_first_success() -> None:
    def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(url, json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer: dict[str, Any] = json.load(reply)
            return answer

    tools = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    with ScriptedModel() as model:
        base = model.open_run("r", SCRIPT)
        user = {"role": "user", "content": "add 1 and 2"}
        first = post(f"{base}/chat/completions", {"messages": [user], "tools": tools})
        call = first["choices"][0]["message"]
        result = {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"],
                  "content": "1 + 2 = 3"}
        second = post(f"{base}/chat/completions",
                      {"messages": [user, call, result], "tools": tools})
        assert second["choices"][0]["message"]["content"] == "Done."
        recording = model.recording("r")
    assert recording["steps"] == 2 and recording["first_success_step"] == 1
    assert recording["requests"][0]["tools"] == tools
    bodies = model.bodies("r")
    assert [len(body["messages"]) for body in bodies] == [1, 3]  # kept whole, for the session
    assert "bodies" not in recording


def test_a_capped_listing_is_crossed_through_the_groups() -> None:
    """The target is not listed: read the group lines, list the group, describe, dispatch
    through the bridge the description names (``run_tool`` by default, any name works)."""
    script = Script("whois_domain", {"domain": "x.org"}, success="ok", group="whois")
    for dispatch in (DISPATCH_TOOL_NAME, "dispatch_it"):
        offered = ["describe_tools", dispatch, "other"]
        described = {"describe_tools": bridge_description_with_groups(
            ["whois: Domain lookups."], dispatch)}
        first = decide(script, [], offered, described)
        assert (first.name, first.arguments) == ("describe_tools",
                                                 {"tools": [], "groups": ["whois"]})
        history = [Exchange("c1", "describe_tools", json.dumps(first.arguments),
                            '{"groups":{"whois":{"tools":{"whois_domain":"Look it up."}}}}')]
        second = decide(script, history, offered, described)
        assert (second.name, second.arguments) == ("describe_tools",
                                                   {"tools": ["whois_domain"], "groups": []})
        history.append(Exchange("c2", "describe_tools", json.dumps(second.arguments),
                                '{"whois_domain":{"name":"whois_domain"}}'))
        third = decide(script, history, offered, described)
        assert (third.name, third.arguments) == (dispatch, {"name": "whois_domain",
                                                            "arguments": {"domain": "x.org"}})
        history.append(Exchange("c3", dispatch, json.dumps(third.arguments), "ok"))
        assert decide(script, history, [*offered, "whois_domain"], described).why == "success"
    assert decide(script, [], offered, {"describe_tools": "no groups"}).why == "no-group"
    no_dispatch = {"describe_tools": bridge_description_with_groups(["whois: Lookups."], None)}
    assert decide(script, [], offered, no_dispatch).why == "no-group"


def test_smolagents_text_replay_of_calls_and_observations_is_read() -> None:
    """smolagents sends earlier calls as assistant text and their outcome as a user turn."""
    calls = "Calling tools:\n[{'id': 'call_1', 'type': 'function', 'function': {'name': " \
            "'add', 'arguments': {'a': 1, 'b': 2}}}]"
    messages = [{"role": "user", "content": "add 1 and 2"},
                {"role": "assistant", "content": [{"type": "text", "text": calls}]},
                {"role": "user", "content": [{"type": "text", "text": "Observation:\n= 3"}]}]
    (exchange,) = chat_exchanges(messages)
    assert (exchange.call_id, exchange.name, json.loads(exchange.arguments)) == (
        "call_1", "add", {"a": 1, "b": 2})
    assert exchange.output == "Observation:\n= 3"
    assert chat_exchanges([{"role": "assistant", "content": "Calling tools:\nnot python"}]) == []


def test_the_answer_goes_through_final_answer_where_the_host_offers_it() -> None:
    tools = [{"type": "function", "function": {"name": name, "parameters": {}}}
             for name in ("add", "final_answer")]
    done = [{"role": "user", "content": "add"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "= 3"}]
    with ScriptedModel() as model:
        model.open_run("r", SCRIPT)
        reply = model.answer("r", "chat", {"messages": done, "tools": tools})
    (call,) = reply["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "final_answer"
    assert json.loads(call["function"]["arguments"]) == {"answer": "Done."}
