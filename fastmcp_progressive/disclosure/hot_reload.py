"""Hot reload: what a change to the descriptions folder means for the store and for clients.

Correctness never depends on this module: the store stats a file on every read, so an
edit is served by the next read even with no watcher. The watcher adds two things:

- eager invalidation, which also catches an edit that keeps a file's size, inode and
  (coarse) mtime, and re-parses the file off the request path;
- ``notifications/tools/list_changed`` to each connected handshake-era (legacy) session
  whose own listing changed: anything a file puts in ``tools/list`` (``listing.FileFacts``: the
  line, from a summary or the description a summary derives from; ``always_load``; whether
  ``resolution`` rules make the tool resolvable, the listing's mark; its ``groups``) of a
  tool that session's last progressive ``tools/list`` showed (an edit made before the OS
  watch was armed, right after the first listing, is caught up with once it is: the
  facts the listing served are the baseline, not the files as found then). An edit to
  the file of a tool a session cannot see, or of no tool at all, or to what only a read serves
  (examples, guidance, the rules' content), tells that session nothing.
  2026-07-28 clients have no background channel in FastMCP 4, so they get nothing and
  see the change on their next ``tools/list``.

This module is the policy between two mechanisms: the watcher thread
(``files/watcher.py``) says which files changed, and the registry of connected legacy
sessions (``LegacySessions``) reaches them. A handshake-era session keeps a connection a
server can write to at any time; FastMCP keeps no list of sessions, so the registry does: a
request adds its session, the connection's close callback removes it, and ``listed``
records which tools' lines the session's last progressive ``tools/list`` showed, so a
change to any other file tells it nothing. Sends are scheduled on each session's own event
loop, from whatever thread noticed the change. The first request starts the watcher, and
a later request of a caller already seen (``settled``) does no watcher work; it stops by
itself within its ``wakeup`` seconds of the last server lifespan ending, on ``close()``, or
at interpreter exit, and the next request after a stop starts it again.

Example:
    ```python
    hot = HotReload(lister)  # its watcher's first job: lister.preload()
    hot.observe(ctx, caller)  # from on_message, once per caller: starts the watcher,
                              # remembers a legacy session
    hot.close()       # or let it stop with the server
    ```
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.disclosure.groups import advertised
from fastmcp_progressive.disclosure.listing import NO_FILE_FACTS, FileFacts, Lister
from fastmcp_progressive.fastmcp_internals import on_connection_close, server_running
from fastmcp_progressive.files.watcher import DirectoryWatcher
from fastmcp_progressive.log import get_logger

logger = get_logger("legacy_sessions")


class HotReload:
    """Watcher plus session registry for one ``ProgressiveDisclosure``.

    Remembers, per description file, what it contributes to ``tools/list``
    (``listing.FileFacts``); a change batch that alters one of those notifies legacy sessions,
    while a file that breaks (its last good version keeps being served) or an edit to
    examples notifies no one.
    """

    def __init__(self, lister: Lister) -> None:
        self.store = store = lister.store
        self.lister = lister  # its per-signature facts (no second parse), and those it served
        self.enabled = store.directory is not None
        # what a request's cheap check reads (``settled``): the callers ``observe`` has
        # nothing left to do for while the watcher runs (a kept session's key, or a
        # session-less caller's kind), so a warm request does no watcher work (#35). Cleared
        # when the watcher stops, so the next request starts it again; a session's key goes
        # with its connection. Bounded by the sessions kept plus four kinds.
        self.settled: set[str] = set()
        self._settle_lock = threading.Lock()
        self.sessions = LegacySessions(forgot=self.settled.discard)
        # the server the last observed request came from (a weak reference, called): the
        # watcher runs while it does. A middleware shared by two servers whose last one
        # stops restarts it on the other's next request (its baseline catches up), so no
        # set of servers is kept (#35)
        self.last_server: Callable[[], Any] = lambda: None
        self._lines: dict[str, FileFacts] = {}
        self._lines_lock = threading.Lock()
        # its first job: the listing's preload (unless turned off)
        self.watcher = None if store.directory is None else DirectoryWatcher(
            store.directory, on_change=self._changed, on_ready=self._baseline,
            alive=self._alive, on_exit=self._watcher_stopped,
            on_start=lister.preload if lister.settings.preload else lambda: None)

    def observe(self, ctx: Any, caller: Caller) -> None:
        """Called for an inbound message whose caller is not ``settled`` (``caller``: its
        client, identified once by the request's record): start the watcher, remember a
        legacy session. The middleware skips it for a settled caller of the last server."""
        if not self.enabled or self.watcher is None:
            return
        rc = getattr(ctx, "request_context", None)
        if rc is None:
            return  # no client request (mcp.list_tools() from code, the CLI): no watcher
        server = ctx.fastmcp
        if self.last_server() is not server:
            self.last_server = weakref.ref(server)
        with self._settle_lock:  # a stop clearing ``settled`` waits: never a stale entry
            self.watcher.start()
            if caller.kind != "session":
                self.settled.add(caller.kind)
            elif (self.sessions.remember(caller, rc.session)
                  and caller.key is not None
                  # capabilities known (after initialize): a later request adds nothing
                  and getattr(rc.session, "client_params", None) is not None):
                self.settled.add(caller.key)

    def _watcher_stopped(self) -> None:
        """The watcher decided to stop (no server runs): the next request starts it."""
        with self._settle_lock:
            self.settled.clear()

    def close(self) -> None:
        """Stop watching for good (later requests do not restart it); forget every session."""
        self.enabled = False
        if self.watcher is not None:
            self.watcher.close()
        self.sessions.clear()

    def _alive(self) -> bool:
        server = self.last_server()
        return server is not None and server_running(server)

    def _baseline(self) -> None:
        """What each file puts in ``tools/list``, taken once the OS watch is armed, and a
        catch-up: a file whose facts differ from those the listing last served for it was
        edited before the watch could see it (right after the first listing, or while no
        watcher ran), and tells the sessions shown it, as an edit seen by the watch would."""
        served = self.lister.served_facts()
        with self._lines_lock:
            self._lines = {}
            changed = self._update(set(self.store.signatures()) | set(served), served)
        self._tell({name: was for name, was in changed.items() if name in served})

    def _changed(self, names: Iterable[str] | None) -> None:
        with self._lines_lock:
            if names is None:
                self.store.invalidate()
                names = set(self.store.signatures()) | set(self._lines)
            for name in names:
                self.store.invalidate(name)
            changed = self._update(names, self._lines)
        self._tell(changed)

    def _update(self, names: Iterable[str], before: Mapping[str, FileFacts]
                ) -> dict[str, tuple[FileFacts, FileFacts]]:
        """Read what each of ``names``' file puts in ``tools/list`` now (``NO_FILE_FACTS``: no
        usable file) into ``_lines`` (under its lock); the names whose facts differ from
        ``before``, with (before, now)."""
        changed: dict[str, tuple[FileFacts, FileFacts]] = {}
        for name in names:
            sig = self.store.signature(name)
            facts = self.lister.file_facts(name, sig) if sig is not None else NO_FILE_FACTS
            was = before.get(name, NO_FILE_FACTS)
            if was != facts:
                changed[name] = (was, facts)
            if facts == NO_FILE_FACTS:
                self._lines.pop(name, None)
            else:
                self._lines[name] = facts
        return changed

    def _tell(self, changed: Mapping[str, tuple[FileFacts, FileFacts]]) -> None:
        """Notify the sessions shown a changed line, and grouping clients when the groups
        a file puts its tool in changed (the set of groups may have)."""
        if changed:
            self.sessions.broadcast(frozenset(changed))
        # the groups part of a file's listed facts (``listing.listed_facts``), or a file
        # come or gone
        if any(was[3] != now[3] or NO_FILE_FACTS in (was, now) for was, now in changed.values()):
            self.sessions.broadcast(groups=True)


# -- connected handshake-era sessions, and what each was last shown -----------------------------
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

    def __init__(self, max_sessions: int = 100_000,
                 forgot: Callable[[str], None] = lambda key: None) -> None:
        self.max_sessions = max_sessions
        self._forgot = forgot  # told each key dropped
        self._lock = threading.Lock()
        self._live: dict[str, _Live] = {}
        # per session: the names its last listing showed; read without the lock by a
        # listing's cheap check (an unchanged listing records nothing, #35)
        self.shown: dict[str, frozenset[str]] = {}
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
        groups = advertised(caller)
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
                oldest = next(iter(self._live))
                self._live.pop(oldest)
                self._forgot(oldest)
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
            self.shown[key] = shared

    def forget(self, key: str) -> None:
        """Drop a session (its connection closed, or sending to it failed)."""
        with self._lock:
            self._live.pop(key, None)
            self.shown.pop(key, None)
        self._forgot(key)

    def clear(self) -> None:
        with self._lock:
            keys = list(self._live)
        for key in keys:
            self.forget(key)

    def broadcast(self, changed: frozenset[str] | None = None, *, groups: bool = False) -> int:
        """Schedule ``tools/list_changed`` from any thread on every live session whose last
        listing showed one of ``changed`` (None: on every live session); with ``groups``,
        ``notifications/groups/list_changed`` on every one whose client speaks the grouping
        extension."""
        with self._lock:
            targets = [
                (key, live) for key, live in self._live.items()
                if (live.groups if groups else changed is None
                    or not self.shown.get(key, frozenset()).isdisjoint(changed))
            ]
        scheduled = 0
        for key, live in targets:
            try:
                live.loop.call_soon_threadsafe(self._spawn, key, live, groups)
            except RuntimeError:  # that session's loop is closed: so is the session
                self.forget(key)
                continue
            scheduled += 1
        return scheduled

    def _spawn(self, key: str, live: _Live, groups: bool) -> None:
        task = live.loop.create_task(self._send(key, live.session, groups))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, key: str, session: Any, groups: bool) -> None:
        try:
            if groups:
                await session.send_notification(_GroupsListChanged())
            else:
                await session.send_tool_list_changed()
        except Exception as exc:  # a connection closing under us: not worth a warning
            logger.debug("tools/list_changed to session %s failed: %s", key, exc)
            self.forget(key)
