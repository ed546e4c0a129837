"""A scripted stand-in for an LLM: an OpenAI-compatible HTTP endpoint on 127.0.0.1.

No model runs here. The endpoint answers the two OpenAI APIs agent frameworks speak
(Chat Completions, plain or streamed, and Responses) with moves chosen by a fixed script, and
records every request it gets, above all the ``tools`` array the host built from the MCP
listing. That array is what a real model would be shown, so it is what the token benchmarks
count and what tells whether a host kept a tool's arguments.

The script plays a cooperative model that has already picked its tool and knows its
exact arguments:

1. when the target is in the ``tools`` array the host sent (under the host's name for it),
   call it with the scripted (correct) arguments;
2. on a ``TOOL_DESCRIPTION_REQUIRED`` refusal, use what the refusal carries: when it holds
   the tool's definition (declaring the arguments the model means to send), call the tool
   again; else, when it names a tool call to make
   (the bridge, ``describe_tools``) that the host offers, make it, then call the tool again;
   a refusal that only points at a resource leaves the model stuck (no host tried lets a
   model read a resource with a query);
3. when the target is not in the ``tools`` array, search for it with its own words
   (``describe_tools({"query": ...})``, ``Script.query``: its name split into words and the
   first words of its summary); if the answer names it, call it by name when the host's
   (re-listed) ``tools`` array now has it, else through the dispatch bridge
   (``run_tool({"name": ..., "arguments": {...}})``);
4. once a call of the target succeeds, answer with text (or, when the host offers a
   ``final_answer`` tool, as smolagents' agents do and require, by calling it with the text).

Every decision is a pure function of the conversation the host sends back, so a run is
deterministic. Each run has its own path prefix (``/run/<id>/v1``), so runs in parallel do
not share state; ``GET /run/<id>/recording`` returns what that run saw.

Example:
    ```python
    with ScriptedModel() as model:
        base_url = model.open_run("r1", Script(target="add", arguments={"a": 1, "b": 2},
                                               success="3"))
        ...  # point a framework's OpenAI client at base_url
        model.recording("r1")["first_success_step"]
    ```
"""

from __future__ import annotations

import ast
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFUSAL_CODE = "TOOL_DESCRIPTION_REQUIRED"
MAX_STEPS = 6
"""A run stops answering with tool calls after this many model requests (a stuck host)."""
MAX_TARGET_ATTEMPTS = 3
FINAL_ANSWER = "final_answer"
"""The tool through which smolagents' agents take the model's answer (text alone fails)."""


@dataclass(frozen=True)
class Script:
    """What the model wants: one call of ``target`` with ``arguments``.

    ``success`` is a text only a successful answer of the tool contains (it proves the
    arguments reached the body: pick one that depends on them).
    """

    target: str
    arguments: dict[str, Any]
    success: str
    answer: str = "Done."
    query: str | None = None
    """Words to search with when the host's ``tools`` array does not hold ``target``
    (``describe_tools({"query": ...})``); ``None``: a model that only calls listed tools."""


def search_words(name: str, summary: str, words: int = 6) -> str:
    """A query a model would write for tool ``name``: its name split into words (at ``_``,
    ``-``, ``.`` and camelCase) and the first ``words`` words of its summary."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    parts = [p for p in re.split(r"[\s_.\-]+", spaced) if p]
    return " ".join([*parts, *summary.split()[:words]])


@dataclass
class Exchange:
    """One tool call the model made and, once the host sent it back, its output."""

    call_id: str
    name: str
    arguments: str
    output: str | None = None


@dataclass
class Move:
    """The model's answer to one request: a tool call, or final text."""

    kind: str  # "call" or "answer"
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    why: str = ""


@dataclass
class Run:
    """Everything one run's requests showed and what the model answered."""

    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)
    moves: list[dict[str, Any]] = field(default_factory=list)
    emitted: dict[str, int] = field(default_factory=dict)
    bodies: list[str] = field(default_factory=list)
    """Every request body as received (the session's cost; not part of ``snapshot``)."""
    refusals: int = 0
    first_success_step: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "script": asdict(self.script),
                "steps": len(self.requests),
                "requests": self.requests,
                "moves": self.moves,
                "refusals": self.refusals,
                "first_success_step": self.first_success_step,
            }


# -- reading what the host sent ---------------------------------------------------------------


def _text(content: Any) -> str:
    """The text of a message/tool-output content, whatever shape the host used."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content"):
            if key in content:
                return _text(content[key])
        return json.dumps(content)
    return str(content)


def chat_exchanges(messages: list[dict[str, Any]]) -> list[Exchange]:
    """Tool calls and their outputs from a Chat Completions ``messages`` list.

    Besides the standard form (``tool_calls`` on an assistant message, a ``tool`` message per
    output) it reads smolagents' replay of its memory: the calls as assistant text
    ``Calling tools:\n[...]`` (a Python repr), their outcome as the next user message.
    """
    calls: dict[str, Exchange] = {}
    order: list[Exchange] = []
    pending: list[Exchange] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            listed = message.get("tool_calls") or _text_calls(_text(message.get("content")))
            pending = []
            for call in listed:
                function = call.get("function", {})
                arguments = function.get("arguments", "")
                exchange = Exchange(call["id"], function.get("name", ""),
                                    arguments if isinstance(arguments, str)
                                    else json.dumps(arguments))
                calls[exchange.call_id] = exchange
                order.append(exchange)
                if not message.get("tool_calls"):
                    pending.append(exchange)
        elif role == "tool" and message.get("tool_call_id") in calls:
            calls[message["tool_call_id"]].output = _text(message.get("content"))
        elif role == "user" and pending:
            for exchange in pending:
                exchange.output = _text(message.get("content"))
            pending = []
    return order


def _text_calls(text: str) -> list[dict[str, Any]]:
    """The calls in smolagents' ``Calling tools:\n[...]`` assistant text (else none)."""
    head, _, listed = text.partition("\n")
    if head.strip() != "Calling tools:":
        return []
    try:
        value = ast.literal_eval(listed.strip())
    except (ValueError, SyntaxError):
        return []
    return [call for call in value if isinstance(call, dict) and "id" in call] \
        if isinstance(value, list) else []


def responses_exchanges(items: Any) -> list[Exchange]:
    """Tool calls and their outputs from a Responses API ``input``."""
    if not isinstance(items, list):
        return []
    calls: dict[str, Exchange] = {}
    order: list[Exchange] = []
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            exchange = Exchange(item["call_id"], item.get("name", ""), item.get("arguments", ""))
            calls[exchange.call_id] = exchange
            order.append(exchange)
        elif kind == "function_call_output" and item.get("call_id") in calls:
            calls[item["call_id"]].output = _text(item.get("output"))
    return order


def tool_names(tools: Any) -> list[str]:
    """Names of the tools offered, in either API's tool format."""
    names = []
    for tool in tools or []:
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def resolve(name: str, offered: list[str]) -> str | None:
    """The offered name for MCP tool ``name``: hosts may prefix it with a server name, and
    some rewrite it into a function name (smolagents, CrewAI: ``-`` to ``_``; CrewAI:
    camelCase to snake_case)."""
    if name in offered:
        return name
    wanted = function_name(name)
    return next((o for o in offered if function_name(o) == wanted
                 or function_name(o).endswith(f"_{wanted}")), None)


def function_name(name: str) -> str:
    """``name`` as the hosts that rewrite tool names would: snake_case, ``_`` between words."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return re.sub(r"[^a-z0-9]+", "_", snake).strip("_")


def refusal(output: str) -> dict[str, Any] | None:
    """The refusal's ``error`` object, found in a tool output however the host wrapped it."""
    if REFUSAL_CODE not in output:
        return None
    for text in (output, _unescaped(output)):
        decoder = json.JSONDecoder()
        for start in (i for i, ch in enumerate(text) if ch == "{"):
            try:
                value, _ = decoder.raw_decode(text, start)
            except ValueError:
                continue
            error = value.get("error") if isinstance(value, dict) else None
            if isinstance(error, dict) and error.get("code") == REFUSAL_CODE:
                return error
    return {"code": REFUSAL_CODE}


def _unescaped(text: str) -> str:
    """``text`` with one level of backslash escaping removed (hosts that repr() errors)."""
    try:
        return text.encode("utf-8").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


def carried_definition(error: dict[str, Any], target: str) -> dict[str, Any] | None:
    """A tool definition (an object with ``inputSchema``) for ``target`` inside ``error``."""
    stack: list[Any] = [error]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if "inputSchema" in value and value.get("name", target) == target:
                return value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None


# -- deciding -------------------------------------------------------------------------------


BRIDGE = "describe_tools"
DISPATCH = "run_tool"
"""The dispatch bridge: runs a tool that is not listed, ``run_tool(name, arguments)``."""


def decide(script: Script, history: list[Exchange], offered: list[str]) -> Move:
    """The model's next move given the tool calls so far (a pure function)."""
    target = resolve(script.target, offered)
    if history and succeeded(history[-1], script):
        return Move("answer", text=script.answer, why="success")
    if target is None and script.query is not None:
        return _through_query(script, history, offered)
    if target is None:
        return Move("answer", text=f"I have no tool named {script.target}.", why="no-target")
    if not history:
        return Move("call", target, dict(script.arguments), why="first-call")
    last = history[-1]
    output = last.output or ""
    attempts = sum(1 for e in history if e.name == target)
    if last.name != target:
        return Move("call", target, dict(script.arguments), why=f"after-{last.name}")
    error = refusal(output)
    if error is not None:
        return _after_refusal(script, error, offered, Move("call", target, dict(
            script.arguments), why="refusal-carried-definition"))
    if attempts < MAX_TARGET_ATTEMPTS:
        return Move("call", target, dict(script.arguments), why="retry-after-error")
    return Move("answer", text=f"{script.target} keeps failing.", why="gave-up")


def _after_refusal(script: Script, error: dict[str, Any], offered: list[str],
                   again: Move) -> Move:
    """What a refusal of the target's call (``again`` repeats it) leads to."""
    definition = carried_definition(error, script.target)
    if definition is not None:
        declared = (definition.get("inputSchema") or {}).get("properties") or {}
        if all(name in declared for name in script.arguments):
            return again
    hint = error.get("tool_call")
    if isinstance(hint, dict) and isinstance(hint.get("name"), str):
        bridge = resolve(hint["name"], offered)
        if bridge is not None:
            arguments = hint.get("arguments")
            return Move("call", bridge, arguments if isinstance(arguments, dict) else {},
                        why="refusal-named-tool")
    return Move("answer", text=f"{script.target} is locked and I cannot unlock it.",
                why="stuck-on-refusal")


def _through_query(script: Script, history: list[Exchange], offered: list[str]) -> Move:
    """The target is not in the ``tools`` array: search for it with its own words, then
    call it through the dispatch bridge (a host that re-lists shows it by name instead:
    ``decide`` calls it there)."""
    bridge = resolve(BRIDGE, offered)
    if bridge is None:
        return Move("answer", text=f"I cannot search for {script.target}.", why="no-bridge")
    if not any(e.name == bridge and _asked(e, "query") for e in history):
        return Move("call", bridge, {"query": script.query}, why="search")
    dispatch = resolve(DISPATCH, offered)
    call = {"name": script.target, "arguments": dict(script.arguments)}
    last = history[-1]
    output = last.output or ""
    if last.name == bridge:
        if script.target not in output:
            return Move("answer", text=f"I found no {script.target}.", why="not-found")
        if dispatch is None:
            return Move("answer", text=f"{script.target} is not listed and nothing runs it.",
                        why="no-dispatch")
        return Move("call", dispatch, call, why="dispatch-target")
    if last.name != dispatch or dispatch is None:
        return Move("answer", text=f"I lost track of {script.target}.", why="lost")
    error = refusal(output)
    if error is not None:
        return _after_refusal(script, error, offered, Move("call", dispatch, call,
                                                           why="refusal-carried-definition"))
    if sum(1 for e in history if e.name == dispatch) < MAX_TARGET_ATTEMPTS:
        return Move("call", dispatch, call, why="retry-dispatch")
    return Move("answer", text=f"{script.target} keeps failing.", why="gave-up")


def _asked(exchange: Exchange, key: str) -> bool:
    """Whether a bridge call named something under ``key`` (its arguments as sent)."""
    try:
        arguments = json.loads(exchange.arguments or "{}")
    except ValueError:
        return False
    return isinstance(arguments, dict) and bool(arguments.get(key))


def reaches(exchange: Exchange, script: Script) -> bool:
    """Whether ``exchange`` called the target: by its name (a host's prefix allowed), or
    through the dispatch bridge (whatever its name: a call whose arguments name the target
    and carry its arguments)."""
    if resolve(script.target, [exchange.name]) is not None:
        return True
    try:
        arguments = json.loads(exchange.arguments or "{}")
    except ValueError:
        return False
    return (isinstance(arguments, dict) and arguments.get("name") == script.target
            and isinstance(arguments.get("arguments"), dict))


def succeeded(exchange: Exchange, script: Script) -> bool:
    """Whether ``exchange`` was a call of the target whose answer shows it ran."""
    output = exchange.output or ""
    return (reaches(exchange, script) and script.success in output
            and REFUSAL_CODE not in output)


def observe(run: Run, history: list[Exchange]) -> None:
    """Update a run's counters from the outputs the host has now sent back."""
    refusals = 0
    for exchange in history:
        output = exchange.output
        if output is None:
            continue
        if REFUSAL_CODE in output:
            refusals += 1
        elif succeeded(exchange, run.script) and run.first_success_step is None:
            run.first_success_step = run.emitted.get(exchange.call_id)
    run.refusals = max(run.refusals, refusals)


# -- wire formats ----------------------------------------------------------------------------


def _chat_reply(move: Move, call_id: str) -> dict[str, Any]:
    if move.kind == "call":
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": move.name, "arguments": json.dumps(move.arguments)}}]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": move.text}
        finish = "stop"
    return {"id": f"chatcmpl-{call_id}", "object": "chat.completion", "created": 0,
            "model": "scripted", "choices": [{"index": 0, "message": message,
                                              "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def _chat_chunks(reply: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The same reply as streamed chunks: one delta with everything, then the finish."""
    choice = reply["choices"][0]
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if "tool_calls" in choice["message"]:
        delta["tool_calls"] = [{"index": 0, **call} for call in choice["message"]["tool_calls"]]
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": 0,
            "model": "scripted"}
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {},
                                "finish_reason": choice["finish_reason"]}]}
    yield {**base, "choices": [], "usage": reply["usage"]}


def _responses_reply(move: Move, call_id: str) -> dict[str, Any]:
    if move.kind == "call":
        item: dict[str, Any] = {"type": "function_call", "id": f"fc_{call_id}",
                                "call_id": call_id, "name": move.name,
                                "arguments": json.dumps(move.arguments), "status": "completed"}
    else:
        item = {"type": "message", "id": f"msg_{call_id}", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": move.text, "annotations": []}]}
    return {"id": f"resp_{call_id}", "object": "response", "created_at": 0,
            "model": "scripted", "status": "completed", "output": [item],
            "parallel_tool_calls": False, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


# -- the server ------------------------------------------------------------------------------


class ScriptedModel:
    """The endpoint: a threaded HTTP server on 127.0.0.1 and the runs it plays."""

    def __init__(self) -> None:
        self.runs: dict[str, Run] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def open_run(self, run_id: str, script: Script) -> str:
        """Start a run; returns the OpenAI base URL a framework should use for it."""
        self.runs[run_id] = Run(script)
        return f"{self.url}/run/{run_id}/v1"

    def recording(self, run_id: str) -> dict[str, Any]:
        return self.runs[run_id].snapshot()

    def bodies(self, run_id: str) -> list[Any]:
        """Every request body of the run, parsed, in order (what the host sent the model)."""
        with self.runs[run_id].lock:
            return [json.loads(body) for body in self.runs[run_id].bodies]

    def answer(self, run_id: str, api: str, body: dict[str, Any]) -> dict[str, Any]:
        """Record one request and return the reply body (non-streamed form)."""
        run = self.runs[run_id]
        with run.lock:
            run.bodies.append(json.dumps(body))
            step = len(run.requests) + 1
            run.requests.append({"api": api, "tools": body.get("tools") or [],
                                 "stream": bool(body.get("stream"))})
            if api == "chat":
                history = chat_exchanges(body.get("messages") or [])
            else:
                history = responses_exchanges(body.get("input"))
            offered = tool_names(body.get("tools"))
            observe(run, history)
            move = decide(run.script, history, offered)
            if step >= MAX_STEPS and move.kind == "call":
                move = Move("answer", text="Out of steps.", why="step-cap")
            if move.kind == "answer" and FINAL_ANSWER in offered:
                move = Move("call", FINAL_ANSWER, {"answer": move.text}, why=move.why)
            call_id = f"call_{step}"
            if move.kind == "call":
                run.emitted[call_id] = step
            run.moves.append({"step": step, **asdict(move)})
        return _chat_reply(move, call_id) if api == "chat" else _responses_reply(move, call_id)


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _run_id(self) -> tuple[str, str] | None:
            parts = self.path.split("?")[0].strip("/").split("/")
            if len(parts) >= 3 and parts[0] == "run" and parts[1] in model.runs:
                return parts[1], "/".join(parts[2:])
            return None

        def do_GET(self) -> None:
            found = self._run_id()
            if found and found[1] == "recording":
                self._send(200, model.recording(found[0]))
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            found = self._run_id()
            routes = {"v1/chat/completions": "chat", "v1/responses": "responses"}
            if not found or found[1] not in routes:
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            api = routes[found[1]]
            reply = model.answer(found[0], api, body)
            if body.get("stream") and api == "chat":
                self._stream([*_chat_chunks(reply)])
            elif body.get("stream"):
                self._send(400, {"error": {"message": "streamed Responses are not scripted"}})
            else:
                self._send(200, reply)

        def _stream(self, chunks: list[dict[str, Any]]) -> None:
            lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
            data = "".join(lines).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
