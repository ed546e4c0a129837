"""The server behind a progressive proxy: how to start it, name it and explain its failures.

``Upstream`` wraps what ``create_proxy`` is given: a command (``command.py:UpstreamCommand``,
a client transport of ours that starts the process itself, once per proxy run, passes its stderr
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

import os
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import anyio
import anyio.abc
import httpx2
import mcp_types as mt
from fastmcp import Client, FastMCP
from fastmcp.client.transports import ClientTransport
from fastmcp.mcp_config import RemoteMCPServer, StdioMCPServer
from mcp import MCPError

from fastmcp_progressive.fastmcp_internals import (
    connect_failure,
)
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.options import fail, seconds
from fastmcp_progressive.proxy.command import UpstreamCommand, UpstreamError
from fastmcp_progressive.proxy.forwarding import RoutingProxyClient, full_listing

logger = get_logger("proxy")

Target = str | Sequence[str] | FastMCP[Any] | Client[Any] | ClientTransport
"""A URL, a command line (``["npx", "-y", "pkg"]``), or anything ``create_proxy`` takes."""

DEFAULT_STARTUP_TIMEOUT = 60.0  # npx may download the server on first use
DEFAULT_REQUEST_TIMEOUT = 300.0
MAX_UPSTREAM_TIMEOUT = 7 * 24 * 3600.0
"""The longest start-up or request timeout an upstream takes (a week)."""
ROOTS_WAIT = 5.0  # seconds a front request waits for an upstream to re-read its roots
ROOTS_SETTLE_PINGS = 3  # round trips after the answer, for the upstream to apply it


def is_url(text: str) -> bool:
    """Whether a proxy target names an HTTP(S) server rather than a command."""
    return text.startswith(("http://", "https://"))


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
            extensions=[full_listing()],  # we disclose ourselves (forwarding.py)
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


def text_mapping(name: str, value: Any) -> None:
    """A mapping of strings to strings, or None (an upstream's environment)."""
    if value is None:
        return
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        fail(name, "a mapping of str to str or None", value)
