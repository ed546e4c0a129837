"""The LiveMCPTool gateway: 70 real servers' 527 tools behind one front, each a group.

``livemcptool.servers.json`` (LiveMCPBench) holds each server's name, description and
tools. ``gateway()`` replays every server as its own FastMCP server (its description as
its instructions, its tools answering ``tests.replay.REPLY``) mounted under its name as a
namespace, as ``proxy --config`` serves upstreams: so every server is a group, described
by its own instructions. The host matrix (``tests/hosts/serve.py --catalog livemcptool``)
and ``gateway_bench.py`` build the same server.

Example:
    ```python
    server = gateway(ProgressiveDisclosure(listing=ListingSettings(max_tools=40)))
    ```
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware

from tests.corpus import corpus_dir
from tests.replay import replay_tool

SERVERS_FILE = "livemcptool.servers.json"
TASKS_FILE = "livemcpbench-tasks.public.json"


def servers_path() -> Path:
    return corpus_dir() / SERVERS_FILE


def load_servers() -> list[dict[str, Any]]:
    """The 70 servers: ``server``, ``title``, ``category``, ``description``, ``tools``."""
    data = json.loads(servers_path().read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(s, dict) and "server" in s for s in data):
        raise ValueError(f"{servers_path()}: expected a JSON array of servers")
    return data


def load_tasks() -> list[dict[str, Any]]:
    """LiveMCPBench's public tasks: ``question`` and the ``tools`` (short names) it needs."""
    data = json.loads((corpus_dir() / TASKS_FILE).read_text(encoding="utf-8"))
    return [t for t in data if isinstance(t, dict) and isinstance(t.get("question"), str)]


def gateway(middleware: Middleware | None = None, servers: list[dict[str, Any]] | None = None
            ) -> FastMCP:
    """The gateway, with ``middleware`` (ours, or none for the plain baseline) first."""
    front = FastMCP("livemcptool-gateway")
    for spec in servers if servers is not None else load_servers():
        child = FastMCP(spec["server"], instructions=spec.get("description") or None)
        for tool in spec["tools"]:
            child.add_tool(replay_tool(tool))
        front.mount(child, namespace=spec["server"])
    if middleware is not None:
        front.add_middleware(middleware)
    return front
