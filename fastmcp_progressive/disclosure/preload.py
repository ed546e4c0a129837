"""Start-up preload: read every description file in the background, off the request path.

Parsing and validating a folder of description files is the only expensive part of a
first ``tools/list`` (about as much again as plain FastMCP's whole listing at a few
hundred files). ``ProgressiveDisclosure`` starts a ``Preload`` when it is created, so by
the time a client lists tools the listing lines (and, up to the file LRU's size, the
parsed files) are already known.

Start-up is never delayed: the constructor only starts a daemon thread. A request that
arrives before the thread is done is still served exactly: every line and parsed file is
kept with the stat signature it was read at, and a request only reuses one whose
signature equals what it stats itself; anything not read yet (or edited since) it reads
on its own. The thread is best effort: it stops at the first unexpected error (logged),
and the request path then does the work as it did before.

The two share the work rather than race for it. Python runs one thread at a time, and a
thread that has just parsed a file keeps running for up to the interpreter's switch
interval whenever the event loop gives the lock up (each ``stat``, each poll), so a
listing that ran beside the thread used to take several times as long as one after it.
Now the thread waits between files while a listing is in flight (``Preload.serving``):
that listing parses what it needs itself, once, and the thread skips every file whose
line is then known. A file one of them is parsing
when the other wants it is waited for, not parsed twice (``Lister.file_facts``).

Example:
    ```python
    preload = Preload(lister)
    preload.start()
    preload.done.wait(5.0)
    ```
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from fastmcp_progressive.disclosure.listing import Lister
from fastmcp_progressive.log import get_logger

logger = get_logger("preload")

THREAD_NAME = "fastmcp-progressive-preload"
LONGEST_PAUSE = 0.5
"""Seconds the thread waits for listings in flight before it reads one more file anyway
(a server that lists without pause still gets its files read)."""


class Preload:
    """One daemon thread reading a ``Lister``'s description files once."""

    def __init__(self, lister: Lister) -> None:
        self.lister = lister
        self.done = threading.Event()
        self.seconds: float | None = None  # how long the thread took (for benchmarks)
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()  # set: no listing in flight
        self._idle.set()
        self._listings = 0
        self._count_lock = threading.Lock()

    def start(self) -> bool:
        """Start the thread (once); False when there is nothing to read or it already ran."""
        if self._thread is not None or self.lister.store.directory is None:
            if self._thread is None:
                self.done.set()
            return False
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._thread.start()
        return True

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Hold the thread between files while the block (a listing) runs."""
        if self.done.is_set():
            yield
            return
        with self._count_lock:
            self._listings += 1
            self._idle.clear()
        try:
            yield
        finally:
            with self._count_lock:
                self._listings -= 1
                if not self._listings:
                    self._idle.set()

    def _run(self) -> None:
        began = time.perf_counter()
        try:
            for name, sig in self.lister.store.signatures().items():
                self._idle.wait(LONGEST_PAUSE)
                self.lister.file_line(name, sig)  # known already: a dictionary probe
        except Exception:
            logger.exception("preloading description files failed; they are read on demand")
        finally:
            self.seconds = time.perf_counter() - began
            self.done.set()
            self._idle.set()
