"""Helpers the bad-input and fault tests share.

- ``Live``: a server over real HTTP (or in memory) with connected clients, on an event
  loop in its own thread (an anyio blocking portal), so synchronous hypothesis tests can
  drive it example after example without restarting it;
- ``OpenedFiles``: every file the process opens or lists while recording, from a
  ``sys.addaudithook`` hook (installed once per process; idle when not recording).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal
from fastmcp import Client, FastMCP
from mcp.shared.exceptions import MCPError

from fastmcp_progressive import DESCRIPTIONS_URI
from tests.conftest import Era, connect, serve_http
from tests.waiting import PATIENCE

T = TypeVar("T")
INTERNAL_ERROR = -32603
HTTP_REFUSAL = "Server returned an error response"  # the SDK client's text for HTTP >= 400


class Live:
    """``with Live(server, transport) as live: live.read("legacy", uri)``."""

    def __init__(
        self,
        server: FastMCP,
        transport: str = "http",
        eras: tuple[Era, ...] = ("legacy", "modern"),
        token: str | None = "alice-token",
    ) -> None:
        self.server = server
        self.transport = transport
        self.eras = eras
        self.token = token
        self.clients: dict[str, Client[Any]] = {}
        self.url: str | None = None
        self._stack = ExitStack()
        self.portal: BlockingPortal | None = None

    def __enter__(self) -> Live:
        self.portal = self._stack.enter_context(start_blocking_portal())
        cm: AbstractContextManager[None] = self.portal.wrap_async_context_manager(
            self._serve()
        )
        self._stack.enter_context(cm)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @asynccontextmanager
    async def _serve(self) -> AsyncIterator[None]:
        if self.transport == "http":
            async with serve_http(self.server) as url:
                self.url = url
                async with self._connect(url):
                    yield
        else:
            async with self._connect(self.server):
                yield

    @asynccontextmanager
    async def _connect(self, target: FastMCP | str) -> AsyncIterator[None]:
        async with connect(target, self.eras[0], token=self.token) as first:
            self.clients[self.eras[0]] = first
            if len(self.eras) == 1:
                yield
                return
            async with connect(target, self.eras[1], token=self.token) as second:
                self.clients[self.eras[1]] = second
                yield

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``fn(*args)`` on the server's event loop; a request that has not answered after
        ``PATIENCE`` seconds fails the test as hung (a deadline, not a measurement)."""
        assert self.portal is not None

        async def bounded() -> T:
            with anyio.fail_after(PATIENCE):
                return await fn(*args)

        return self.portal.call(bounded)

    def read(self, era: str, uri: str) -> str | None:
        """The text of the answer of a raw ``resources/read`` of ``uri``.

        The text is None when the HTTP layer refused the request (a non-2xx status, which
        the SDK client reports as ``HTTP_REFUSAL``): a 2026-07-28 client sends the URI in
        the ``Mcp-Name`` header too, and h11 refuses headers over 64 KiB. The caller
        decides whether that was expected. Any other error raises.
        """

        async def go() -> str | None:
            try:
                result = await self.clients[era].session.read_resource(uri)
            except MCPError as exc:
                if exc.message != HTTP_REFUSAL:
                    raise
                return None
            return result.contents[0].text  # type: ignore[union-attr]

        return self.call(go)

    def tool(self, era: str, name: str, args: dict[str, Any]) -> tuple[str, bool, Any]:
        """(text, is_error, structured content) of a raw ``tools/call``.

        A JSON-RPC error answer comes back as its message with is_error True; an internal
        error (-32603) raises, because it means an exception escaped a handler.
        """

        async def go() -> tuple[str, bool, Any]:
            try:
                result = await self.clients[era].session.call_tool(name, args)
            except MCPError as exc:
                if exc.code == INTERNAL_ERROR:
                    raise
                return exc.message, True, None
            text = "".join(getattr(c, "text", "") for c in result.content)
            return text, bool(result.is_error), result.structured_content

        return self.call(go)

    def gated(self, era: str, name: str, args: dict[str, Any]) -> bool:
        text, is_error, body = self.tool(era, name, args)
        code = body.get("error", {}).get("code") if isinstance(body, dict) else None
        assert not is_error or code == "TOOL_DESCRIPTION_REQUIRED", text
        return code == "TOOL_DESCRIPTION_REQUIRED"


def descriptions_uri(query: str) -> str:
    return f"{DESCRIPTIONS_URI}?{query}"


def parse_body(text: str) -> Any:
    return json.loads(text)


# -- audit hook: which files the process touches ---------------------------------------
_lock = threading.Lock()
_recording: list[str] | None = None
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _recording is None or event not in ("open", "os.scandir", "os.listdir"):
        return
    path = args[0] if args else None
    if isinstance(path, (str, bytes, os.PathLike)):
        try:
            decoded = os.fsdecode(path)
        except (TypeError, ValueError):
            return
        with _lock:
            if _recording is not None:
                _recording.append(decoded)


@contextmanager
def opened_files() -> Iterator[list[str]]:
    """Record the paths the whole process opens or lists inside the block."""
    global _recording, _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    seen: list[str] = []
    with _lock:
        _recording = seen
    try:
        yield seen
    finally:
        with _lock:
            _recording = None


def outside(paths: list[str], directory: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The description-like paths (by suffix) in ``paths`` that are not inside ``directory``."""
    root = os.path.realpath(directory)
    bad = []
    for path in paths:
        if not path.endswith(suffixes):
            continue
        real = os.path.realpath(path)
        if os.path.dirname(real) != root:
            bad.append(path)
    return bad
