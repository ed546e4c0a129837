"""What real agent hosts send the model for a first use of one tool, against the plain server.

Drives the host matrix's frameworks (``tests/hosts/``, a virtualenv each, made on first use)
over stdio, as a user starts a local server, against a scripted model endpoint recording
every request. Per corpus catalog (github-mcp-server, 117 tools; livemcptool, 527), per
listing (``plain``: no middleware; ``default``: ``ProgressiveDisclosure()`` as a user adds
it) and per target (``listed``: a tool the default listing shows; ``unlisted``: one it leaves
out, which the model searches for with its own words and reaches by name or through
``run_tool``): o200k of the ``tools`` array of the first request as sent (hosts re-wrap
every tool), of the whole session (every request body, summed), the model request whose call
first ran the tool, and whether the body ran with the model's exact arguments. Frameworks
whose users the documentation tells a setting (``Framework.setting``: mcp-use's) also run
with it on ``SETTING_CATALOGS``, plain and ours.

Example:
    ```python
    rows = measure(["langchain"], catalogs=["github-mcp-server"])
    ```
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..results import HostRow
from .tokens import counter

CATALOGS = ("github-mcp-server", "livemcptool")
LISTINGS = ("plain", "default")
TARGETS = ("listed", "unlisted")
TRANSPORT = "stdio"
HTTP_CATALOGS = ("github-mcp-server",)
"""Catalogs also measured over streamable HTTP (for comparison; the targets are stdio's)."""
SETTING_CATALOGS = ("github-mcp-server",)
"""Catalogs also measured with each framework's documented setting (livemcptool: mcp-use,
the one framework with one, loads neither its plain listing nor ours)."""


def without_descriptions(tools: list[Any]) -> list[Any]:
    """``tools`` (either API's format) with every tool's description removed."""
    stripped = []
    for tool in tools:
        function = tool.get("function")
        if isinstance(function, dict):
            tool = {**tool, "function": {k: v for k, v in function.items() if k != "description"}}
        stripped.append({k: v for k, v in tool.items() if k != "description"})
    return stripped


def row(host: str, catalog: str, listing: str, summary: dict[str, Any],
        target: str = "listed", transport: str = TRANSPORT, setting: str = "") -> HostRow:
    """One measured cell as a ``HostRow`` (``tokens`` -1 when the host sent no request)."""
    arrays = summary.get("tools_arrays") or []
    sent = arrays[0] if arrays else []
    client = (summary.get("client_info") or [{}])[0]
    return HostRow(
        host=host, catalog=catalog, listing=listing, tools_sent=len(sent),
        tokens=counter().json(sent) if arrays else -1,
        steps_to_first_success=_first_use(summary),
        refusals=int(summary.get("refusals") or 0), body_ran=bool(summary.get("body_ran")),
        arguments_intact=bool(summary.get("arguments_intact")),
        client=f"{client.get('name')} {client.get('version')}",
        floor_tokens=counter().json(without_descriptions(sent)) if arrays else -1,
        arguments_declared=str(summary.get("arguments_declared") or ""),
        error=(summary.get("error") or "")[:300],
        session_tokens=int(summary.get("session_tokens", -1)),
        requests=int(summary.get("requests") or 0), target=target, transport=transport,
        target_listed=bool(summary.get("target_listed")), setting=setting)


def _first_use(summary: dict[str, Any]) -> int | None:
    """The model request whose call ran the tool: the one the model saw succeed, or, for a
    host that ends the run right after a tool round without showing the model its result
    (AutoGen's ``max_tool_iterations``), the request of its last call when the body ran."""
    if summary.get("steps_to_first_success") is not None:
        return int(summary["steps_to_first_success"])
    calls = [m for m in summary.get("model_moves") or [] if m.get("kind") == "call"]
    return int(calls[-1]["step"]) if summary.get("body_ran") and calls else None


def measure(frameworks: Sequence[str] | None = None, catalogs: Sequence[str] = CATALOGS,
            listings: Sequence[str] = LISTINGS, targets: Sequence[str] = TARGETS,
            transport: str = TRANSPORT, http_catalogs: Sequence[str] = HTTP_CATALOGS,
            max_tools: int | None = None, parallel: int = 2,
            setting_catalogs: Sequence[str] = SETTING_CATALOGS) -> list[HostRow]:
    """Every host x catalog x listing x target over ``transport``, over streamable HTTP for
    ``http_catalogs`` and with the host's documented setting for ``setting_catalogs``; one
    ``HostRow`` each (``max_tools``: the default listing with
    ``ListingSettings(max_tools=...)`` instead)."""
    from tests.hosts.frameworks import BY_NAME, FRAMEWORKS
    from tests.hosts.harness import Cell, run_cells
    from tests.hosts.make_venvs import ensure
    from tests.hosts.model import ScriptedModel

    hosts = list(frameworks) if frameworks else [f.name for f in FRAMEWORKS]
    ensure(hosts)
    runs = [(transport, c, False) for c in catalogs] + [
        (transport, c, True) for c in setting_catalogs] + [
        ("http", c, False) for c in http_catalogs if transport != "http"]
    cells = []
    for over, catalog, with_setting in runs:
        for host in hosts:
            setting = BY_NAME[host].setting if with_setting else ""
            if with_setting and not setting:
                continue
            cells += [Cell(host, over, listing, catalog, target,
                           max_tools if listing != "plain" else None, setting)
                      for listing in listings
                      for target in (targets if catalog != "demo" else ("listed",))]
    with ScriptedModel() as model, tempfile.TemporaryDirectory() as work:
        results = run_cells(model, cells, Path(work), parallel=parallel)
    return [row(c.framework, c.server, c.listing, results[c], c.target, c.transport, c.setting)
            for c in cells]
