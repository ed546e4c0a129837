"""The upstream's stderr: passed through to ours, its last lines kept (bounded in bytes).

Standard library only: a pipe, and a thread that copies what it reads.

Example:
    ```python
    tail = StderrTail(prefix="[fs] ")
    subprocess.Popen(argv, stderr=tail.writer)
    tail.last()  # ["Error: config file missing"]
    ```
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from collections import deque

STDERR_LINES_KEPT = 20
STDERR_LINES_SHOWN = 5
STDERR_LINE_BYTES = 2048  # of each kept line; the rest is passed through, not kept
STDERR_CHUNK = 65536


class StderrTail:
    """The upstream's stderr: passed through to ours (hosts log it), last lines kept.

    The process writes into a pipe; a daemon thread copies what it reads to our stderr and
    remembers the last lines, which is what an error about the upstream quotes. What is
    kept is bounded in bytes whatever the upstream writes: each line to ``line_bytes``
    (the rest of a longer line is passed through, not kept) and ``keep`` lines, so a
    server that prints megabytes without a newline costs us at most ``keep * line_bytes``.
    """

    def __init__(self, keep: int = STDERR_LINES_KEPT, line_bytes: int = STDERR_LINE_BYTES,
                 prefix: str = "") -> None:
        read_fd, write_fd = os.pipe()
        self._read_fd = read_fd
        self.writer = os.fdopen(write_fd, "w")  # handed to the process as its stderr
        self._lines: deque[bytes] = deque(maxlen=keep)
        self._line_bytes = line_bytes
        self._prefix = prefix.encode()
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, name="upstream-stderr", daemon=True).start()

    def _pump(self) -> None:
        partial = bytearray()  # the line being read, at most line_bytes of it
        at_line_start = True
        with open(self._read_fd, "rb", buffering=0, closefd=True) as reader:
            while chunk := reader.read(STDERR_CHUNK):
                self._pass_through(chunk, at_line_start)
                at_line_start = chunk.endswith(b"\n")
                *complete, rest = chunk.split(b"\n")
                for piece in complete:
                    self._keep(bytes(partial) + piece)
                    partial.clear()
                room = self._line_bytes - len(partial)
                if room > 0:
                    partial += rest[:room]
            if partial:
                self._keep(bytes(partial))

    def _keep(self, line: bytes) -> None:
        with self._lock:
            self._lines.append(line[: self._line_bytes].rstrip())

    def _pass_through(self, chunk: bytes, at_line_start: bool) -> None:
        if self._prefix:  # several upstreams share our stderr: say whose line it is
            lines = chunk.split(b"\n")
            chunk = b"\n".join((self._prefix + line if line and (i or at_line_start) else line)
                               for i, line in enumerate(lines))
        try:
            out = sys.stderr.buffer if hasattr(sys.stderr, "buffer") else None
            if out is not None:
                out.write(chunk)
                out.flush()
            else:
                sys.stderr.write(chunk.decode("utf-8", "replace"))
                sys.stderr.flush()
        except (OSError, ValueError):  # our stderr is gone; keep draining the pipe
            pass

    def last(self, count: int = STDERR_LINES_SHOWN, *, settle: float = 0.3) -> list[str]:
        """The last ``count`` non-blank lines, once what is already in the pipe was read."""
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline and self._pending():
            time.sleep(0.01)
        with self._lock:
            lines = [raw.decode("utf-8", "replace") for raw in self._lines]
        return [line for line in lines if line.strip()][-count:]

    @property
    def kept_bytes(self) -> int:
        """Bytes of stderr held right now (bounded by ``keep * line_bytes``)."""
        with self._lock:
            return sum(len(line) for line in self._lines)

    def _pending(self) -> bool:
        try:
            return bool(select.select([self._read_fd], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        self.writer.close()
