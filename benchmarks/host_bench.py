"""What real agent hosts send the model, and how many model steps first use takes.

The server-side token counts (``token_bench.py``) measure the listing as FastMCP emits it.
A host re-wraps every tool before the model sees it (``{"type": "function", ...}``,
``"strict": false``, an added ``"properties": {}``, re-serialised schemas), so this section
drives the host matrix's real frameworks (``tests/hosts/``: each in its own virtualenv,
against a scripted OpenAI-compatible endpoint that records every request) over streamable
HTTP and counts the ``tools`` array of the host's first model request: o200k_base over
compact JSON, exactly as sent; and the whole session: every request body of the run
(system prompt, messages, tool results, the ``tools`` array each time), summed. Per host,
per catalog (the demo server and a replayed github-mcp-server), per listing (``plain`` = no
middleware, ``default`` = as shipped, ``minimal``, ``skeleton``), with the model steps to the
first successful call.

Needs the framework virtualenvs (``python tests/hosts/make_venvs.py``; made on first use).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastmcp_progressive.cli.tokens import count

from .results import HostRow

CATALOGS = ("demo", "github-mcp-server")
LISTINGS = ("plain", "default", "minimal", "skeleton")


def without_descriptions(tools: list[Any]) -> list[Any]:
    """``tools`` (either API's format) with every tool's description removed."""
    stripped = []
    for tool in tools:
        function = tool.get("function")
        if isinstance(function, dict):
            tool = {**tool, "function": {k: v for k, v in function.items() if k != "description"}}
        stripped.append({k: v for k, v in tool.items() if k != "description"})
    return stripped


def row(host: str, catalog: str, listing: str, summary: dict[str, Any]) -> HostRow:
    """One measured cell as a ``HostRow`` (``tokens`` -1 when the host sent no request)."""
    arrays = summary.get("tools_arrays") or []
    sent = arrays[0] if arrays else []
    clients = summary.get("client_info") or [{}]
    return HostRow(
        host=host, catalog=catalog, listing=listing, tools_sent=len(sent),
        tokens=count(sent) if arrays else -1,
        steps_to_first_success=summary.get("steps_to_first_success"),
        refusals=int(summary.get("refusals") or 0),
        body_ran=bool(summary.get("body_ran")),
        arguments_intact=bool(summary.get("arguments_intact")),
        client=f"{clients[0].get('name')} {clients[0].get('version')}",
        floor_tokens=count(without_descriptions(sent)) if arrays else -1,
        arguments_declared=str(summary.get("arguments_declared") or ""),
        error=(summary.get("error") or "")[:300],
        session_tokens=int(summary.get("session_tokens", -1)),
        requests=int(summary.get("requests") or 0),
    )


def measure(frameworks: Sequence[str] | None = None, catalogs: Sequence[str] = CATALOGS,
            listings: Sequence[str] = LISTINGS, parallel: int = 2) -> list[HostRow]:
    """Run every host x catalog x listing over streamable HTTP; one ``HostRow`` each."""
    from tests.hosts.frameworks import FRAMEWORKS
    from tests.hosts.harness import Cell, run_cells
    from tests.hosts.make_venvs import ensure
    from tests.hosts.model import ScriptedModel

    hosts = list(frameworks) if frameworks else [f.name for f in FRAMEWORKS]
    ensure(hosts)
    cells = [Cell(host, "http", listing, catalog)
             for catalog in catalogs for host in hosts for listing in listings]
    with ScriptedModel() as model, tempfile.TemporaryDirectory() as work:
        results = run_cells(model, cells, Path(work), parallel=parallel)
    return [row(c.framework, c.server, c.listing, results[c]) for c in cells]
