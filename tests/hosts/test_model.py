"""The scripted model plays the part the matrix relies on (no frameworks needed here)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from fastmcp_progressive.payloads import DISPATCH_TOOL_NAME
from tests.hosts.model import (
    Exchange,
    Script,
    ScriptedModel,
    chat_exchanges,
    decide,
    refusal,
    search_words,
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


def test_names_rewritten_into_function_names_are_found() -> None:
    """smolagents turns ``-`` into ``_``; CrewAI also camelCase into snake_case."""
    script = Script("npm-sentinel_npmVersions", {}, success="ok")
    for offered in ("npm_sentinel_npmVersions", "npm_sentinel_npm_versions"):
        assert decide(script, [], [offered, "npm_sentinel_npm_deps"]).name == offered
    assert decide(script, [], ["npm_sentinel_npm_deps"]).why == "no-target"


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


UNLISTED = Script("whois_domain", {"domain": "x.org"}, success="ok",
                  query=search_words("whois_domain", "Look up who registered a domain."))
SEARCHED = [Exchange("c1", "describe_tools", json.dumps({"query": UNLISTED.query}),
                     '{"whois_domain":{"name":"whois_domain","inputSchema":{}}}')]


def test_search_words_are_the_tools_name_split_and_its_summary_opening() -> None:
    assert search_words("whois_domain", "Look up who registered a domain.") == \
        "whois domain Look up who registered a domain."
    assert search_words("npm-sentinel-mcp_npmVersions", "Get all versions", 2) == \
        "npm sentinel mcp npm Versions Get all"


def test_a_tool_not_in_the_tools_array_is_searched_for_with_its_own_words() -> None:
    move = decide(UNLISTED, [], ["describe_tools", DISPATCH_TOOL_NAME, "other"])
    assert (move.kind, move.name, move.arguments) == (
        "call", "describe_tools", {"query": "whois domain Look up who registered a domain."})
    # the host's own prefix is kept
    assert decide(UNLISTED, [], ["srv_describe_tools", "srv_run_tool"]).name == \
        "srv_describe_tools"


def test_a_found_tool_the_host_did_not_relist_runs_through_the_dispatch_bridge() -> None:
    offered = ["describe_tools", DISPATCH_TOOL_NAME, "other"]
    move = decide(UNLISTED, SEARCHED, offered)
    assert (move.name, move.arguments, move.why) == (
        DISPATCH_TOOL_NAME, {"name": "whois_domain", "arguments": {"domain": "x.org"}},
        "dispatch-target")
    history = [*SEARCHED, Exchange("c2", DISPATCH_TOOL_NAME, json.dumps(move.arguments), "ok")]
    assert decide(UNLISTED, history, offered).why == "success"


def test_a_found_tool_the_host_relisted_is_called_by_its_name() -> None:
    move = decide(UNLISTED, SEARCHED, ["describe_tools", DISPATCH_TOOL_NAME, "whois_domain"])
    assert (move.name, move.arguments) == ("whois_domain", {"domain": "x.org"})


def test_a_search_that_misses_the_tool_or_no_bridge_ends_with_text() -> None:
    missed = [Exchange("c1", "describe_tools", json.dumps({"query": "q"}), '{"other":{}}')]
    assert decide(UNLISTED, missed, ["describe_tools", DISPATCH_TOOL_NAME]).why == "not-found"
    assert decide(UNLISTED, [], ["other"]).why == "no-bridge"
    assert decide(UNLISTED, SEARCHED, ["describe_tools"]).why == "no-dispatch"
    assert decide(Script("whois_domain", {}, "ok"), [], ["describe_tools"]).why == "no-target"


def test_a_refused_dispatch_makes_the_call_the_refusal_names_then_dispatches_again() -> None:
    offered = ["describe_tools", DISPATCH_TOOL_NAME]
    call = {"name": "whois_domain", "arguments": {"domain": "x.org"}}
    refused = _refused(tool_call={"name": "describe_tools",
                                  "arguments": {"tools": ["whois_domain"]}})
    history = [*SEARCHED, Exchange("c2", DISPATCH_TOOL_NAME, json.dumps(call), refused)]
    move = decide(UNLISTED, history, offered)
    assert (move.name, move.arguments) == ("describe_tools", {"tools": ["whois_domain"]})
    history.append(Exchange("c3", "describe_tools", json.dumps(move.arguments),
                            '{"whois_domain":{}}'))
    assert (decide(UNLISTED, history, offered).name, decide(UNLISTED, history, offered).why) \
        == (DISPATCH_TOOL_NAME, "dispatch-target")


def test_the_first_use_through_the_dispatch_bridge_is_recorded_at_its_step() -> None:
    def chat(history: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
        return {"messages": history, "tools": [
            {"type": "function", "function": {"name": n, "parameters": {}}} for n in tools]}

    offered = ["describe_tools", DISPATCH_TOOL_NAME]
    user = {"role": "user", "content": "whois x.org"}
    with ScriptedModel() as model:
        model.open_run("r", UNLISTED)
        messages: list[dict[str, Any]] = [user]
        outputs = ['{"whois_domain":{}}', "ok"]
        for output in outputs:
            reply = model.answer("r", "chat", chat(messages, offered))["choices"][0]["message"]
            messages += [reply, {"role": "tool", "content": output,
                                 "tool_call_id": reply["tool_calls"][0]["id"]}]
        last = model.answer("r", "chat", chat(messages, offered))["choices"][0]["message"]
        recording = model.recording("r")
    assert last["content"] == "Done."
    assert [m["why"] for m in recording["moves"]] == ["search", "dispatch-target", "success"]
    assert recording["first_success_step"] == 2 and recording["steps"] == 3


def test_moves_are_a_pure_function_of_the_conversation() -> None:
    offered = ["describe_tools", DISPATCH_TOOL_NAME]
    assert decide(UNLISTED, list(SEARCHED), offered) == decide(UNLISTED, list(SEARCHED),
                                                                offered)


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
