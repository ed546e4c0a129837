"""The describe path: full definitions for a read, a ``describe_tools`` call or a refusal.

Three requests hand a tool's full definition over, and each grants what it describes to
the caller: a read of ``resource:///tool_descriptions?tools=a,b``, a call of the bridge
``describe_tools`` (the same answer as a tool, with the groups a capped listing names,
and for a ``query`` the best matching tools: ``search.py`` ranks, this module describes),
and the teaching refusal of a call the gate stopped. The dispatch bridge ``run_tool`` is
answered here too: it runs the tool it names through FastMCP's own ``call_tool``. Each
answer grants the request's caller, found once for the request (``access/caller.py``); the
components FastMCP routes (``components.py``) answer through the same methods for the paths
that skip middleware.

A tool the caller may not see answers like an unknown one, with the closest names of its
own listing (``suggestions.py``); a read never widens what a caller may see.

What a read selects: the base URI must be ours; the query is what follows the first ``?``
before any ``#`` (``#?tools=a`` is a fragment, not a query); every ``tools`` parameter counts
(``?tools=a&tools=b`` equals ``?tools=a,b``); each value is split on literal commas first and
only then percent-decoded, so ``a%2Cb`` names the one tool ``a,b``; names are trimmed, blank
ones dropped (they count toward no limit) and duplicates folded in first-seen order. Names
are not cut. The work is bounded: a query longer than ``MAX_QUERY_CHARS``, bridge names
adding up to more than that, or more than the configured number of tools is refused whole.

Names as a parent shows them: a child mounted with ``parent.mount(child, "kid")`` keeps its
middleware working, but the client speaks the parent's names (``kid_add``,
``kid_describe_tools``, ``resource://kid//tool_descriptions?tools=...``) while FastMCP hands
the child its own (``add``); the difference, the mount prefix, names the tools and the
bridge in a refusal the way the client can call them, and is taken off names in a fetch.

Example:
    ```python
    described = await describer.describe(ctx, parse_selection(uri, limit=32))
    described.text()  # the JSON body; described.granted: the tools granted
    parse_selection("resource:///tool_descriptions?tools=a,b%2Cc", limit=32)
    # Selection(names=('a', 'b,c'), count=2)
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any
from urllib.parse import unquote

import mcp_types as mt
from fastmcp.apps.config import is_model_visible
from fastmcp.exceptions import FastMCPError
from fastmcp.server.context import Context
from fastmcp.tools.base import Tool, ToolResult

from fastmcp_progressive import payloads
from fastmcp_progressive.access.caller import caller_of
from fastmcp_progressive.access.catalog import Catalog
from fastmcp_progressive.access.gate import Gate, bridge_of
from fastmcp_progressive.disclosure.bridge import dispatched_arguments
from fastmcp_progressive.disclosure.components import DisclosureComponents
from fastmcp_progressive.disclosure.groups import Groups, available_names
from fastmcp_progressive.disclosure.guidance import guidance_prompt as guidance_prompt_for
from fastmcp_progressive.disclosure.listing import Lister
from fastmcp_progressive.disclosure.search import (
    FULL_RESULTS,
    LINE_RESULTS,
    Queries,
    ToolSearch,
    found,
    queries_of,
)
from fastmcp_progressive.disclosure.suggestions import Suggestions
from fastmcp_progressive.disclosure.toolcap import ToolCap
from fastmcp_progressive.fastmcp_internals import state_storage, wire_param
from fastmcp_progressive.files.store import Definitions, compact_json
from fastmcp_progressive.log import get_logger

logger = get_logger()

MAX_QUERY_CHARS = 64 * 1024


@dataclass(frozen=True)
class Selection:
    """The names a read selects; ``count`` is how many were asked for (before any cap)."""

    names: tuple[str, ...]
    count: int
    too_long: bool = False


def parse_selection(uri: str, *, limit: int) -> Selection:
    """The tool names ``uri`` selects; ``names`` is empty when more than ``limit`` were asked.

    Over the limit, ``count`` says how many items were asked for so the error can say so.
    """
    query = uri.split("#", 1)[0].partition("?")[2]
    if len(query) > MAX_QUERY_CHARS:
        return Selection(names=(), count=query.count(",") + 1, too_long=True)
    items = [
        item
        for pair in query.split("&")
        if unquote(pair.partition("=")[0]).strip() == "tools"
        for item in pair.partition("=")[2].split(",")
    ]
    return selection_from_names([unquote(item, errors="replace") for item in items], limit=limit)


def selection_from_names(raw: list[str], *, limit: int) -> Selection:
    """The same rules for names that arrive as a list (the bridge tool's arguments)."""
    if sum(len(item) for item in raw) > MAX_QUERY_CHARS:
        return Selection(names=(), count=len(raw), too_long=True)
    names = dict.fromkeys(item for item in raw if item.strip())
    return Selection(names=tuple(names) if len(names) <= limit else (), count=len(names))


def requested_names(arguments: dict[str, Any] | None, key: str = "tools") -> list[str] | None:
    """The tool (``key="groups"``: group) names a bridge call asks for: a non-empty list of
    strings, or a string split on commas (``"a,b"`` works like ``["a", "b"]``); else None."""
    value = (arguments or {}).get(key)
    if isinstance(value, str):
        return value.split(",")
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


async def resolve_trimmed(
    names: Sequence[str], look_up: Callable[[Sequence[str]], Awaitable[dict[str, Tool | None]]]
) -> dict[str, Tool | None]:
    """``look_up(names)``, with each name that has surrounding whitespace and finds nothing
    looked up again trimmed (answered under the trimmed name; duplicates folded).

    The exact name always wins, so a tool named ``" a"`` and one named ``"a"`` are both
    reachable; a name finding nothing either way is answered under its trimmed form.
    """
    found = await look_up(names)
    retry = [name for name, value in found.items() if value is None and name != name.strip()]
    again = await look_up([name.strip() for name in retry]) if retry else {}
    resolved: dict[str, Tool | None] = {}
    for name, value in found.items():
        if value is None and name != name.strip():
            name, value = name.strip(), again.get(name.strip())
        if name not in resolved or resolved[name] is None:
            resolved[name] = value
    return resolved


# -- names through a parent's mount -------------------------------------------------------------
def call_prefix(ctx: Context | None, local_name: str) -> str:
    """The prefix the client's ``tools/call`` name has over ``local_name`` ("" if none)."""
    wire = wire_param(ctx, "name")
    if wire is None or wire == local_name or not wire.endswith(local_name):
        return ""
    return wire[: -len(local_name)]


def read_prefix(ctx: Context | None, local_uri: str) -> str:
    """The tool-name prefix of the mount a ``resources/read`` came through ("" if none):
    FastMCP's namespace turns ``resource:///x`` into ``resource://kid//x``, ``t`` into ``kid_t``."""
    wire = wire_param(ctx, "uri")
    scheme = "resource://"
    if wire is None or wire == local_uri or not wire.startswith(scheme):
        return ""
    namespace = wire[len(scheme):].split("/", 1)[0]
    return f"{namespace}_" if namespace else ""


def unprefixed(names: Sequence[str], prefix: str) -> list[str]:
    """``names`` with the mount prefix removed where present (none: as they are)."""
    return [n[len(prefix):] if n.startswith(prefix) and len(n) > len(prefix) else n
            for n in names]


def refusal_for_mount(body: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A refusal body whose resource URI (``resource:///...``) routes through the parent of
    a ``prefix`` mount (``resource://kid//...``)."""
    error = body.get("error")
    if not prefix or not isinstance(error, dict):
        return body
    uri = error.get("resource_uri")
    if isinstance(uri, str) and uri.startswith("resource:///"):
        error["resource_uri"] = f"resource://{prefix[:-1]}//" + uri[len("resource:///"):]
    return body


@dataclass
class Described:
    """A descriptions answer: its JSON body, whether the whole request was refused (an error
    body, not a map of tools: a tool may be named ``error``), and which tools it granted."""

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


class Describer:
    """Answers reads of the descriptions resource, the bridges and the teaching refusal."""

    def __init__(self, *, gate: Gate, catalog: Catalog,
                 definitions: Definitions, lister: Lister, tag_groups: bool, cap: ToolCap,
                 max_tools_per_read: int, bridge_name: str | None, dispatch_name: str | None,
                 guidance_prompt: bool = True) -> None:
        self.gate, self.catalog = gate, catalog
        self.definitions, self.lister, self.cap = definitions, lister, cap
        # the groups a capped listing names: the describer answers them (``groups`` of a
        # bridge call, ``groups/list``), the listing reads them from here
        self.groups = Groups(definitions.store, tags=tag_groups)
        self.max_tools_per_read = max_tools_per_read
        self.suggestions = Suggestions()
        self._query_refusal_said = False
        self.search = ToolSearch(definitions, lister.summary)
        self.components = DisclosureComponents(
            # the components' own answers (paths that skip the middleware's hooks): the same
            read=self.read, bridge=self.answer_bridge, bridge_name=bridge_name,
            prompt=guidance_prompt_for(bridge_name) if guidance_prompt else None,
            dispatch=self.answer_dispatch, dispatch_name=dispatch_name,
        )

    async def read(self, ctx: Context, uri: str) -> str:
        """The JSON text answering a read of ``uri`` (through a parent that mounted us too)."""
        prefix = read_prefix(ctx, uri)  # "" unmounted: every name as it is
        selection = parse_selection(uri, limit=self.max_tools_per_read)
        selection = replace(selection, names=tuple(unprefixed(selection.names, prefix)))
        return (await self.describe(ctx, selection, prefix=prefix)).text()

    async def describe(self, ctx: Context, selection: Selection, *, prefix: str = "",
                       seen: Mapping[str, Tool] | None = None) -> Described:
        """The definitions ``selection`` names, granted to the request's caller; a name in
        ``seen`` (tools this caller may see, just found: ``visible_tools``) is not looked up
        again, the others are (``Catalog.tools``)."""
        if selection.too_long:
            return Described(payloads.query_too_long(MAX_QUERY_CHARS), refused=True)
        if selection.count > self.max_tools_per_read:
            body = payloads.too_many_tools(selection.count, self.max_tools_per_read)
            return Described(body, refused=True)
        if selection.count == 0:
            return Described(payloads.missing_selection(await self.available(ctx)),
                             refused=True)
        described = Described({})
        found = await resolve_trimmed(selection.names, partial(self._tools, ctx, seen or {}))
        # the caller's own listing, asked once per read and only when a name is not in it:
        # a hidden name and an unknown one are answered from it alike (suggestions.py)
        visible = await self.available(ctx) if None in found.values() else []
        for name, tool in found.items():
            if tool is None:
                closest = self.suggestions.closest(name, visible)
                described.body[name] = payloads.unknown_tool(name, [prefix + n for n in closest])
            else:
                described.body[name], described.texts[name] = self.definitions.for_tool(tool)
                if bridge_of(tool, self.components.kinds) is None:
                    described.granted.append(name)  # never our bridges: the gate runs a
                    # granted name without looking it up (``access/gate.py``, rule 0)
        await self.gate.grant(caller_of(ctx), described.granted, partial(state_storage, ctx))
        await self._list_described(ctx, described.granted)
        return described

    async def _tools(self, ctx: Context, seen: Mapping[str, Tool], names: Sequence[str]
                     ) -> dict[str, Tool | None]:
        """Each of ``names``' tool as this caller may see it: from ``seen``, else looked up."""
        looked = await self.catalog.tools(ctx, [n for n in names if n not in seen])
        return {name: seen[name] if name in seen else looked[name] for name in names}

    async def available(self, ctx: Context) -> list[str]:
        """The tools worth describing to this caller: its listing minus the bridges (none
        when a listing filter fails: never wider than the caller's listing)."""
        try:
            names = await self.catalog.names(ctx)
        except Exception:
            logger.exception("listing this caller's tools failed; suggesting none")
            return []
        return [n for n in names if n not in self.components.names]

    async def _list_described(self, ctx: Context, names: list[str]) -> None:
        """Put tools just described in a followable caller's capped listing, without
        ``notifications/tools/list_changed`` (``toolcap.py`` says why, and how hosts that
        never re-list reach them)."""
        largest = self.cap.largest_listing
        if not names or 0 < largest <= self.cap.uncapped_size:
            return  # every listing of this server fits every cap
        caller = caller_of(ctx)
        modes = self.gate.modes
        limit = self.cap.limit(modes.profile(caller), modes.level(caller), largest)
        if limit is None or 0 < largest < limit:
            return  # every listing of this server fits this caller's cap (and a bridge)
        await self.cap.add(caller, names, limit, partial(state_storage, ctx))

    async def answer_bridge(self, ctx: Context, arguments: dict[str, Any] | None
                            ) -> ToolResult:
        """``describe_tools``: the definitions it names (``tools``) and finds (``query``),
        and (``groups``) the groups it names."""
        names = requested_names(arguments)
        group_names = requested_names(arguments, "groups")
        query = queries_of(arguments or {})
        if isinstance(query, str):
            return error_result(payloads.invalid_query(query))
        if query is not None and self._listed_every_tool(ctx):
            return error_result(payloads.invalid_query(payloads.QUERY_NOT_OFFERED))
        if names is None and group_names is None and query is None:
            return error_result(payloads.missing_selection(await self.available(ctx)))
        groups: dict[str, Any] | None = None
        visible: list[Tool] | None = None
        if group_names is not None:
            if len(group_names) > self.max_tools_per_read:
                return error_result(payloads.too_many_tools(len(group_names),
                                                            self.max_tools_per_read))
            visible = await self.visible_tools(ctx)
            groups = self.groups.answer_groups(group_names, visible, ctx.fastmcp, self._line_of)
            if names is None and query is None:
                return _answer(compact_json(groups))
        bridge = self.components.bridge_name
        prefix = call_prefix(ctx, bridge) if bridge is not None else ""
        named = unprefixed(names or [], prefix)
        if query is None:
            return await self._described(ctx, named, prefix, groups)
        if len(named) > self.max_tools_per_read:
            return error_result(payloads.too_many_tools(len(named), self.max_tools_per_read))
        return await self._found(ctx, named, query, prefix, groups,
                                 visible if visible is not None else await self.visible_tools(ctx))

    async def _described(self, ctx: Context, names: list[str], prefix: str,
                         groups: dict[str, Any] | None) -> ToolResult:
        """The answer naming tools: their definitions (with ``groups``' answer, if any)."""
        described = await self.describe(
            ctx, selection_from_names(names, limit=self.max_tools_per_read), prefix=prefix)
        if described.refused:
            return error_result(described.body)
        if groups is not None:
            return _answer(compact_json({"tools": described.body, **groups}))
        return _answer(described.text())

    async def _found(self, ctx: Context, named: list[str], query: Queries, prefix: str,
                     groups: dict[str, Any] | None, visible: list[Tool]) -> ToolResult:
        """The answer to queries: ``tools`` holds the named tools, then the best matches
        among the tools this caller may see (full definitions, granted like a read: the
        best one, and the next while they fit ``ANSWER_CHARS``; as many as one read may
        name), ``more_tools`` the next matches one line each (``search.py:found``); for
        several queries ``matches`` says which tools each found."""
        room = max(0, min(FULL_RESULTS, self.max_tools_per_read - len(named)))
        ranked = await self.search.rank(visible, query.texts, len(named) + room + LINE_RESULTS)
        by_name = {tool.name: tool for tool in visible}
        answer = found(query.texts, ranked, named, room,
                       lambda name: len(self.definitions.for_tool(by_name[name])[1]))
        chosen = [*dict.fromkeys([*named, *answer.full])]
        described = (await self.describe(  # the ranked tools were just found: not again
            ctx, selection_from_names(chosen, limit=self.max_tools_per_read), prefix=prefix,
            seen=by_name) if chosen else Described({}))
        if described.refused:
            return error_result(described.body)
        body: dict[str, Any] = {"tools": described.body}
        more = {prefix + name: self._line_of(by_name[name])
                for name in answer.lines if name in by_name}
        if more:
            body["more_tools"] = more
        if len(query.texts) > 1:
            body["matches"] = {text: [prefix + name for name in names]
                               for text, names in answer.matches.items()}
        body.update(query.notes())
        if not any(ranked):
            listed = [g.name for g in self.groups.listed(visible, ctx.fastmcp)]
            body.update(payloads.no_match(prefix + (self.components.bridge_name or ""),
                                          available_names(listed)))
        if groups is not None:
            body.update(groups)
        return _answer(compact_json(body))

    def _line_of(self, tool: Tool) -> str:
        """``tool``'s listing line (its file's, else its own first sentence)."""
        return self.lister.summary(tool, self.lister.store.signature(tool.name))

    async def visible_tools(self, ctx: Context) -> list[Tool]:
        """Every tool this caller may see, as registered (our bridges left out): FastMCP's
        own listing without middleware (providers, transforms, visibility, component auth),
        then what the other middleware's listing filters keep (``catalog.py``); a quarter
        of a listing through the whole chain at 10,000 tools."""
        first: dict[str, Tool] = {}
        kinds = self.components.kinds  # ours by the function they run (copies included)
        for tool in await ctx.fastmcp.list_tools(run_middleware=False):
            if bridge_of(tool, kinds) is None and is_model_visible(tool):
                first.setdefault(tool.name, tool)  # an MCP Apps app-only tool is the app's
        return await self.catalog.keep_visible(ctx, list(first.values()))

    async def answer_groups_list(self, ctx: Context, params: Any) -> dict[str, Any]:
        """``groups/list``: the groups of the tools this caller may see, one page."""
        groups = self.groups.listed(await self.visible_tools(ctx), ctx.fastmcp)
        return self.groups.page(groups, params, ctx.fastmcp, caller_of(ctx))

    async def answer_dispatch(self, ctx: Context, arguments: dict[str, Any] | None
                              ) -> ToolResult:
        """Run the tool ``arguments["name"]`` names through FastMCP's own ``call_tool``:
        the middleware chain (this gate included), component auth and logs see it under
        its own name. A tool this caller may not see answers like an unknown one."""
        dispatch = self.components.dispatch_name
        name, inner = (arguments or {}).get("name"), (arguments or {}).get("arguments")
        inner = {} if inner is None else inner
        if not isinstance(name, str) or not name or not isinstance(inner, dict):
            return error_result(payloads.dispatch_usage(dispatch or payloads.DISPATCH_TOOL_NAME))
        if name == dispatch:
            return error_result(payloads.dispatch_usage(name))
        if not await self._capped(ctx):
            return error_result(payloads.dispatch_not_offered(name))
        tool = await self.catalog.tool(ctx, name)
        if tool is None or not is_model_visible(tool):
            return error_result(payloads.dispatch_unknown(name, self.components.bridge_name))
        try:
            return await ctx.fastmcp.call_tool(name, dispatched_arguments(name, inner))
        except FastMCPError as exc:
            return error_result(payloads.dispatch_failed(name, str(exc)))

    def _listed_every_tool(self, ctx: Context) -> bool:
        """Whether this caller's host profile lists it every tool (``max_tools=None``: FastMCP's
        client, mcp-use, its CLI): it needs no query, and behind a FastMCP proxy (its client)
        the middleware cannot know what the proxy hides, so it ranks nothing (logged once)."""
        profile = self.gate.modes.profile(caller_of(ctx))
        if profile is None or profile.max_tools is not None:
            return False
        if not self._query_refusal_said:
            self._query_refusal_said = True
            logger.info("progressive disclosure: %s is listed every tool and offered no query "
                        "or run_tool (behind a proxy this server cannot know what it hides; "
                        "docs/deployment.md)", profile.name)
        return True

    async def _capped(self, ctx: Context) -> bool:
        """Whether this caller's listing leaves tools out, the only reason ``run_tool`` exists
        (a caller shown every tool calls each by its own name). A process that never listed
        counts what the caller may see, not by listing for it (a one-call session would then
        look like one that lists, then calls)."""
        caller = caller_of(ctx)
        largest = self.cap.largest_listing or len(await self.visible_tools(ctx))
        limit = self.cap.limit(self.gate.modes.profile(caller),
                               self.gate.modes.level(caller), largest)
        return limit is not None and largest >= limit

    def refusal(self, ctx: Context, name: str, definition: dict[str, Any], *,
                problem: str | None = None, mounted: bool = True) -> ToolResult:
        """The teaching refusal, in the names a parent that mounted us shows (a hashed
        backend name is not a mount prefix)."""
        prefix = call_prefix(ctx, name) if mounted else ""
        bridge_name = self.components.bridge_name
        bridge = prefix + bridge_name if bridge_name else None
        body = payloads.description_required(prefix + name, bridge, definition=definition,
                                             problem=problem)
        return error_result(refusal_for_mount(body, prefix))


def _answer(text: str) -> ToolResult:
    """A bridge's answer: its JSON once, as text. No ``structuredContent`` (no output schema):
    hosts that show the whole ``CallToolResult`` (LlamaIndex) would show the body twice."""
    return ToolResult(content=[mt.TextContent(type="text", text=text)])


def error_result(body: dict[str, Any]) -> ToolResult:
    """A tool-execution error whose text and structuredContent carry the same JSON body:
    refusals are small, and clients branch on ``structuredContent.error.code``. Made by
    pydantic's ``model_construct``: ``ToolResult(...)`` writes a structured result to JSON
    and back (its guard for a tool's return value); ours is JSON values already (#35)."""
    return ToolResult.model_construct(content=[mt.TextContent(
        type="text", text=compact_json(body))], structured_content=body, is_error=True)

