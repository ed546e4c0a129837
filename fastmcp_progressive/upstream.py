"""The server behind a progressive proxy: how to start it, name it and explain its failures.

``Upstream`` wraps what ``create_proxy`` is given: a command (``UpstreamCommand``, FastMCP's
stdio transport started once per proxy run, its stderr passed through and its last lines
kept) or a URL (FastMCP's ``ProxyClient``). ``Upstream.explain`` turns a failure to reach it
(not found, exited, unreachable, too slow) into one sentence naming it; ``proxy.py`` puts that
sentence in front of the client.

Example:
    ```python
    upstream = Upstream(["node", "server.js"], startup_timeout=30)
    await upstream.check()   # UpstreamError("cannot start upstream MCP server `node ...`: ...")
    ```
"""

from __future__ import annotations

import inspect
import logging
import os
import select
import shlex
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import anyio
import mcp_types as mt
from fastmcp import Client, FastMCP
from fastmcp.client.transports import ClientTransport, StdioTransport
from fastmcp.server.providers.proxy import ProxyClient
from mcp import MCPError
from mcp.client.session import ClientSession

from .fastmcp_internals import connect_failure, send_stderr_to, stdio_session_ended
from .options import MAX_UPSTREAM_TIMEOUT, fail, seconds, text_mapping

logger = logging.getLogger("fastmcp_progressive")

Target = str | Sequence[str] | FastMCP[Any] | Client[Any] | ClientTransport
"""A URL, a command line (``["npx", "-y", "pkg"]``), or anything ``create_proxy`` takes."""

DEFAULT_STARTUP_TIMEOUT = 60.0  # npx may download the server on first use
DEFAULT_REQUEST_TIMEOUT = 300.0
STDERR_LINES_KEPT = 20
STDERR_LINES_SHOWN = 5


class UpstreamError(RuntimeError):
    """The upstream cannot serve: it did not start, exited, is unreachable or too slow."""


def is_url(text: str) -> bool:
    """Whether a proxy target names an HTTP(S) server rather than a command."""
    return text.startswith(("http://", "https://"))


# -- the upstream's stderr ------------------------------------------------------------------
class StderrTail:
    """The upstream's stderr: passed through to ours (hosts log it), last lines kept.

    The process writes into a pipe; a daemon thread copies each line to our stderr and
    remembers the last ones, which is what an error about the upstream quotes.
    """

    def __init__(self, keep: int = STDERR_LINES_KEPT) -> None:
        read_fd, write_fd = os.pipe()
        self._read_fd = read_fd
        self.writer = os.fdopen(write_fd, "w")  # handed to the process as its stderr
        self._lines: deque[str] = deque(maxlen=keep)
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, name="upstream-stderr", daemon=True).start()

    def _pump(self) -> None:
        with open(self._read_fd, "rb", closefd=True) as reader:
            for raw in reader:
                line = raw.decode("utf-8", "replace")
                with self._lock:
                    self._lines.append(line.rstrip())
                try:
                    sys.stderr.write(line)
                    sys.stderr.flush()
                except (OSError, ValueError):  # our stderr is gone; keep draining the pipe
                    pass

    def last(self, count: int = STDERR_LINES_SHOWN, *, settle: float = 0.3) -> list[str]:
        """The last ``count`` non-blank lines, once what is already in the pipe was read."""
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline and self._pending():
            time.sleep(0.01)
        with self._lock:
            return [line for line in self._lines if line.strip()][-count:]

    def _pending(self) -> bool:
        try:
            return bool(select.select([self._read_fd], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        self.writer.close()


# -- the upstream command ----------------------------------------------------------------------
class UpstreamCommand(StdioTransport):
    """FastMCP's stdio transport for one upstream command, started once per proxy run.

    One process and one session serve every request (FastMCP's ``keep_alive``). Unlike the
    plain transport, a process that exits on its own is not silently started again: each
    later request fails with ``UpstreamError`` saying so, until ``close()`` (the proxy's
    shutdown) resets it.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        if not argv or not argv[0]:
            raise ValueError("the upstream command is empty")
        self.argv = list(argv)
        self.label = f"`{shlex.join(self.argv)}`"
        self.stderr: StderrTail | None = None  # one per process start, made at connect
        self._started = False
        super().__init__(
            self.argv[0],
            self.argv[1:],
            # The proxy is transparent: the upstream sees our environment (API keys a host
            # config sets for it), plus anything given here.
            env={**os.environ, **(env or {})},
            cwd=os.fspath(cwd) if cwd is not None else None,
            keep_alive=True,
        )

    @property
    def ended(self) -> bool:
        """Whether the process this proxy started has exited by itself."""
        return self._started and stdio_session_ended(self)

    async def connect(self, **kwargs: Any) -> ClientSession | None:
        if self.ended:
            raise UpstreamError(self.exited())
        if self.stderr is None:
            self.stderr = StderrTail()
            send_stderr_to(self, self.stderr.writer)  # what FastMCP hands the process
        try:
            session = await super().connect(**kwargs)
        except FileNotFoundError:
            raise UpstreamError(self._cannot_start(f"command {self.argv[0]!r} not found")) from None
        except PermissionError:
            raise UpstreamError(self._cannot_start(f"{self.argv[0]!r} is not executable")) from None
        except OSError as exc:
            raise UpstreamError(self._cannot_start(exc.strerror or str(exc))) from None
        self._started = True
        return session

    async def close(self) -> None:
        """Stop the process (our shutdown); a later request may start it again."""
        self._started = False
        await super().close()  # type: ignore[no-untyped-call]
        if self.stderr is not None:  # the process is gone: its pipe's reader sees the end
            self.stderr.close()
            self.stderr = None

    def exited(self, *, starting: bool = False) -> str:
        if starting:
            return (f"upstream MCP server {self.label} exited while starting (its stdio "
                    f"connection closed).{self._stderr_note()}")
        return (f"upstream MCP server {self.label} has exited (its stdio connection closed); "
                f"restart the proxy to start it again.{self._stderr_note()}")

    def _cannot_start(self, why: str) -> str:
        return f"cannot start upstream MCP server {self.label}: {why}"

    def _stderr_note(self) -> str:
        lines = self.stderr.last() if self.stderr is not None else []
        if not lines:
            return ""
        return " Its last lines on stderr: " + " | ".join(line.strip()[:300] for line in lines)


# -- naming the upstream in errors ------------------------------------------------------------
class Upstream:
    """The server behind the proxy: how to name it, reach it, and explain its failures."""

    def __init__(
        self,
        target: Target,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        seconds("startup_timeout", startup_timeout, MAX_UPSTREAM_TIMEOUT)
        if request_timeout is not None:  # None: no limit; NaN or inf never mean that
            seconds("request_timeout", request_timeout, MAX_UPSTREAM_TIMEOUT)
        text_mapping("env", env)
        if cwd is not None and not os.path.isdir(cwd):
            fail("cwd", "an existing folder or None", cwd)
        self.startup_timeout = startup_timeout
        self.request_timeout = request_timeout
        self.command: UpstreamCommand | None = None
        self.kind: Literal["command", "url", "other"] = "other"
        timeouts: dict[str, Any] = {"init_timeout": startup_timeout, "timeout": request_timeout}
        self.proxy_target: Any
        # The proxy's own factory, once there is a proxy: the check must connect exactly as
        # proxied requests do, or FastMCP takes the started process for a different
        # session's and starts another.
        self.client_factory: Callable[[], Any] | None = None
        if isinstance(target, str):
            if not is_url(target):
                raise ValueError(
                    f"{target!r} is not an http(s) URL; give a command as a list of arguments"
                )
            self.kind, self.label = "url", _safe_url(target)
            # "auto": the upstream may speak only the handshake era whatever the front speaks.
            self.proxy_target = ProxyClient(target, mode="auto", **timeouts)
        elif isinstance(target, Sequence):
            self.command = UpstreamCommand(list(target), env=env, cwd=cwd)
            self.kind, self.label = "command", self.command.label
            self.proxy_target = ProxyClient(self.command, mode="auto", **timeouts)
        else:
            self.label = f"`{getattr(target, 'name', None) or type(target).__name__}`"
            self.proxy_target = target

    async def check(self) -> int:
        """Connect and list the upstream's tools within the start-up timeout; their count.

        Raises ``UpstreamError`` naming the upstream when it cannot serve. Nothing to start
        for an in-process target (a FastMCP server, a ``Client`` or transport): 0.
        """
        if not isinstance(self.proxy_target, Client):
            return 0
        made = (self.client_factory or self.proxy_target.new)()
        client: Client[Any] = await made if inspect.isawaitable(made) else made
        try:
            with anyio.fail_after(self.startup_timeout):
                async with client:
                    return len(await client.list_tools())
        except TimeoutError as exc:
            raise UpstreamError(self._timed_out(self.startup_timeout, "at start-up")) from exc
        except Exception as exc:
            if self.command is not None and self.command.ended:
                raise UpstreamError(self.command.exited(starting=True)) from exc
            raise UpstreamError(self.explain(exc) or f"upstream MCP server {self.label}: "
                                f"{exc}") from exc

    async def close(self) -> None:
        if self.command is not None:
            await self.command.close()

    def explain(self, exc: BaseException) -> str | None:
        """A message naming the upstream and what happened, when ``exc`` is its failure."""
        chain = _causes(exc)
        for error in chain:
            if isinstance(error, UpstreamError):
                return str(error)
        if self.command is not None and self.command.ended:
            return self.command.exited()
        connecting = next((connect_failure(e) for e in chain if connect_failure(e)), None)
        if any(isinstance(e, TimeoutError) or _mcp_code(e) == mt.REQUEST_TIMEOUT
               for e in chain):
            if connecting is not None:
                return self._timed_out(self.startup_timeout, "when connecting")
            return self._timed_out(self.request_timeout, "to a request")
        if connecting is not None:
            return f"cannot reach upstream MCP server {self.label}: {connecting}"
        closed = next((e for e in chain if _mcp_code(e) == mt.CONNECTION_CLOSED), None)
        if closed is not None:
            return f"upstream MCP server {self.label} closed the connection ({closed})"
        return None

    def _timed_out(self, seconds: float | None, when: str) -> str:
        limit = f"within {seconds:g} s " if seconds is not None else ""
        return f"upstream MCP server {self.label} did not answer {limit}{when}"


# -- helpers ------------------------------------------------------------------------------------
def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it was raised from (or during), outermost first, at most 16 deep."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < 16:
        chain.append(current)
        seen.add(id(current))
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
        else:
            current = current.__cause__ or current.__context__
    return chain


def _mcp_code(error: BaseException) -> int | None:
    if isinstance(error, MCPError):
        return error.error.code
    return None


def _safe_url(url: str) -> str:
    """The URL without credentials or query (tokens live there), for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
