"""Section 1: tokens per catalog and mode, counted from what a real client receives.

Each catalog replayed on FastMCP and listed by an in-memory ``fastmcp.Client``: plain, ours
at each level with every tool listed (``max_tools=None``: the level's whole listing), ours
as one line ships it (``BUDGETED``: the default level within the default budget, which above
50 tools lists at most 20 entries), each plus reads of 2 or 5 full definitions; what ours
adds outside the listing (``extras``); FastMCP's search transforms with one search. No
description files: what one line of middleware gives. Counts are
``fastmcp_progressive.cli.tokens``' (the CLI's).

Example:
    ```python
    rows, anatomy = await measure_catalog(catalog)
    ```
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from fastmcp import Client

from fastmcp_progressive import ListingSettings
from fastmcp_progressive.cli.tokens import Tokens, model_view
from fastmcp_progressive.payloads import DESCRIPTIONS_URI, resource_uri_for

from ..results import BUDGETED, DEFAULT, AnatomyRow, SweepRow, TokenRow
from .catalogs import SESSION_SIZES, Catalog, scenario_for
from .servers import EVERY_TOOL, PROGRESSIVE, SEARCH, build_server, host_client, text_of, wire

SWEEP_CHARS = (40, 60, 80, 100, 140)


@cache
def counter() -> Tokens:
    """The benchmarks' one o200k counter, loaded on first use (up to a second)."""
    return Tokens()


@dataclass(frozen=True)
class _Counted:
    """A payload's three counts plus how many catalog names it lets the model see."""

    fields: int
    json: int
    wire: int
    visible: int

    def plus_text(self, text: str, result: dict[str, Any], found: int = 0) -> _Counted:
        """This payload followed by a read or search whose text the model is given."""
        tokens = counter().text(text)
        return _Counted(self.fields + tokens, self.json + tokens,
                        self.wire + counter().json(result),
                        self.visible + found)

    def row(self, catalog: Catalog, mode: str) -> TokenRow:
        return TokenRow(catalog.name, len(catalog.tools), mode, self.fields, self.json,
                        self.wire, self.visible)


async def listed(client: Client[Any], catalog: Catalog) -> tuple[_Counted, list[dict[str, Any]]]:
    """The listing's counts, and the listed tools as JSON."""
    result = wire(await client.list_tools_mcp(cache_mode="bypass"))
    tools: list[dict[str, Any]] = result["tools"]
    visible = len({t["name"] for t in tools} & set(catalog.names))
    count = counter()
    return _Counted(count.listing_fields(tools), count.listing_json(tools), count.json(result),
                    visible), tools


def _anatomy(catalog: Catalog, mode: str, tools: list[dict[str, Any]]) -> AnatomyRow:
    count = counter()
    return AnatomyRow(catalog.name, mode, len(tools),
                      names=sum(count.text(t["name"]) for t in tools),
                      descriptions=sum(count.text(t.get("description") or "") for t in tools),
                      schemas=sum(count.json(t.get("inputSchema", {})) for t in tools))


async def _progressive(catalog: Catalog, level: str, mode: str,
                       listing: ListingSettings = EVERY_TOOL
                       ) -> tuple[list[TokenRow], AnatomyRow]:
    """``mode``'s listing (ours at ``level`` with ``listing``), then sessions reading 2 or 5
    full definitions; for the default level's whole listing also the 5 largest, and for the
    shipped default what ours adds outside the listing."""
    async with host_client(build_server(catalog, level, listing=listing).mcp) as client:
        counted, tools = await listed(client, catalog)
        rows = [counted.row(catalog, mode)]
        sessions = [(f"{mode}+{n}", scenario_for(catalog).tools(n)) for n in SESSION_SIZES]
        if mode == DEFAULT:
            largest = sorted(catalog.tools, key=lambda t: counter().json(model_view(t)),
                             reverse=True)
            sessions.append((f"{mode}+5 largest", [t["name"] for t in largest[:5]]))
        for session, names in sessions:
            read = await client.read_resource_mcp(resource_uri_for(names))
            rows.append(counted.plus_text(text_of(read.contents), wire(read)).row(catalog,
                                                                                 session))
        if mode == BUDGETED:  # instructions, our resource and prompt entries
            resources = wire(await client.list_resources_mcp())["resources"]
            entries = [r for r in resources if r["uri"].startswith(DESCRIPTIONS_URI)]
            entries += wire(await client.list_prompts_mcp())["prompts"]
            count = counter()
            extra = count.text(client.instructions or "") + sum(count.json(e) for e in entries)
            rows.append(_Counted(extra, extra, extra, 0).row(catalog, "extras"))
    return rows, _anatomy(catalog, mode, tools)


async def _search(catalog: Catalog, variant: str) -> list[TokenRow]:
    scenario = scenario_for(catalog)
    arguments = {"pattern": scenario.regex} if variant == "regex" else {"query": scenario.query}
    async with host_client(build_server(catalog, variant).mcp) as client:
        listing, _ = await listed(client, catalog)
        result = await client.call_tool_mcp("search_tools", arguments)
    text = text_of(result.content)
    try:
        found = json.loads(text)
    except json.JSONDecodeError:
        found = []
    names = set(catalog.names)
    hits = sum(1 for item in found if isinstance(item, dict) and item.get("name") in names) \
        if isinstance(found, list) else 0
    searched = listing.plus_text(text, wire(result), hits)
    return [listing.row(catalog, variant), searched.row(catalog, f"{variant}+search")]


async def measure_catalog(catalog: Catalog) -> tuple[list[TokenRow], list[AnatomyRow]]:
    """Every mode's token row for one catalog, and where each listing's tokens go."""
    async with host_client(build_server(catalog, "plain").mcp) as client:
        listing, tools = await listed(client, catalog)
    rows, anatomy = [listing.row(catalog, "plain")], [_anatomy(catalog, "plain", tools)]
    chosen = [(level, level, EVERY_TOOL) for level in PROGRESSIVE]
    for level, mode, settings in [*chosen, (DEFAULT, BUDGETED, ListingSettings())]:
        more, parts = await _progressive(catalog, level, mode, settings)
        rows += more
        anatomy.append(parts)
    for variant in SEARCH:
        rows += await _search(catalog, variant)
    return rows, anatomy


async def sweep_summary_chars(catalog: Catalog, chars: tuple[int, ...] = SWEEP_CHARS
                              ) -> list[SweepRow]:
    """Default-level listing tokens, every tool listed, as ``summary_max_chars`` varies."""
    rows: list[SweepRow] = []
    for limit in chars:
        server = build_server(catalog, DEFAULT,
                              listing=replace(EVERY_TOOL, summary_max_chars=limit))
        async with host_client(server.mcp) as client:
            listing, _ = await listed(client, catalog)
        rows.append(SweepRow(catalog.name, limit, listing.fields, listing.json))
    return rows
