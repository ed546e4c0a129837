"""``ProgressiveDisclosure``: the FastMCP middleware that conducts the three request paths.

- ``tools/list``: each tool with a one-line description and a stripped schema;
- ``resources/read`` of ``resource:///tool_descriptions?tools=a,b``: full definitions of
  the tools the caller may see, and a grant of those tools to the caller;
- ``tools/call``: refused with ``TOOL_DESCRIPTION_REQUIRED`` until the tool is granted; the
  refusal carries the tool's definition and grants it, so the next call runs. Callers the
  server cannot follow (no identity, or a new session per call) have their arguments
  checked against the full schema instead (``ClientSettings(anonymous="validate")``).

Everything else (who the caller is, where grants live, how a listing is reduced, what a
file says) lives in its own module; this class only wires those together.

Example:
    ```python
    from fastmcp import FastMCP
    from fastmcp_progressive import ProgressiveDisclosure

    mcp = FastMCP("billing")
    mcp.add_middleware(ProgressiveDisclosure(descriptions_dir="tool_descriptions"))
    ```
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import mcp_types as mt
from fastmcp.resources import ResourceResult
from fastmcp.resources.base import ResourceContent
from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult

from . import payloads
from .bridge import requested_names
from .call_site import RequestSite, gateways_of
from .caller import Caller, identify
from .catalog import Catalog
from .compat import ModePolicy
from .components import DisclosureComponents, install
from .definitions import Definitions, compact_json
from .descriptions import DescriptionStore
from .engagement import IGNORED_METHODS, Engagement
from .fastmcp_internals import is_nested_tool_call, serving_tool_call
from .gate import ANONYMOUS_POLICIES as ANONYMOUS_POLICIES
from .gate import Gate, GateCall
from .grants import GrantStore
from .guidance import guidance_prompt as guidance_prompt_for
from .hosts import ClientLevel
from .hot_reload import HotReload
from .listing import Lister
from .mounts import call_prefix, read_prefix, refusal_for_mount, unprefixed
from .options import fail, names
from .ordering import MiddlewareOrderError, misordered
from .passage import let_through, passed_outer_gate
from .preload import Preload
from .resolution import RESOLVE_METHOD, ToolResolution
from .selection import (
    MAX_QUERY_CHARS,
    Selection,
    is_descriptions_uri,
    parse_selection,
    selection_from_names,
)
from .settings import (
    CacheSettings,
    ClientSettings,
    GrantSettings,
    ListingLevel,
    ListingSettings,
    ResolutionSettings,
    SurfaceSettings,
    given,
    refuse_flat_keywords,
)
from .targets import hashed_target
from .validation import ArgumentChecker

logger = logging.getLogger("fastmcp_progressive")

_HANDSHAKE_METHODS = frozenset({"initialize", "server/discover", "notifications/initialized"})


class ProgressiveDisclosure(Middleware):
    """Progressive disclosure of tool descriptions (MCP extension spec v2.1) for FastMCP.

    Args:
        descriptions_dir: folder of ``<tool>.json`` / ``<tool>.md`` files; optional, a tool
            without a file is described by its registered definition.
        listing: what a progressive ``tools/list`` shows (``ListingSettings``: level,
            summary length, noise stripping).
        grants: how long grants live and where (``GrantSettings``: TTL, session bound,
            key-value store, its timeout and failure policy).
        clients: who is gated at what level (``ClientSettings``: the anonymous policy,
            full clients, mode header, mode resolver, host profiles).
        caches: memo sizes and the start-up preload (``CacheSettings``).
        surface: what we add to the server (``SurfaceSettings``: bridge tool, guidance
            prompt, instructions paragraph) and the most tools one read may select.
        resolution: ``tools/resolve`` and its Python hooks (``ResolutionSettings``).
        exempt_tools: tools listed in full and never gated, on top of those FastMCP's
            search / ResourcesAsTools transforms generate (found automatically).

    Every settings object checks its values when built; defaults live there
    (``settings.py``). A flat keyword of earlier versions (``grant_ttl=60``) raises a
    ``TypeError`` naming its new spelling.
    """

    @refuse_flat_keywords
    def __init__(
        self,
        descriptions_dir: str | os.PathLike[str] | None = None,
        *,
        listing: ListingSettings | None = None,
        grants: GrantSettings | None = None,
        clients: ClientSettings | None = None,
        caches: CacheSettings | None = None,
        surface: SurfaceSettings | None = None,
        resolution: ResolutionSettings | None = None,
        exempt_tools: Collection[str] = (),
    ) -> None:
        listing = given("listing", listing, ListingSettings)
        grants = given("grants", grants, GrantSettings)
        clients = given("clients", clients, ClientSettings)
        caches = given("caches", caches, CacheSettings)
        surface = given("surface", surface, SurfaceSettings)
        resolution = given("resolution", resolution, ResolutionSettings)
        if descriptions_dir is not None and not isinstance(descriptions_dir, (str, os.PathLike)):
            fail("descriptions_dir", "a folder path or None", descriptions_dir)
        self.store = DescriptionStore(descriptions_dir, cache_size=caches.files)
        self.definitions = Definitions(self.store, cache_size=caches.definitions)
        self.lister = Lister(self.store, listing, cache_size=caches.listing)
        self.preload = Preload(self.lister)
        self.grants = GrantStore(grants)
        self.modes = ModePolicy(clients, default_level=listing.level)
        self._listers: dict[ListingLevel, Lister] = {listing.level: self.lister}
        self.checker = ArgumentChecker()
        self.engagement = Engagement()
        self.exempt_tools = frozenset(names("exempt_tools", exempt_tools))
        self.gate = Gate(grants=self.grants, modes=self.modes, definitions=self.definitions,
                         anonymous=clients.anonymous, exempt_tools=self.exempt_tools,
                         engagement=self.engagement, checker=self.checker)
        self.catalog = Catalog(owner=self)
        self.resolution = (ToolResolution(self.store, self.catalog, resolution.resolvers,
                                          definitions=self.definitions, checker=self.checker)
                           if resolution.enabled else None)
        self.anonymous = clients.anonymous
        self.max_tools_per_read = surface.max_tools_per_read
        self.instructions = surface.instructions
        bridge_tool = surface.bridge_tool
        self.prompt = guidance_prompt_for(bridge_tool) if surface.guidance_prompt else None
        self.components = DisclosureComponents(
            read=self._read_text, bridge=self._answer_bridge, bridge_name=bridge_tool,
            prompt=self.prompt, description=payloads.resource_description(bridge_tool),
        )
        self.bridge = self.components.bridge
        self.instructions_text = payloads.instructions(bridge_tool)
        self._reported_order = False
        if caches.preload:
            self.preload.start()  # last: a constructor that raised leaves no thread behind

    # -- tools/list ---------------------------------------------------------------------
    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        if self.catalog.passthrough() or serving_tool_call():
            return tools  # our own catalog query, or a catalog built inside a tool call
        ctx = context.fastmcp_context
        caller = identify(ctx)
        level = self._level(caller)
        if level == "full":
            return self._mark_resolvable(ctx, [t for t in tools if not self._is_our_bridge(t)])
        exempt = self._exempt(ctx)
        if self.bridge is not None:
            exempt |= {self.bridge.name}
        with self.preload.serving():  # the files this listing needs: parsed here, once
            reduced = self._lister(level).reduce(tools, exempt)
        if ctx is not None and caller.kind == "session" and self.hot_reload.enabled:
            await self._remember_listing(ctx, caller, [t for t in tools if t.name not in exempt])
        if self.bridge is not None and all(t.name != self.bridge.name for t in tools):
            reduced.append(self.bridge)  # e.g. a search transform replaced the listing
        return self._mark_resolvable(ctx, reduced)

    def _mark_resolvable(self, ctx: Context | None, tools: Sequence[Tool]) -> Sequence[Tool]:
        if self.resolution is None or ctx is None:
            return tools
        return self.resolution.mark(identify(ctx), tools)

    # -- tools/resolve (tool resolution: resolution.py) ---------------------------------
    async def on_request(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        ctx = context.fastmcp_context
        if context.method != RESOLVE_METHOD or self.resolution is None or ctx is None:
            return await call_next(context)
        return await self.resolution.answer(ctx, context.message)

    async def _remember_listing(self, ctx: Context, caller: Caller, shown: list[Tool]) -> None:
        """Which reduced lines this legacy session sees, after any middleware outside us
        filters them: its ``tools/list_changed`` notifications follow only those."""
        names = (await self.catalog.visible(ctx, shown)) if self.catalog.filters(ctx) else {
            t.name for t in shown
        }
        self.hot_reload.listed(caller, frozenset(names))

    # -- resources ----------------------------------------------------------------------
    async def on_read_resource(
        self,
        context: MiddlewareContext[mt.ReadResourceRequestParams],
        call_next: CallNext[mt.ReadResourceRequestParams, ResourceResult],
    ) -> ResourceResult:
        uri = str(context.message.uri)
        ctx = context.fastmcp_context
        if not is_descriptions_uri(uri) or ctx is None:
            return await call_next(context)
        # answered here, not by the registered component: a response cache inside this
        # middleware would otherwise replay one caller's read (and skip its grant)
        text = await self._read_text(ctx, uri)
        return ResourceResult([ResourceContent(text, mime_type="application/json")])

    async def _read_text(self, ctx: Context, uri: str) -> str:
        selection = parse_selection(uri, limit=self.max_tools_per_read)
        prefix = read_prefix(ctx, uri)  # read through a parent that mounted this server
        if prefix:
            selection = replace(selection, names=tuple(unprefixed(selection.names, prefix)))
        return (await self._describe(ctx, selection)).text()

    async def describe(self, ctx: Context, uri: str) -> dict[str, Any]:
        """The JSON body answering a read of ``uri``, granting what it describes."""
        selection = parse_selection(uri, limit=self.max_tools_per_read)
        return (await self._describe(ctx, selection)).body

    async def _describe(self, ctx: Context, selection: Selection) -> Described:
        if selection.too_long:
            return Described(payloads.query_too_long(MAX_QUERY_CHARS), refused=True)
        if selection.count > self.max_tools_per_read:
            body = payloads.too_many_tools(selection.count, self.max_tools_per_read)
            return Described(body, refused=True)
        if selection.missing:
            body = payloads.missing_selection(await self._available(ctx))
            return Described(body, refused=True)
        described = Described({})
        for name, tool in (await self.catalog.tools(ctx, selection.names)).items():
            if tool is None:
                described.body[name] = payloads.unknown_tool(name)
            else:
                described.body[name], described.texts[name] = self.definitions.for_tool(tool)
                described.granted.append(name)
        await self.gate.grant(identify(ctx), described.granted, self._site(ctx))
        return described

    # -- tools/call ---------------------------------------------------------------------
    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        ctx = context.fastmcp_context
        call_next = let_through(call_next)  # what passes here passes nested calls too
        if ctx is None:
            return await call_next(context)  # no request in flight: nothing to gate
        if await self._is_bridge(ctx, name):
            self.engagement.note_bridge_call(identify(ctx))
            return await self._answer_bridge(ctx, context.message.arguments)
        hashed = await hashed_target(ctx, name)  # <hash>_<tool>: gate the tool it runs
        call = GateCall(
            identify(ctx),
            hashed.name if hashed is not None else name,
            arguments=context.message.arguments,
            hashed=hashed,
            nested=passed_outer_gate() and is_nested_tool_call(),  # cheaper read first
        )
        verdict = await self.gate.decide(call, self._site(ctx))
        if verdict.proceeds:
            return await call_next(context)
        if verdict.outcome == "store_unavailable" or verdict.definition is None:
            return _error_result(payloads.store_unavailable())
        return self._refusal(ctx, call.name, verdict.definition, problem=verdict.problem,
                             mounted=hashed is None)

    def _refusal(
        self,
        ctx: Context,
        name: str,
        definition: dict[str, Any],
        *,
        problem: str | None = None,
        mounted: bool = True,
    ) -> ToolResult:
        """The teaching refusal, in the names a parent that mounted us shows (a hashed
        backend name is not a mount prefix)."""
        prefix = call_prefix(ctx, name) if mounted else ""
        bridge = prefix + self._bridge_name if self._bridge_name else None
        body = payloads.description_required(
            prefix + name, bridge, definition=definition, problem=problem
        )
        return _error_result(refusal_for_mount(body, prefix))

    async def _answer_bridge(self, ctx: Context, arguments: dict[str, Any] | None) -> ToolResult:
        names = requested_names(arguments)
        if names is None:
            return _error_result(payloads.missing_selection(await self._available(ctx)))
        if self.bridge is not None:
            names = unprefixed(names, call_prefix(ctx, self.bridge.name))
        described = await self._describe(
            ctx, selection_from_names(names, limit=self.max_tools_per_read)
        )
        if described.refused:
            return _error_result(described.body)
        return ToolResult(
            content=[mt.TextContent(type="text", text=described.text())],
            structured_content=described.body,
        )

    async def _available(self, ctx: Context) -> list[str]:
        """The tools worth describing to this caller: its listing minus the bridge."""
        names = await self.catalog.names(ctx)
        return [n for n in names if self.bridge is None or n != self.bridge.name]

    async def _is_bridge(self, ctx: Context, name: str) -> bool:
        """Whether ``name`` resolves to our bridge (a user's tool of that name wins)."""
        if self.bridge is None or name != self.bridge.name:
            return False
        return self._is_our_bridge(await ctx.fastmcp.get_tool(name))

    def _is_our_bridge(self, tool: Tool | None) -> bool:
        return (
            tool is not None
            and self.bridge is not None
            and getattr(tool, "fn", None) is getattr(self.bridge, "fn", None)
        )

    # -- instructions -------------------------------------------------------------------
    async def on_initialize(
        self,
        context: MiddlewareContext[mt.InitializeRequest],
        call_next: CallNext[mt.InitializeRequest, mt.InitializeResult | None],
    ) -> mt.InitializeResult | None:
        result = await call_next(context)
        return self._advertise_resolution(self._announce(result))  # type: ignore[no-any-return]

    async def on_discover(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        result = await call_next(context)
        return self._advertise_resolution(self._announce(result))

    # -- hot reload -----------------------------------------------------------------------
    # A watcher thread started by the first request invalidates edited description files
    # and sends tools/list_changed to live legacy sessions; it stops with the server.
    @cached_property
    def hot_reload(self) -> HotReload:
        """The description-file watcher and the legacy sessions it notifies."""
        return HotReload(self.store, summary_max_chars=self.lister.summary_max_chars,
                         line_at=self.lister.file_line)

    async def on_message(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        ctx = context.fastmcp_context
        if ctx is not None:
            await install(self, ctx.fastmcp, self.components)
            if context.method not in _HANDSHAKE_METHODS:  # let the client connect and hear why
                self._check_order(ctx.fastmcp.middleware)
        self.hot_reload.observe(ctx)
        method = context.method or ""
        if context.type == "request" and method not in IGNORED_METHODS and method != "tools/call":
            # the first request of a session tells a kept session from a one-call one
            self.engagement.note_request(identify(ctx), method)
        return await call_next(context)

    def close(self) -> None:
        """Stop the watcher for good (it also stops by itself when the server stops) and take
        the resource, template, bridge and prompt this middleware added out of the server."""
        self.hot_reload.close()
        self.components.remove()

    # -- helpers ------------------------------------------------------------------------
    def _announce(self, result: Any) -> Any:
        """Advertise the extension in the capabilities and (``instructions``) append the
        workflow paragraph; the advertisement is how clients find the extension, so it
        stays when the paragraph is turned off."""
        if not isinstance(result, (mt.InitializeResult, mt.DiscoverResult)):
            return result
        base = result.instructions or ""
        joined = base
        if self.instructions and self.instructions_text not in base:
            joined = f"{base}\n\n{self.instructions_text}" if base else self.instructions_text
        capabilities = result.capabilities
        extensions = dict(capabilities.extensions or {})
        extensions[payloads.EXTENSION_ID] = {
            "resource": payloads.DESCRIPTIONS_URI,
            "listing": self.lister.level,
            "bridge_tool": self.bridge.name if self.bridge is not None else None,
        }
        return result.model_copy(update={
            "instructions": joined or result.instructions,
            "capabilities": capabilities.model_copy(update={"extensions": extensions}),
        })

    def _advertise_resolution(self, result: Any) -> Any:
        return self.resolution.advertise(result) if self.resolution is not None else result

    def _exempt(self, ctx: Context | None) -> frozenset[str]:
        """Tools listed in full and never gated: configured ones and transform gateways."""
        if ctx is None:
            return self.exempt_tools
        return self.exempt_tools | gateways_of(ctx.fastmcp)

    def _level(self, caller: Caller) -> ClientLevel:
        """What ``caller``'s listing shows (the gate decides: ``full`` is never gated)."""
        return self.gate.level(caller)

    def _site(self, ctx: Context) -> RequestSite:
        """What the server serving ``ctx`` tells the gate."""
        return RequestSite(ctx, self.catalog, self.store)

    def _lister(self, level: ListingLevel) -> Lister:
        """The lister (and its memo) for one progressive level, made on first use."""
        lister = self._listers.get(level)
        if lister is None:
            lister = Lister(self.store, replace(self.lister.settings, level=level),
                            cache_size=self.lister.cache_size)
            lister.share_file_facts(self.lister)  # what the preload read serves every level
            self._listers[level] = lister
        return lister

    @property
    def _bridge_name(self) -> str | None:
        return self.bridge.name if self.bridge is not None else None

    def _check_order(self, chain: Sequence[Any]) -> None:
        """Refuse to serve while middleware in front of us would bypass the gate."""
        problem = misordered(chain, self)
        if problem is None:
            return
        if not self._reported_order:
            self._reported_order = True
            logger.error("%s", problem)
        raise MiddlewareOrderError(problem)


@dataclass
class Described:
    """A descriptions answer: its JSON body, whether the whole request was refused (an
    error body, not a map of tools), and which tools it granted. Kept apart because a tool
    may well be named ``error``."""

    body: dict[str, Any]
    refused: bool = False
    granted: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        """The body as compact JSON, reusing each definition's pre-serialized text."""
        if not self.texts:
            return compact_json(self.body)
        parts = (
            f"{compact_json(name)}:{self.texts.get(name) or compact_json(entry)}"
            for name, entry in self.body.items()
        )
        return "{" + ",".join(parts) + "}"


def _error_result(body: dict[str, Any]) -> ToolResult:
    """A tool-execution error whose text and structuredContent carry the same JSON body."""
    return ToolResult(
        content=[mt.TextContent(type="text", text=compact_json(body))],
        structured_content=body,
        is_error=True,
    )
