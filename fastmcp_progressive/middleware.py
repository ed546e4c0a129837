"""``ProgressiveDisclosure``: the FastMCP middleware that conducts the three request paths.

- ``tools/list``: each tool with a one-line description and a stripped schema;
- ``resources/read`` of ``resource:///tool_descriptions?tools=a,b``: full definitions of
  the tools the caller may see, and a grant of those tools to the caller;
- ``tools/call``: refused with ``TOOL_DESCRIPTION_REQUIRED`` until the tool is granted; the
  refusal carries the tool's definition and grants it, so the next call runs. Callers the
  server cannot follow (no identity, or a new session per call) have their arguments
  checked against the full schema instead (``ClientSettings(anonymous="validate")``).

Each request passes through once: ``on_message`` identifies the caller and holds it for
the whole pass (``access/caller.py:serving``); ``on_call_tool`` gathers the call's facts
once (the tool found once, unless a grant held runs it unlooked) and asks the gate once
(``access/gate.py``), which decides on them alone, then runs or refuses the call; the
listing and the descriptions are answered in ``disclosure/tools_list.py`` and
``disclosure/describer.py``.
This class wires the wings together (``docs/architecture.md``); this module also refuses to
serve behind middleware that would bypass the gate (``OrderCheck``).

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
import weakref
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Literal, Never

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.resources import ResourceResult
from fastmcp.resources.base import ResourceContent
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.middleware.caching import ResponseCachingMiddleware
from fastmcp.tools.base import Tool, ToolResult
from mcp.shared.exceptions import MCPError

from fastmcp_progressive import payloads
from fastmcp_progressive.access.caller import caller_of, note_request, serving
from fastmcp_progressive.access.catalog import Catalog, hooks_listing
from fastmcp_progressive.access.gate import (
    CallFacts,
    Found,
    Gate,
    Recall,
    ServerFacts,
    find_tool,
    gateways_of,
    let_through,
    nested_call,
)
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.disclosure.announce import Announcer, announcing_to
from fastmcp_progressive.disclosure.components import BridgeNameTaken, install
from fastmcp_progressive.disclosure.cost import NetCost
from fastmcp_progressive.disclosure.describer import Describer, error_result
from fastmcp_progressive.disclosure.groups import GROUPS_LIST_METHOD, Groups
from fastmcp_progressive.disclosure.hot_reload import HotReload
from fastmcp_progressive.disclosure.listing import Lister, Preload
from fastmcp_progressive.disclosure.toolcap import ToolCap
from fastmcp_progressive.disclosure.tools_list import ToolsList
from fastmcp_progressive.fastmcp_internals import state_storage
from fastmcp_progressive.files.folder import anchored
from fastmcp_progressive.files.store import Definitions, DescriptionStore
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.options import folder, names
from fastmcp_progressive.payloads import is_descriptions_uri
from fastmcp_progressive.resolution.server import RESOLVE_METHOD, ToolResolution
from fastmcp_progressive.settings import (
    AddedComponents,
    AnonymousPolicy,
    CacheSettings,
    ClientSettings,
    GrantSettings,
    ListingSettings,
    ResolutionSettings,
    given,
    unknown_options,
)

logger = get_logger()


class ProgressiveDisclosure(Middleware):
    """Progressive disclosure of tool descriptions (MCP extension spec v2.1) for FastMCP.

    Args:
        descriptions_dir: folder of ``<tool>.json`` / ``<tool>.md`` files; optional, a tool
            without a file is described by its registered definition. A relative path is
            resolved beside the file that builds the middleware (``files/folder.py:anchored``),
            whatever the working directory.
        listing: what a progressive ``tools/list`` shows (``ListingSettings``: level,
            summary length, noise stripping).
        grants: how long grants live and where (``GrantSettings``: TTL, session bound,
            key-value store, its timeout and failure policy).
        clients: who is gated at what level (``ClientSettings``: the anonymous policy,
            full clients, level header, level resolver, host profiles).
        caches: the listing and definition cache sizes (``CacheSettings``).
        added: what we add to the server (``AddedComponents``: bridge tools, guidance
            prompt, instructions paragraph) and the most tools one read may select.
        resolution: ``tools/resolve`` and its Python hooks (``ResolutionSettings``).
        exempt_tools: tools listed in full and never gated, on top of those FastMCP's
            search / ResourcesAsTools transforms generate (found automatically).

    Every settings object checks its values when built; defaults live there
    (``settings.py``).
    """

    def __init__(
        self,
        descriptions_dir: str | os.PathLike[str] | None = None,
        *,
        listing: ListingSettings | None = None,
        grants: GrantSettings | None = None,
        clients: ClientSettings | None = None,
        caches: CacheSettings | None = None,
        added: AddedComponents | None = None,
        resolution: ResolutionSettings | None = None,
        exempt_tools: Collection[str] = (),
        **unknown: Never,  # refused, saying where each belongs (``max_tools``: ``listing``)
    ) -> None:
        if unknown:
            raise TypeError(unknown_options(unknown))
        listing = given("listing", listing, ListingSettings)
        grants = given("grants", grants, GrantSettings)
        clients = given("clients", clients, ClientSettings)
        caches = given("caches", caches, CacheSettings)
        added = given("added", added, AddedComponents)
        resolution = given("resolution", resolution, ResolutionSettings)
        folder("descriptions_dir", descriptions_dir)
        directory, origin = (anchored(descriptions_dir) if descriptions_dir is not None
                             else (None, None))
        folder("descriptions_dir", directory)  # where it points: not a file
        self.store = DescriptionStore(directory, origin=origin, cache_size=caches.definitions)
        self.definitions = Definitions(self.store, cache_size=caches.definitions)
        self.lister = Lister(self.store, listing, cache_size=caches.listing)
        self.preload = Preload(self.lister)
        self.grants = GrantStore(grants)
        self.modes = ModePolicy(clients, default_level=listing.level)
        self._gate = Gate(grants=self.grants, modes=self.modes, definitions=self.definitions,
                         anonymous=clients.anonymous,
                         exempt_tools=names("exempt_tools", exempt_tools))
        self.catalog = Catalog(owner=self)
        self.groups = Groups(self.store, tags=listing.tag_groups)
        self._cap = ToolCap(self.grants, listing.max_tools, clients.host_profiles or ())
        self.resolution = (ToolResolution(self.store, self.catalog, resolution.resolvers,
                                          definitions=self.definitions, checker=self._gate.checker,
                                          hook_timeout=resolution.hook_timeout)
                           if resolution.enabled else None)
        self.max_tools_per_read = added.max_tools_per_read
        self.instructions = added.instructions
        self.describer = Describer(
            gate=self._gate, catalog=self.catalog,
            definitions=self.definitions, lister=self.lister, groups=self.groups, cap=self._cap,
            max_tools_per_read=added.max_tools_per_read, bridge_name=added.bridge_tool,
            dispatch_name=added.dispatch_tool if self._cap.possible else None,
            guidance_prompt=added.guidance_prompt)
        self.components = self.describer.components
        self._recall = Recall()
        self._own_names = frozenset(name for name in (self.components.bridge_name,
                                                      self.components.dispatch_name) if name)
        self.prompt = self.components.prompt
        self.bridge = self.components.bridge
        # a watcher thread started by the first request preloads the description files,
        # invalidates edited ones and sends tools/list_changed to live legacy sessions; it
        # stops with the server
        self.hot_reload = HotReload(self.store, summary_max_chars=self.lister.summary_max_chars,
                                    facts_at=self.lister.file_facts,
                                    served=self.lister.served_facts,
                                    on_start=self.preload.run if listing.preload else lambda: None)
        self.net_cost = NetCost(self.components, payloads.instructions(added.bridge_tool)
                                if added.instructions else None)
        self._tools_list = ToolsList(lister=self.lister, preload=self.preload, gate=self._gate,
                                    hot_reload=self.hot_reload,
                                    catalog=self.catalog, groups=self.groups, cap=self._cap,
                                    components=self.components, net_cost=self.net_cost,
                                    marks=self.resolution.mark if self.resolution else None)
        self.announcer = Announcer(bridge_name=added.bridge_tool,
                                   instructions=added.instructions)
        self._order = OrderCheck(self)

    @property
    def anonymous(self) -> AnonymousPolicy:
        """How callers the server cannot follow are handled (the gate's policy)."""
        return self._gate.anonymous

    @property
    def exempt_tools(self) -> frozenset[str]:
        """Tools listed in full and never gated (the gate's list)."""
        return self._gate.exempt_tools

    # -- every message: the caller, identified once for the whole pass --------------------------
    async def on_message(self, context: MiddlewareContext[Any],
                         call_next: CallNext[Any, Any]) -> Any:
        ctx = context.fastmcp_context
        with serving(ctx) as caller:
            if ctx is not None and not self._order.settled(ctx.fastmcp):
                await self._order.check(ctx.fastmcp, context.method,
                                        partial(install, self, ctx.fastmcp, self.components))
            hot = self.hot_reload  # a warm request: a cheap check, no watcher work (#35)
            if hot.enabled and ctx is not None and (hot.last_server() is not ctx.fastmcp or (
                    caller.key if caller.kind == "session" else caller.kind) not in hot.settled):
                hot.observe(ctx, caller)
            if context.type == "request":
                if ctx is not None and self.modes.resolver is not None:
                    await self.modes.prepare(caller)  # the operator's resolver, off the loop
                # the first request of a session tells a kept session from a one-call one
                note_request(caller, context.method or "")
            return await call_next(context)

    # -- tools/call: gather the call's facts once, ask the gate once, run or refuse -------------
    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        ctx = context.fastmcp_context
        if ctx is None:  # no client request in flight (``await mcp.call_tool`` from code)
            return await let_through(call_next)(context)
        server, name = ctx.fastmcp, context.message.name
        facts = CallFacts(caller_of(ctx), name, arguments=context.message.arguments,
                          nested=nested_call(), server=ServerFacts(
            gateways=await gateways_of(server), state_store=partial(state_storage, ctx),
            shown=partial(self.catalog.shown, ctx) if self._order.filtered(server) else None,
            ours=self._own_names))
        if self._gate.runs_unlooked(facts.caller, name, facts.server):
            facts = replace(facts, held=True)  # rule 0: FastMCP's call path finds it
        elif (kept := self._recall.get(server, name)) is not None:
            facts = replace(facts, found=kept, recalled=True)
        else:
            facts = replace(facts, found=await self._find(server, name))
        verdict = await self._gate.decide(facts)
        if verdict.outcome == "look_again":  # the tool as last found cannot settle it
            facts = replace(facts, found=await self._find(server, name), recalled=False)
            verdict = await self._gate.decide(facts)
        if verdict.outcome == "bridge":
            return await self.describer.answer_bridge(ctx, facts.arguments)
        if verdict.outcome == "dispatch":
            return await self.describer.answer_dispatch(ctx, facts.arguments)
        if verdict.proceeds:
            result = await let_through(call_next)(context)  # and so do the calls it nests
            # counted once it ran (FastMCP's validation, its lookup and the middleware inside
            # raise otherwise), and never a name the gate found hidden from this caller
            if facts.counted and verdict.outcome != "unknown" and self._cap.possible:
                self._cap.note_call(facts.found.name if facts.found else name)
            return result
        if verdict.outcome == "store_unavailable" or verdict.definition is None:
            return error_result(payloads.store_unavailable())
        found = facts.found or Found(None, name)  # a refusal rests on a fresh lookup
        return self.describer.refusal(ctx, found.name, verdict.definition,
                                      problem=verdict.problem, mounted=not found.hashed)

    async def _find(self, server: FastMCP[Any], name: str) -> Found:
        """The tool FastMCP runs for ``name`` (``access/gate.py:find_tool``), kept for
        calls judged by their arguments (``Recall``)."""
        found = await find_tool(server, name, self.components.kinds)
        self._recall.keep(server, name, found)
        return found

    # -- tools/list and what a client served in full is shown of ours ---------------------------
    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        return await self._tools_list.answer(context.fastmcp_context, tools)

    async def on_list_prompts(self, context: MiddlewareContext[Any],
                              call_next: CallNext[Any, Any]) -> Any:
        return self._shown(context, await call_next(context))

    async def on_list_resources(self, context: MiddlewareContext[Any],
                                call_next: CallNext[Any, Any]) -> Any:
        return self._shown(context, await call_next(context), "resource")

    async def on_list_resource_templates(self, context: MiddlewareContext[Any],
                                         call_next: CallNext[Any, Any]) -> Any:
        return self._shown(context, await call_next(context), "template")

    def _shown(self, context: MiddlewareContext[Any], listed: Any,
               kind: Literal["resource", "template"] | None = None) -> Any:
        """One descriptions entry; none of what teaches the workflow to a client in full."""
        full = (not self.catalog.passthrough()
                and self.modes.level(caller_of(context.fastmcp_context)) == "full")
        return self.components.shown(listed, kind, full=full)

    # -- resources/read of the descriptions resource -------------------------------------------
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
        text = await self.describer.read(ctx, uri)
        return ResourceResult([ResourceContent(text, mime_type="application/json")])

    # -- groups/list and tools/resolve ----------------------------------------------------------
    async def on_request(self, context: MiddlewareContext[Any],
                         call_next: CallNext[Any, Any]) -> Any:
        ctx = context.fastmcp_context
        if context.method == GROUPS_LIST_METHOD and ctx is not None:
            return await self.describer.answer_groups_list(ctx, context.message)
        if context.method != RESOLVE_METHOD or self.resolution is None or ctx is None:
            return await call_next(context)
        return await self.resolution.answer(ctx, context.message, caller_of(ctx))

    # -- the handshake ----------------------------------------------------------------------
    async def on_initialize(
        self,
        context: MiddlewareContext[mt.InitializeRequest],
        call_next: CallNext[mt.InitializeRequest, mt.InitializeResult | None],
    ) -> mt.InitializeResult | None:
        return await self.on_discover(context, call_next)  # type: ignore[no-any-return]

    async def on_discover(self, context: MiddlewareContext[Any],
                          call_next: CallNext[Any, Any]) -> Any:
        result = await call_next(context)
        caller = announcing_to(caller_of(context.fastmcp_context), context.message)
        announced = self.announcer.announce(result, self.modes.level(caller))
        return self.resolution.advertise(announced) if self.resolution is not None else announced

    def close(self) -> None:
        """Stop the watcher for good (it also stops by itself when the server stops) and take
        the resource, template, bridge and prompt this middleware added out of the server."""
        self.preload.stop()  # it runs on the watcher thread, which close() waits for
        self.hot_reload.close()
        self.components.remove()



# -- middleware that may not sit in front of ours ------------------------------------------------
HANDSHAKE_METHODS = frozenset({"initialize", "server/discover", "notifications/initialized"})


class MiddlewareOrderError(MCPError):
    """ProgressiveDisclosure cannot serve as set up: it sits behind middleware that would
    bypass its gate, it was added twice, or a server tool has a bridge's name.

    A JSON-RPC error (not a masked internal error) so the client sees the fix.
    """

    def __init__(self, message: str) -> None:
        super().__init__(code=-32603, message=message)


def misordered(chain: Sequence[Any], middleware: Any) -> str | None:
    """What is wrong with ``middleware``'s place in ``chain``, or None when nothing is.

    ``add_middleware`` appends, so ``ProgressiveDisclosure`` often lands behind middleware
    added earlier. Most of it is fine there (``AuthMiddleware`` looks our components up
    like any other). A ``ResponseCachingMiddleware`` in front is not: it would replay one
    caller's listing, description read or tool result to another without reaching the
    gate, which means lockouts and calls that skip the gate. Whichever methods it was told
    to cache: which ones is not public (its settings are constructor arguments only), and
    the fix, ProgressiveDisclosure first, is right for every configuration.
    """
    position = next((i for i, m in enumerate(chain) if m is middleware), None)
    if position is None:
        return None
    if any(m is not middleware and isinstance(m, ProgressiveDisclosure) for m in chain):
        return ("ProgressiveDisclosure was added to this server twice: each would add its "
                "own bridge and gate every call again. Add it once (one "
                "mcp.add_middleware(ProgressiveDisclosure(...)), with every setting there).")
    for outer in chain[:position]:
        if isinstance(outer, ResponseCachingMiddleware):
            return (
                "ProgressiveDisclosure was added after ResponseCachingMiddleware, which "
                "caches listings, resource reads and tool results for every caller alike "
                "and would serve one caller's listing, description read or tool result to "
                "another without passing the gate. Add ProgressiveDisclosure first "
                "(mcp.add_middleware(ProgressiveDisclosure(...)) before "
                "mcp.add_middleware(ResponseCachingMiddleware(...)))."
            )
    return None


class OrderCheck:
    """``misordered`` for one middleware, asked again only when a server's list changes;
    found at the same time: whether another middleware of the list may filter listings
    (``catalog.hooks_listing``; then a tool's visibility is asked of it before a refusal).

    There is no start-up hook for middleware, so the check runs on the first request the
    server sees and refuses every request (with the fix in the message) until the order is
    right; a handshake passes, so the client connects and hears why on its next request.

    Example:
        ```python
        order = OrderCheck(middleware)
        if not order.settled(server):
            await order.check(server, "tools/list")  # MiddlewareOrderError, logged once
        ```
    """

    def __init__(self, middleware: Any) -> None:
        self._middleware = middleware
        self._in_order: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], bool]] = (
            weakref.WeakKeyDictionary())
        self._reported = False

    def settled(self, server: Any) -> bool:
        """Whether ``server``'s middleware list is the one last found in order."""
        known, chain = self._in_order.get(server), server.middleware
        return known is not None and len(known[0]) == len(chain) and all(
            seen is current for seen, current in zip(known[0], chain, strict=True))

    def filtered(self, server: Any) -> bool:
        """Whether another middleware of ``server``'s list may filter its listings (True
        while the list was never found in order: the safe answer)."""
        known = self._in_order.get(server)
        return known is None or known[1]

    async def check(self, server: Any, method: str | None = None,
                    install: Callable[[], Awaitable[None]] | None = None) -> None:
        """Refuse to serve while the middleware list is wrong (``misordered``) or our
        components cannot be added (``install``: a server tool of a bridge's name), except
        the handshake: the client connects and hears why, with the fix, on its next
        request, and the server logs it once (a traceback per request said neither)."""
        chain = tuple(server.middleware)
        problem = misordered(chain, self._middleware)
        if problem is None and install is not None:
            try:
                await install()
            except BridgeNameTaken as taken:
                problem = str(taken)
        if problem is None:
            self._in_order[server] = (chain, any(
                m is not self._middleware and hooks_listing(m) for m in chain))
            return
        if method in HANDSHAKE_METHODS:
            return
        if not self._reported:
            self._reported = True
            logger.error("%s", problem)
        raise MiddlewareOrderError(problem)
