"""Our stdin, relayed through a pipe we can close: how a signal stops the stdio proxy.

The MCP SDK's stdio server reads stdin in a worker thread, and a cancelled task waits for
that thread's read to return. While the host keeps stdin open, that read never returns:
a proxy told to stop (SIGTERM, SIGINT, SIGHUP) stopped answering but stayed up, and so did
its upstreams, until the host closed stdin. ``StdinRelay`` puts a pipe of ours at file
descriptor 0 for the time the proxy serves, and copies the host's stdin into it from the
event loop (which a cancellation does stop). ``end()`` closes our end of the pipe: the
SDK's thread reads end-of-file, FastMCP's stdio server returns as when the host closes
stdin, and the proxy stops its upstreams. Nothing of FastMCP or the SDK is replaced: only
what our own process's descriptor 0 is.

Only a stdin that can block (a pipe, socket or terminal) is relayed; a file or
``/dev/null`` ends by itself. Not on Windows, where signals stop the process as usual.

Example:
    ```python
    relay = StdinRelay()
    async with relay.relaying():      # on a signal: relay.end()
        await server.run_async(transport="stdio")
    ```
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator

import anyio

from fastmcp_progressive.log import get_logger

__all__ = ["StdinRelay"]

logger = get_logger("proxy")

READ = 65_536
STDIN = 0


class StdinRelay:
    """The host's stdin copied into a pipe at descriptor 0 that ``end()`` closes."""

    def __init__(self) -> None:
        self._write: int | None = None
        self._ended = False

    def end(self) -> None:
        """The stdio server reads end-of-file (now, or as soon as it starts relaying)."""
        self._ended = True
        if self._write is not None:
            fd, self._write = self._write, None
            anyio.notify_closing(fd)  # a wait for room in the pipe ends, not on a closed fd
            os.close(fd)

    @contextlib.asynccontextmanager
    async def relaying(self) -> AsyncIterator[None]:
        """Descriptor 0 is our pipe inside, the host's stdin again after."""
        if sys.platform == "win32" or not _can_block(STDIN):
            yield
            return
        host = os.dup(STDIN)
        read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        os.dup2(read, STDIN)
        os.close(read)
        if self._ended:
            self.end()
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._copy, host)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            self.end()
            os.dup2(host, STDIN)
            os.close(host)

    async def _copy(self, host: int) -> None:
        """The host's bytes into our pipe, until the host closes stdin or ``end()``."""
        try:
            while self._write is not None:
                await anyio.wait_readable(host)
                data = memoryview(os.read(host, READ))
                if not data:
                    break  # the host closed stdin: so does our pipe
                while data and self._write is not None:
                    try:
                        data = data[os.write(self._write, data):]
                    except BlockingIOError:  # the SDK has not read the last lines yet
                        await anyio.wait_writable(self._write)
        except anyio.ClosedResourceError:  # end() while waiting for room in the pipe
            pass
        except OSError as exc:  # stdin unreadable, or our pipe's reader gone
            logger.debug("stdin relay stopped: %s", exc)
        finally:
            self.end()


def _can_block(fd: int) -> bool:
    """Whether reading ``fd`` can wait forever (a pipe, socket or terminal)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
