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

Example:
    ```python
    preload = Preload(lister)
    preload.start()
    preload.done.wait(5.0)
    ```
"""

from __future__ import annotations

import logging
import threading
import time

from .listing import Lister

logger = logging.getLogger(__name__)

THREAD_NAME = "fastmcp-progressive-preload"


class Preload:
    """One daemon thread reading a ``Lister``'s description files once."""

    def __init__(self, lister: Lister) -> None:
        self.lister = lister
        self.done = threading.Event()
        self.files = 0  # files whose listing line the thread read
        self.seconds: float | None = None  # how long the thread took (for benchmarks)
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        """Start the thread (once); False when there is nothing to read or it already ran."""
        if self._thread is not None or self.lister.store.directory is None:
            if self._thread is None:
                self.done.set()
            return False
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._thread.start()
        return True

    def _run(self) -> None:
        began = time.perf_counter()
        try:
            for name, sig in self.lister.store.signatures().items():
                self.lister.file_line(name, sig)
                self.files += 1
        except Exception:
            logger.exception("preloading description files failed; they are read on demand")
        finally:
            self.seconds = time.perf_counter() - began
            self.done.set()
