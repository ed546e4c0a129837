"""The server behind a progressive proxy: how to start it, name it and explain its failures.

``Upstream`` wraps what ``create_proxy`` is given: a command (``UpstreamCommand``, a client
transport of ours that starts the process itself, once per proxy run, passes its stderr
through and keeps its last lines, and stops and reaps its process group) or a URL
(FastMCP's own remote transport, as ``MCPConfig`` builds it), reached through one
``RoutingProxyClient`` (FastMCP's ``StatefulProxyClient`` relaying per caller,
``forwarding.py``). An ``mcpServers`` entry (``Upstream.from_config``) gives the same.
``Upstream.explain`` turns a failure to reach it (not found, exited, unreachable, too slow)
into one sentence naming it; ``front.py`` and ``gateway.py`` put that sentence in front of
the client, and ``status()`` says where each upstream stands.

Example:
    ```python
    upstream = Upstream(["node", "server.js"], startup_timeout=30)
    await upstream.check()   # UpstreamError("cannot start upstream MCP server `node ...`: ...")
    ```
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Unpack
from urllib.parse import urlsplit, urlunsplit

import anyio
import anyio.abc
import httpx2
import mcp_types as mt
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from fastmcp import Client, FastMCP
from fastmcp.client.transports import ClientTransport
from fastmcp.client.transports.base import SessionKwargs, TransportOptions
from fastmcp.mcp_config import RemoteMCPServer, StdioMCPServer
from mcp import MCPError
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage

from fastmcp_progressive.fastmcp_internals import (
    connect_failure,
)
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.options import MAX_UPSTREAM_TIMEOUT, fail, seconds, text_mapping
from fastmcp_progressive.proxy.forwarding import RoutingProxyClient
from fastmcp_progressive.proxy.stderr_tail import StderrTail

logger = get_logger("proxy")

Target = str | Sequence[str] | FastMCP[Any] | Client[Any] | ClientTransport
"""A URL, a command line (``["npx", "-y", "pkg"]``), or anything ``create_proxy`` takes."""

DEFAULT_STARTUP_TIMEOUT = 60.0  # npx may download the server on first use
DEFAULT_REQUEST_TIMEOUT = 300.0
ROOTS_WAIT = 5.0  # seconds a front request waits for an upstream to re-read its roots
ROOTS_SETTLE_PINGS = 3  # round trips after the answer, for the upstream to apply it
GROUP_STOP_GRACE = 2.0  # seconds an upstream's process group gets between SIGTERM and SIGKILL


class UpstreamError(RuntimeError):
    """The upstream cannot serve: it did not start, exited, is unreachable or too slow."""


def is_url(text: str) -> bool:
    """Whether a proxy target names an HTTP(S) server rather than a command."""
    return text.startswith(("http://", "https://"))


# -- the upstream command ----------------------------------------------------------------------
EXIT_GRACE = 2.0  # seconds an upstream gets to exit by itself once its stdin closes


class UpstreamCommand(ClientTransport):
    """The client transport of one upstream command: the proxy owns its process.

    ``connect_session`` starts the command in a session of its own (its pid is its process
    group), carries MCP's newline-delimited JSON-RPC over its stdin and stdout, and passes
    its stderr through (``StderrTail``, whose last lines errors quote). Starting the process
    here, rather than asking the MCP SDK to, is what lets the proxy stop the whole group and
    reap every process it started:

    - when the session ends (the proxy's shutdown, a forced disconnect) stdin closes, the
      process gets ``EXIT_GRACE`` s to exit, then its group gets SIGTERM and, after
      ``GROUP_STOP_GRACE`` s, SIGKILL, so what it started (node under ``npm exec``) stops too;
    - when the process exits by itself or is killed, its group is stopped the same way at
      once (a child still holding the pipes would keep the session looking alive), it is
      reaped (no zombie ``npm exec`` parent) and the session ends; it is not started again:
      each later connect fails with ``UpstreamError`` saying so, until ``forget()``;
    - when the proxy is killed outright, ``GroupReaper`` stops the group.

    One session at a time: the proxy's one client (``Upstream``) holds it for every request.
    """

    legacy_only = True  # the proxy speaks the handshake era to its upstreams

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        startup_timeout: float | None = None,
    ) -> None:
        if not argv or not argv[0]:
            raise ValueError("the upstream command is empty")
        self.startup_timeout = startup_timeout
        self.argv = list(argv)
        # The proxy is transparent: the upstream sees our environment (API keys a host
        # config sets for it), plus anything given here.
        self.env = {**os.environ, **(env or {})}
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.name = name
        self.label = f"`{name}`" if name else f"`{shlex.join(self.argv)}`"
        self.stderr: StderrTail | None = None  # made at the first start, kept until forget()
        self.process: anyio.abc.Process | None = None  # while a session runs
        self.ended = False
        """Whether the process this transport started exited by itself (until ``forget()``)."""
        self._stopping = False

    @contextlib.asynccontextmanager
    async def connect_session(
        self,
        *,
        transport_options: TransportOptions | None = None,
        **session_kwargs: Unpack[SessionKwargs],
    ) -> AsyncIterator[ClientSession]:
        if self.ended:
            raise UpstreamError(self.exited())
        if self.process is not None:
            raise RuntimeError(f"upstream MCP server {self.label} already has a session")
        options = transport_options or TransportOptions()
        process, reaper = await self._start()
        self.process, self._stopping = process, False
        to_session, from_process = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_process, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._serve, process, to_session, from_session)
                try:
                    session_class = _starting(options.session_class, self.startup_timeout)
                    async with session_class(from_process, to_process,
                                             **session_kwargs) as session:
                        yield session
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(process)
                    tasks.cancel_scope.cancel()  # stopped: nothing left to carry or watch
        finally:
            self.process = None
            for stream in (to_session, from_process, to_process, from_session):
                stream.close()
            if reaper is not None:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(reaper.release)

    async def _start(self) -> tuple[anyio.abc.Process, GroupReaper | None]:
        if self.stderr is None:
            self.stderr = StderrTail(prefix=f"[{self.name}] " if self.name else "")
        try:
            process = await anyio.open_process(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self.stderr.writer, cwd=self.cwd, env=self.env, start_new_session=True,
            )
        except FileNotFoundError:
            raise UpstreamError(self._cannot_start(f"command {self.argv[0]!r} not found")) from None
        except PermissionError:
            raise UpstreamError(self._cannot_start(f"{self.argv[0]!r} is not executable")) from None
        except OSError as exc:
            raise UpstreamError(self._cannot_start(exc.strerror or str(exc))) from None
        return process, GroupReaper.start(process.pid)

    async def _serve(self, process: anyio.abc.Process,
                     to_session: MemoryObjectSendStream[SessionMessage | Exception],
                     from_session: MemoryObjectReceiveStream[SessionMessage]) -> None:
        """Carry messages both ways until the process's stdout ends, and watch the process
        itself until it exits (``_watch``). Stdout ending before we stop the process means
        it ``ended``: said before the session sees its stream end, so the requests that
        then fail are explained as that."""
        async with anyio.create_task_group() as watching:
            watching.start_soon(self._watch, process)
            async with anyio.create_task_group() as pumps:
                pumps.start_soon(_write_messages, process, from_session)
                try:
                    assert process.stdout is not None
                    await _read_messages(process.stdout, to_session)
                finally:
                    self.ended = self.ended or not self._stopping
                    to_session.close()
                    pumps.cancel_scope.cancel()

    async def _watch(self, process: anyio.abc.Process) -> None:
        """When the process exits by itself (or is killed), not because we stop it: it
        ``ended``; stop what it left running (which may hold its stdout open), then end its
        stdout, so the session ends too."""
        await exit_of(process)
        if self._stopping:
            return
        self.ended = True
        logger.warning("upstream MCP server %s exited (status %s)", self.label, process.returncode)
        await anyio.to_thread.run_sync(stop_process_groups, [process.pid])
        with contextlib.suppress(OSError, anyio.BrokenResourceError):
            if process.stdout is not None:
                await process.stdout.aclose()

    async def _stop(self, process: anyio.abc.Process) -> None:
        """Close stdin, give the process ``EXIT_GRACE`` s, then stop its whole group."""
        self._stopping = True
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            if process.stdin is not None:
                await process.stdin.aclose()
        with anyio.move_on_after(EXIT_GRACE):
            await exit_of(process)
        await anyio.to_thread.run_sync(stop_process_groups, [process.pid])
        with anyio.move_on_after(GROUP_STOP_GRACE):
            await process.aclose()  # its pipes closed; the event loop has reaped it

    def forget(self) -> None:
        """Forget a process that exited by itself (the proxy's shutdown): a later connect
        starts the command again. Its stderr tail is released once no process runs."""
        self.ended = False
        if self.stderr is not None and self.process is None:
            self.stderr.close()  # the process is gone: its pipe's reader sees the end
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

    def __repr__(self) -> str:
        return f"<UpstreamCommand({shlex.join(self.argv)!r})>"


def _starting(session_class: type[ClientSession],
              startup_timeout: float | None) -> type[ClientSession]:
    """``session_class`` whose handshake waits up to ``startup_timeout`` for the upstream
    (a server ``npx`` downloads first), not the request timeout every later request has."""

    class Starting(session_class):  # type: ignore[misc,valid-type]
        async def send_request(self, request: Any, result_type: Any,
                               request_read_timeout_seconds: float | None = None,
                               *args: Any, **kwargs: Any) -> Any:
            if request_read_timeout_seconds is None and isinstance(request,
                                                                   mt.InitializeRequest):
                request_read_timeout_seconds = startup_timeout
            return await super().send_request(request, result_type,
                                              request_read_timeout_seconds, *args, **kwargs)

    return Starting


async def exit_of(process: anyio.abc.Process) -> int:
    """The exit status of ``process`` once it has exited (the event loop reaps it).

    Not ``process.wait()``: on Python 3.11+ asyncio's also waits for the pipes to close,
    which a child of the process (node under ``npm exec``) may keep open.
    """
    with contextlib.suppress(AttributeError, OSError):  # no pidfd: poll
        handle = os.pidfd_open(process.pid)  # readable once the process has exited
        try:
            await anyio.wait_readable(handle)
        finally:
            os.close(handle)
    while (code := process.returncode) is None:
        await anyio.sleep(EXIT_POLL)
    return code


EXIT_POLL = 0.01


async def _read_messages(stdout: anyio.abc.ByteReceiveStream,
                         to_session: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
    """One JSON-RPC message per line of the process's stdout, to the session, until
    stdout ends (or the session does).

    Each chunk is searched for line ends once, and the chunks of a line joined once it is
    complete: a line costs time linear in its length. Joining the unfinished line to each
    new chunk and splitting it again was quadratic (a 32 MB line took 2.6 to 7.5 s).
    """
    parts: list[bytes] = []  # the line not finished yet
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                             anyio.BrokenResourceError, OSError):
        while True:
            chunk = await stdout.receive()
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                line = b"".join([*parts, chunk[start:end]]) if parts else chunk[start:end]
                parts, start = [], end + 1
                if line.strip():
                    await to_session.send(_message(line))
            if start < len(chunk):
                parts.append(chunk[start:])


async def _write_messages(process: anyio.abc.Process,
                          from_session: MemoryObjectReceiveStream[SessionMessage]) -> None:
    """Each message the session sends, as one line on the process's stdin."""
    assert process.stdin is not None
    async with from_session:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for outgoing in from_session:
                line = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(line.encode() + b"\n")


def _message(line: bytes) -> SessionMessage | Exception:
    """A line of the upstream's stdout as the session takes it (a bad line: its error)."""
    try:
        return SessionMessage(mt.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


_REAPER = """
import os, signal, sys, time
group = int(sys.argv[1])
sys.stdin.buffer.read()  # until the proxy closes its end: at shutdown, or when it dies
def alive(sig):
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
if alive(signal.SIGTERM):
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline and alive(0):
        time.sleep(0.02)
    alive(signal.SIGKILL)
"""


class GroupReaper:
    """A tiny process that stops an upstream's process group once the proxy is gone.

    The proxy stops the group itself on shutdown, but a proxy killed outright (SIGKILL, a
    crash, an out-of-memory kill) runs no shutdown: the upstream sees its stdin close and
    may exit, while the processes it started keep running. The reaper holds the read end
    of a pipe only the proxy writes to; when the proxy's end closes, however the proxy
    ended, it stops the group. It runs in its own session, so a host that kills the
    proxy's process group does not kill it first. POSIX only.
    """

    def __init__(self, process: subprocess.Popen[bytes], write_fd: int) -> None:
        self.process = process
        self._write_fd: int | None = write_fd

    @classmethod
    def start(cls, pgid: int) -> GroupReaper | None:
        if sys.platform == "win32":  # the SDK's job object ends with us there
            return None
        read_fd, write_fd = os.pipe()  # not inherited by the upstreams (O_CLOEXEC)
        try:
            process = subprocess.Popen(
                [sys.executable, "-S", "-c", _REAPER, str(pgid), str(GROUP_STOP_GRACE)],
                stdin=read_fd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True,
            )
        except OSError as exc:
            logger.warning("cannot start a reaper for upstream process group %d: %s", pgid,
                           exc)
            os.close(write_fd)
            return None
        finally:
            os.close(read_fd)
        return cls(process, write_fd)

    def release(self) -> None:
        """Our end closes: the reaper stops the group (already stopped) and exits."""
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None
        try:
            self.process.wait(timeout=GROUP_STOP_GRACE + 3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def stop_process_groups(pgids: Sequence[int], grace: float = GROUP_STOP_GRACE) -> None:
    """SIGTERM each process group still alive, SIGKILL what is left after ``grace`` s.

    The groups are the upstreams' own (the SDK starts each in a new session), so this
    never reaches the proxy or another upstream. Blocking: run it in a thread.
    """
    if sys.platform == "win32" or not pgids:  # Windows: the SDK's job object does this
        return
    alive = [pgid for pgid in pgids if _signal_group(pgid, signal.SIGTERM)]
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pgid for pgid in alive if _signal_group(pgid, 0)]
    for pgid in alive:
        _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to group ``pgid``; whether the group still exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- naming the upstream in errors ------------------------------------------------------------
UpstreamState = Literal["not started", "starting", "serving", "failed", "exited"]


class Upstream:
    """One server behind the proxy: how to name it, reach it, and explain its failures.

    A command or URL upstream is served through one client, connected once (at start, or
    on the first request) and reused by every request, the way FastMCP's own multi-server
    ``MCPConfig`` proxy reuses its connected clients: one process, one session, for every
    front caller. It speaks the handshake era to the upstream, the era in which an
    upstream can ask its client for roots, sampling and elicitation.

    What the upstream sends on its own never reaches the wrong caller
    (``RoutingProxyClient``): progress goes to the call it reports on; an elicitation or
    sampling request and a log message go to a front caller (handshake session) only when
    every request the upstream has not answered yet is that caller's, even one whose
    client gave up. Otherwise, as over HTTP with several callers, nothing on stdio says
    whose call asked, so such a request is refused to the upstream with an error saying
    so (its tool sees the error) and a log message stays in the proxy's log; FastMCP
    alone relays each to whichever caller used the session last. Roots go to the
    front session whose roots the upstream holds (``RootsForwarding``). The front's HTTP
    headers are not forwarded (one session serves every caller); a URL upstream's own
    ``headers`` and ``auth`` are.
    """

    def __init__(
        self,
        target: Target,
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
        transport: ClientTransport | None = None,
    ) -> None:
        seconds("startup_timeout", startup_timeout, MAX_UPSTREAM_TIMEOUT)
        if request_timeout is not None:  # None: no limit; NaN or inf never mean that
            seconds("request_timeout", request_timeout, MAX_UPSTREAM_TIMEOUT)
        text_mapping("env", env)
        if cwd is not None and not os.path.isdir(cwd):
            fail("cwd", "an existing folder or None", cwd)
        self.name = name
        self.startup_timeout = startup_timeout
        self.request_timeout = request_timeout
        self.command: UpstreamCommand | None = None
        self.kind: Literal["command", "url", "other"] = "other"
        self.state: UpstreamState = "not started"
        self.reason: str | None = None
        self.instructions: str | None = None
        self.tool_count: int | None = None
        self.roots_asked = False  # the upstream asked for roots at least once
        self.roots_front: Any = None  # the last front session with roots (its ServerSession)
        self.on_connected: list[Callable[[Upstream], None]] = []  # e.g. keep its instructions
        self.on_resource_updated: Callable[[str], Awaitable[None]] | None = None  # mirrored.py
        self._transport: ClientTransport | None = None
        self._client: RoutingProxyClient | None = None
        self._lock: anyio.Lock | None = None
        self._roots_answered: anyio.Event | None = None
        self.proxy_target: Any = None
        if isinstance(target, str):
            if not is_url(target):
                raise ValueError(
                    f"{target!r} is not an http(s) URL; give a command as a list of arguments"
                )
            self.kind = "url"
            self.label = f"`{name}`" if name else _safe_url(target)
            self._transport = transport or _url_transport(target)
        elif isinstance(target, Sequence):
            self.command = UpstreamCommand(list(target), env=env, cwd=cwd, name=name,
                                           startup_timeout=startup_timeout)
            self.kind, self.label = "command", self.command.label
            self._transport = self.command
        else:
            self.label = f"`{name or getattr(target, 'name', None) or type(target).__name__}`"
            self.proxy_target = target

    @classmethod
    def from_config(
        cls,
        name: str,
        entry: StdioMCPServer | RemoteMCPServer,
        *,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    ) -> Upstream:
        """The upstream one ``mcpServers`` entry describes (FastMCP's ``MCPConfig`` types).

        ``timeout`` in the entry (milliseconds, as in ``MCPConfig``; 0: none) overrides
        ``request_timeout`` for this server.
        """
        if entry.timeout is not None:
            request_timeout = entry.timeout / 1000 or None
        if isinstance(entry, StdioMCPServer):
            return cls([entry.command, *entry.args], name=name,
                       env={k: str(v) for k, v in entry.env.items()}, cwd=entry.cwd,
                       startup_timeout=startup_timeout, request_timeout=request_timeout)
        # FastMCP builds the remote transport (headers, auth, SSE or streamable HTTP).
        transport = RemoteMCPServer.to_transport(entry)
        return cls(entry.url, name=name, transport=transport,
                   startup_timeout=startup_timeout, request_timeout=request_timeout)

    # -- the one backend client -----------------------------------------------------------
    def _new_client(self) -> RoutingProxyClient:
        assert self._transport is not None
        return RoutingProxyClient(
            self._transport, label=self.label, roots_session=lambda: self.roots_front,
            roots_answered=self._note_roots_answered, mode="legacy",
            init_timeout=self.startup_timeout, timeout=self.request_timeout,
            forward_incoming_headers=False, resource_updated=self._resource_updated,
        )

    @property
    def client(self) -> RoutingProxyClient | None:
        """The upstream's client once connected (None before, or after it failed)."""
        return self._client

    async def _resource_updated(self, uri: str) -> None:
        if self.on_resource_updated is not None:
            await self.on_resource_updated(uri)

    async def connected(self) -> RoutingProxyClient:
        """The upstream's client, connected (started now if it is not yet): the proxy's
        ``client_factory``. Raises ``UpstreamError`` naming the upstream when it cannot."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            client = self._client
            if client is not None and client.is_connected():
                return client
            if client is not None:  # a session that ended: let the transport say why
                with anyio.CancelScope(shield=True):
                    await _quietly(client.close())  # type: ignore[no-untyped-call]
            client = self._client = self._new_client()
            try:
                with anyio.fail_after(self.startup_timeout):
                    await client.hold()
            except TimeoutError as exc:
                self._client = None
                raise self._failed(UpstreamError(self._timed_out(self.startup_timeout,
                                                                  "at start-up"))) from exc
            except Exception as exc:
                self._client = None
                if self.command is not None and self.command.ended:
                    raise self._failed(UpstreamError(self.command.exited(starting=True))) from exc
                raise self._failed(UpstreamError(
                    self.explain(exc) or f"upstream MCP server {self.label}: {exc}")) from exc
            result = client.initialize_result
            self.instructions = getattr(result, "instructions", None) if result else None
            self.state, self.reason = "serving", None
            for hook in self.on_connected:
                hook(self)
            return client

    async def check(self) -> int:
        """Connect and list the upstream's tools within the start-up timeout; their count.

        Raises ``UpstreamError`` naming the upstream when it cannot serve. Nothing to start
        for an in-process target (a FastMCP server, a ``Client`` or transport): 0.
        """
        if self._transport is None:
            return 0
        self.state = "starting"
        client = await self.connected()
        try:
            with anyio.fail_after(self.startup_timeout):
                async with client:
                    self.tool_count = len(await client.list_tools())
        except TimeoutError as exc:
            raise self._failed(UpstreamError(self._timed_out(self.startup_timeout,
                                                              "at start-up"))) from exc
        except Exception as exc:
            raise self._failed(UpstreamError(
                self.explain(exc) or f"upstream MCP server {self.label}: {exc}")) from exc
        return self.tool_count

    async def start(self) -> bool:
        """``check()``, recording the outcome in ``state``/``reason`` instead of raising."""
        started = time.monotonic()
        try:
            tools = await self.check()
        except UpstreamError as exc:
            logger.error("%s", exc)
            return False
        logger.info("upstream %s serving %d tools (started in %.2f s)", self.label, tools,
                    time.monotonic() - started)
        return True

    async def forget_session(self) -> None:
        """After a URL upstream failed: drop its session, so the next request connects
        again (the server may be back) rather than reusing a dead one."""
        if self.kind != "url" or self._lock is None:
            return
        async with self._lock:
            client, self._client = self._client, None
            if client is not None:
                with anyio.CancelScope(shield=True):
                    await _quietly(client.close())  # type: ignore[no-untyped-call]

    def _failed(self, error: UpstreamError) -> UpstreamError:
        self.state, self.reason = "failed", str(error)
        return error

    def status(self) -> dict[str, Any]:
        """What the proxy's status resource says about this upstream."""
        if self.command is not None and self.command.ended and self.state == "serving":
            self.state, self.reason = "exited", self.command.exited()
        return {"name": self.name, "state": self.state, "reason": self.reason,
                "tools": self.tool_count, "upstream": self.label.strip("`")}

    async def close(self) -> None:
        client, self._client = self._client, None
        with anyio.CancelScope(shield=True):
            if client is not None:
                await _quietly(client.close())  # type: ignore[no-untyped-call]  # session, transport
            elif self._transport is not None:
                await _quietly(self._transport.close())  # type: ignore[no-untyped-call]
        if self.command is not None:
            self.command.forget()
        self.state, self.reason = "not started", None  # a later start tries again

    # -- roots -------------------------------------------------------------------------
    def note_roots_front(self, ctx: Any) -> None:
        """Remember the front session (of ``ctx``) whose roots this upstream should get."""
        self.roots_front = ctx.session

    def _note_roots_answered(self) -> None:
        self.roots_asked = True
        if self._roots_answered is not None:
            self._roots_answered.set()

    async def resync_roots(self, ctx: Any, wait: float = ROOTS_WAIT) -> bool:
        """Have the upstream read the roots of the front request ``ctx`` now.

        An upstream that asks for roots does so when its session starts, which the proxy
        does before any client is there to answer; the relay then has nobody to ask. So
        when a front session that has roots arrives (or says its roots changed), the
        upstream is told its roots changed, asks again, and the relay puts the question
        to this front session (``roots_front``). Waits (at most ``wait`` s) for
        the answer, so the request that triggered it runs against the new roots.
        """
        self.note_roots_front(ctx)
        client = self._client
        if client is None or not client.is_connected() or not self.roots_asked:
            return False
        answered = self._roots_answered = anyio.Event()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated in 2026-07-28, not in our era
                await client.session.send_roots_list_changed()
        except Exception as exc:  # the upstream is gone: its requests will say so
            logger.debug("could not tell %s its roots changed: %s", self.label, exc)
            return False
        with anyio.move_on_after(wait):
            await answered.wait()
            # The upstream applies the answer after it arrives (server-filesystem checks
            # each folder first): a few round trips let it finish before our request goes.
            for _ in range(ROOTS_SETTLE_PINGS):
                await client.session.send_ping()
        return answered.is_set()

    # -- naming failures ------------------------------------------------------------------
    def explain(self, exc: BaseException) -> str | None:
        """A message naming the upstream and what happened, when ``exc`` is its failure."""
        chain = _causes(exc)
        for error in chain:
            if isinstance(error, UpstreamError):
                return str(error)
        if self.command is not None and self.command.ended:
            return self.command.exited()
        connecting = next((connect_failure(e) for e in chain if connect_failure(e)), None)
        if connecting is None and self.kind == "url":
            connecting = next((str(e) or type(e).__name__ for e in chain
                               if isinstance(e, (httpx2.TransportError, OSError))), None)
        if any(isinstance(e, TimeoutError) or _mcp_code(e) == mt.REQUEST_TIMEOUT
               for e in chain):
            if connecting is not None:
                return self._timed_out(self.startup_timeout, "when connecting")
            return self._timed_out(self.request_timeout, "to a request")
        if connecting is not None:
            return f"cannot reach upstream MCP server {self.label}: {connecting}"
        closed = next((e for e in chain if _mcp_code(e) == mt.CONNECTION_CLOSED), None)
        if closed is not None and self.kind == "url":
            return f"cannot reach upstream MCP server {self.label}: the connection closed"
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


def _url_transport(url: str) -> ClientTransport:
    """FastMCP's transport for a URL: SSE for an ``/sse`` path, else streamable HTTP."""
    return RemoteMCPServer(url=url).to_transport()


async def _quietly(work: Awaitable[Any]) -> None:
    """Shutdown work that must not stop the rest of the shutdown."""
    try:
        await work
    except Exception as exc:
        logger.debug("while stopping an upstream: %s", exc)


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
