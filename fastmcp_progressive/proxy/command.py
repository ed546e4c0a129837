"""The client transport of one upstream command (``UpstreamCommand``): the proxy starts the
process itself, carries MCP's newline-delimited JSON-RPC over its stdin and stdout, passes
its stderr through, and stops and reaps its whole process group (``process_groups.py``).
``UpstreamError`` is what it (and ``upstream.py``) raise when the upstream cannot serve.

Example:
    ```python
    transport = UpstreamCommand(["node", "server.js"], name="notes")
    async with Client(transport) as client: ...
    ```
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Unpack

import anyio
import anyio.abc
import mcp_types as mt
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from fastmcp.client.transports import ClientTransport
from fastmcp.client.transports.base import SessionKwargs, TransportOptions
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage

from fastmcp_progressive.log import get_logger
from fastmcp_progressive.proxy.process_groups import (
    GROUP_STOP_GRACE,
    GroupReaper,
    stop_process_groups,
)
from fastmcp_progressive.proxy.stderr_tail import StderrTail

logger = get_logger("proxy")


class UpstreamError(RuntimeError):
    """The upstream cannot serve: it did not start, exited, is unreachable or too slow."""


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
