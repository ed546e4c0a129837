"""Token counts, defined once: o200k_base over compact JSON, for the CLI, demo and benchmarks.

``token_report(server, directory, listing)`` is the one source of the listing figures the
``tokens`` command prints, the walkthrough shows and the README quotes (a test holds the
README to it). It counts what FastMCP sends: ``tools/list`` built the way FastMCP's own
handlers build it, through the real middleware chain, without and with progressive
disclosure, and what the middleware adds once per client (``overhead``: its resource,
template, prompt and instructions, counted by ``disclosure/cost.py`` as the server's own
start-up check counts them).

A listing is counted three ways:

- **wire** (``listing.without`` / ``listing.with``): the whole ``tools/list`` result as
  compact JSON, UTF-8 kept as served: what the CLI prints;
- **fields**: what a model is shown per tool, counted field by field: tokens(name) +
  tokens(description) + tokens(compact ``inputSchema``). Hosts turn a listing into their
  own function-declaration format, so JSON syntax around the three fields is not what the
  model pays for (``docs/listing.md``'s github figure, plain: 24,116);
- **json**: the same three fields as one compact JSON array of objects, keys and
  punctuation included (github, plain: 25,136).

``Tokens`` counts (``Tokens.json`` / ``Tokens.listing_json`` with Python's default ASCII
escaping, the form the reference figures above were taken with; UTF-8 differs by under
0.2%). Its tokenizer is ``bpe_openai.get_encoding("o200k_base")``: offline, no downloads,
loaded when a ``Tokens`` is built (up to a second, about 140 MB), so a run builds one and
passes it on rather than keep a memo; it is an optional dependency (``pip install
"fastmcp-progressive[tokens]"``), and ``TokensUnavailable`` says so when it is missing.

Example:
    ```python
    tokens = Tokens()
    report = await token_report(mcp, Path("tool_descriptions"), None, tokens)
    report["listing"]["without"], report["listing"]["with"]      # e.g. 1916, 409
    tokens.listing_fields(tools)   # per-field model-visible tokens of a listing
    ```
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.tools.base import Tool
from fastmcp.utilities.versions import dedupe_with_versions

from fastmcp_progressive.disclosure.cost import added_texts, listing_wire, wire
from fastmcp_progressive.files.definitions import full_definition
from fastmcp_progressive.files.store import compact_json
from fastmcp_progressive.hosts import Level
from fastmcp_progressive.middleware import ProgressiveDisclosure
from fastmcp_progressive.settings import ListingSettings

ENCODING = "o200k_base"
MODEL_FIELDS = ("name", "description", "inputSchema")
T = TypeVar("T")


class TokensUnavailable(RuntimeError):
    """The tokenizer package (bpe-openai) is not installed."""


def compact(payload: Any, *, ascii: bool = True) -> str:
    """``payload`` as compact JSON."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=ascii)


def model_view(tool: dict[str, Any]) -> dict[str, Any]:
    """The fields of a listed tool a model is given: name, description, inputSchema."""
    return {key: tool[key] for key in MODEL_FIELDS if key in tool}


class Tokens:
    """o200k_base token counts. Building one loads the tokenizer (up to a second): a run
    builds one, first (a missing package fails before any work), and passes it on."""

    def __init__(self) -> None:
        try:
            import bpe_openai
        except ImportError:
            raise TokensUnavailable(
                f"counting {ENCODING} tokens needs the bpe-openai package, which is not "
                "installed: pip install bpe-openai"
            ) from None
        self._encode: Callable[[str], list[int]] = bpe_openai.get_encoding(ENCODING).encode

    def text(self, text: str) -> int:
        """Tokens of one string."""
        return len(self._encode(text))

    def json(self, payload: Any, *, ascii: bool = True) -> int:
        """Tokens of ``payload`` as compact JSON."""
        return self.text(compact(payload, ascii=ascii))

    def listing_json(self, tools: list[dict[str, Any]], *, ascii: bool = True) -> int:
        """Model-visible tokens of a listing as one JSON array of each tool's model view."""
        return self.json([model_view(t) for t in tools], ascii=ascii)

    def listing_fields(self, tools: list[dict[str, Any]]) -> int:
        """Model-visible tokens of a listing counted per field: name, description, schema."""
        return sum(self.text(t["name"]) + self.text(t.get("description") or "")
                   + self.json(t.get("inputSchema", {})) for t in tools)


async def registered_tools(server: FastMCP[Any]) -> dict[str, Tool]:
    """The server's tools as registered (no middleware), one per name as tools/list shows."""
    tools = dedupe_with_versions(list(await server.list_tools(run_middleware=False)),
                                 lambda t: t.name)
    return {tool.name: tool for tool in tools}


async def wire_results(server: FastMCP[Any], middleware: list[Any],
                       hidden: Sequence[object] = ()) -> dict[str, str]:
    """``tools/list``, ``resources/list`` and ``prompts/list`` results as FastMCP sends them.

    Built the way FastMCP's own handlers build them (deduplicated versions, ``to_mcp_*``),
    through ``middleware`` as the chain, so the counts are of what a client receives.
    The ``hidden`` components (ours, when measuring the server without us) are left out.
    """
    saved = server.middleware
    server.middleware = middleware
    kept = partial(_without, {id(c) for c in hidden})
    try:
        tools = dedupe_with_versions(kept(await server.list_tools()), lambda t: t.name)
        resources = dedupe_with_versions(kept(await server.list_resources()),
                                         lambda r: str(r.uri))
        prompts = dedupe_with_versions(kept(await server.list_prompts()), lambda p: p.name)
    finally:
        server.middleware = saved
    return {"tools": listing_wire(tools),
            "resources": wire(mt.ListResourcesResult(
                resources=[r.to_mcp_resource(uri=str(r.uri)) for r in resources])),
            "prompts": wire(mt.ListPromptsResult(
                prompts=[p.to_mcp_prompt(name=p.name) for p in prompts]))}


def _without(hidden: set[int], components: Sequence[T]) -> list[T]:
    return [c for c in components if id(c) not in hidden]


async def token_report(server: FastMCP[Any], directory: Path | None,
                       listing: str | None, tokens: Tokens) -> dict[str, Any]:
    """Tokens of the listing without/with progressive disclosure and of each full description.

    A server that already has the middleware is measured as configured, unless
    ``directory`` or ``listing`` asks for another one; otherwise the middleware is added
    (``listing``, default ``ListingSettings``' level) for the count and removed again.
    """
    others = [m for m in server.middleware if not isinstance(m, ProgressiveDisclosure)]
    present = next((m for m in server.middleware if isinstance(m, ProgressiveDisclosure)), None)
    if present is not None and directory is None and listing is None:
        ours, chain = present, list(server.middleware)
    else:
        if directory is None and present is not None:
            directory = present.store.directory
        level = cast(Level, listing or ListingSettings.level)
        # a directory given here means the working directory's (``tokens`` takes it from
        # the command line), not one beside this module's caller
        ours = ProgressiveDisclosure(directory.absolute() if directory is not None else None,
                                     listing=ListingSettings(level=level))
        chain = ([ours if m is present else m for m in server.middleware] if present
                 else [*others, ours])
    ours.net_cost.reported_elsewhere()  # the report holds the figures its warning would give
    try:
        tools = {name: tool for name, tool in (await registered_tools(server)).items()
                 if tool is not ours.components.bridge}
        without = await wire_results(server, others, hidden=ours.components.parts())
        with_ = await wire_results(server, chain)
        per_tool = {}
        for name, tool in tools.items():
            body = compact_json(full_definition(tool, ours.store.lookup(name)))
            per_tool[name] = {"tokens": tokens.text(body), "bytes": len(body.encode("utf-8"))}
    finally:
        if ours is not present:  # made for this count: stop its threads again
            ours.close()
    instructions = ours.instructions
    overhead = {where: tokens.text(text) if text else 0  # disclosure/cost.py, as the server
                for where, text in added_texts(ours.components, instructions).items()}
    listed_without = json.loads(without["tools"])["tools"]
    listed_with = json.loads(with_["tools"])["tools"]
    return {
        "encoding": ENCODING,
        "directory": str(ours.store.directory) if ours.store.directory else None,
        "tools": len(tools),
        "listing": {
            "without": tokens.text(without["tools"]), "with": tokens.text(with_["tools"]),
            "tools_without": len(listed_without), "tools_with": len(listed_with),
            "fields_without": tokens.listing_fields(listed_without),
            "fields_with": tokens.listing_fields(listed_with),
        },
        "overhead": overhead,
        "full_descriptions": per_tool,
    }
