"""What real agent hosts send the model, and how many model steps first use takes.

Drives the host matrix's frameworks (``tests/hosts/``, a virtualenv each, made on first use)
over streamable HTTP against a scripted model endpoint recording every request, per catalog
(demo, github-mcp-server) and listing (plain, default, minimal, skeleton): o200k of the
``tools`` array of the first request as sent (hosts re-wrap every tool), of the whole
session, and the model steps to the first successful call.

Example:
    ```python
    rows = measure(["langchain"])
    ```
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastmcp_progressive.cli.tokens import count

from ..results import HOST_LISTINGS, HostRow

CATALOGS = ("demo", "github-mcp-server")


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
    client = (summary.get("client_info") or [{}])[0]
    return HostRow(
        host=host, catalog=catalog, listing=listing, tools_sent=len(sent),
        tokens=count(sent) if arrays else -1,
        steps_to_first_success=summary.get("steps_to_first_success"),
        refusals=int(summary.get("refusals") or 0), body_ran=bool(summary.get("body_ran")),
        arguments_intact=bool(summary.get("arguments_intact")),
        client=f"{client.get('name')} {client.get('version')}",
        floor_tokens=count(without_descriptions(sent)) if arrays else -1,
        arguments_declared=str(summary.get("arguments_declared") or ""),
        error=(summary.get("error") or "")[:300],
        session_tokens=int(summary.get("session_tokens", -1)),
        requests=int(summary.get("requests") or 0))


def measure(frameworks: Sequence[str] | None = None, catalogs: Sequence[str] = CATALOGS,
            listings: Sequence[str] = HOST_LISTINGS, parallel: int = 2) -> list[HostRow]:
    """Every host x catalog x listing over streamable HTTP; one ``HostRow`` each."""
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
