"""The watcher thread: one daemon thread reporting which description files changed.

It knows nothing of MCP or of the store: it watches one folder's top level with
``watchfiles`` (falling back to polling, then retrying with backoff), follows the folder
appearing, vanishing or being replaced, and hands each batch of changed tool names to a
callback. ``hot_reload.py`` decides what a batch means for clients.

Lifetime: a ``threading.Event`` stops it, so it belongs to no event loop and cannot leave
a task pending in one (pytest-asyncio gives each test its own loop; in-memory clients
enter and leave the server lifespan per connection). ``alive`` is polled every ``wakeup``
seconds and stops it when False; ``close()`` and interpreter exit stop it too; ``start()``
after a stop starts a fresh thread.

Example:
    ```python
    watcher = DirectoryWatcher(Path("tool_descriptions"), on_change=print)
    watcher.start()
    watcher.ready.wait(5.0)
    watcher.close()
    ```
"""

from __future__ import annotations

import atexit
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from fastmcp_progressive.files.folder import description_name
from fastmcp_progressive.log import get_logger

logger = get_logger("directory_watcher")

THREAD_NAME = "fastmcp-progressive-watch"
RETRY_MAX_SECONDS = 30.0  # longest wait between attempts once both watch modes failed
STEP_MS, DEBOUNCE_MS = 30, 400
"""``watchfiles`` batching: a change is reported ``STEP_MS`` after the last write of a
burst, at most ``DEBOUNCE_MS`` after the first."""

Changed = Callable[[frozenset[str] | None], None]
"""Called with the tool names whose files changed, or None for "anything may have"."""


class DirectoryWatcher:
    """One daemon thread watching one directory's top level; knows nothing of MCP.

    Args:
        directory: the folder to watch; it may not exist yet (polled until it does) and
            may vanish or be replaced (then polled again).
        on_ready: called once the OS watch is armed (or the directory found missing).
        on_change: called with the names whose files changed, or None when the
            directory appeared, vanished or was replaced; kept as the public attribute
            ``on_change``, and returns before the next batch is looked at (so wrapping it
            tells a caller when a batch has been handled).
        alive: polled every ``wakeup`` seconds; False stops the thread.
        on_exit: called (on the thread, lock released) once ``alive`` said stop.
        on_start: called on the thread each time it starts, before the OS watch is armed
            (the listing's preload: the package's one background thread does that too).
        wakeup: how often the thread checks ``alive`` and the directory when idle.
    """

    def __init__(self, directory: Path, *, on_change: Changed,
                 on_ready: Callable[[], None] = lambda: None,
                 alive: Callable[[], bool] = lambda: True,
                 on_exit: Callable[[], None] = lambda: None,
                 on_start: Callable[[], object] = lambda: None, wakeup: float = 0.25) -> None:
        self.directory = directory
        self.on_change = on_change
        self._on_ready = on_ready
        self._alive = alive
        self._on_exit = on_exit
        self._on_start = on_start
        self.wakeup = wakeup
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._exiting = False
        self._broken = False
        self.ready = threading.Event()

    @property
    def running(self) -> bool:
        """True while a thread is watching (or waiting for the directory) and not leaving."""
        with self._lock:
            return self._thread is not None and self._thread.is_alive() and not self._exiting

    def start(self) -> bool:
        """Start the thread unless one is running (or failed); True when this call did."""
        thread = self._thread  # every request asks: answer "running" without the lock
        if thread is not None and not self._exiting and thread.is_alive():
            return False
        with self._lock:
            if self._broken or (self._thread is not None and self._thread.is_alive()
                                and not self._exiting):
                return False
            self._stop = threading.Event()
            self._exiting = False
            self.ready.clear()
            self._thread = threading.Thread(target=self._run, args=(self._stop,),
                                            name=THREAD_NAME, daemon=True)
            self._thread.start()
            atexit.register(self._close_at_exit)  # unregistered as the thread ends
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

    def _close_at_exit(self) -> None:
        """Interpreter exit stops a running thread (registered only while one runs, so a
        watcher no longer running is not kept alive by ``atexit``)."""
        self.close(timeout=1.0)

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
            if self._alive():
                return True
            self._exiting = True  # decided under the lock, so start() sees it
        self._on_exit()  # after ``_exiting``: a start() from now on starts a new thread
        return False

    def _run(self, stop: threading.Event) -> None:
        force_polling: bool | None = None
        seen = False  # whether ``previous`` holds an observation yet
        previous: tuple[int, int] | None = None
        failures = 0  # consecutive failures of both the OS watch and polling
        try:
            self._on_start()
            while self._keep_going(stop):
                identity = _dir_identity(self.directory)
                if identity is None:
                    if seen and previous is not None:
                        self._report(None)  # every file went with the directory
                    seen, previous = True, None
                    self._mark_ready()
                    stop.wait(self.wakeup)
                    continue
                try:
                    self._watch(stop, identity, force_polling,
                                replaced=seen and previous != identity, resumed=failures > 0)
                except Exception as exc:  # inotify limits, permissions, a vanished dir
                    if _dir_identity(self.directory) != identity:
                        continue  # the directory went away under the OS watch
                    if not force_polling:
                        logger.warning("watching %s failed (%s); polling it instead",
                                       self.directory, exc)
                        force_polling = True
                        continue
                    failures += 1  # polling failed too: retry both, with backoff
                    if failures == 1:
                        logger.error("description watcher for %s failed (%s); edits are "
                                     "still served on the next read, and clients are notified "
                                     "again once it recovers (retrying)", self.directory, exc)
                    force_polling = None
                    stop.wait(min(self.wakeup * 2 ** min(failures, 8), RETRY_MAX_SECONDS))
                    continue
                failures = 0
                seen, previous = True, identity
        except Exception:
            self._broken = True
            logger.exception(
                "description watcher for %s stopped; edits are still served on the next "
                "read, but clients are no longer notified", self.directory)
        finally:
            with self._lock:
                if self._thread is threading.current_thread():  # no newer thread started
                    self._exiting = True
                    atexit.unregister(self._close_at_exit)

    def _report(self, names: frozenset[str] | None) -> None:
        """Hand a change to ``on_change``; its failure is not a failure of the OS watch.

        Only the watch itself failing may switch to polling: a bad file (or a bug) behind
        the callback is logged and the next change is reported as usual.
        """
        try:
            self.on_change(names)
        except Exception:
            logger.exception("handling a change in %s failed", self.directory)

    def _mark_ready(self) -> None:
        if not self.ready.is_set():
            self._on_ready()
            self.ready.set()

    def _watch(self, stop: threading.Event, identity: tuple[int, int],
               force_polling: bool | None, *, replaced: bool, resumed: bool = False) -> None:
        changes_seen = watchfiles.watch(
            self.directory, watch_filter=lambda _change, path: description_name(path) is not None,
            debounce=DEBOUNCE_MS, step=STEP_MS, stop_event=stop,
            rust_timeout=max(1, int(self.wakeup * 1000)), yield_on_timeout=True,
            raise_interrupt=False, recursive=False, force_polling=force_polling)
        armed = False
        for changes in changes_seen:
            if not armed:  # the first yield (a timeout at the latest): the OS watch is on
                armed = True
                if replaced or resumed:  # catch up with what changed while unwatched
                    logger.info("descriptions directory %s %s", self.directory,
                                "is watched again" if resumed else "appeared")
                    self._report(None)
                self._mark_ready()
            names = frozenset(name for _, path in changes
                              if (name := description_name(path)) is not None)
            if names:
                self._report(names)
            if not self._keep_going(stop) or _dir_identity(self.directory) != identity:
                return


def _dir_identity(directory: Path) -> tuple[int, int] | None:
    """(device, inode) of the directory, None when it is missing: a change means replaced."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
