"""The request path (#22, #26): one pass per request, through few modules.

A request identifies its caller once and asks the gate once.

A spy counts every call of ``identify`` (whatever module of the package calls it) while
one request is served: a ``tools/call``, a ``tools/list``, a read of the descriptions
resource, a ``describe_tools`` call, a ``tools/resolve`` and a ``groups/list`` each count
exactly one, in memory and over streamable HTTP. Before #22 the caller was asked for at
each use: twice per ``tools/call`` and ``tools/resolve``, three times per read or
``describe_tools``, four times per listing (``on_message``, the hot reload, the typed hook,
the marks), and the gate was never asked about ``describe_tools``.

On FastMCP < 4.2 a 2026-07-28 ``tools/call`` over HTTP makes two passes through the
middleware (the SDK first runs the server's own ``tools/list`` to check ``Mcp-Param-*``
headers, with a fresh ``Context`` over the same HTTP request): that second pass reuses the
caller of the first (kept in the request's ASGI scope, ``access/caller.py:caller_of``), for
each caller its own.

A warm request enters at most ten of the package's modules.

A reader following one request through the package should meet few modules, each with one
job. ``sys.setprofile`` records every package frame entered while one warm in-memory
``fastmcp.Client`` request is served (the server runs on this thread): a ``tools/list``, a
granted ``tools/call``, a refused one (the teaching refusal) and a read of the descriptions
resource. A handshake-era client is refused until it reads; a 2026-07-28 client without
auth is judged by its arguments, so its refusal is a call whose arguments do not fit.
Before #26 these entered 20, 15, 23 and 21 modules (handshake era).

Each is measured without and with a descriptions folder (the README's one line,
``descriptions_dir=...``, #35): before #35 the folder added the watcher's per-request
start (``disclosure/hot_reload.py``, ``files/watcher.py``) and the store's name check
(``files/folder.py``): 13, 9, 14 and 13 modules. A warm refusal is of a tool whose
definition was served once before (to another session), as a warm read is.

A query (``describe_tools({"query": ...})``, #28) is a path of its own: the describe path
plus the ranking (``disclosure/search.py`` and, since #35, its own index ``disclosure/index.py``
in place of a second FastMCP server's whole request path), whether the caller's host lists
it every tool (``access/modes.py``, #33: then it is offered no query), and for no match the
groups it names; at most thirteen modules, with a folder too (17 and 18 before #35; 14 and
15 before the describe path stopped entering ``disclosure/components.py``, our bridges told
apart by their functions, ``access/gate.py:bridge_of``, and ``disclosure/bridge.py``, the
names a call asks for read in ``disclosure/describer.py``: 12 and 13 since).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError

import fastmcp_progressive
from fastmcp_progressive import DESCRIPTIONS_URI, ProgressiveDisclosure
from fastmcp_progressive import middleware as middleware_module
from fastmcp_progressive.access import caller as caller_module
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.gate import Gate
from fastmcp_progressive.resolution.client import (
    grouping,
    list_groups,
    resolve_tool,
    tool_resolution,
)
from tests.conftest import (
    ERAS,
    GENERIC_HOST,
    TRANSPORTS,
    Era,
    Transport,
    answer_of,
    build_server,
    clients,
    connect,
    serve_http,
)
from tests.spies import Calls, count_calls, count_calls_everywhere
from tests.versions import HIDDEN_LISTING_IN_MODERN_HTTP_CALL


async def _counted(calls: Calls, request: Callable[[], Awaitable[Any]]) -> int:
    calls.count = 0
    await request()
    return calls.count


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
async def test_each_request_identifies_its_caller_once(
    monkeypatch: pytest.MonkeyPatch, transport: Transport, era: Era
) -> None:
    calls = count_calls_everywhere(monkeypatch, caller_module, "identify")
    async with clients(build_server(), transport, era) as (client,):
        counts = {
            "tools/list": await _counted(calls, client.list_tools),
            "resources/read": await _counted(
                calls, lambda: client.read_resource(f"{DESCRIPTIONS_URI}?tools=add")),
            "describe_tools": await _counted(
                calls, lambda: client.call_tool("describe_tools", {"tools": ["echo"]})),
            "describe_tools query": await _counted(
                calls, lambda: client.call_tool("describe_tools", {"query": "repeat a text"})),
            "tools/call": await _counted(
                calls, lambda: client.call_tool("add", {"a": 1, "b": 2})),
            "tools/call refused": await _counted(
                calls, lambda: client.call_tool("shout", {"text": "x"}, raise_on_error=False)),
        }
    assert counts == dict.fromkeys(counts, 1)


async def test_the_sdks_hidden_listing_is_served_the_calls_own_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each pass of one HTTP ``tools/call`` gets that request's caller, never another's."""
    calls = count_calls_everywhere(monkeypatch, caller_module, "identify")
    opened: list[tuple[Any, Caller]] = []
    original = caller_module.serving

    @contextmanager
    def spy(ctx: Any) -> Iterator[Caller]:
        with original(ctx) as caller:
            opened.append((ctx, caller))
            yield caller

    monkeypatch.setattr(caller_module, "serving", spy)
    monkeypatch.setattr(middleware_module, "serving", spy)
    tokens: list[str | None] = ["alice-token", "bob-token"]
    async with clients(build_server(auth=True), "http", "modern", 2, tokens=tokens) as both:
        for client in both:
            await client.list_tools()
            await client.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        for client, user in zip(both, ("alice", "bob"), strict=True):
            opened.clear()
            calls.count = 0
            assert (await client.call_tool("add", {"a": 1, "b": 2})).data == 3
            contexts = {id(ctx) for ctx, _ in opened}
            callers: list[Caller] = [caller for _, caller in opened]
            assert len(contexts) == (2 if HIDDEN_LISTING_IN_MODERN_HTTP_CALL else 1)
            assert calls.count == 1
            assert all(caller is callers[0] for caller in callers)
            assert callers[0].principal is not None and user in callers[0].principal


async def _resolve_add(client: Any) -> None:
    with pytest.raises(MCPError):  # add's hints do not depend on its arguments
        await resolve_tool(client, "add", {"a": 1, "b": 2})


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_resolve_and_groups_identify_their_caller_once(
    monkeypatch: pytest.MonkeyPatch, transport: Transport
) -> None:
    calls = count_calls_everywhere(monkeypatch, caller_module, "identify")
    server = build_server()
    async with AsyncExitStack() as stack:
        target: Any = server
        if transport == "http":
            target = await stack.enter_async_context(serve_http(server))
        client = await stack.enter_async_context(
            connect(target, "legacy", extensions=[tool_resolution(), grouping()]))
        await client.list_tools()
        counts = {
            "tools/resolve": await _counted(calls, lambda: _resolve_add(client)),
            "groups/list": await _counted(calls, lambda: list_groups(client)),
        }
    assert counts == dict.fromkeys(counts, 1)


@pytest.mark.parametrize("name", ["add", "describe_tools", "run_tool_absent", "missing"])
async def test_a_tools_call_asks_the_gate_once(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    decisions = count_calls(monkeypatch, Gate, "decide")
    arguments: dict[str, Any] = {"a": 1, "b": 2} if name == "add" else {"tools": ["add"]}
    async with clients(build_server(), "memory", "legacy") as (client,):
        decisions.count = 0
        await client.call_tool(name, arguments, raise_on_error=False)
    assert decisions.count == 1


PACKAGE = Path(fastmcp_progressive.__file__).parent

FOLDERS = ["no folder", "a folder"]
Folder = str


@contextmanager
def _server(folder: Folder, tmp_path: Path) -> Iterator[Any]:
    """The test server, bare or with the README's one line: a descriptions folder (#35);
    its watcher stopped at the end (not left to parse files during a later test)."""
    middleware = ProgressiveDisclosure(**(
        {} if folder == "no folder" else {"descriptions_dir": _folder(tmp_path)}))
    try:
        yield build_server(middleware=middleware)
    finally:
        middleware.close()


def _folder(tmp_path: Path) -> Path:
    descriptions = tmp_path / "tool_descriptions"
    descriptions.mkdir()
    for name in ("add", "echo", "shout"):
        (descriptions / f"{name}.json").write_text(
            json.dumps({"summary": f"The {name} tool, from its file."}))
    # a folder nobody is editing: one written within the file system's mtime granularity is
    # rescanned on each use until its stat can be trusted (files/store.py SCAN_TRUST_NS)
    an_hour_ago = time.time() - 3600
    os.utime(descriptions, (an_hour_ago, an_hour_ago))
    return descriptions


MOST_MODULES = 10


async def entered(request: Callable[[], Awaitable[Any]], answers: list[Any] | None = None
                  ) -> list[str]:
    """The package's modules (paths from the package root) with a frame entered while
    ``request`` ran on this thread; its answer appended to ``answers``."""
    files: set[str] = set()
    root = str(PACKAGE)

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(root):
            files.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        answer = await request()
    finally:
        sys.setprofile(None)
    if answers is not None:
        answers.append(answer)
    return sorted(Path(f).relative_to(PACKAGE).as_posix() for f in files)


async def _warm_paths(server: Any, mode: str, refused_arguments: dict[str, Any]
                      ) -> tuple[list[Any], dict[str, list[str]]]:
    """The modules each warm request enters, and the refusal measured (the generic host:
    FastMCP's own client has a row of its own)."""
    async with Client(server, mode=mode, client_info=GENERIC_HOST) as other:
        await other.list_tools()  # shout's definition, served once before
        await other.call_tool("shout", refused_arguments, raise_on_error=False)
    async with Client(server, mode=mode, client_info=GENERIC_HOST) as client:
        # warm: each path once; add is granted by the read
        await client.list_tools()
        await client.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("echo", {"text": 1}, raise_on_error=False)
        refusals: list[Any] = []
        paths = {
            "tools/list": await entered(client.list_tools),
            "tools/call granted": await entered(
                lambda: client.call_tool("add", {"a": 1, "b": 2})),
            "tools/call refused": await entered(
                lambda: client.call_tool("shout", refused_arguments, raise_on_error=False),
                refusals),
            "resources/read": await entered(
                lambda: client.read_resource(f"{DESCRIPTIONS_URI}?tools=echo")),
        }
    return refusals, paths


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("era", ERAS)
async def test_a_warm_request_enters_at_most_ten_modules(
        era: Era, folder: Folder, tmp_path: Path) -> None:
    refused_arguments = {"text": "x"} if era == "legacy" else {"text": 1}
    mode = "legacy" if era == "legacy" else "auto"
    with _server(folder, tmp_path) as server:
        refusals, paths = await _warm_paths(server, mode, refused_arguments)
    refused = refusals[0]
    assert refused.is_error  # the refused path measured is the teaching refusal
    assert (refused.structured_content or {})["error"]["code"] == "TOOL_DESCRIPTION_REQUIRED"
    too_long = {path: modules for path, modules in paths.items() if len(modules) > MOST_MODULES}
    assert not too_long, "\n".join(
        f"{path}: {len(modules)} modules: {' '.join(modules)}"
        for path, modules in too_long.items())


MOST_MODULES_FOR_A_QUERY = 13


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("era", ERAS)
async def test_a_warm_query_enters_at_most_thirteen_modules(
        era: Era, folder: Folder, tmp_path: Path) -> None:
    mode = "legacy" if era == "legacy" else "auto"
    with _server(folder, tmp_path) as server:
        async with Client(server, mode=mode,  # FastMCP's own is offered no query
                          client_info=GENERIC_HOST) as client:
            await client.list_tools()
            await client.call_tool("describe_tools", {"query": "add numbers"})  # warm
            answers: list[Any] = []
            paths = {
                "a match": await entered(lambda: client.call_tool(
                    "describe_tools", {"query": "add two integers"}), answers),
                "no match": await entered(lambda: client.call_tool(
                    "describe_tools", {"query": "quantum teleportation"}), answers),
            }
    assert next(iter(answer_of(answers[0])["tools"])) == "add"
    assert answer_of(answers[1])["tools"] == {}
    too_long = {path: modules for path, modules in paths.items()
                if len(modules) > MOST_MODULES_FOR_A_QUERY}
    assert not too_long, "\n".join(
        f"{path}: {len(modules)} modules: {' '.join(modules)}"
        for path, modules in too_long.items())
