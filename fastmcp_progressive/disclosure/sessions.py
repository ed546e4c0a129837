"""Connected handshake-era sessions, and what each was last shown, for background notices.

A handshake-era (legacy) session keeps a connection a server can write to at any time, so
it can be told ``notifications/tools/list_changed`` when a description file changes the
listing it saw. FastMCP keeps no list of sessions, so this registry does: a request adds
its session, the connection's close callback removes it, and ``listed`` records which
tools' lines the session's last progressive ``tools/list`` showed, so a change to any
other file tells it nothing. Sends are scheduled on each session's own event loop, from
whatever thread noticed the change. 2026-07-28 clients have no background channel in
FastMCP 4 and are never kept here.

Example:
    ```python
    sessions = LegacySessions(max_sessions=1_000)
    sessions.remember(caller, ctx.request_context.session)  # from a request
    sessions.broadcast(frozenset({"add"}))  # from the watcher thread
    ```
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.disclosure.groups import GROUPING_EXTENSION_ID
from fastmcp_progressive.fastmcp_internals import on_connection_close
from fastmcp_progressive.log import get_logger

logger = get_logger("legacy_sessions")

_CLOSE_MARKER = "fastmcp_progressive.notify"


@dataclass(frozen=True)
class _Live:
    session: Any  # mcp ServerSession captured in a request; sends on the connection
    loop: asyncio.AbstractEventLoop
    groups: bool = False  # the client speaks the grouping extension


class _GroupsListChanged(BaseModel):
    """``notifications/groups/list_changed`` (the grouping draft): the SDK's session sends
    any notification model with a ``method`` (it dumps it and notifies that method)."""

    method: Literal["notifications/groups/list_changed"] = "notifications/groups/list_changed"
    params: dict[str, Any] | None = None


class LegacySessions:
    """Connected handshake-era sessions that can take a background notification.

    FastMCP does not track sessions, so this registry does: an entry is added by a
    request and removed by its connection's close callback, so it never outlives the
    connection; ``max_sessions`` bounds it if a transport never says goodbye.
    """

    def __init__(self, max_sessions: int = 100_000) -> None:
        self.max_sessions = max_sessions
        self._lock = threading.Lock()
        self._live: dict[str, _Live] = {}
        self._listed: dict[str, frozenset[str]] = {}  # per session: names it was shown
        self._recent: dict[frozenset[str], frozenset[str]] = {}  # one copy of each listing
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        with self._lock:
            return len(self._live)

    def remember(self, caller: Caller, session: Any) -> bool:
        """Keep ``session`` until its connection closes; False when it cannot be kept."""
        if caller.kind != "session" or caller.key is None:
            return False
        key = caller.key
        groups = isinstance(caller.extensions.get(GROUPING_EXTENSION_ID), Mapping)
        with self._lock:
            known = self._live.get(key)
            if known is not None:
                if groups and not known.groups:  # capabilities are known after initialize
                    self._live[key] = replace(known, groups=True)
                return True
        if not on_connection_close(caller.anchor, lambda: self.forget(key), marker=_CLOSE_MARKER):
            return False
        live = _Live(session, asyncio.get_running_loop(), groups=groups)
        with self._lock:
            if len(self._live) >= self.max_sessions:
                self._live.pop(next(iter(self._live)))
            self._live[key] = live
        return True

    def listed(self, key: str, names: frozenset[str]) -> None:
        """Remember which tools' lines session ``key`` was last shown (live sessions only).

        Sessions mostly see the same listing, so equal sets share one object.
        """
        with self._lock:
            if key not in self._live:
                return
            shared = self._recent.get(names)
            if shared is None:
                if len(self._recent) >= 64:
                    self._recent.clear()
                shared = self._recent[names] = names
            self._listed[key] = shared

    def forget(self, key: str) -> None:
        """Drop a session (its connection closed, or sending to it failed)."""
        with self._lock:
            self._live.pop(key, None)
            self._listed.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._live.clear()
            self._listed.clear()

    def broadcast(self, changed: frozenset[str] | None = None) -> int:
        """Schedule ``tools/list_changed`` from any thread on every live session whose last
        listing showed one of ``changed`` (None: on every live session)."""
        with self._lock:
            targets = [
                (key, live)
                for key, live in self._live.items()
                if changed is None or not self._listed.get(key, frozenset()).isdisjoint(changed)
            ]
        scheduled = 0
        for key, live in targets:
            try:
                live.loop.call_soon_threadsafe(self._spawn, key, live)
            except RuntimeError:  # that session's loop is closed: so is the session
                self.forget(key)
                continue
            scheduled += 1
        return scheduled

    def broadcast_groups(self) -> int:
        """Schedule ``notifications/groups/list_changed`` from any thread on every live
        session whose client speaks the grouping extension."""
        with self._lock:
            targets = [(key, live) for key, live in self._live.items() if live.groups]
        scheduled = 0
        for key, live in targets:
            try:
                live.loop.call_soon_threadsafe(self._spawn, key, live, True)
            except RuntimeError:
                self.forget(key)
                continue
            scheduled += 1
        return scheduled

    def _spawn(self, key: str, live: _Live, groups: bool = False) -> None:
        task = live.loop.create_task(self._send(key, live.session, groups))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, key: str, session: Any, groups: bool = False) -> None:
        try:
            if groups:
                await session.send_notification(_GroupsListChanged())
            else:
                await session.send_tool_list_changed()
        except Exception as exc:  # a connection closing under us: not worth a warning
            logger.debug("tools/list_changed to session %s failed: %s", key, exc)
            self.forget(key)
