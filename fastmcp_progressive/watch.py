"""Hot reload: a watcher that invalidates edited description files and tells clients.

Correctness never depends on this module: the store stats a file on every read, so an
edit is served by the next read even with no watcher. The watcher adds two things:

- eager invalidation, which also catches an edit that keeps a file's size, inode and
  (coarse) mtime, and re-parses the file off the request path;
- ``notifications/tools/list_changed`` to each connected handshake-era (legacy) session
  whose own listing changed: a summary, or a description a summary derives from, of a
  tool that session's last progressive ``tools/list`` showed. An edit to the file of a
  tool a session cannot see, or of no tool at all, tells that session nothing.
  2026-07-28 clients have no background channel in FastMCP 4, so they get nothing and
  see the change on their next ``tools/list``.

Lifetime: the watcher is one daemon thread running ``watchfiles.watch`` with a
``threading.Event`` to stop it, so it belongs to no event loop and cannot leave a task
pending in one (pytest-asyncio gives each test its own loop; in-memory clients enter and
leave the server lifespan per connection). The first request starts it; it stops by
itself within ``wakeup`` seconds of the last server lifespan ending, on ``close()``, or at
interpreter exit. The next request after a stop starts a fresh one. Notifications are
handed to each session's own loop with ``call_soon_threadsafe``.

Example:
    ```python
    hot = HotReload(store, summary_max_chars=100)
    hot.observe(ctx)  # from on_message: starts the watcher, remembers a legacy session
    hot.close()       # or let it stop with the server
    ```
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import stat
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import watchfiles

from .caller import Caller, identify
from .descriptions import DescriptionStore, Signature, description_name
from .fastmcp_internals import on_connection_close, server_running
from .listing import file_line

logger = logging.getLogger(__name__)

THREAD_NAME = "fastmcp-progressive-watch"
RETRY_MAX_SECONDS = 30.0  # longest wait between attempts once both watch modes failed
_CLOSE_MARKER = "fastmcp_progressive.notify"

Changed = Callable[[frozenset[str] | None], None]
"""Called with the tool names whose files changed, or None for "anything may have"."""


# -- the thread --------------------------------------------------------------------------
_live_watchers: weakref.WeakSet[DirectoryWatcher] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for watcher in list(_live_watchers):
        watcher.close(timeout=1.0)


class DirectoryWatcher:
    """One daemon thread watching one directory's top level; knows nothing of MCP.

    Args:
        directory: the folder to watch; it may not exist yet (polled until it does) and
            may vanish or be replaced (then polled again).
        on_ready: called once the OS watch is armed (or the directory found missing).
        on_change: called with the names whose files changed, or None when the
            directory appeared, vanished or was replaced.
        alive: polled every ``wakeup`` seconds; False stops the thread.
        wakeup: how often the thread checks ``alive`` and the directory when idle.
        step_ms / debounce_ms: ``watchfiles`` batching (a change is reported ``step_ms``
            after the last write of a burst, at most ``debounce_ms`` after the first).
    """

    def __init__(
        self,
        directory: Path,
        *,
        on_change: Changed,
        on_ready: Callable[[], None] = lambda: None,
        alive: Callable[[], bool] = lambda: True,
        wakeup: float = 0.25,
        step_ms: int = 30,
        debounce_ms: int = 400,
    ) -> None:
        self.directory = directory
        self._on_change = on_change
        self._on_ready = on_ready
        self._alive = alive
        self.wakeup = wakeup
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._exiting = False
        self._broken = False
        self.ready = threading.Event()
        self.batches = 0  # change batches handled, for tests and benchmarks

    @property
    def running(self) -> bool:
        """True while a thread is watching (or waiting for the directory) and not leaving."""
        with self._lock:
            return self._thread is not None and self._thread.is_alive() and not self._exiting

    def start(self) -> bool:
        """Start the thread unless one is running (or failed); True when this call did."""
        with self._lock:
            if self._broken:
                return False
            if self._thread is not None and self._thread.is_alive() and not self._exiting:
                return False
            self._stop = threading.Event()
            self._exiting = False
            self.ready.clear()
            self._thread = threading.Thread(
                target=self._run, args=(self._stop,), name=THREAD_NAME, daemon=True
            )
            self._thread.start()
            _live_watchers.add(self)
            return True

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread and wait for it; safe to call twice or before ``start``."""
        with self._lock:
            thread, self._exiting = self._thread, True
            self._stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("description watcher did not stop within %.1fs", timeout)

    def join(self, timeout: float) -> bool:
        """Wait for the thread to end on its own; True when none is left."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    def _keep_going(self, stop: threading.Event) -> bool:
        with self._lock:
            if stop.is_set() or self._exiting:
                return False
            if not self._alive():
                self._exiting = True  # decided under the lock, so start() sees it
                return False
            return True

    def _run(self, stop: threading.Event) -> None:
        force_polling: bool | None = None
        seen = False  # whether ``previous`` holds an observation yet
        previous: tuple[int, int] | None = None
        failures = 0  # consecutive failures of both the OS watch and polling
        try:
            while self._keep_going(stop):
                identity = _dir_identity(self.directory)
                if identity is None:
                    if seen and previous is not None:
                        self._report(None)  # every file went with the directory
                    seen, previous = True, None
                    self._mark_ready()
                    stop.wait(self.wakeup)
                    continue
                replaced = seen and previous != identity
                try:
                    self._watch(
                        stop, identity, force_polling, replaced=replaced, resumed=failures > 0
                    )
                except Exception as exc:  # inotify limits, permissions, a vanished dir
                    if _dir_identity(self.directory) != identity:
                        continue  # the directory went away under the OS watch
                    if not force_polling:
                        logger.warning(
                            "watching %s failed (%s); polling it instead", self.directory, exc
                        )
                        force_polling = True
                        continue
                    failures += 1  # polling failed too: retry both, with backoff
                    if failures == 1:
                        logger.error(
                            "description watcher for %s failed (%s); edits are still served "
                            "on the next read, and clients are notified again once it "
                            "recovers (retrying)",
                            self.directory,
                            exc,
                        )
                    force_polling = None
                    stop.wait(min(self.wakeup * 2 ** min(failures, 8), RETRY_MAX_SECONDS))
                    continue
                failures = 0
                seen, previous = True, identity
        except Exception:
            self._broken = True
            logger.exception(
                "description watcher for %s stopped; edits are still served on the next "
                "read, but clients are no longer notified",
                self.directory,
            )
        finally:
            with self._lock:
                if self._thread is threading.current_thread():
                    self._exiting = True

    def _report(self, names: frozenset[str] | None) -> None:
        """Hand a change to ``on_change``; its failure is not a failure of the OS watch.

        Only the watch itself failing may switch to polling: a bad file (or a bug) behind
        the callback is logged and the next change is reported as usual.
        """
        try:
            self._on_change(names)
        except Exception:
            logger.exception("handling a change in %s failed", self.directory)

    def _mark_ready(self) -> None:
        if not self.ready.is_set():
            self._on_ready()
            self.ready.set()

    def _watch(
        self,
        stop: threading.Event,
        identity: tuple[int, int],
        force_polling: bool | None,
        *,
        replaced: bool,
        resumed: bool = False,
    ) -> None:
        changes_seen = watchfiles.watch(
            self.directory,
            watch_filter=lambda _change, path: description_name(path) is not None,
            debounce=self.debounce_ms,
            step=self.step_ms,
            stop_event=stop,
            rust_timeout=max(1, int(self.wakeup * 1000)),
            yield_on_timeout=True,
            raise_interrupt=False,
            recursive=False,
            force_polling=force_polling,
        )
        armed = False
        for changes in changes_seen:
            if not armed:  # the first yield (a timeout at the latest): the OS watch is on
                armed = True
                if replaced or resumed:  # catch up with what changed while unwatched
                    logger.info(
                        "descriptions directory %s %s",
                        self.directory,
                        "is watched again" if resumed else "appeared",
                    )
                    self._report(None)
                self._mark_ready()
            names = frozenset(
                name for _, path in changes if (name := description_name(path)) is not None
            )
            if names:
                self._report(names)
                self.batches += 1  # after handling: a test waiting on it sees the outcome
            if not self._keep_going(stop) or _dir_identity(self.directory) != identity:
                return


def _dir_identity(directory: Path) -> tuple[int, int] | None:
    """(device, inode) of the directory, None when it is missing: a change means replaced."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


# -- legacy sessions ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Live:
    session: Any  # mcp ServerSession captured in a request; sends on the connection
    loop: asyncio.AbstractEventLoop


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
        self.sent = 0  # notifications delivered, for tests and benchmarks

    def __len__(self) -> int:
        with self._lock:
            return len(self._live)

    def remember(self, caller: Caller, session: Any) -> bool:
        """Keep ``session`` until its connection closes; False when it cannot be kept."""
        if caller.kind != "session" or caller.key is None:
            return False
        key = caller.key
        with self._lock:
            if key in self._live:
                return True
        if not on_connection_close(caller.anchor, lambda: self.forget(key), marker=_CLOSE_MARKER):
            return False
        live = _Live(session, asyncio.get_running_loop())
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

    def _spawn(self, key: str, live: _Live) -> None:
        task = live.loop.create_task(self._send(key, live.session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, key: str, session: Any) -> None:
        try:
            await session.send_tool_list_changed()
            self.sent += 1
        except Exception as exc:  # a connection closing under us: not worth a warning
            logger.debug("tools/list_changed to session %s failed: %s", key, exc)
            self.forget(key)


# -- the glue the middleware holds -------------------------------------------------------
class HotReload:
    """Watcher plus session registry for one ``ProgressiveDisclosure``.

    Remembers, per description file, the line it contributes to ``tools/list`` (its
    ``summary``, else the first sentence of its ``description``); a change batch that
    alters one of those lines notifies legacy sessions, while a file that breaks (its
    last good version keeps being served) or an edit to examples notifies no one.
    """

    def __init__(
        self,
        store: DescriptionStore,
        *,
        summary_max_chars: int = 100,
        max_sessions: int = 100_000,
        wakeup: float = 0.25,
        line_at: Callable[[str, Signature], str | None] | None = None,
    ) -> None:
        self.store = store
        self.summary_max_chars = summary_max_chars
        self._line_at = line_at  # the listing's own per-signature lines: no second parse
        self.enabled = store.directory is not None
        self.sessions = LegacySessions(max_sessions)
        self._servers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lines: dict[str, str | None] = {}
        self._lines_lock = threading.Lock()
        self.notifications = 0  # listing changes broadcast, for tests and benchmarks
        self.watcher: DirectoryWatcher | None = None
        if store.directory is not None:
            self.watcher = DirectoryWatcher(
                store.directory,
                on_change=self._changed,
                on_ready=self._baseline,
                alive=self._alive,
                wakeup=wakeup,
            )

    def observe(self, ctx: Any) -> None:
        """Called for every inbound message: start the watcher, remember a legacy session."""
        if not self.enabled or self.watcher is None:
            return
        rc = getattr(ctx, "request_context", None)
        if rc is None:
            return  # no client request (mcp.list_tools() from code, the CLI): no watcher
        self._servers.add(ctx.fastmcp)
        self.watcher.start()
        caller = identify(ctx)
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

    def _line(self, name: str) -> str | None:
        if self._line_at is not None:
            sig = self.store.signature(name)
            return self._line_at(name, sig) if sig is not None else None
        file = self.store.lookup(name)
        return file_line(file, self.summary_max_chars) if file is not None else None

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
            for name in names:
                self.store.invalidate(name)
                line = self._line(name)
                if self._lines.get(name) != line:
                    changed.add(name)
                if line is None:
                    self._lines.pop(name, None)
                else:
                    self._lines[name] = line
        if changed:
            self.notifications += 1
            self.sessions.broadcast(frozenset(changed))
