"""Section 1: tokens per catalog and mode, counted from what a real client receives.

Every number comes from an in-memory ``fastmcp.Client`` talking to a replay server, so
it includes whatever FastMCP adds on the way (titles, ``_meta``, dereferenced ``$ref``s)
and, for ours, the ``describe_tools`` bridge tool it lists by default. Modes per catalog:

- ``plain``: FastMCP as is; a session costs just its listing (everything is in it);
- ``typed`` (the default) / ``minimal`` / ``skeleton``: our listing levels; ``+2`` / ``+5``:
  plus one read of the full definitions of the session's 2 or 5 tools; ``typed+5 largest``:
  the 5 biggest;
- ``extras``: what ours adds outside the listing, once per session if the host shows it
  to the model: the instructions paragraph, the descriptions resource entry in
  ``resources/list`` and the guidance prompt entry in ``prompts/list``;
- ``regex`` / ``bm25``: FastMCP's search transforms; ``+search``: plus one search.

Ours runs with no description files: the definitions served are the registered ones,
which is what one line of middleware gives.

Example:
    ```python
    rows, anatomy = await measure_catalog(catalog)
    ```
"""

from __future__ import annotations

import json
from typing import Any

from fastmcp import Client

from fastmcp_progressive import ListingSettings
from fastmcp_progressive.cli.tokens import (
    count,
    count_text,
    listing_field_tokens,
    listing_json_tokens,
    model_view,
)
from fastmcp_progressive.payloads import DESCRIPTIONS_URI, resource_uri_for

from .corpus import Catalog
from .replay import DEFAULT, PROGRESSIVE, SEARCH, Variant, build_server
from .results import AnatomyRow, SweepRow, TokenRow
from .scenarios import SESSION_SIZES, scenario_for

SWEEP_CHARS = (40, 60, 80, 100, 140)


def _dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return data


def _texts(contents: list[Any]) -> str:
    return "".join(getattr(c, "text", "") or "" for c in contents)


class _Counted:
    """A payload's three token counts plus how many catalog names it lets the model see."""

    def __init__(self, fields: int, json_: int, wire: int, visible: int) -> None:
        self.fields, self.json, self.wire, self.visible = fields, json_, wire, visible

    def plus_text(self, text: str, result: dict[str, Any], found: int = 0) -> _Counted:
        """This payload followed by a read or search whose text the model is given."""
        tokens = count_text(text)
        return _Counted(self.fields + tokens, self.json + tokens, self.wire + count(result),
                        self.visible + found)

    def row(self, catalog: Catalog, mode: str) -> TokenRow:
        return TokenRow(catalog.name, len(catalog.tools), mode, self.fields, self.json,
                        self.wire, self.visible)


async def _listing(client: Client[Any], catalog: Catalog) -> tuple[_Counted, list[dict[str, Any]]]:
    wire = _dump(await client.list_tools_mcp(cache_mode="bypass"))
    tools: list[dict[str, Any]] = wire["tools"]
    names = set(catalog.names)
    visible = sum(1 for t in tools if t["name"] in names)
    counted = _Counted(listing_field_tokens(tools), listing_json_tokens(tools), count(wire),
                       visible)
    return counted, tools


def _anatomy(catalog: Catalog, mode: str, tools: list[dict[str, Any]]) -> AnatomyRow:
    return AnatomyRow(
        catalog.name, mode, len(tools),
        names=sum(count_text(t["name"]) for t in tools),
        descriptions=sum(count_text(t.get("description") or "") for t in tools),
        schemas=sum(count(t.get("inputSchema", {})) for t in tools),
    )


async def _progressive_rows(
    catalog: Catalog, variant: Variant
) -> tuple[list[TokenRow], AnatomyRow]:
    server = build_server(catalog, variant)
    async with Client(server.mcp) as client:
        listing, tools = await _listing(client, catalog)
        rows = [listing.row(catalog, variant)]
        sessions = [(f"{variant}+{n}", scenario_for(catalog).tools(n)) for n in SESSION_SIZES]
        if variant == DEFAULT:
            sessions.append((f"{variant}+5 largest", _largest(catalog, 5)))
        for mode, names in sessions:
            read = await client.read_resource_mcp(resource_uri_for(names))
            rows.append(listing.plus_text(_texts(read.contents), _dump(read)).row(catalog, mode))
        if variant == DEFAULT:
            rows.append(await _extras(client, catalog))
    return rows, _anatomy(catalog, variant, tools)


async def _extras(client: Client[Any], catalog: Catalog) -> TokenRow:
    """Instructions paragraph + our resource and prompt entries, as the client got them."""
    resources = _dump(await client.list_resources_mcp())["resources"]
    entries: list[dict[str, Any]] = [r for r in resources if r["uri"].startswith(DESCRIPTIONS_URI)]
    entries += _dump(await client.list_prompts_mcp())["prompts"]
    text = client.instructions or ""
    tokens = count_text(text) + sum(count(e) for e in entries)
    return _Counted(tokens, tokens, tokens, 0).row(catalog, "extras")


def _largest(catalog: Catalog, k: int) -> list[str]:
    ranked = sorted(catalog.tools, key=lambda t: count(model_view(t)), reverse=True)
    return [t["name"] for t in ranked[:k]]


async def _search_rows(catalog: Catalog, variant: Variant) -> list[TokenRow]:
    server = build_server(catalog, variant)
    scenario = scenario_for(catalog)
    arguments = {"pattern": scenario.regex} if variant == "regex" else {"query": scenario.query}
    async with Client(server.mcp) as client:
        listing, _ = await _listing(client, catalog)
        result = await client.call_tool_mcp("search_tools", arguments)
    text = _texts(result.content)
    searched = listing.plus_text(text, _dump(result), _found_names(text, catalog))
    return [listing.row(catalog, variant), searched.row(catalog, f"{variant}+search")]


def _found_names(text: str, catalog: Catalog) -> int:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return 0
    items = data if isinstance(data, list) else []
    names = set(catalog.names)
    return sum(1 for item in items if isinstance(item, dict) and item.get("name") in names)


async def measure_catalog(catalog: Catalog) -> tuple[list[TokenRow], list[AnatomyRow]]:
    """Every mode's token row for one catalog, and where each listing's tokens go."""
    server = build_server(catalog, "plain")
    async with Client(server.mcp) as client:
        listing, tools = await _listing(client, catalog)
    rows = [listing.row(catalog, "plain")]
    anatomy = [_anatomy(catalog, "plain", tools)]
    for variant in PROGRESSIVE:
        more, parts = await _progressive_rows(catalog, variant)
        rows += more
        anatomy.append(parts)
    for variant in SEARCH:
        rows += await _search_rows(catalog, variant)
    return rows, anatomy


async def sweep_summary_chars(
    catalog: Catalog, chars: tuple[int, ...] = SWEEP_CHARS
) -> list[SweepRow]:
    """Default-level listing tokens as ``summary_max_chars`` varies (what meets a budget)."""
    rows: list[SweepRow] = []
    for limit in chars:
        narrow = ListingSettings(summary_max_chars=limit)
        server = build_server(catalog, DEFAULT, options={"listing": narrow})
        async with Client(server.mcp) as client:
            listing, _ = await _listing(client, catalog)
        rows.append(SweepRow(catalog.name, limit, listing.fields, listing.json))
    return rows
