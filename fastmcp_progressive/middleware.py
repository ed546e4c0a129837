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
once and asks the gate (``access/gate.py``), which decides on them alone; the listing and
the descriptions are answered in ``disclosure/tools_list.py`` and ``disclosure/describer.py``.
Its parts are built in ``assembly.py``; ``order.py`` refuses to serve behind middleware
that would bypass the gate. Its example is the package's (``fastmcp_progressive/__init__.py``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Literal, Never

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.resources import ResourceResult
from fastmcp.resources.base import ResourceContent
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult

from fastmcp_progressive import payloads
from fastmcp_progressive.access.caller import caller_of, note_request, serving
from fastmcp_progressive.access.gate import (
    CallFacts,
    Found,
    ServerFacts,
    find_tool,
    gateways_of,
    let_through,
    nested_call,
    registered,
    same,
)
from fastmcp_progressive.assembly import assemble
from fastmcp_progressive.caches import server_slots
from fastmcp_progressive.disclosure.announce import announce, announcing_to
from fastmcp_progressive.disclosure.components import DisclosureComponents, install
from fastmcp_progressive.disclosure.cost import NetCost
from fastmcp_progressive.disclosure.describer import error_result
from fastmcp_progressive.disclosure.groups import GROUPS_LIST_METHOD
from fastmcp_progressive.fastmcp_internals import state_storage
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.order import InOrder, OrderCheck
from fastmcp_progressive.resolution.server import RESOLUTION_EXTENSION_ID, RESOLVE_METHOD
from fastmcp_progressive.settings import (
    AddedComponents,
    CacheSettings,
    ClientSettings,
    GrantSettings,
    ListingSettings,
    ResolutionSettings,
    unknown_options,
)


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
        parts = assemble(self, descriptions_dir, listing=listing, grants=grants,
                         clients=clients, caches=caches, added=added, resolution=resolution,
                         exempt_tools=exempt_tools)
        self._gate, self.catalog, self.describer = parts.gate, parts.catalog, parts.describer
        self._tools_list, self.resolution = parts.tools_list, parts.resolution
        self._order = OrderCheck(self)

    # read by the CLI's token count (``cli/tokens.py``) where their owners keep them
    @property
    def store(self) -> DescriptionStore:
        return self._gate.definitions.store

    @property
    def components(self) -> DisclosureComponents:
        return self.describer.components

    @property
    def net_cost(self) -> NetCost:
        return self._tools_list.net_cost

    @property
    def instructions(self) -> str | None:
        """The workflow paragraph the handshake carries (None: ``added.instructions`` off)."""
        return self._tools_list.instructions

    # -- every message: the caller, identified once for the whole pass --------------------------
    async def on_message(self, context: MiddlewareContext[Any],
                         call_next: CallNext[Any, Any]) -> Any:
        ctx = context.fastmcp_context
        with serving(ctx) as caller:
            if ctx is not None and self._in_order(ctx.fastmcp) is None:
                await self._order.check(ctx.fastmcp, context.method, partial(
                    install, self, ctx.fastmcp, self.describer.components))
            hot = self._tools_list.hot_reload  # a warm request: a cheap check, no watcher work
            if hot.enabled and ctx is not None and (hot.last_server() is not ctx.fastmcp or (
                    caller.key if caller.kind == "session" else caller.kind) not in hot.settled):
                hot.observe(ctx, caller)
            if context.type == "request":
                modes = self._gate.modes
                if ctx is not None and modes.resolver is not None:
                    await modes.prepare(caller)  # the operator's resolver, off the loop
                # the first request of a session tells a kept session from a one-call one
                note_request(caller, context.method or "")
            return await call_next(context)

    def _in_order(self, server: FastMCP[Any]) -> InOrder | None:
        """``server``'s list as last found in order (``order.py``) while it is still that
        list, else None. Read here (its ``per_server`` slot): a warm request skips order.py."""
        known: InOrder | None = (server_slots(server) or {}).get(self._order.slot)
        return known if known is not None and same(known[0], server.middleware) else None

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
        kinds = self.describer.components.kinds  # our bridges, by the function each runs
        known = self._in_order(server)  # another middleware may filter listings (or unknown)
        facts = CallFacts(caller_of(ctx), name, arguments=context.message.arguments,
                          nested=nested_call(), server=ServerFacts(
            gateways=await gateways_of(server), state_store=partial(state_storage, ctx),
            shown=partial(self.catalog.shown, ctx) if known is None or known[1] else None,
            ours=self.describer.components.names))
        if self._gate.runs_unlooked(facts.caller, name, facts.server):
            facts = replace(facts, held=True)  # rule 0: FastMCP's call path finds it
        elif ((kept := registered(server, name, kinds)) is not None
              and not self._gate.follows(facts.caller, name, facts.server)):
            facts = replace(facts, found=kept, recalled=True)
        else:
            facts = replace(facts, found=await find_tool(server, name, kinds))
        verdict = await self._gate.decide(facts)
        if verdict.outcome == "look_again":  # the tool as registered cannot settle it
            facts = replace(facts, found=await find_tool(server, name, kinds), recalled=False)
            verdict = await self._gate.decide(facts)
        if verdict.outcome == "bridge":
            return await self.describer.answer_bridge(ctx, facts.arguments)
        if verdict.outcome == "dispatch":
            return await self.describer.answer_dispatch(ctx, facts.arguments)
        if verdict.proceeds:
            result = await let_through(call_next)(context)  # and so do the calls it nests
            # counted once it ran (FastMCP's validation, its lookup and the middleware inside
            # raise otherwise), and never a name the gate found hidden from this caller
            cap = self.describer.cap
            if facts.counted and verdict.outcome != "unknown" and cap.possible:
                cap.note_call(facts.found.name if facts.found else name)
            return result
        if verdict.outcome == "store_unavailable" or verdict.definition is None:
            return error_result(payloads.store_unavailable())
        found = facts.found or Found(None, name)  # a refusal rests on a fresh lookup
        return self.describer.refusal(ctx, found.name, verdict.definition,
                                      problem=verdict.problem, mounted=not found.hashed)

    # -- tools/list and what a client served in full is shown of ours ---------------------------
    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        return await self._tools_list.answer(context.fastmcp_context, await call_next(context))

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
                and self._gate.modes.level(caller_of(context.fastmcp_context)) == "full")
        return self.describer.components.shown(listed, kind, full=full)

    async def on_read_resource(
        self,
        context: MiddlewareContext[mt.ReadResourceRequestParams],
        call_next: CallNext[mt.ReadResourceRequestParams, ResourceResult],
    ) -> ResourceResult:
        uri = str(context.message.uri)
        ctx = context.fastmcp_context
        if not payloads.is_descriptions_uri(uri) or ctx is None:
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

    async def on_discover(self, context: MiddlewareContext[Any],
                          call_next: CallNext[Any, Any]) -> Any:
        result = await call_next(context)
        caller = announcing_to(caller_of(context.fastmcp_context), context.message)
        served = [RESOLUTION_EXTENSION_ID] if self.resolution is not None else []
        return announce(result, self._gate.modes.level(caller), self.components.bridge_name,
                        self.instructions, *served)

    on_initialize = on_discover  # the handshake era's answer is announced alike

    def close(self) -> None:
        """Stop the watcher for good (it also stops by itself when the server stops) and take
        the resource, template, bridge and prompt this middleware added out of the server."""
        self._tools_list.close()  # the preload runs on the watcher thread: both stop
        self.describer.components.remove()

