"""Hot reload: what a change to the descriptions folder means for the store and for clients.

Correctness never depends on this module: the store stats a file on every read, so an
edit is served by the next read even with no watcher. The watcher adds two things:

- eager invalidation, which also catches an edit that keeps a file's size, inode and
  (coarse) mtime, and re-parses the file off the request path;
- ``notifications/tools/list_changed`` to each connected handshake-era (legacy) session
  whose own listing changed: anything a file puts in ``tools/list`` (``listing.FileFacts``: the
  line, from a summary or the description a summary derives from; ``always_load``; whether
  ``resolution`` rules make the tool resolvable, the listing's mark; its ``groups``) of a
  tool that session's last progressive ``tools/list`` showed. An edit to the file of a
  tool a session cannot see, or of no tool at all, or to what only a read serves
  (examples, guidance, the rules' content), tells that session nothing.
  2026-07-28 clients have no background channel in FastMCP 4, so they get nothing and
  see the change on their next ``tools/list``.

This module is the policy between two mechanisms: the watcher thread
(``files/watcher.py``) says which files changed, the session registry
(``sessions.py``) reaches connected legacy sessions. The first request starts the
watcher; it stops by itself within ``wakeup`` seconds of the last server lifespan ending,
on ``close()``, or at interpreter exit, and the next request after a stop starts it again.

Example:
    ```python
    hot = HotReload(store, summary_max_chars=100)
    hot.observe(ctx, caller)  # from on_message: starts the watcher, remembers a legacy session
    hot.close()       # or let it stop with the server
    ```
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.disclosure.listing import NO_FILE_FACTS, FileFacts, listed_facts
from fastmcp_progressive.disclosure.sessions import LegacySessions
from fastmcp_progressive.fastmcp_internals import server_running
from fastmcp_progressive.files.store import DescriptionStore, Signature
from fastmcp_progressive.files.watcher import DirectoryWatcher


class HotReload:
    """Watcher plus session registry for one ``ProgressiveDisclosure``.

    Remembers, per description file, what it contributes to ``tools/list``
    (``listing.FileFacts``); a change batch that alters one of those notifies legacy sessions,
    while a file that breaks (its last good version keeps being served) or an edit to
    examples notifies no one.
    """

    def __init__(
        self,
        store: DescriptionStore,
        *,
        summary_max_chars: int = 100,
        max_sessions: int = 100_000,
        wakeup: float = 0.25,
        facts_at: Callable[[str, Signature], FileFacts] | None = None,
    ) -> None:
        self.store = store
        self.summary_max_chars = summary_max_chars
        self._facts_at = facts_at  # the listing's own per-signature facts: no second parse
        self.enabled = store.directory is not None
        self.sessions = LegacySessions(max_sessions)
        self._servers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._last_server: Callable[[], Any] = lambda: None
        self._lines: dict[str, FileFacts | None] = {}
        self._lines_lock = threading.Lock()
        self.watcher: DirectoryWatcher | None = None
        if store.directory is not None:
            self.watcher = DirectoryWatcher(
                store.directory,
                on_change=self._changed,
                on_ready=self._baseline,
                alive=self._alive,
                wakeup=wakeup,
            )

    def observe(self, ctx: Any, caller: Caller) -> None:
        """Called for every inbound message (``caller``: its client, identified once by
        the request's record): start the watcher, remember a legacy session."""
        if not self.enabled or self.watcher is None:
            return
        rc = getattr(ctx, "request_context", None)
        if rc is None:
            return  # no client request (mcp.list_tools() from code, the CLI): no watcher
        server = ctx.fastmcp
        if self._last_server() is not server:  # a WeakSet.add per request made a weakref
            self._servers.add(server)
            self._last_server = weakref.ref(server)
        self.watcher.start()
        if caller.kind == "session":
            self.sessions.remember(caller, rc.session)

    def listed(self, caller: Caller, names: frozenset[str]) -> None:
        """Record what a legacy session's progressive ``tools/list`` showed it."""
        if self.enabled and caller.kind == "session" and caller.key is not None:
            self.sessions.listed(caller.key, names)

    def close(self) -> None:
        """Stop watching for good (later requests do not restart it); forget every session."""
        self.enabled = False
        if self.watcher is not None:
            self.watcher.close()
        self.sessions.clear()

    def _alive(self) -> bool:
        return any(server_running(server) for server in list(self._servers))

    def _line(self, name: str) -> FileFacts | None:
        """What ``name``'s file puts in ``tools/list`` now (None: no usable file)."""
        sig = self.store.signature(name)
        if sig is None:
            return None
        if self._facts_at is not None:
            facts = self._facts_at(name, sig)
        else:
            facts = listed_facts(self.store.lookup_at(name, sig), self.summary_max_chars)
        return None if facts == NO_FILE_FACTS else facts

    def _scan(self) -> set[str]:
        return set(self.store.signatures())

    def _baseline(self) -> None:
        with self._lines_lock:
            self._lines = {name: self._line(name) for name in self._scan()}

    def _changed(self, names: Iterable[str] | None) -> None:
        with self._lines_lock:
            if names is None:
                self.store.invalidate()
                names = self._scan() | set(self._lines)
            changed: set[str] = set()
            regrouped = False
            for name in names:
                self.store.invalidate(name)
                line = self._line(name)
                if self._lines.get(name) != line:
                    changed.add(name)
                    regrouped |= _groups_of(self._lines.get(name)) != _groups_of(line)
                if line is None:
                    self._lines.pop(name, None)
                else:
                    self._lines[name] = line
        if changed:
            self.sessions.broadcast(frozenset(changed))
        if regrouped:  # the groups a file puts its tool in: the set of groups may change
            self.sessions.broadcast_groups()


def _groups_of(facts: Any) -> Any:
    """The groups part of a file's listed facts (``listing.listed_facts``), or None."""
    return facts[3] if isinstance(facts, tuple) and len(facts) > 3 else None

