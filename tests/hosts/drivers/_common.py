"""What every driver shares: its command line, and the JSON summary it prints.

Runs inside a framework's own virtualenv, so it uses the standard library only. A driver
module defines ``async def run_agent(config: Config) -> str`` (one agent task with the
framework's documented defaults, or with its half of ``config.setting`` where that names a
setting the documentation tells the framework's users to make, returning the final answer)
and calls ``main(run_agent)``.

The summary joins three witnesses: the scripted model's recording (fetched from the
endpoint: requests, ``tools`` arrays, refusals, model step of the first success), the
server's log (which tool bodies ran, with which arguments, and the clientInfo it saw) and
the driver's own outcome (final answer or the exception that ended the run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import traceback
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Config:
    """Where the model and the server are, and what to ask."""

    model_url: str
    framework: str
    transport: str
    mcp_url: str
    command: list[str]
    log: Path
    task: str
    setting: str = ""
    """A documented setting the driver makes its half of ("": the framework's defaults)."""

    @property
    def api_key(self) -> str:
        return "scripted-model-no-key"


def _config() -> Config:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-url", required=True, help="OpenAI base URL (…/v1)")
    parser.add_argument("--framework", required=True, help="the matrix's name for the path")
    parser.add_argument("--transport", choices=("http", "stdio"), required=True)
    parser.add_argument("--mcp-url", default="", help="streamable HTTP endpoint")
    parser.add_argument("--command", default="[]", help="JSON list: stdio server command")
    parser.add_argument("--log", type=Path, required=True, help="the server's JSON-lines log")
    parser.add_argument("--task", required=True)
    parser.add_argument("--setting", default="", help="a documented setting (serve.py)")
    args = parser.parse_args()
    return Config(args.model_url, args.framework, args.transport, args.mcp_url,
                  json.loads(args.command), args.log, args.task, args.setting)


def _recording(model_url: str) -> dict[str, Any]:
    root = model_url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(f"{root}/recording", timeout=30) as reply:
        recording: dict[str, Any] = json.load(reply)
    return recording


def _log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _is_target(name: str, target: str) -> bool:
    """Whether a name the host offered is MCP tool ``target`` (hosts add a server prefix;
    smolagents and CrewAI rewrite names into snake_case function names)."""
    offered, wanted = _function_name(name), _function_name(target)
    return name == target or offered == wanted or offered.endswith(f"_{wanted}")


def _function_name(name: str) -> str:
    """As ``model.function_name`` (this module runs in the frameworks' interpreters)."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return re.sub(r"[^a-z0-9]+", "_", snake).strip("_")


def _declared(tools: list[Any], target: str, wanted: dict[str, Any]) -> str:
    """Whether the schema the host sent for ``target`` lets a model send its arguments.

    ``declared``: every argument is a listed property; ``open``: not all listed, but extra
    properties are not forbidden; ``forbidden``: the schema says no such argument
    (``additionalProperties: false``), so a model that obeys it would call without them;
    ``absent``: the tool was not in the array.
    """
    for tool in tools:
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = function.get("name", "")
        if not _is_target(name, target):
            continue
        schema = function.get("parameters") or function.get("input_schema") or {}
        properties = schema.get("properties") or {}
        if all(key in properties for key in wanted):
            return "declared"
        return "forbidden" if schema.get("additionalProperties") is False else "open"
    return "absent"


def summarize(config: Config, final: str | None, error: str | None) -> dict[str, Any]:
    """The run's JSON summary (see the module docstring)."""
    recording = _recording(config.model_url)
    log = _log(config.log)
    script = recording["script"]
    calls = [e for e in log if e["event"] == "call"]
    ran = [e for e in calls if e["tool"] == script["target"] and not e.get("is_error")]
    first = ran[0] if ran else None
    wanted = script["arguments"]
    intact = first is not None and all(first["arguments"].get(k) == v for k, v in wanted.items())
    arrays: list[Any] = []
    for request in recording["requests"]:
        if request["tools"] not in arrays:
            arrays.append(request["tools"])
    clients = []
    for entry in log:
        seen = {**entry["client"], "era": entry["era"], "transport": entry["transport"]}
        if seen not in clients:
            clients.append(seen)
    success_step = recording["first_success_step"]
    target_calls = [m for m in recording["moves"] if m["kind"] == "call"
                    and _is_target(m["name"], script["target"])
                    and (success_step is None or m["step"] <= success_step)]
    return {
        "target": script["target"],
        "target_calls_to_first_success": len(target_calls) if success_step else None,
        "body_ran": first is not None,
        "arguments": first["arguments"] if first else None,
        "arguments_intact": intact,
        "server_calls": [{k: e.get(k) for k in ("tool", "arguments", "is_error")}
                         for e in calls],
        "tool_listings": sum(1 for e in log if e["event"] == "list"),
        "refusals": recording["refusals"],
        "steps_to_first_success": recording["first_success_step"],
        "model_steps": recording["steps"],
        "model_moves": recording["moves"],
        "arguments_declared": _declared(arrays[0] if arrays else [], script["target"], wanted),
        "target_listed": _declared(arrays[0] if arrays else [], script["target"], {})
        != "absent",
        "apis": sorted({r["api"] for r in recording["requests"]}),
        "tools_arrays": arrays,
        "client_info": clients,
        "final_output": final[:500] if final else final,
        "error": error,
    }


def main(run_agent: Callable[[Config], Awaitable[str]]) -> None:
    """Run the agent once, then print the summary as one JSON document on stdout."""
    config = _config()
    final: str | None = None
    error: str | None = None
    try:
        final = asyncio.run(run_agent(config))
    except BaseException as exc:  # the summary reports it; the harness decides
        error = "".join(traceback.format_exception_only(exc)).strip()[-2000:]
    print(json.dumps(summarize(config, final, error)))
