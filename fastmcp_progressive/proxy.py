"""A progressive front for any MCP server: FastMCP's own proxy with the middleware on.

Hosts such as Claude Desktop or Cursor run MCP servers written in any language, most of
which the user does not own. ``progressive_proxy(target)`` puts such a server (a command
speaking MCP over stdio, or a URL) behind ``fastmcp.server.create_proxy`` and adds
``ProgressiveDisclosure`` to the proxy, so the host gets short listings, the gate and
description files the user writes for the upstream's tools, while the upstream's tools,
resources and prompts are served as they are. ``fastmcp-progressive proxy`` is the same
thing as a command (``serve``).

An upstream that cannot serve is reported by name, never waited on forever: a command
that is not found or exits at start, a URL that does not answer, or a process that dies
mid-session turns every request into an error naming the upstream and what happened
(with the last lines it wrote to stderr). A command the proxy started is not restarted
behind the client's back: its state is gone, so the client is told, and restarting the
proxy (what hosts do with "restart server") starts it again.

Example:
    ```python
    from fastmcp_progressive.proxy import progressive_proxy

    mcp = progressive_proxy(["npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"],
                            descriptions_dir="fs_descriptions")
    mcp.run()  # stdio; or mcp.run(transport="http", port=8000)
    ```
"""

from __future__ import annotations

import logging
import os
import select
import shlex
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, nullcontext
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import anyio
import mcp_types as mt
from fastmcp import Client, FastMCP
from fastmcp.client.transports import ClientTransport, StdioTransport
from fastmcp.exceptions import ToolError
from fastmcp.server import create_proxy
from fastmcp.server.auth import AuthProvider
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.providers.proxy import ProxyClient, ProxyMetadataMiddleware
from mcp import MCPError
from mcp.client.session import ClientSession

from .caller import stdio_session_ended
from .middleware import ProgressiveDisclosure

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
            self.log_file = self.stderr.writer  # what FastMCP hands the process as stderr
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

    def exited(self) -> str:
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
        if startup_timeout <= 0:
            raise ValueError("startup_timeout must be positive")
        if request_timeout is not None and request_timeout <= 0:
            raise ValueError("request_timeout must be positive (or None)")
        self.startup_timeout = startup_timeout
        self.request_timeout = request_timeout
        self.command: UpstreamCommand | None = None
        self.kind: Literal["command", "url", "other"] = "other"
        timeouts: dict[str, Any] = {"init_timeout": startup_timeout, "timeout": request_timeout}
        self.proxy_target: Any
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

        Raises ``UpstreamError`` naming the upstream when it cannot serve.
        """
        if not isinstance(self.proxy_target, Client):
            return 0
        client = self.proxy_target.new()
        try:
            with anyio.fail_after(self.startup_timeout):
                async with client:
                    return len(await client.list_tools())
        except TimeoutError as exc:
            raise UpstreamError(self._timed_out(self.startup_timeout, "at start-up")) from exc
        except Exception as exc:
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
        connecting = next((_connect_failure(e) for e in chain if _connect_failure(e)), None)
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


class UpstreamFailures(Middleware):
    """Outermost on the proxy: an upstream failure becomes an error naming the upstream.

    ``tools/call`` answers a tool error (``isError``, the model reads it); every other
    request a JSON-RPC error. Errors the upstream itself answered pass through untouched.
    """

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream

    async def on_message(
        self,
        context: MiddlewareContext[Any],
        call_next: CallNext[Any, Any],
    ) -> Any:
        try:
            return await call_next(context)
        except Exception as exc:
            reason = self.upstream.explain(exc)
            if reason is None:
                raise
            logger.error("%s (during %s)", reason, context.method)
            if context.method == "tools/call":
                raise ToolError(reason) from exc
            raise MCPError(code=mt.INTERNAL_ERROR, message=reason) from exc


class UpstreamMetadata(Middleware):
    """FastMCP's proxy metadata middleware, minus failing the handshake for a dead upstream.

    That middleware copies the upstream's instructions into ``initialize`` /
    ``server/discover`` and raises when the upstream cannot be reached. A handshake that
    fails reads as "wrong protocol era" to a negotiating client, so instead the handshake
    completes without the upstream's metadata and each later request names the failure.
    """

    def __init__(self, inner: Middleware, upstream: Upstream) -> None:
        self.inner = inner
        self.upstream = upstream

    async def on_initialize(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        return await self._tolerant(self.inner.on_initialize, context, call_next)

    async def on_discover(self, context: MiddlewareContext[Any],
                          call_next: CallNext[Any, Any]) -> Any:
        return await self._tolerant(self.inner.on_discover, context, call_next)

    async def _tolerant(self, hook: Any, context: MiddlewareContext[Any],
                        call_next: CallNext[Any, Any]) -> Any:
        answered: list[Any] = []

        async def keep(ctx: MiddlewareContext[Any]) -> Any:
            answered.append(await call_next(ctx))
            return answered[-1]

        try:
            return await hook(context, keep)
        except Exception as exc:
            reason = self.upstream.explain(exc)
            if reason is None or not answered:
                raise
            logger.warning("%s (during %s)", reason, context.method)
            return answered[-1]


# -- the Python form ---------------------------------------------------------------------------
def progressive_proxy(
    target: Target,
    *,
    descriptions_dir: str | os.PathLike[str] | None = None,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    auth: AuthProvider | None = None,
    **options: Any,
) -> FastMCP[Any]:
    """A FastMCP server serving ``target`` through FastMCP's proxy, progressive disclosure on.

    Args:
        target: a command line as a list (``["node", "server.js"]``, run over stdio, in
            our environment plus ``env``, in ``cwd``), an ``http(s)://`` URL (streamable
            HTTP, or SSE for a ``/sse`` path), or anything ``create_proxy`` accepts
            (a FastMCP server, a ``Client``, a transport).
        descriptions_dir: description files for the upstream's tools (hot reload applies).
        name: the proxy's server name (default: ``progressive <upstream>``).
        startup_timeout: seconds the upstream may take to start and answer ``initialize``.
        request_timeout: seconds one upstream request may take (``None``: no limit).
        auth: the proxy's own auth (FastMCP ``AuthProvider``); over 2026-07-28 HTTP it is
            what gives callers an identity to gate (see ``anonymous``).
        **options: further ``ProgressiveDisclosure`` options (``listing``, ``anonymous``...).

    The proxy owns the upstream process: it starts with the first request (or
    ``await check_upstream(server)``) and stops with the server's lifespan.
    """
    disclosure = ProgressiveDisclosure(descriptions_dir, **options)
    upstream = Upstream(target, env=env, cwd=cwd, startup_timeout=startup_timeout,
                        request_timeout=request_timeout)

    @asynccontextmanager
    async def stop_upstream(_server: FastMCP[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await upstream.close()

    server = create_proxy(
        upstream.proxy_target,
        name=name or f"progressive {upstream.label.strip('`')}",
        provider_error_strategy="raise",  # an unreachable upstream must not list as empty
        lifespan=stop_upstream,
        auth=auth,
    )
    # Outermost first: failures named; then the middleware, outside FastMCP's proxy
    # metadata middleware so the upstream's instructions are kept and ours appended.
    failures = UpstreamFailures(upstream)
    server.add_middleware(disclosure)
    server.add_middleware(failures)
    server.middleware[:] = [
        failures,
        disclosure,
        *(UpstreamMetadata(m, upstream) if isinstance(m, ProxyMetadataMiddleware) else m
          for m in server.middleware if m is not failures and m is not disclosure),
    ]
    return server


def upstream_of(server: FastMCP[Any]) -> Upstream:
    """The upstream a ``progressive_proxy`` server serves."""
    for middleware in server.middleware:
        if isinstance(middleware, UpstreamFailures):
            return middleware.upstream
    raise ValueError(f"{server.name!r} was not made by progressive_proxy")


async def check_upstream(server: FastMCP[Any]) -> int:
    """Start (or reach) the upstream of a ``progressive_proxy`` server now; its tool count.

    Raises ``UpstreamError`` with a message naming the upstream if it cannot serve, so a
    command line or service can fail at start rather than on the first request.
    """
    return await upstream_of(server).check()


# -- the command -----------------------------------------------------------------------------
def parse_listen(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` -> (host, port); the host defaults to 127.0.0.1 (local only)."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--http takes [HOST:]PORT with a port from 1 to 65535, not {text!r}")
    return host, int(port)


async def serve(
    target: Target,
    *,
    http: tuple[str, int] | None = None,
    **settings: Any,
) -> None:
    """Check the upstream, then serve the proxy over stdio (or streamable HTTP at ``http``).

    SIGTERM and SIGINT stop serving, and the upstream is always stopped before we return:
    hosts close our stdin and send SIGTERM shortly after, and the upstream runs in its own
    process group, so dying on that signal would leave it running.
    """
    server = progressive_proxy(target, **settings)
    upstream = upstream_of(server)
    with _stop_signals() as signals:
        try:
            tools = await upstream.check()
            logger.info("serving %s (%d tools) with progressive disclosure", upstream.label,
                        tools)
            async with anyio.create_task_group() as group:

                async def stop_on_signal() -> None:
                    async for _ in signals:
                        group.cancel_scope.cancel()
                        return

                group.start_soon(stop_on_signal)
                if http is None:
                    await server.run_async(transport="stdio", show_banner=False)
                else:
                    host, port = http
                    await server.run_async(transport="http", host=host, port=port,
                                           show_banner=False)
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await upstream.close()


def _stop_signals() -> Any:
    """A receiver of SIGTERM/SIGINT (none on Windows, where Ctrl-C raises as usual)."""
    if sys.platform == "win32":
        return nullcontext(_no_signals())
    return anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT)


async def _no_signals() -> AsyncIterator[int]:
    await anyio.sleep_forever()
    yield 0  # pragma: no cover


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


_CONNECT_FAILED = "Client failed to connect: "


def _connect_failure(error: BaseException) -> str | None:
    """Why FastMCP's client could not connect, when ``error`` is that failure."""
    text = str(error)
    return text.rsplit(_CONNECT_FAILED, 1)[-1] if _CONNECT_FAILED in text else None


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
