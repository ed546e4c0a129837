"""A listing within a budget: a large catalog lists some tools, and every tool stays reachable.

A model pays for every listed tool on every request; hosts cap what they take (Cursor about
40 tools, VS Code 128 per request; Codex defers at 100). ``ListingSettings.max_tools``
decides how many entries a progressive listing holds (``limit``; its values: its docstring).
Its default ``"auto"`` lists every tool while the caller may see at most ``BUDGET_THRESHOLD``
(50) tools, so small servers list exactly as they would without a budget, and above it at
most ``BUDGET`` (20) entries (``docs/listing.md`` gives the measurements behind both).

A host profile (``hosts.py``) chooses for its clients instead of ``"auto"``: its own cap
(Cursor 40) or ``None`` (mcp-use: every tool); with an int server setting the lower cap
applies. Clients served ``full`` (hosts that defer tools themselves) are never budgeted
automatically, only by an int (theirs or the server's).

A capped listing holds, in listing order:

1. the pinned and exempt tools (``always_load``, FastMCP's gateway transforms);
2. the ``describe_tools`` bridge, whose description then names every group the caller may
   see (``groups.py``), and the ``run_tool`` dispatch bridge;
3. the tools this caller has in its listing (a caller the server can follow: a handshake
   session, an authenticated principal), most recently described first; a new caller's
   listing starts as the tools callers on this server called most;
4. the rest of the entries (and every entry of a caller the server cannot follow, whose
   listing must not vary per connection): the tools callers on this server called most,
   the same for all of them; ties, and a server with no calls counted yet, in the
   server's own listing order (FastMCP's: registration order), so a new server's listing
   is its first tools and the server author decides it by the order of registration, or
   by pins.

"Called most" is a snapshot of this process's call counts, taken at most once an hour
(``POPULAR_REFRESH``), so no listing changes as a side effect of a connection's own calls
(2026-07-28), and two listings minutes apart agree (deterministic order, cache-friendly).

Describing a tool (bridge or resource) adds it to a followable caller's listing, in front;
the least recently added unpinned entries leave. No ``notifications/tools/list_changed`` is
sent for it: Semantic Kernel's MCP plugins deadlock on that notification (they await
``tools/list`` inside the receive loop). A host that re-lists on its own (AutoGen's
``McpWorkbench`` before every turn, the OpenAI Agents SDK) then calls the tool by its own
name; a caller's entries live where its grants live (``grants.py``: in memory per session,
or in the key-value store, so replicas behind a load balancer show the same listing).

Hosts that never re-list (LangChain, LlamaIndex, smolagents) and 2026-07-28 callers reach
every other tool through the dispatch bridge: ``run_tool({"name": ..., "arguments": {...}})``
runs the named tool through FastMCP's own ``call_tool`` (the middleware chain, our gate,
component auth and logs all see the real tool's name), after the same visibility check as a
read. Its ``arguments`` is listed as a plain ``{"type": "object"}``: smolagents types any
other shape as a string and rejects the model's object.

Example:
    ```python
    ProgressiveDisclosure(listing=ListingSettings(max_tools=40))    # always at most 40
    ProgressiveDisclosure(listing=ListingSettings(max_tools=None))  # every tool, always
    ```
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Collection, Sequence

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import GrantStore, ServerStore
from fastmcp_progressive.hosts import (
    AUTO,
    BUDGET,
    BUDGET_THRESHOLD,
    HOST_PROFILES,
    HostProfile,
    Level,
    ToolBudget,
)

POPULAR_REFRESH = 3600.0
"""Seconds between snapshots of the call counts a new caller's listing starts from."""
MAX_COUNTED = 100_000
"""Most distinct tool names whose calls are counted (then the counts start over)."""
MAX_COUNTED_CHARS = 1_000_000
"""Most characters of distinct tool names counted at once (then the counts start over): a
server may name its tools at any length (a proxied upstream's 100,000-character name)."""


class ToolCap:
    """Chooses a capped listing's entries and keeps each followable caller's."""

    def __init__(self, grants: GrantStore, max_tools: ToolBudget = AUTO,
                 host_profiles: Collection[HostProfile] = HOST_PROFILES) -> None:
        self.grants = grants
        self.max_tools = max_tools
        caps = [row.max_tools for row in host_profiles if isinstance(row.max_tools, int)]
        self._host_capped = bool(caps)
        if isinstance(max_tools, int):
            caps.append(max_tools)
        bounds = [cap - 1 for cap in caps] + ([BUDGET_THRESHOLD] if max_tools == AUTO else [])
        self.uncapped_size = min(bounds) if bounds else sys.maxsize
        """The most tools a listing may hold with no caller's listing capped: a server
        whose listings all fit adds no described tool to any caller's listing."""
        self._calls: Counter[str] = Counter()
        self._counted_chars = 0
        self._snapshot: dict[str, int] = {}
        self._snapshot_at = -POPULAR_REFRESH
        self._lock = threading.Lock()
        self.largest_listing = 0
        """The most tools a progressive listing of this server held, bridges not counted
        (0: none yet)."""

    @property
    def possible(self) -> bool:
        """Whether any caller may get a capped listing (the dispatch bridge is needed)."""
        return self.max_tools is not None or self._host_capped

    def limit(self, profile: HostProfile | None, level: Level, tools: int) -> int | None:
        """The most entries a listing of ``tools`` tools (bridges not counted) at
        ``level`` may hold for a client matching host ``profile`` (None: every tool)."""
        host = profile.max_tools if profile is not None else AUTO
        if isinstance(self.max_tools, int):  # the operator's cap: always, the lower wins
            return min(self.max_tools, host) if isinstance(host, int) else self.max_tools
        if host is None or isinstance(host, int):  # the host's own cap, or every tool
            return host
        if self.max_tools is None or level == "full" or tools <= BUDGET_THRESHOLD:
            return None  # budget off; a host that defers tools itself; a small listing
        return BUDGET

    def note_listing(self, tools: int) -> None:
        """Remember a progressive listing's number of tools: a server whose listings all
        fit a caller's cap never adds a described tool to that caller's listing."""
        self.largest_listing = max(self.largest_listing, tools)

    def note_call(self, name: str) -> None:
        """Count a call of the tool ``name`` that ran: new callers' listings start from the
        most called tools. Only a tool FastMCP found and ran is counted (``on_call_tool``,
        after the call returned): a client served in full runs whatever name and arguments it
        sends, and neither a made-up name, a call FastMCP refused nor a name hidden from its
        caller may reach newcomers' listings."""
        with self._lock:
            if name not in self._calls:
                if (len(self._calls) >= MAX_COUNTED
                        or self._counted_chars + len(name) > MAX_COUNTED_CHARS):
                    self._calls.clear()
                    self._counted_chars = 0
                self._counted_chars += len(name)
            self._calls[name] += 1

    def popular(self, candidates: Sequence[str], count: int,
                skip: Collection[str] = ()) -> list[str]:
        """The ``count`` most called of ``candidates`` (ties: listing order, kept by a stable
        sort), by the call counts as of the last snapshot: taken at most every
        ``POPULAR_REFRESH`` seconds, so a listing never changes as a side effect of one
        connection's own calls."""
        if count <= 0:
            return []
        now = time.monotonic()
        with self._lock:
            if now - self._snapshot_at >= POPULAR_REFRESH:
                self._snapshot, self._snapshot_at = dict(self._calls), now
            calls = self._snapshot
        ranked = sorted((n for n in candidates if n not in skip), key=lambda n: -calls.get(n, 0))
        return ranked[:count]

    async def choose(self, caller: Caller, candidates: Sequence[str], slots: int,
                     server_store: ServerStore | None) -> list[str]:
        """The ``slots`` tools among ``candidates`` (listing order) ``caller`` is shown."""
        if slots <= 0:
            return []
        present = set(candidates)
        own: list[str] | None = None
        if self.grants.keeps_listing(caller):
            own = await self.grants.listing(caller, server_store=server_store)
            if own is None:  # a new caller: start from what this server's callers use
                own = self.popular(candidates, slots)
                await self.grants.keep_listing(caller, own, server_store=server_store)
        chosen = [n for n in dict.fromkeys(own or ()) if n in present][:slots]
        return chosen + self.popular(candidates, slots - len(chosen), skip=set(chosen))

    async def add(self, caller: Caller, names: Sequence[str], limit: int,
                  server_store: ServerStore | None) -> None:
        """Put ``names`` in front of ``caller``'s listing (the least recently added leave
        beyond ``limit``); a listing that already starts with them is not written again."""
        if not names or not self.grants.keeps_listing(caller):
            return
        own = await self.grants.listing(caller, server_store=server_store) or []
        if all(name in own[: len(names)] for name in names) and len(own) >= len(names):
            return
        keep = len(own) if own else limit
        new = list(dict.fromkeys([*names, *own]))[: max(keep, len(names))][:limit]
        await self.grants.keep_listing(caller, new, server_store=server_store)
