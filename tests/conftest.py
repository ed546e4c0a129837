"""Shared fixtures: a small server, and clients over every transport and protocol era.

``connect(server, transport, era, token=None)`` opens a real ``fastmcp.Client``:
``"memory"`` runs the server in-process over memory streams; ``"http"`` starts uvicorn on
a free 127.0.0.1 port (``run_server_async``) and talks streamable HTTP to it. ``era`` is
``"legacy"`` (handshake, 2025-11-25) or ``"modern"`` (stateless 2026-07-28).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.utilities.tests import run_server_async
from mcp.client.session import DEFAULT_CLIENT_INFO

from fastmcp_progressive import DESCRIPTIONS_URI, ProgressiveDisclosure
from tests.reliability import figures
from tests.servers import add_basic_tools

Transport = Literal["memory", "http"]
Era = Literal["legacy", "modern"]
TRANSPORTS: tuple[Transport, ...] = ("memory", "http")
ERAS: tuple[Era, ...] = ("legacy", "modern")
TRANSPORT_ERA: tuple[tuple[Transport, Era], ...] = tuple(
    (t, e) for t in TRANSPORTS for e in ERAS)
"""Every transport with every era, for ``pytest.mark.parametrize(("transport", "era"), ...)``."""
FOLLOWED_IN_MEMORY: tuple[Era, ...] = ("legacy",)
"""Eras whose in-memory clients (no auth) keep grants: a handshake session. A 2026-07-28
caller without auth is judged by each request alone (caller.py, test_identity.py)."""


def needs_a_followed_caller(transport: Transport, era: Era, token: str | None = None) -> None:
    """Skip a gate test where the caller has no identity to keep grants under: 2026-07-28
    without a token (in memory there is none), judged by each request alone instead."""
    if era == "modern" and (transport == "memory" or token is None):
        pytest.skip("2026-07-28 without auth: no identity, each call judged by itself "
                    "(test_identity.py)")

GENERIC_HOST = DEFAULT_CLIENT_INFO
"""How the test clients introduce themselves: the MCP SDK's default ``clientInfo``, which
LangChain, LlamaIndex and most agent frameworks send (no host profile matches it)."""

TOKENS = {
    "alice-token": {"client_id": "agent", "sub": "alice", "scopes": []},
    "bob-token": {"client_id": "agent", "sub": "bob", "scopes": []},
}


def build_server(
    *, auth: bool = False, middleware: ProgressiveDisclosure | None = None, **options: Any
) -> FastMCP:
    """Three plain tools (``add``, ``echo``, ``shout``) with the middleware on."""
    mcp = FastMCP(
        "test",
        auth=StaticTokenVerifier(tokens=TOKENS) if auth else None,
        instructions="Server instructions.",
    )

    add_basic_tools(mcp)

    mcp.add_middleware(middleware or ProgressiveDisclosure(**options))
    return mcp


@asynccontextmanager
async def serve_http(server: FastMCP, **kwargs: Any) -> AsyncIterator[str]:
    """A real uvicorn server for ``server`` on a free 127.0.0.1 port; yields its URL."""
    async with run_server_async(server, **kwargs) as url:
        yield url


@asynccontextmanager
async def served(server: FastMCP, transport: Transport) -> AsyncIterator[FastMCP | str]:
    """``server`` itself (in memory) or the URL of it served over streamable HTTP.

    FastMCP cannot serve one server object over HTTP twice in a process, so a test that
    needs several clients serves once and connects them all to the one URL.
    """
    if transport == "memory":
        yield server
        return
    async with serve_http(server) as url:
        yield url


@asynccontextmanager
async def connect(
    server: FastMCP | str, era: Era, *, token: str | None = None, **client_kwargs: Any
) -> AsyncIterator[Client[Any]]:
    """A connected client: in memory for a server object, streamable HTTP for a URL.

    It introduces itself as ``GENERIC_HOST`` unless ``client_info`` says otherwise:
    FastMCP's own name, ``fastmcp``, has a host profile of its own (every tool listed with
    its output schema), and these tests stand for any host (``tests/test_fastmcp_client.py``
    drives FastMCP's ``Client`` as it introduces itself)."""
    client_kwargs.setdefault("client_info", GENERIC_HOST)
    mode = "legacy" if era == "legacy" else "auto"
    target: Any = server
    if isinstance(server, str):
        target = StreamableHttpTransport(server, auth=token)
    async with Client(target, mode=mode, **client_kwargs) as client:
        yield client


@asynccontextmanager
async def clients(
    server: FastMCP,
    transport: Transport,
    era: Era,
    count: int = 1,
    *,
    tokens: list[str | None] | None = None,
    list_first: bool = True,
) -> AsyncIterator[list[Client[Any]]]:
    """``count`` clients of ``server`` over ``transport`` in ``era`` (own tokens on HTTP).

    Each lists tools first, as a host that keeps its session does; a session whose first
    request is a tool call is judged a one-call session (``list_first=False`` for that).
    """
    async with AsyncExitStack() as stack:
        target = await stack.enter_async_context(served(server, transport))
        toks = tokens or [None] * count
        opened = [
            await stack.enter_async_context(connect(target, era, token=toks[i]))
            for i in range(count)
        ]
        if list_first:
            for client in opened:
                await client.list_tools()
        yield opened


async def read_json(client: Client[Any], uri: str) -> Any:
    contents = await client.read_resource(uri)
    return json.loads(contents[0].text)  # type: ignore[union-attr]


async def fetch(client: Client[Any], *names: str) -> Any:
    return await read_json(client, f"{DESCRIPTIONS_URI}?tools={','.join(names)}")


def answer_of(result: Any) -> Any:
    """The JSON body our answers carry as their one text block: ``describe_tools``'
    answers (text only, no ``structuredContent``) and our refusals (text and
    ``structuredContent`` alike)."""
    assert len(result.content) == 1, result.content
    return json.loads(result.content[0].text)


async def gated(client: Client[Any], name: str = "add", args: dict[str, Any] | None = None) -> bool:
    """Whether calling ``name`` is refused with TOOL_DESCRIPTION_REQUIRED."""
    result = await client.call_tool(
        name, args if args is not None else {"a": 1, "b": 2}, raise_on_error=False
    )
    body = result.structured_content or {}
    code = body.get("error", {}).get("code") if isinstance(body, dict) else None
    if result.is_error and code is None:
        raise AssertionError(f"unexpected error result: {result.content}")
    return code == "TOOL_DESCRIPTION_REQUIRED"


@pytest.fixture(autouse=True)
def _capture_our_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Our loggers live under FastMCP's ``fastmcp`` logger, which does not propagate to
    the root logger pytest captures from: hand caplog's handler to ours directly (and only
    to ours, so a record is captured once)."""
    ours = logging.getLogger("fastmcp.progressive")
    ours.addHandler(caplog.handler)
    ours.propagate = False  # never twice, whether or not "fastmcp" propagates right now
    try:
        yield
    finally:
        ours.removeHandler(caplog.handler)
        ours.propagate = True


@pytest.fixture
def tmp_descriptions(tmp_path: Path) -> Path:
    folder = tmp_path / "tool_descriptions"
    folder.mkdir()
    return folder


@pytest.fixture
def write_description(tmp_descriptions: Path) -> Callable[..., Path]:
    def write(name: str, data: dict[str, Any] | str, suffix: str = ".json") -> Path:
        path = tmp_descriptions / f"{name}{suffix}"
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return path

    return write


# -- pytest-xdist: which files share a worker -------------------------------------------
# The full run (``-n auto --dist loadgroup``) spreads tests over one worker per core. Files
# that time real processes against deadlines carry ``xdist_group("timed-processes")`` and run
# one after another on one worker, never beside each other (the host matrix drives two
# frameworks at a time by itself); files whose fixtures are module-wide (a smoke run,
# installed npm servers, fuzzing trees) carry a group of their own so they stay whole.
# pytest-xdist does not always keep a group on one worker, so the two minute-long fixtures
# (host matrix, benchmark smoke run) also keep their result once per run (run_once.py).
# The marks sit in each file's ``pytestmark``: pytest-xdist reads them at collection,
# before any hook here could add them.


# -- the reliability suite's figures, printed once at the end (also under pytest-xdist, whose
# controller loads this conftest but never the reliability folder's) ---------------------
def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand this worker's figures to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["reliability_figures"] = (dict(figures.FIGURES), dict(figures.HOW))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the pytest-xdist controller: collect what a finished worker measured."""
    measured, how = getattr(node, "workeroutput", {}).get("reliability_figures", ({}, {}))
    figures.merge(measured, how)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The figures the reliability tests measured (this process's and every worker's)."""
    if not figures.FIGURES:
        return
    terminalreporter.section("reliability figures")
    for key in sorted(figures.FIGURES):
        terminalreporter.write_line(f"{key}: {figures.FIGURES[key]}")
