"""A listing within a tool cap: hosts that take at most N tools still reach every tool.

Cursor takes about 40 tools, VS Code 128 per request; a gateway lists hundreds. With
``ListingSettings(max_tools=N)`` (or the ``max_tools`` of the host profile the client
matches, ``hosts.py``), a caller that would see more than N tools gets at most N entries:

1. the pinned and exempt tools (``always_load``, FastMCP's gateway transforms);
2. the ``describe_tools`` bridge, whose description then names every group the caller may
   see (``groups.py``), and the ``run_tool`` dispatch bridge;
3. the tools this caller has in its listing (a caller the server can follow: a handshake
   session, an authenticated principal), most recently added first; a new caller's
   listing starts as the tools callers on this server called most;
4. for a caller the server cannot follow (2026-07-28 without auth, on any transport,
   whose listing must not vary per connection): the tools callers
   on this server called most, the same for all of them.

"Called most" is a snapshot of this process's call counts, taken at most once an hour
(``POPULAR_REFRESH``), so no listing changes as a side effect of a connection's own calls
(2026-07-28), and two listings minutes apart agree (deterministic order, cache-friendly).

Describing a tool (bridge or resource) adds it to a followable caller's listing, in front;
the least recently added unpinned entries leave, and the caller gets
``notifications/tools/list_changed`` so a host that re-lists calls it by its own name.
A caller's entries live where its grants live (``grants.py``: in memory per session, or in
the key-value store, so replicas behind a load balancer show the same listing).

Hosts that never re-list (LangChain, LlamaIndex) and 2026-07-28 callers reach every other
tool through the dispatch bridge: ``run_tool({"name": ..., "arguments": {...}})`` runs the
named tool through FastMCP's own ``call_tool`` (the middleware chain, our gate, component
auth and logs all see the real tool's name), after the same visibility check as a read.

Example:
    ```python
    ProgressiveDisclosure(listing=ListingSettings(max_tools=40))
    ```
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Collection, Sequence

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import GrantStore, ServerStore
from fastmcp_progressive.hosts import HOST_PROFILES, HostProfile

POPULAR_REFRESH = 3600.0
"""Seconds between snapshots of the call counts a new caller's listing starts from."""
MAX_COUNTED = 100_000
"""Most distinct tool names whose calls are counted (then the counts start over)."""
MAX_COUNTED_CHARS = 1_000_000
"""Most characters of distinct tool names counted at once (then the counts start over): a
server may name its tools at any length (a proxied upstream's 100,000-character name)."""


class ToolCap:
    """Chooses a capped listing's entries and keeps each followable caller's."""

    def __init__(self, grants: GrantStore, max_tools: int | None,
                 host_profiles: Collection[HostProfile] = HOST_PROFILES) -> None:
        self.grants = grants
        self.max_tools = max_tools
        self.host_profiles = tuple(host_profiles)
        self._host_capped = any(row.max_tools is not None for row in self.host_profiles)
        caps = [row.max_tools for row in self.host_profiles if row.max_tools is not None]
        if max_tools is not None:
            caps.append(max_tools)
        self.smallest_limit = min(caps) if caps else 0
        """The lowest cap any caller may get (0: none): a server whose every listing fits
        it never adds a described tool to a capped listing."""
        self._calls: Counter[str] = Counter()
        self._counted_chars = 0
        self._snapshot: dict[str, int] = {}
        self._snapshot_at = -POPULAR_REFRESH
        self._lock = threading.Lock()
        self.largest_listing = 0
        """The most entries a progressive listing of this server held (0: none yet)."""

    @property
    def possible(self) -> bool:
        """Whether any caller may get a capped listing (the dispatch bridge is needed)."""
        return self.max_tools is not None or self._host_capped

    def note_listing(self, count: int) -> None:
        """Remember a progressive listing's length: below the cap, nothing needs adding."""
        self.largest_listing = max(self.largest_listing, count)

    def note_call(self, name: str) -> None:
        """Count a call of the tool ``name`` that ran: new callers' listings start from the
        most called tools. Only a tool FastMCP found is counted (``on_call_tool``): a client
        served in full runs whatever name it sends, and a made-up name must not stay here."""
        with self._lock:
            if name not in self._calls and (
                    len(self._calls) >= MAX_COUNTED
                    or self._counted_chars + len(name) > MAX_COUNTED_CHARS):
                self._calls.clear()
                self._counted_chars = 0
            if name not in self._calls:
                self._counted_chars += len(name)
            self._calls[name] += 1

    def popular(self, candidates: Sequence[str], count: int,
                skip: Collection[str] = ()) -> list[str]:
        """The ``count`` most called of ``candidates`` (ties: listing order), by the call
        counts as of the last snapshot: taken at most every ``POPULAR_REFRESH`` seconds, so
        a listing never changes as a side effect of one connection's own calls."""
        if count <= 0:
            return []
        now = time.monotonic()
        with self._lock:
            if now - self._snapshot_at >= POPULAR_REFRESH:
                self._snapshot, self._snapshot_at = dict(self._calls), now
            calls = self._snapshot
        order = {name: i for i, name in enumerate(candidates)}
        ranked = sorted((n for n in candidates if n not in skip),
                        key=lambda n: (-calls.get(n, 0), order[n]))
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
                  server_store: ServerStore | None) -> bool:
        """Put ``names`` in front of ``caller``'s listing; True when its entries changed
        (the least recently added leave beyond ``limit``)."""
        if not names or not self.grants.keeps_listing(caller):
            return False
        own = await self.grants.listing(caller, server_store=server_store) or []
        if all(name in own[: len(names)] for name in names) and len(own) >= len(names):
            return False
        keep = len(own) if own else limit
        new = list(dict.fromkeys([*names, *own]))[: max(keep, len(names))][:limit]
        await self.grants.keep_listing(caller, new, server_store=server_store)
        return any(name not in own for name in names)
