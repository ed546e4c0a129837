"""The ``tools/list`` path: what one caller's listing holds, from FastMCP's listing.

A caller served ``full`` (compatibility mode, a host that defers tools itself) gets the
listing as registered, without our bridges; everyone else the reduced listing of their
level (``listing.py``), exempt tools in full, the bridge ``describe_tools`` added when a
transform replaced the listing. A listing of more tools than the caller's budget allows
(``toolcap.py``: ``ListingSettings.max_tools``, a host's cap) is capped: pinned and exempt
tools, the bridges (the bridge's description then names every group the caller may see),
and the tools it keeps or this server's most called. Each listing is marked with the
grouping extension's fields, and a legacy session remembers which lines it was shown, so
the hot reload tells it only about those.

The listing's own parts are built here, by the part that uses them (#35): the hot reload
(``hot_reload.py``, whose watcher thread first runs the lister's preload) and the net-cost
check (``cost.py``); the handshake's word on the listing is ``announce.py``'s.

Every step reads the request's caller where ``on_message`` put it (``access/caller.py``).

Example:
    ```python
    listed = await tools_list.answer(ctx, await call_next(context))
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from functools import partial

from fastmcp.server.context import Context
from fastmcp.tools.base import Tool

from fastmcp_progressive.access.caller import Caller, caller_of
from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.gate import Gate, gateways_of
from fastmcp_progressive.disclosure.bridge import (
    bridge_description_with_groups,
    listed_bridge_schema,
)
from fastmcp_progressive.disclosure.components import DisclosureComponents, same_component
from fastmcp_progressive.disclosure.cost import NetCost
from fastmcp_progressive.disclosure.groups import Groups
from fastmcp_progressive.disclosure.hot_reload import HotReload
from fastmcp_progressive.disclosure.listing import ListedTool, Lister
from fastmcp_progressive.disclosure.toolcap import ToolCap
from fastmcp_progressive.fastmcp_internals import (
    serving_tool_call,
    state_storage,
    whole_catalog,
)
from fastmcp_progressive.files.store import Signature
from fastmcp_progressive.hosts import Level
from fastmcp_progressive.log import get_logger

logger = get_logger("cost")

Marks = Callable[[Caller, Sequence[Tool], Mapping[str, Signature] | None], Sequence[Tool]]
"""A higher wing's marks on a listing (tool resolution's ``_meta``), given by the middleware;
the mapping: the file signatures the listing was made from, when it has them."""


class ToolsList:
    """Answers ``tools/list`` for one caller (see the module docstring)."""

    def __init__(self, *, lister: Lister, gate: Gate, catalog: Catalog, groups: Groups,
                 cap: ToolCap, components: DisclosureComponents, marks: Marks | None = None,
                 instructions: str | None = None) -> None:
        self.lister, self.gate, self.catalog = lister, gate, catalog
        self.groups, self.cap, self.components, self.marks = groups, cap, components, marks
        self.instructions = instructions
        """The workflow paragraph a handshake adds below ``full`` (None: off)."""
        self.hot_reload = HotReload(lister)  # its watcher thread preloads first
        self.net_cost = NetCost(components, instructions)
        # our bridges as listings show them, built once (which arguments where: bridge.py)
        self._listed_dispatch = _listed(components.dispatch, ("name", "arguments"), whole=True)
        self._plain_bridge = _listed(components.bridge, ("tools", "query"))
        self._listers: dict[tuple[Level, bool], Lister] = {(lister.settings.level, False): lister}
        self._bridge_copy: tuple[tuple[str, ...], Tool] | None = None
        self._shown: dict[Lister, tuple[tuple[Tool, ...], ...]] = {}  # reduced, shown, plain

    async def answer(self, ctx: Context | None, tools: Sequence[Tool]) -> Sequence[Tool]:
        """What the caller of ``ctx``'s request is shown of ``tools`` (FastMCP's listing);
        passed on as is for our own catalog query or a catalog built inside a tool call."""
        if self.catalog.passthrough() or serving_tool_call():
            return tools
        caller = caller_of(ctx)
        level = self.gate.modes.level(caller)
        profile = self.gate.modes.profile(caller)
        limit: int | None = None
        if level == "full":
            own = [t for t in tools if not self.components.is_ours(t)]
            limit = self.cap.limit(profile, level, len(own))
            if limit is None or len(own) <= limit:
                return self._mark(ctx, caller, own)
            # a host that defers tools itself but takes fewer than this server lists: in
            # full it would drop tools unseen, so it gets the capped progressive listing
            level = self.lister.settings.level
        exempt = self.gate.exempt_tools | self.components.names
        if ctx is not None:
            exempt |= await gateways_of(ctx.fastmcp)
        lister = self._lister(level, profile is not None and profile.output_schema)
        with self.lister.holding_preload():  # the files this listing needs: parsed here, once
            reduced, signatures = lister.reduced(tools, exempt)
        if ctx is not None and caller.kind == "session" and self.hot_reload.enabled:
            await self._remember_listing(ctx, caller, [t for t in tools if t.name not in exempt])
        if ctx is not None and not self.net_cost.started and self.net_cost.claim():
            await self._check_cost(ctx, tools, exempt)
        shown, plain = self._with_bridges(lister, reduced)
        count = len(shown) - (self.components.bridge is not None)  # shown has the bridge
        self.cap.note_listing(count)
        if limit is None:
            limit = self.cap.limit(profile, level, count)
        if limit is not None and ctx is not None and len(shown) > limit:
            return self._mark(ctx, caller,
                              await self._capped(ctx, caller, tools, list(shown), limit),
                              signatures)
        return self._mark(ctx, caller, list(plain), signatures)

    def close(self) -> None:
        """Stop the preload and the watcher for good (``close()`` waits for its thread)."""
        self.lister.stop_preload()
        self.hot_reload.close()

    async def _check_cost(self, ctx: Context, tools: Sequence[Tool],
                          exempt: Collection[str]) -> None:
        """Start the net-cost check on the server's whole catalog at the server's own level
        (not this caller's view ``tools``: one who may see 2 of 62 tools would be told a
        budgeted server costs more than it saves); none when that listing is budgeted. The
        catalog is listed once per process (a proxy: one more upstream ``tools/list``), and
        not at all when this caller's view is budgeted already (the catalog holds it)."""
        catalog: list[Tool] | None = None
        if not self._budgeted([t for t in tools if not self.components.is_ours(t)]):
            try:
                catalog = [t for t in await whole_catalog(ctx.fastmcp)
                           if not self.components.is_ours(t)]
            except Exception:
                logger.debug("listing the catalog for the net-cost check failed", exc_info=True)
        if catalog is None or self._budgeted(catalog):  # a budgeted listing always saves
            self.net_cost.skip()
            return
        with self.lister.holding_preload():
            reduced, _ = self.lister.reduced(catalog, exempt, remember=False)
        _, plain = self._with_bridges(self.lister, reduced, remember=False)
        await self.net_cost.check(catalog, plain)

    def _budgeted(self, tools: Sequence[Tool]) -> bool:
        """Whether a listing of ``tools`` (ours left out) at the server's level, with the
        bridge, is above the server's budget."""
        budget = self.cap.limit(None, self.lister.settings.level, len(tools))
        return budget is not None and len(tools) + 1 > budget

    def _with_bridges(self, lister: Lister, reduced: tuple[Tool, ...], *,
                      remember: bool = True) -> tuple[tuple[Tool, ...], tuple[Tool, ...]]:
        """``reduced`` with the bridge added where a transform replaced the listing and the
        dispatch bridge left out, and that listing with the bridge as an uncapped listing
        shows it (``_plain_bridge``). The lister keeps ``reduced`` as one object while
        nothing changes, so both are derived once per change, not per listing (they depend
        on no caller; one per lister)."""
        known = self._shown.get(lister)  # our bridges are made once, with the components
        if known is not None and known[0] is reduced:
            return known[1], known[2]
        bridge, dispatch = self.components.bridge, self.components.dispatch
        shown = list(reduced)
        if bridge is not None and all(t.name != bridge.name for t in reduced):
            shown.append(bridge)  # e.g. a search transform replaced the listing
        if dispatch is not None:
            shown = [t for t in shown
                     if t.name != dispatch.name or not same_component(t, dispatch)]
        plain = shown
        if bridge is not None and (plain_bridge := self._plain_bridge) is not None:
            plain = [plain_bridge if t.name == bridge.name
                     and same_component(t, bridge) else t for t in shown]
        if remember:
            self._shown[lister] = (reduced, tuple(shown), tuple(plain))
        return tuple(shown), tuple(plain)

    def _mark(self, ctx: Context | None, caller: Caller, tools: Sequence[Tool],
              known: Mapping[str, Signature] | None = None) -> Sequence[Tool]:
        """The listing with the marks of the extensions this request's client speaks
        (grouping here, tool resolution through ``marks``); ``known``: the signatures
        of the files the listing was made from (each file stat'ed once per listing)."""
        if ctx is None or not caller.extensions:  # a client that speaks none: no marks
            return tools
        tools = self.groups.mark(caller, tools, ctx.fastmcp, known)
        return tools if self.marks is None else self.marks(caller, tools, known)

    def _lister(self, level: Level, output_schemas: bool = False) -> Lister:
        """The lister (and its memo) for one progressive level, keeping each tool's
        ``outputSchema`` or not (a host profile's ``output_schema``), made on first use."""
        lister = self._listers.get((level, output_schemas))
        if lister is None:
            lister = Lister(self.lister.store, replace(self.lister.settings, level=level),
                            cache_size=self.lister.cache_size, output_schemas=output_schemas)
            lister.share_file_facts(self.lister)  # what the preload read serves every level
            self._listers[level, output_schemas] = lister
        return lister

    async def _remember_listing(self, ctx: Context, caller: Caller, shown: list[Tool]) -> None:
        """Which reduced lines this legacy session sees, after any middleware outside us
        filters them: its ``tools/list_changed`` notifications follow only those."""
        names = frozenset(await self.catalog.visible(ctx, shown))
        sessions = self.hot_reload.sessions
        if caller.key is not None and sessions.shown.get(caller.key) != names:
            sessions.listed(caller.key, names)  # a warm listing showing the same: no call

    # -- a listing within a tool cap (toolcap.py) ----------------------------------------
    async def _capped(self, ctx: Context, caller: Caller, tools: Sequence[Tool],
                      reduced: Sequence[Tool], limit: int) -> list[Tool]:
        """At most ``limit`` entries: pinned and exempt tools, the bridges, then the tools
        this caller keeps in its listing (or this server's most called), in listing order."""
        ours = self.components.names
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
        bridges = [t for t in (await self._bridge_naming_groups(ctx, tools),
                               self._listed_dispatch) if t is not None]
        chosen = set(await self.cap.choose(caller, candidates, limit - len(fixed) - len(bridges),
                                           partial(state_storage, ctx)))
        kept = [t for t in reduced
                if t.name not in ours and (t.name in fixed or t.name in chosen)]
        return [*kept, *bridges]

    async def _bridge_naming_groups(self, ctx: Context, tools: Sequence[Tool]) -> Tool | None:
        """The bridge as a capped listing shows it: its description names every group the
        caller may see, one line each (none: no ``groups`` argument, no header)."""
        bridge = self.components.bridge
        if bridge is None:
            return None
        visible = await self.catalog.keep_visible(
            ctx, [t for t in tools if not self.components.is_ours(t)])
        members = self.groups.members(visible, ctx.fastmcp)
        lines = tuple(
            f"{g.name}: {g.line() or describe_members(g.name, members.get(g.name, []))}"
            for g in self.groups.listed(visible, ctx.fastmcp))
        known = self._bridge_copy
        if known is not None and known[0] == lines:
            return known[1]
        description = bridge_description_with_groups(list(lines), self.components.dispatch_name)
        schema = listed_bridge_schema(bridge, ("tools", "groups", "query", "queries") if lines
                                      else ("tools", "query", "queries"))
        copy = ListedTool.of(bridge, {"description": description, "parameters": schema})
        self._bridge_copy = (lines, copy)
        return copy


def describe_members(group: str, tools: Sequence[Tool], count: int = 3) -> str:
    """A group with no description in a line: how many tools it has and a few names."""
    names = [t.name.removeprefix(f"{group}_") for t in tools[:count]]
    more = ", ..." if len(tools) > count else ""
    return f"{len(tools)} tools ({', '.join(names)}{more})" if tools else "nested groups"


def _listed(bridge: Tool | None, arguments: tuple[str, ...], *, whole: bool = False
            ) -> Tool | None:
    """A bridge as a listing shows it, offering ``arguments`` (``whole``: over the rest of
    its registered schema), without the name-derived title and the empty tags FastMCP adds
    (a listed copy strips them): every client is sent it."""
    if bridge is None:
        return None
    schema = listed_bridge_schema(bridge, arguments)
    return ListedTool.of(bridge, {"parameters": {**bridge.parameters, **schema} if whole
                                  else schema})
