"""Serve the demo server (or a replayed corpus catalog) for the host matrix, with a log.

Runs from the project's own virtualenv; the frameworks connect to it over streamable HTTP
on 127.0.0.1 or start it themselves as a stdio subprocess:

    python tests/hosts/serve.py --log calls.jsonl [--listing plain|default|minimal|skeleton]
                                [--catalog github-mcp-server] [--port 8123]
                                [--setting mcp-use-budget]

``examples/demo_server.py`` is imported unchanged; ``--listing plain`` takes our
middleware off it (the baseline), ``minimal``/``skeleton`` replace it with one at that
level, ``default`` keeps it as shipped; ``--setting`` adds the server half of a setting
the documentation tells a framework's users to make (``SETTINGS``). A recorder middleware
added *inside* ours writes one JSON line per ``tools/list`` and per ``tools/call`` that
got past the gate (tool, arguments, whether the body answered an error), with the
client's name and version as the server saw them. Without ``--port`` it serves stdio.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fastmcp import FastMCP  # noqa: E402
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext  # noqa: E402

from fastmcp_progressive import (  # noqa: E402
    HOST_PROFILES,
    ClientSettings,
    HostProfile,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import identify  # noqa: E402

LISTINGS = ("plain", "default", "minimal", "skeleton")
REPLY = "replayed-ok"
"""What a replayed catalog tool answers (a marker no refusal text contains)."""
_MCP_USE_BUDGET = {"clients": ClientSettings(host_profiles=[
    HostProfile("mcp-use", None, judged_by_arguments=True), *HOST_PROFILES])}
SETTINGS: dict[str, dict[str, Any]] = {
    # docs/callers-and-hosts.md: with MCPAgent(..., max_steps=8) (the driver's half), give
    # mcp-use the listing budget: its row without max_tools=None, calls still judged by
    # their arguments
    "mcp-use-budget": _MCP_USE_BUDGET,
    # the same server with the driver at MCPAgent's default max_steps=5 (the matrix checks
    # the run ends without an answer: why its shipped row lists every tool)
    "mcp-use-budget-at-5-steps": _MCP_USE_BUDGET,
}
"""A documented setting's server half: ``ProgressiveDisclosure`` keyword arguments, by the
setting's name (``harness.Cell.setting``; the driver reads the same name for its half)."""


class Recorder(Middleware):
    """Appends what reached the tools to a JSON-lines file (one writer lock per process)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()

    def _write(self, context: MiddlewareContext[Any], entry: dict[str, Any]) -> None:
        caller = identify(context.fastmcp_context)
        entry |= {"client": {"name": caller.client_name, "version": caller.client_version},
                  "era": caller.era, "transport": caller.transport}
        with self.lock, self.path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(entry, default=str) + "\n")

    async def on_list_tools(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
                            ) -> Any:
        tools = await call_next(context)
        self._write(context, {"event": "list", "tools": len(tools)})
        return tools

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
                           ) -> Any:
        entry: dict[str, Any] = {"event": "call", "tool": context.message.name,
                                 "arguments": context.message.arguments or {}}
        try:
            result = await call_next(context)
        except Exception as exc:
            self._write(context, entry | {"is_error": True, "error": str(exc)[:300]})
            raise
        self._write(context, entry | {"is_error": bool(getattr(result, "is_error", False))})
        return result


def demo_server() -> FastMCP:
    """``examples/demo_server.py``'s server, imported as a module (its middleware on)."""
    spec = importlib.util.spec_from_file_location("demo_server", ROOT / "examples"
                                                  / "demo_server.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    server: FastMCP = module.mcp
    return server


def catalog_server(name: str) -> FastMCP:
    """A replay of corpus catalog ``name``, plain (ours is added by ``relist``);
    ``livemcptool``: the 70-server gateway, each server mounted under its name."""
    from tests import replay
    from tests.corpus import catalog_path, catalog_tools

    replay.REPLY = REPLY
    if name == "livemcptool":
        from tests.replay import gateway

        return gateway()
    server = FastMCP(f"replay-{name}")
    for spec in catalog_tools(catalog_path(name)):
        server.add_tool(replay.replay_tool(spec))
    return server


def relist(server: FastMCP, listing: str, descriptions: Path | None,
           max_tools: int | None = None, setting: str = "") -> None:
    """Put our middleware on ``server`` as ``listing`` asks (first in the chain), with
    ``setting``'s options (``SETTINGS``; "": none)."""
    ours = [m for m in server.middleware if isinstance(m, ProgressiveDisclosure)]
    if listing == "default" and ours and max_tools is None and not setting:
        return
    for middleware in ours:
        server.middleware.remove(middleware)
    if listing == "plain":
        return
    options: dict[str, Any] = dict(SETTINGS[setting]) if setting else {}
    if listing != "default" or max_tools is not None:
        options["listing"] = ListingSettings(
            **({} if listing == "default" else {"level": listing}), max_tools=max_tools)
    server.middleware.insert(0, ProgressiveDisclosure(descriptions, **options))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--listing", choices=LISTINGS, default="default")
    parser.add_argument("--catalog", help="a corpus catalog instead of the demo server")
    parser.add_argument("--port", type=int, help="serve streamable HTTP here (else stdio)")
    parser.add_argument("--max-tools", type=int, help="ListingSettings(max_tools=...)")
    parser.add_argument("--corpus", help="the corpus folder (stdio hosts pass no environment)")
    parser.add_argument("--setting", choices=sorted(SETTINGS), default="",
                        help="a documented setting's server half")
    args = parser.parse_args(argv)
    if args.corpus:
        from tests.corpus import CORPUS_ENV

        os.environ[CORPUS_ENV] = args.corpus
    if args.catalog:
        server, descriptions = catalog_server(args.catalog), None
    else:
        server, descriptions = demo_server(), ROOT / "examples" / "tool_descriptions"
    relist(server, args.listing, descriptions, args.max_tools, args.setting)
    server.add_middleware(Recorder(args.log))
    if args.port:
        server.run(transport="http", host="127.0.0.1", port=args.port, show_banner=False,
                   log_level="warning")
    else:
        server.run(show_banner=False)


if __name__ == "__main__":
    main()
