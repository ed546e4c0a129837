"""Hot reload: the watcher thread, its lifetime, and tools/list_changed to legacy sessions.

Against real servers (uvicorn on a free port, or in-memory clients) and real files. Tests
never sleep to synchronize: they wait on events, or poll a condition with a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastmcp import Client, FastMCP

from fastmcp_progressive import DESCRIPTIONS_URI, ProgressiveDisclosure
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.disclosure.hot_reload import LegacySessions
from fastmcp_progressive.fastmcp_internals import server_running
from fastmcp_progressive.files.folder import description_name
from fastmcp_progressive.files.watcher import THREAD_NAME as WATCH_THREAD
from fastmcp_progressive.files.watcher import DirectoryWatcher
from tests.conftest import (
    TOKENS,
    build_server,
    connect,
    fetch,
    serve_http,
)
from tests.parts import parts
from tests.servers import add_admin_only_tool
from tests.spies import batch_handled, count_calls
from tests.waiting import PATIENCE, until, watcher_ready
from tests.waiting import ListChangedRecorder as Recorder

REGISTERED_ADD = "Add two integers. Returns their sum as an integer."


def summaries(tools: list[Any]) -> dict[str, str]:
    return {t.name: t.description for t in tools}


@pytest.fixture
def middleware(tmp_descriptions: Path) -> Iterator[ProgressiveDisclosure]:
    mw = ProgressiveDisclosure(tmp_descriptions)
    yield mw
    mw.close()


# -- over real HTTP ----------------------------------------------------------------------
async def test_edit_notifies_legacy_session_only_and_next_list_serves_it(
    middleware: ProgressiveDisclosure, write_description: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broadcasts = count_calls(monkeypatch, parts(middleware).hot_reload.sessions, "broadcast")
    write_description("add", {"summary": "Sum two numbers."})
    legacy, modern = Recorder(), Recorder()
    async with (
        serve_http(build_server(middleware=middleware)) as url,
        connect(url, "legacy", message_handler=legacy) as old,
        connect(url, "modern", message_handler=modern) as new,
    ):
        assert summaries(await old.list_tools())["add"] == "Sum two numbers."
        assert summaries(await new.list_tools())["add"] == "Sum two numbers."
        await watcher_ready(middleware)
        assert len(parts(middleware).hot_reload.sessions) == 1  # the legacy one; modern has none

        write_description("add", {"summary": "Add integers and return the sum."})
        # stat-on-read: the very next read serves the edit, notification or not
        assert summaries(await new.list_tools())["add"] == "Add integers and return the sum."
        await legacy.next()
        assert summaries(await old.list_tools())["add"] == "Add integers and return the sum."
        assert len(legacy.times) == 1
        assert broadcasts.count == 1
        assert modern.times == []  # 2026-07-28: no background channel in FastMCP 4


async def test_an_edit_right_after_the_first_listing_is_notified(
    middleware: ProgressiveDisclosure, write_description: Callable[..., Path],
) -> None:
    """#34: the watcher took its baseline when armed, after the first listing; an edit in
    between became the baseline, so the session shown the old line was never told."""
    write_description("add", {"summary": "Sum two numbers."})
    legacy = Recorder()
    async with connect(build_server(middleware=middleware), "legacy",
                       message_handler=legacy) as old:
        assert summaries(await old.list_tools())["add"] == "Sum two numbers."
        write_description("add", {"summary": "Add integers and return the sum."})  # no wait
        await legacy.next(timeout=10)
        assert summaries(await old.list_tools())["add"] == "Add integers and return the sum."


async def test_broken_file_serves_last_good_quietly_then_delete_restores_registered(
    middleware: ProgressiveDisclosure,
    write_description: Callable[..., Path],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write_description("add", {"summary": "Good summary.", "description": "Good text."})
    broadcasts = count_calls(monkeypatch, parts(middleware).hot_reload.sessions, "broadcast")
    rec = Recorder()
    caplog.set_level(logging.WARNING, "fastmcp.progressive.descriptions")
    async with (
        serve_http(build_server(middleware=middleware)) as url,
        connect(url, "legacy", message_handler=rec) as client,
    ):
        assert (await fetch(client, "add"))["add"]["description"] == "Good text."
        await watcher_ready(middleware)
        watcher = parts(middleware).hot_reload.watcher
        assert watcher is not None
        seen = batch_handled(monkeypatch, watcher, {"add"})

        write_description("add", '{"summary": "Broken')
        assert await asyncio.to_thread(seen.wait, PATIENCE), "the watcher never saw the break"
        body = await fetch(client, "add")
        assert body["add"]["description"] == "Good text."  # last good, no request failed
        assert summaries(await client.list_tools())["add"] == "Good summary."
        assert rec.times == [] and broadcasts.count == 0
        assert any(f"{path}:1:" in r.getMessage() for r in caplog.records)

        path.unlink()
        await rec.next()  # the listing changed back to the registered summary
        body = await fetch(client, "add")
        assert body["add"]["description"] == REGISTERED_ADD
        assert summaries(await client.list_tools())["add"] == "Add two integers."


async def test_symlink_escape_is_refused_over_http(
    middleware: ProgressiveDisclosure, tmp_descriptions: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"summary": "Leaked.", "description": "secret"}))
    (tmp_descriptions / "add.json").symlink_to(outside)
    async with (
        serve_http(build_server(middleware=middleware)) as url,
        connect(url, "legacy") as client,
    ):
        assert summaries(await client.list_tools())["add"] == "Add two integers."
        assert (await fetch(client, "add"))["add"]["description"] == REGISTERED_ADD


async def test_directory_created_later_is_picked_up_and_notified(tmp_path: Path) -> None:
    folder = tmp_path / "later"
    mw = ProgressiveDisclosure(folder)
    rec = Recorder()
    try:
        async with (
            serve_http(build_server(middleware=mw)) as url,
            connect(url, "legacy", message_handler=rec) as client,
        ):
            assert summaries(await client.list_tools())["add"] == "Add two integers."
            await watcher_ready(mw)
            folder.mkdir()
            (folder / "add.json").write_text(json.dumps({"summary": "Now from a file."}))
            await rec.next()
            assert summaries(await client.list_tools())["add"] == "Now from a file."
    finally:
        mw.close()


# -- lifetime ----------------------------------------------------------------------------
async def test_many_in_memory_clients_share_one_watcher_and_leave_nothing_behind(
    middleware: ProgressiveDisclosure,
    write_description: Callable[..., Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, "asyncio")
    mcp = build_server(middleware=middleware)
    watcher = parts(middleware).hot_reload.watcher
    assert watcher is not None
    for i in range(12):  # one after another: the lifespan is entered and left each time
        async with connect(mcp, "legacy" if i % 2 else "modern") as client:
            await client.list_tools()
            assert watcher.running

    recorders = [Recorder() for _ in range(8)]
    async with contextlib.AsyncExitStack() as stack:  # and all at once
        opened = [await stack.enter_async_context(connect(mcp, "legacy", message_handler=r))
                  for r in recorders]
        for client in opened:
            await client.list_tools()
        assert len(parts(middleware).hot_reload.sessions) == 8
        await watcher_ready(middleware)
        write_description("add", {"summary": "Everyone hears about this."})
        await asyncio.gather(*(r.next() for r in recorders))
        assert [len(r.times) for r in recorders] == [1] * 8

    await until(lambda: len(parts(middleware).hot_reload.sessions) == 0, what="sessions pruned")
    assert await asyncio.to_thread(watcher.join, PATIENCE), "watcher still running after the server"
    assert not server_running(mcp)
    assert parts(middleware).hot_reload.settled == set()  # no closed session's key is kept
    gc.collect()
    assert not [r for r in caplog.records if "destroyed" in r.getMessage()]


async def test_watcher_stops_with_server_and_restarts_with_it(
    middleware: ProgressiveDisclosure,
) -> None:
    mcp = build_server(middleware=middleware)
    watcher = parts(middleware).hot_reload.watcher
    assert watcher is not None
    assert not watcher.running  # nothing starts before the first request
    async with connect(mcp, "legacy") as client:
        await client.list_tools()
        assert watcher.running
    assert await asyncio.to_thread(watcher.join, PATIENCE)
    async with connect(mcp, "modern") as client:
        await client.list_tools()
        assert watcher.running


async def test_the_watcher_is_started_once_not_by_every_request(
    middleware: ProgressiveDisclosure, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#35: ``on_message`` once asked the watcher to start on every message; now a caller
    already seen by a running watcher costs a request a set lookup, no watcher call."""
    starts = count_calls(monkeypatch, DirectoryWatcher, "start")
    observed = count_calls(monkeypatch, parts(middleware).hot_reload, "observe")
    mcp = build_server(middleware=middleware)
    async with connect(mcp, "legacy") as legacy, connect(mcp, "modern") as modern:
        for client in (legacy, modern):
            await client.list_tools()
        before = observed.count
        for _ in range(5):
            for client in (legacy, modern):
                await client.list_tools()
                await client.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
                await client.call_tool("add", {"a": 1, "b": 2})
        assert observed.count == before  # 30 warm requests: not one observed
        assert starts.count == before <= 4  # only each client's first messages asked
        assert len(parts(middleware).hot_reload.sessions) == 1  # the legacy session is kept


async def test_one_background_thread_of_ours_the_watcher(
    tmp_descriptions: Path, write_description: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#35: the preload and the net-cost check ran in threads of their own beside the
    watcher (three); now the preload is the watcher's first job and the check runs in a
    worker thread the first listing awaits."""
    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    write_description("add", {"summary": "Add two numbers."})
    middleware = ProgressiveDisclosure(tmp_descriptions)  # a preload thread started here
    mcp = build_server(middleware=middleware)
    async with connect(mcp, "legacy") as client:
        await client.list_tools()
        await client.read_resource(f"{DESCRIPTIONS_URI}?tools=add")
        await client.call_tool("add", {"a": 1, "b": 2})
        await watcher_ready(middleware)
        ours = [t.name for t in threading.enumerate() if t.name.startswith("fastmcp-progressive")]
        assert ours == [WATCH_THREAD]
    assert parts(middleware).lister.preloaded.is_set() and parts(middleware).net_cost.done.is_set()
    assert [name for name in started if name.startswith("fastmcp-progressive")] == [WATCH_THREAD]
    middleware.close()


async def test_close_is_final(middleware: ProgressiveDisclosure) -> None:
    mcp = build_server(middleware=middleware)
    watcher = parts(middleware).hot_reload.watcher
    assert watcher is not None
    async with connect(mcp, "legacy") as client:
        await client.list_tools()
        assert watcher.running
        middleware.close()
        assert not watcher.running and watcher.join(0)
        await client.list_tools()
        assert not watcher.running


async def test_no_directory_means_no_watcher() -> None:
    mw = ProgressiveDisclosure()
    async with connect(build_server(middleware=mw), "legacy") as client:
        await client.list_tools()
    assert parts(mw).hot_reload.watcher is None
    assert len(parts(mw).hot_reload.sessions) == 0


async def test_server_running_follows_the_lifespan() -> None:
    mcp = build_server()
    assert not server_running(mcp)
    async with Client(mcp):
        assert server_running(mcp)
    assert not server_running(mcp)


# -- the thread on its own ---------------------------------------------------------------
def _drain(changes: queue.Queue[frozenset[str] | None], until_seen: Callable[[Any], bool],
           timeout: float = PATIENCE) -> list[frozenset[str] | None]:
    got: list[frozenset[str] | None] = []
    deadline = time.monotonic() + timeout
    while not any(until_seen(item) for item in got):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"never saw the expected change; got {got}")
        got.append(changes.get(timeout=remaining))
    return got


def test_watcher_reports_description_names_only(tmp_path: Path) -> None:
    changes: queue.Queue[frozenset[str] | None] = queue.Queue()
    watcher = DirectoryWatcher(tmp_path, on_change=changes.put)
    try:
        assert watcher.start() and not watcher.start()  # one thread only
        assert watcher.ready.wait(PATIENCE)
        (tmp_path / "notes.txt").write_text("x")
        (tmp_path / ".a.json.swp").write_text("x")
        (tmp_path / "a.json").write_text("{}")
        assert changes.get(timeout=PATIENCE) == frozenset({"a"})

        (tmp_path / "a.json").rename(tmp_path / "b.md")
        seen: set[str] = set()
        while not {"a", "b"} <= seen:  # the rename may arrive in one batch or two
            item = changes.get(timeout=PATIENCE)
            assert item is not None
            seen |= item
    finally:
        watcher.close()
    assert not watcher.running and watcher.join(0)


def test_watcher_follows_a_directory_that_appears_and_vanishes(tmp_path: Path) -> None:
    folder = tmp_path / "later"
    changes: queue.Queue[frozenset[str] | None] = queue.Queue()
    watcher = DirectoryWatcher(folder, on_change=changes.put, wakeup=0.05)
    try:
        watcher.start()
        assert watcher.ready.wait(PATIENCE)  # ready while waiting for the directory
        folder.mkdir()
        (folder / "a.json").write_text("{}")
        _drain(changes, lambda item: item is None or item == frozenset({"a"}))

        shutil.rmtree(folder)
        _drain(changes, lambda item: item is None)  # "everything may have changed"
        assert watcher.running
    finally:
        watcher.close()


def test_watcher_stops_by_itself_when_not_alive(tmp_path: Path) -> None:
    alive = threading.Event()
    alive.set()
    watcher = DirectoryWatcher(tmp_path, on_change=lambda _: None, alive=alive.is_set,
                               wakeup=0.05)
    watcher.start()
    try:
        assert watcher.ready.wait(PATIENCE)
        alive.clear()
        assert watcher.join(PATIENCE)
        assert not watcher.running
        alive.set()
        assert watcher.start()  # a later request starts a fresh thread
        assert watcher.running
    finally:
        watcher.close()


def test_a_running_watcher_stops_at_exit_and_a_stopped_one_is_not_kept(
        tmp_path: Path) -> None:
    """The watcher registers its own stop with ``atexit`` while its thread runs (no module
    registry of watchers) and takes it back as the thread ends, so nothing keeps a stopped
    watcher (and the middleware behind its callbacks) alive."""
    import atexit
    import weakref

    registered: list[Any] = []
    real_register = atexit.register
    watcher = DirectoryWatcher(tmp_path, on_change=lambda _: None, wakeup=0.05)
    with pytest.MonkeyPatch.context() as patch:  # see what it registers, and register it
        patch.setattr(atexit, "register", lambda f: registered.append(f) or real_register(f))
        watcher.start()
    assert watcher.ready.wait(PATIENCE)
    assert registered == [watcher._close_at_exit]
    registered[0]()  # what interpreter exit runs: the thread stops
    assert watcher.join(PATIENCE) and not watcher.running
    registered.clear()
    gone = weakref.ref(watcher)
    del watcher
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize(
    ("path", "name"),
    [("/d/add.json", "add"), ("/d/add.md", "add"), ("/d/.add.json", None),
     ("/d/add.json~", None), ("/d/add.txt", None), ("/d/a:b.json", None), ("/d/json", None)],
)
def test_description_name(path: str, name: str | None) -> None:
    assert description_name(path) == name


# -- the session registry ----------------------------------------------------------------
def _caller(key: str, anchor: Any) -> Caller:
    return Caller(kind="session", era="legacy", key=key, anchor=anchor)


def _anchor(**state: Any) -> Any:
    return SimpleNamespace(exit_stack=contextlib.ExitStack(), state=dict(state))


def test_sessions_are_forgotten_when_their_connection_closes() -> None:
    sessions = LegacySessions()
    anchor = _anchor(**{"fastmcp_progressive.release": True})  # grants registered first
    loop = asyncio.new_event_loop()
    try:
        async def remember() -> bool:
            return sessions.remember(_caller("s1", anchor), object())

        assert loop.run_until_complete(remember())
        assert loop.run_until_complete(remember())  # idempotent
        assert len(sessions) == 1
    finally:
        loop.close()
    anchor.exit_stack.close()
    assert len(sessions) == 0


def test_broadcast_drops_sessions_whose_loop_is_closed() -> None:
    sessions = LegacySessions()
    loop = asyncio.new_event_loop()

    async def remember() -> bool:
        return sessions.remember(_caller("s1", _anchor()), object())

    assert loop.run_until_complete(remember())
    loop.close()
    assert sessions.broadcast() == 0
    assert len(sessions) == 0


async def test_only_handshake_sessions_with_a_close_hook_are_kept() -> None:
    sessions = LegacySessions()
    modern = Caller(kind="stream", era="modern", key="stream:1", anchor=_anchor())
    assert not sessions.remember(modern, object())
    assert not sessions.remember(_caller("s2", SimpleNamespace()), object())  # no exit_stack
    assert len(sessions) == 0


async def test_a_failing_send_forgets_the_session() -> None:
    sessions = LegacySessions()

    class Gone:
        tries = 0

        async def send_tool_list_changed(self) -> None:
            self.tries += 1
            raise ConnectionError("closed")

    gone = Gone()
    assert sessions.remember(_caller("s3", _anchor()), gone)
    assert sessions.broadcast() == 1
    await until(lambda: len(sessions) == 0, what="the failed session to be dropped")
    assert gone.tries == 1  # tried once, failed: nothing delivered, and not tried again


async def test_list_changed_goes_only_to_sessions_whose_listing_changed(
    tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens = dict(TOKENS, **{"admin-token": {"client_id": "agent", "sub": "root",
                                             "scopes": ["admin"]}})
    from fastmcp.server.auth.providers.jwt import StaticTokenVerifier

    middleware = ProgressiveDisclosure(tmp_descriptions)
    server = FastMCP("t", auth=StaticTokenVerifier(tokens=tokens))
    server.add_middleware(middleware)
    add_admin_only_tool(server)

    @server.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    alice, root = Recorder(), Recorder()
    async with (
        serve_http(server) as url,
        connect(url, "legacy", token="alice-token", message_handler=alice) as a,
        connect(url, "legacy", token="admin-token", message_handler=root) as r,
    ):
        await a.list_tools()
        await r.list_tools()
        await watcher_ready(middleware)
        watcher = parts(middleware).hot_reload.watcher
        assert watcher is not None

        seen = batch_handled(monkeypatch, watcher, {"orphan"})
        (tmp_descriptions / "orphan.json").write_text('{"summary": "No such tool."}')
        assert await asyncio.to_thread(seen.wait, PATIENCE), "the watcher never saw the orphan file"
        (tmp_descriptions / "wipe.json").write_text('{"summary": "Erase it all."}')
        await root.next()
        (tmp_descriptions / "ping.json").write_text('{"summary": "Say pong."}')
        await alice.next()
        await root.next()
    assert len(alice.times) == 1  # only ping's line changed in alice's listing
    assert len(root.times) == 2  # wipe's and ping's; never the orphan's
