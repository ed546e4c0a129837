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

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any

import mcp_types as mt
from fastmcp.exceptions import FastMCPError
from fastmcp.resources import ResourceResult
from fastmcp.resources.base import ResourceContent
from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult

from fastmcp_progressive import payloads
from fastmcp_progressive.access.arguments import ArgumentChecker
from fastmcp_progressive.access.caller import Caller, identify
from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.engagement import IGNORED_METHODS, Engagement
from fastmcp_progressive.access.gate import ANONYMOUS_POLICIES as ANONYMOUS_POLICIES
from fastmcp_progressive.access.gate import Gate, GateCall
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.access.mounts import (
    call_prefix,
    read_prefix,
    refusal_for_mount,
    unprefixed,
)
from fastmcp_progressive.access.ordering import MiddlewareOrderError, misordered
from fastmcp_progressive.access.passage import let_through, passed_outer_gate
from fastmcp_progressive.access.site import RequestSite, gateways_of
from fastmcp_progressive.access.targets import hashed_target
from fastmcp_progressive.disclosure.bridge import (
    bridge_description_with_groups,
    dispatched_arguments,
    requested_names,
)
from fastmcp_progressive.disclosure.components import (
    DisclosureComponents,
    install,
    one_descriptions_entry,
)
from fastmcp_progressive.disclosure.groups import GROUPING_EXTENSION_ID, GROUPS_LIST_METHOD, Groups
from fastmcp_progressive.disclosure.guidance import guidance_prompt as guidance_prompt_for
from fastmcp_progressive.disclosure.hot_reload import HotReload
from fastmcp_progressive.disclosure.listing import ListedTool, Lister
from fastmcp_progressive.disclosure.preload import Preload
from fastmcp_progressive.disclosure.selection import (
    MAX_QUERY_CHARS,
    Selection,
    is_descriptions_uri,
    parse_selection,
    resolve_trimmed,
    selection_from_names,
)
from fastmcp_progressive.disclosure.suggestions import Suggestions
from fastmcp_progressive.disclosure.toolcap import ToolCap
from fastmcp_progressive.fastmcp_internals import is_nested_tool_call, serving_tool_call
from fastmcp_progressive.files.definitions import Definitions, compact_json
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.hosts import ClientLevel
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.options import folder, names
from fastmcp_progressive.resolution.server import RESOLVE_METHOD, ToolResolution
from fastmcp_progressive.settings import (
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

logger = get_logger()

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
        folder("descriptions_dir", descriptions_dir)
        self.store = DescriptionStore(descriptions_dir, cache_size=caches.files)
        self.definitions = Definitions(self.store, cache_size=caches.definitions)
        self.lister = Lister(self.store, listing, cache_size=caches.listing)
        self.preload = Preload(self.lister)
        self.grants = GrantStore(grants)
        self.modes = ModePolicy(clients, default_level=listing.level)
        self._listers: dict[ListingLevel, Lister] = {listing.level: self.lister}
        self.checker = ArgumentChecker()
        self.suggestions = Suggestions()
        self.engagement = Engagement()
        self.exempt_tools = frozenset(names("exempt_tools", exempt_tools))
        self.gate = Gate(grants=self.grants, modes=self.modes, definitions=self.definitions,
                         anonymous=clients.anonymous, exempt_tools=self.exempt_tools,
                         engagement=self.engagement, checker=self.checker)
        self.catalog = Catalog(owner=self)
        self.groups = Groups(self.store, tags=listing.tag_groups)
        self.cap = ToolCap(self.grants, listing.max_tools, listing.host_caps)
        self._largest_listing = 0
        self._bridge_copy: tuple[tuple[str, ...], Tool] | None = None
        self.resolution = (ToolResolution(self.store, self.catalog, resolution.resolvers,
                                          definitions=self.definitions, checker=self.checker,
                                          hook_timeout=resolution.hook_timeout)
                           if resolution.enabled else None)
        self.anonymous = clients.anonymous
        self.max_tools_per_read = surface.max_tools_per_read
        self.instructions = surface.instructions
        bridge_tool = surface.bridge_tool
        self.prompt = guidance_prompt_for(bridge_tool) if surface.guidance_prompt else None
        self.components = DisclosureComponents(
            read=self._read_text, bridge=self._answer_bridge, bridge_name=bridge_tool,
            prompt=self.prompt, description=payloads.resource_description(bridge_tool),
            dispatch=self._answer_dispatch,
            dispatch_name=surface.dispatch_tool if self.cap.possible else None,
        )
        self.bridge = self.components.bridge
        self.dispatch = self.components.dispatch
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
            own = [t for t in tools if not self._is_ours(t)]
            limit = self.cap.limit(caller)
            if limit is None or len(own) <= limit:
                return self._mark(ctx, own)
            # a host that defers tools itself but takes fewer than this server lists: in
            # full it would drop tools unseen, so it gets the capped progressive listing
            level = self.lister.level
        exempt = self._exempt(ctx)
        if self.bridge is not None:
            exempt |= {self.bridge.name}
        if self.dispatch is not None:
            exempt |= {self.dispatch.name}
        with self.preload.serving():  # the files this listing needs: parsed here, once
            reduced = self._lister(level).reduce(tools, exempt)
        if ctx is not None and caller.kind == "session" and self.hot_reload.enabled:
            await self._remember_listing(ctx, caller, [t for t in tools if t.name not in exempt])
        if self.bridge is not None and all(t.name != self.bridge.name for t in tools):
            reduced.append(self.bridge)  # e.g. a search transform replaced the listing
        limit = self.cap.limit(caller)
        dispatch = self._dispatch_name
        if dispatch is not None:
            reduced = [t for t in reduced if t.name != dispatch or not self._is_our_dispatch(t)]
        self._largest_listing = max(self._largest_listing, len(reduced))
        if limit is not None and ctx is not None and len(reduced) > limit:
            reduced = await self._capped(ctx, caller, tools, reduced, limit)
        elif self.bridge is not None:
            plain, bridge = self._plain_bridge, self.bridge.name
            reduced = [plain if t.name == bridge and self._is_our_bridge(t) else t
                       for t in reduced]
        return self._mark(ctx, reduced)

    # -- what a client served in full is shown of ours ------------------------------------
    async def on_list_prompts(self, context: MiddlewareContext[Any],
                              call_next: CallNext[Any, Any]) -> Any:
        return self._for_level(context, await call_next(context))

    async def on_list_resources(self, context: MiddlewareContext[Any],
                                call_next: CallNext[Any, Any]) -> Any:
        listed = one_descriptions_entry(await call_next(context), lambda r: str(r.uri),
                                        partial(_same, ours=self.components.resource))
        return self._for_level(context, listed)

    async def on_list_resource_templates(self, context: MiddlewareContext[Any],
                                         call_next: CallNext[Any, Any]) -> Any:
        listed = one_descriptions_entry(await call_next(context), lambda t: t.uri_template,
                                        partial(_same, ours=self.components.template))
        return self._for_level(context, listed)

    def _for_level(self, context: MiddlewareContext[Any], listed: Any) -> Any:
        """``listed`` without our guidance prompt and descriptions resource for a client
        served in full: their texts teach the progressive workflow (``describe_tools``, the
        refusal), which such a client's listing and calls never show. Reads still answer."""
        if (self.catalog.passthrough() or not isinstance(listed, Sequence)
                or self._level(identify(context.fastmcp_context)) != "full"):
            return listed
        ours = [part for part in self.components.parts() if part is not self.bridge
                and part is not self.dispatch]
        return [item for item in listed if not any(_same(item, part) for part in ours)]

    @cached_property
    def _listed_dispatch(self) -> Tool:
        """The dispatch bridge as a capped listing shows it (no name-derived title)."""
        assert self.dispatch is not None
        return ListedTool.of(self.dispatch, {"strip_noise": True})

    @cached_property
    def _plain_bridge(self) -> Tool:
        """The bridge as an uncapped listing shows it: ``tools`` only (its ``groups``
        argument is offered where most tools are not listed by name)."""
        assert self.bridge is not None
        schema = dict(self.bridge.parameters)
        schema["properties"] = {k: v for k, v in schema.get("properties", {}).items()
                                if k != "groups"}
        return self.bridge.model_copy(update={"parameters": schema})

    def _mark(self, ctx: Context | None, tools: Sequence[Tool]) -> Sequence[Tool]:
        """The listing with the marks of the extensions this request's client speaks."""
        if ctx is None:
            return tools
        caller = identify(ctx)
        tools = self.groups.mark(caller, tools, ctx.fastmcp)
        if self.resolution is None:
            return tools
        return self.resolution.mark(caller, tools)

    # -- a listing within a tool cap (toolcap.py) ----------------------------------------
    async def _capped(self, ctx: Context, caller: Caller, tools: Sequence[Tool],
                      reduced: Sequence[Tool], limit: int) -> list[Tool]:
        """At most ``limit`` entries: pinned and exempt tools, the bridges, then the tools
        this caller keeps in its listing (or this server's most called), in listing order."""
        ours = {n for n in (self._bridge_name, self._dispatch_name) if n}
        registered = {t.name: t for t in tools}
        fixed: set[str] = set()
        candidates: list[str] = []
        for shown in reduced:
            if shown.name in ours:
                continue
            if registered.get(shown.name) is shown:
                fixed.add(shown.name)  # pinned or exempt: listed as registered
            else:
                candidates.append(shown.name)
        bridges: list[Tool] = []
        if self.bridge is not None:
            bridges.append(await self._bridge_naming_groups(ctx, tools))
        if self.dispatch is not None:
            bridges.append(self._listed_dispatch)
        slots = limit - len(fixed) - len(bridges)
        chosen = set(await self.cap.choose(caller, candidates, slots,
                                           self._site(ctx).state_store))
        kept = [t for t in reduced
                if t.name not in ours and (t.name in fixed or t.name in chosen)]
        return [*kept, *bridges]

    async def _bridge_naming_groups(self, ctx: Context, tools: Sequence[Tool]) -> Tool:
        """The bridge as a capped listing shows it: its description names every group the
        caller may see, one line each."""
        assert self.bridge is not None
        visible = await self._visible(ctx, [t for t in tools if not self._is_ours(t)])
        members = self.groups.members(visible, ctx.fastmcp)
        lines = tuple(
            f"{g.name}: {g.line() or _example_members(g.name, members.get(g.name, []))}"
            for g in self.groups.listed(visible, ctx.fastmcp))
        known = self._bridge_copy
        if known is not None and known[0] == lines:
            return known[1]
        description = bridge_description_with_groups(list(lines), self._dispatch_name)
        schema = {k: v for k, v in self.bridge.parameters.items() if k != "required"}
        copy = ListedTool.of(self.bridge, {"description": description, "parameters": schema,
                                           "strip_noise": True})
        self._bridge_copy = (lines, copy)
        return copy

    async def _visible(self, ctx: Context, tools: list[Tool]) -> list[Tool]:
        """``tools`` minus those a listing filter outside this middleware hides."""
        if not self.catalog.filters(ctx):
            return tools
        shown = await self.catalog.visible(ctx, tools)
        return [t for t in tools if t.name in shown]

    async def _visible_tools(self, ctx: Context) -> list[Tool]:
        """Every tool this caller may see, as registered (our bridges left out): FastMCP's
        own listing without middleware (providers, transforms, visibility, component auth),
        then what the other middleware's listing filters keep (``catalog.py``); a quarter
        of a listing through the whole chain at 10,000 tools."""
        first: dict[str, Tool] = {}
        for tool in await ctx.fastmcp.list_tools(run_middleware=False):
            if not self._is_ours(tool):
                first.setdefault(tool.name, tool)
        return await self._visible(ctx, list(first.values()))

    async def _list_described(self, ctx: Context, caller: Caller, names: list[str]) -> None:
        """Put tools just described in a followable caller's capped listing, and tell it."""
        limit = self.cap.limit(caller)
        if limit is None or not names or 0 < self._largest_listing <= limit:
            return
        if await self.cap.add(caller, names, limit, self._site(ctx).state_store):
            try:
                await ctx.send_notification(mt.ToolListChangedNotification())
            except Exception as exc:  # a client gone mid-request: its listing is kept anyway
                logger.debug("tools/list_changed after a describe failed: %s", exc)

    # -- the dispatch bridge ----------------------------------------------------------------
    async def _answer_dispatch(self, ctx: Context, arguments: dict[str, Any] | None
                               ) -> ToolResult:
        """Run the tool ``arguments["name"]`` names through FastMCP's own ``call_tool``:
        the middleware chain (this gate included), component auth and logs see it under
        its own name. A tool this caller may not see answers like an unknown one."""
        arguments = arguments or {}
        name, inner = arguments.get("name"), arguments.get("arguments", {})
        if inner is None:
            inner = {}
        if not isinstance(name, str) or not name or not isinstance(inner, dict):
            return _error_result(payloads.dispatch_usage(
                self._dispatch_name or payloads.DISPATCH_TOOL_NAME))
        if name == self._dispatch_name:
            return _error_result(payloads.dispatch_usage(name))
        if await self.catalog.tool(ctx, name) is None:
            return _error_result(payloads.dispatch_unknown(name, self._bridge_name))
        try:
            return await ctx.fastmcp.call_tool(name, dispatched_arguments(name, inner))
        except FastMCPError as exc:
            return _error_result(payloads.dispatch_failed(name, str(exc)))

    async def _answer_groups_list(self, ctx: Context, params: Any) -> dict[str, Any]:
        """``groups/list``: the groups of the tools this caller may see, one page."""
        groups = self.groups.listed(await self._visible_tools(ctx), ctx.fastmcp)
        return self.groups.page(groups, params, ctx.fastmcp, identify(ctx))

    # -- tools/resolve (tool resolution: resolution.py) ---------------------------------
    async def on_request(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        ctx = context.fastmcp_context
        if context.method == GROUPS_LIST_METHOD and ctx is not None:
            return await self._answer_groups_list(ctx, context.message)
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
        return (await self._describe(ctx, selection, prefix=prefix)).text()

    async def describe(self, ctx: Context, uri: str) -> dict[str, Any]:
        """The JSON body answering a read of ``uri``, granting what it describes."""
        selection = parse_selection(uri, limit=self.max_tools_per_read)
        return (await self._describe(ctx, selection)).body

    async def _describe(self, ctx: Context, selection: Selection, *, prefix: str = "") -> Described:
        if selection.too_long:
            return Described(payloads.query_too_long(MAX_QUERY_CHARS), refused=True)
        if selection.count > self.max_tools_per_read:
            body = payloads.too_many_tools(selection.count, self.max_tools_per_read)
            return Described(body, refused=True)
        if selection.missing:
            body = payloads.missing_selection(await self._available(ctx))
            return Described(body, refused=True)
        described = Described({})
        found = await resolve_trimmed(selection.names, lambda names: self.catalog.tools(ctx, names))
        # the caller's own listing, asked once per read and only when a name is not in it:
        # a hidden name and an unknown one are answered from it alike (suggestions.py)
        visible = await self._available(ctx) if None in found.values() else []
        for name, tool in found.items():
            if tool is None:
                closest = self.suggestions.closest(name, visible)
                described.body[name] = payloads.unknown_tool(name, [prefix + n for n in closest])
            else:
                described.body[name], described.texts[name] = self.definitions.for_tool(tool)
                described.granted.append(name)
        caller = identify(ctx)
        await self.gate.grant(caller, described.granted, self._site(ctx))
        await self._list_described(ctx, caller, described.granted)
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
        if await self._is_dispatch(ctx, name):
            # not noted as engagement: a host with a session per call stays unfollowable
            return await self._answer_dispatch(ctx, context.message.arguments)
        hashed = await hashed_target(ctx, name)  # <hash>_<tool>: gate the tool it runs
        call = GateCall(
            identify(ctx),
            hashed.name if hashed is not None else name,
            arguments=context.message.arguments,
            hashed=hashed,
            nested=passed_outer_gate() and is_nested_tool_call(),  # cheaper read first
        )
        site = self._site(ctx)
        verdict = await self.gate.decide(call, site)
        if verdict.outcome == "unknown" and hashed is None:
            # Unknown to our lookup, yet FastMCP may still find it (a proxy's cache that
            # refreshes on this very call, an upstream that added the tool mid-session):
            # a tool FastMCP would run is gated like any other, never run unread.
            found = await site.refreshed(name)
            if found is not None:
                verdict = await self.gate.decide(call, found)
        if verdict.proceeds:
            if verdict.outcome != "unknown" and not call.nested and self.cap.possible:
                self.cap.note_call(call.name)
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
        group_names = requested_names(arguments, "groups")
        if names is None and group_names is None:
            return _error_result(payloads.missing_selection(await self._available(ctx)))
        groups: dict[str, Any] | None = None
        if group_names is not None:
            if len(group_names) > self.max_tools_per_read:
                return _error_result(payloads.too_many_tools(len(group_names),
                                                             self.max_tools_per_read))
            groups = self.groups.answer_groups(group_names, await self._visible_tools(ctx),
                                               ctx.fastmcp, self._line_of)
            if names is None:
                body = {"groups": groups}
                return ToolResult(content=[mt.TextContent(type="text", text=compact_json(body))],
                                  structured_content=body)
        assert names is not None
        prefix = call_prefix(ctx, self.bridge.name) if self.bridge is not None else ""
        names = unprefixed(names, prefix)
        described = await self._describe(
            ctx, selection_from_names(names, limit=self.max_tools_per_read), prefix=prefix
        )
        if described.refused:
            return _error_result(described.body)
        if groups is not None:
            both = {"tools": described.body, "groups": groups}
            return ToolResult(content=[mt.TextContent(type="text", text=compact_json(both))],
                              structured_content=both)
        return ToolResult(
            content=[mt.TextContent(type="text", text=described.text())],
            structured_content=described.body,
        )

    def _line_of(self, tool: Tool) -> str:
        """``tool``'s listing line (its file's, else its own first sentence)."""
        return self.lister.summary(tool, self.store.signature(tool.name))

    async def _available(self, ctx: Context) -> list[str]:
        """The tools worth describing to this caller: its listing minus the bridges (none
        when a listing filter fails: never wider than the caller's listing)."""
        try:
            names = await self.catalog.names(ctx)
        except Exception:
            logger.exception("listing this caller's tools failed; suggesting none")
            return []
        ours = {self._bridge_name, self._dispatch_name}
        return [n for n in names if n not in ours]

    async def _is_bridge(self, ctx: Context, name: str) -> bool:
        """Whether ``name`` resolves to our bridge (a user's tool of that name wins)."""
        return await self._resolves_to(ctx, name, self.bridge)

    async def _is_dispatch(self, ctx: Context, name: str) -> bool:
        """Whether ``name`` resolves to our dispatch bridge (a user's tool of that name wins)."""
        return await self._resolves_to(ctx, name, self.dispatch)

    @staticmethod
    async def _resolves_to(ctx: Context, name: str, ours: Tool | None) -> bool:
        if ours is None or name != ours.name:
            return False
        return _same_tool(await ctx.fastmcp.get_tool(name), ours)

    def _is_our_bridge(self, tool: Tool | None) -> bool:
        return _same_tool(tool, self.bridge)

    def _is_our_dispatch(self, tool: Tool | None) -> bool:
        return _same_tool(tool, self.dispatch)

    def _is_ours(self, tool: Tool | None) -> bool:
        """Whether ``tool`` is one of our bridges (not one of the user's tools)."""
        return self._is_our_bridge(tool) or self._is_our_dispatch(tool)

    # -- instructions -------------------------------------------------------------------
    async def on_initialize(
        self,
        context: MiddlewareContext[mt.InitializeRequest],
        call_next: CallNext[mt.InitializeRequest, mt.InitializeResult | None],
    ) -> mt.InitializeResult | None:
        result = await call_next(context)
        caller = _announcing_to(context)
        return self._advertise_resolution(  # type: ignore[no-any-return]
            self._announce(result, self._level(caller)))

    async def on_discover(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        result = await call_next(context)
        return self._advertise_resolution(
            self._announce(result, self._level(_announcing_to(context))))

    # -- hot reload -----------------------------------------------------------------------
    # A watcher thread started by the first request invalidates edited description files
    # and sends tools/list_changed to live legacy sessions; it stops with the server.
    @cached_property
    def hot_reload(self) -> HotReload:
        """The description-file watcher and the legacy sessions it notifies."""
        return HotReload(self.store, summary_max_chars=self.lister.summary_max_chars,
                         facts_at=self.lister.file_facts)

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
        if ctx is not None and context.type == "request":
            await self.modes.prepare(identify(ctx))  # the operator's resolver, off the loop
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
    def _announce(self, result: Any, level: ClientLevel) -> Any:
        """Advertise the extension in the capabilities and (``instructions``) append the
        workflow paragraph; the advertisement is how clients find the extension, so it
        stays when the paragraph is turned off.

        Both say what this client's own listing holds: a client served in ``full`` (a host
        that defers tools itself) lists no bridge and is never gated, so it is told
        neither to call ``describe_tools`` nor to expect a refusal, and its advertisement
        names its level and no bridge.
        """
        if not isinstance(result, (mt.InitializeResult, mt.DiscoverResult)):
            return result
        full = level == "full"
        base = result.instructions or ""
        joined = base
        if self.instructions and not full and self.instructions_text not in base:
            joined = f"{base}\n\n{self.instructions_text}" if base else self.instructions_text
        capabilities = result.capabilities
        extensions = dict(capabilities.extensions or {})
        extensions[payloads.EXTENSION_ID] = {
            "resource": payloads.DESCRIPTIONS_URI,
            "listing": level,
            "bridge_tool": self.bridge.name if self.bridge is not None and not full else None,
        }
        extensions[GROUPING_EXTENSION_ID] = {"listChanged": True}
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

    @property
    def _dispatch_name(self) -> str | None:
        return self.dispatch.name if self.dispatch is not None else None

    def _check_order(self, chain: Sequence[Any]) -> None:
        """Refuse to serve while middleware in front of us would bypass the gate."""
        problem = misordered(chain, self)
        if problem is None:
            return
        if not self._reported_order:
            self._reported_order = True
            logger.error("%s", problem)
        raise MiddlewareOrderError(problem)


def _same(listed: Any, ours: Any) -> bool:
    """Whether a listed component is ``ours`` (itself, or a copy FastMCP made of it)."""
    if listed is ours:
        return True
    fn = getattr(ours, "fn", None)
    return fn is not None and getattr(listed, "fn", None) is fn


def _announcing_to(context: MiddlewareContext[Any]) -> Caller:
    """The client an ``initialize`` / ``server/discover`` answer goes to.

    On ``initialize`` the session has not stored the client's ``clientInfo`` and
    capabilities yet, so they are taken from the request itself (the level decision needs
    the name for the host table and the extension settings for a requested mode).
    """
    caller = identify(context.fastmcp_context)
    params = getattr(context.message, "params", None)
    info = getattr(params, "client_info", None)
    if info is None or caller.client_name is not None:
        return caller
    extensions = getattr(getattr(params, "capabilities", None), "extensions", None)
    return replace(
        caller,
        client_name=getattr(info, "name", None),
        client_version=getattr(info, "version", None),
        extensions=dict(extensions) if isinstance(extensions, dict) else caller.extensions,
    )


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


def _example_members(group: str, tools: Sequence[Tool], count: int = 3) -> str:
    """A group with no description in a line: how many tools it has and a few names."""
    names = [t.name.removeprefix(f"{group}_") for t in tools[:count]]
    more = ", ..." if len(tools) > count else ""
    return f"{len(tools)} tools ({', '.join(names)}{more})" if tools else "nested groups"


def _error_result(body: dict[str, Any]) -> ToolResult:
    """A tool-execution error whose text and structuredContent carry the same JSON body."""
    return ToolResult(
        content=[mt.TextContent(type="text", text=compact_json(body))],
        structured_content=body,
        is_error=True,
    )


def _same_tool(tool: Tool | None, ours: Tool | None) -> bool:
    """Whether ``tool`` is ``ours`` (one of our bridges), not a user's tool of its name."""
    return (tool is not None and ours is not None
            and getattr(tool, "fn", None) is getattr(ours, "fn", None))
