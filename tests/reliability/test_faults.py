"""Faults while serving: files and the directory changing under reads, unreadable files,
and the watcher failing. The server must keep serving, recover by itself, log clearly,
and never show a client an error, a path or a stack trace for any of it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import watchfiles
from fastmcp import Client

from fastmcp_progressive import ProgressiveDisclosure
from tests.conftest import ERAS, Era, connect, fetch, serve_http
from tests.parts import parts
from tests.reliability import figures
from tests.reliability.app import make_server
from tests.reliability.procs import Replica, start_replicas, without_file_permission_override
from tests.waiting import PATIENCE, ListChangedRecorder, reached, until, watcher_ready

# file churn under 120 reads, replica processes, watcher faults
# (the xdist group keeps the file on one worker: tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("timed-processes")]

REGISTERED = "Add two integers. Returns their sum as an integer."
ROUNDS = 60  # of the churn test: a read, a call and a listing per client each
FAULTS_PER_ROUND = 5  # file faults the churn thread makes before each round


def version(n: int | str, pad: int = 0) -> str:
    return json.dumps({"summary": f"Version {n}.", "description": f"Version {n}. {'x' * pad}"})


async def description_of(client: Client[Any]) -> str:
    with anyio.fail_after(PATIENCE):  # a read blocked by a file fault fails, never hangs
        body = await fetch(client, "add")
    entry = body["add"]
    assert "error" not in entry and entry["name"] == "add", entry
    figures.assert_clean(json.dumps(body))
    return str(entry["description"])


# -- files changing under concurrent reads ----------------------------------------------
class Churn(threading.Thread):
    """Rewrites, replaces, deletes, renames and corrupts ``add.json`` in a loop."""

    def __init__(self, folder: Path) -> None:
        super().__init__(daemon=True)
        self.folder = folder
        self.stop = threading.Event()
        self.written: set[str] = set()
        self.faults = 0
        self.error: BaseException | None = None

    def went_on(self, faults: int) -> Callable[[], bool]:
        """A check that holds once ``faults`` more faults are made from now (or it failed)."""
        target = self.faults + faults
        return lambda: self.faults >= target or self.error is not None

    def run(self) -> None:
        path, n = self.folder / "add.json", 0
        try:
            while not self.stop.is_set():
                n += 1
                self.written.add(f"Version {n}. {'x' * (n % 7)}")
                op = n % 6
                if op == 0:  # in place: truncate, then write (readers may see it empty)
                    with open(path, "w") as handle:
                        handle.write(version(n, n % 7)[:10])
                        handle.flush()
                        handle.write(version(n, n % 7)[10:])
                elif op == 1:  # atomic replace
                    tmp = self.folder / ".add.json.tmp"
                    tmp.write_text(version(n, n % 7))
                    os.replace(tmp, path)
                elif op == 2:  # deleted
                    path.unlink(missing_ok=True)
                elif op == 3:  # corrupt JSON
                    path.write_text(version(n, n % 7)[:-3])
                elif op == 4:  # renamed away and back
                    path.write_text(version(n, n % 7))
                    os.rename(path, self.folder / "add.json.bak")
                    os.rename(self.folder / "add.json.bak", path)
                else:  # replaced by a directory for a moment
                    path.unlink(missing_ok=True)
                    path.mkdir()
                    path.rmdir()
                self.faults += 1
                time.sleep(0.002)
        except BaseException as exc:  # surfaced by the test
            self.error = exc


@pytest.mark.parametrize("era", ERAS)
async def test_reads_during_file_churn_always_serve_a_whole_version(
    era: Era, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "descriptions"
    folder.mkdir()
    (folder / "add.json").write_text(version(0))
    middleware = ProgressiveDisclosure(descriptions_dir=folder)
    server = make_server(middleware=middleware)
    churn = Churn(folder)
    reads = 0
    seen: set[str] = set()
    with caplog.at_level(logging.WARNING, logger="fastmcp.progressive"):
        async with serve_http(server) as url:
            async with connect(url, era, token="alice-token") as a, connect(
                url, era, token="bob-token"
            ) as b:
                churn.start()
                try:
                    # counted, not timed: each round waits for fresh faults, so every
                    # read meets the files changing, however slow the machine is
                    for _ in range(ROUNDS):
                        await until(churn.went_on(FAULTS_PER_ROUND), what="the churn to go on")
                        for client in (a, b):
                            text = await description_of(client)
                            seen.add(text)
                            reads += 1
                            result = await client.call_tool("add", {"a": 2, "b": 3})
                            assert result.structured_content == {"result": 5}
                            listed = {t.name: t for t in await client.list_tools()}
                            assert listed["add"].description  # a summary, never empty
                finally:
                    churn.stop.set()
                    await anyio.to_thread.run_sync(churn.join, PATIENCE)
                assert churn.error is None, churn.error
                # once it settles, the final version is served at once (no restart)
                (folder / "add.json").write_text(version("final", 11))
                await until(lambda: _serves(a, "Version final."), what="final version served")
    assert reads == 2 * ROUNDS and churn.faults >= ROUNDS * FAULTS_PER_ROUND
    allowed = churn.written | {"Version 0. ", REGISTERED}
    assert seen <= allowed, seen - allowed  # a whole version every time, never a mix
    # Only our own errors count: the SDK client logs "Error parsing SSE message" when a
    # list_changed notification races its own shutdown (a closed read stream), not a parse.
    for record in caplog.records:
        if record.name.startswith("fastmcp.progressive"):
            assert record.levelno < logging.ERROR, record.getMessage()
    figures.add("faults injected: file edits/deletes/renames/corruptions", churn.faults)
    figures.add("faults: reads during churn (all served)", reads)


async def _serves(client: Client[Any], prefix: str) -> bool:
    return (await description_of(client)).startswith(prefix)


# -- the directory deleted and recreated -------------------------------------------------
async def test_directory_deleted_and_recreated_recovers_by_itself(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "descriptions"
    folder.mkdir()
    (folder / "add.json").write_text(version("first"))
    middleware = ProgressiveDisclosure(descriptions_dir=folder)
    server = make_server(middleware=middleware, auth=False)
    handler = ListChangedRecorder()
    with caplog.at_level(logging.INFO, logger="fastmcp.progressive"):
        async with connect(server, "legacy", message_handler=handler) as client:
            assert (await description_of(client)).startswith("Version first.")
            await client.list_tools()  # notifications follow what this session was shown
            await watcher_ready(middleware)

            shutil.rmtree(folder)
            figures.add("faults injected: directory deleted/recreated")
            assert await description_of(client) == REGISTERED  # no file: registration
            await until(lambda: handler.count >= 1, what="list_changed after delete")

            folder.mkdir()
            (folder / "add.json").write_text(version("second"))
            assert (await description_of(client)).startswith("Version second.")
            await until(lambda: handler.count >= 2, what="list_changed after recreate")
            listed = {t.name: t for t in await client.list_tools()}
            assert listed["add"].description == "Version second."
            (folder / "add.json").write_text(version("third"))  # the new dir is watched
            await until(lambda: handler.count >= 3, what="list_changed after an edit")
    messages = [r.getMessage() for r in caplog.records]
    assert any("appeared" in m for m in messages), messages
    ours = [r for r in caplog.records if r.name.startswith("fastmcp.progressive")]
    assert not [r for r in ours if r.levelno >= logging.ERROR]


# -- unreadable files ---------------------------------------------------------------------
@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory a child process can reach (pytest's tmp dirs are private to root)."""
    base = Path(tempfile.mkdtemp(prefix="pd-faults-"))
    try:
        os.chmod(base, 0o755)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "no-watcher"])
async def test_unreadable_file_serves_last_good_then_recovers_when_readable(
    shared_dir: Path, replicas: Callable[..., Replica], watch: bool
) -> None:
    """Permission denied, for real: the replica runs without CAP_DAC_OVERRIDE (setpriv),
    so ``chmod 000`` refuses it even as root. A chmod changes no mtime, size or inode."""
    prefix = without_file_permission_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: chmod 000 cannot refuse a read")
    folder = shared_dir / "descriptions"
    folder.mkdir()
    path = folder / "add.json"
    path.write_text(version(1))
    options = ["--descriptions", str(folder), *([] if watch else ["--no-watch"])]
    replica = replicas("-", *options, name=f"perm-{watch}", prefix=prefix)
    start_replicas([replica])
    async with connect(replica.url, "modern", token="alice-token") as client:
        assert (await description_of(client)).startswith("Version 1.")
        path.write_text(version(2, 5))
        path.chmod(0)
        figures.add("faults injected: permission removed")
        assert (await description_of(client)).startswith("Version 1.")  # last good
        path.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
        await until(lambda: _serves(client, "Version 2."),
                    what="the file served again once readable")
    log = replica.log()
    assert "add.json: Permission denied" in log
    assert "Traceback" not in log


# -- the watcher failing -------------------------------------------------------------------
class FlakyWatch:
    """Stands in for ``watchfiles.watch``: fails as told, else delegates to the real one."""

    def __init__(self) -> None:
        self.real = watchfiles.watch
        self.mode = "none"  # "os": the OS watch fails (polling works); "all": both fail
        self.failures = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        if self.mode == "all" or (self.mode == "os" and not kwargs.get("force_polling")):
            self.failures += 1
            raise OSError(28, "inotify watch limit reached (simulated)")
        yield from self.real(*args, **kwargs)


@pytest.fixture
def flaky_watch(monkeypatch: pytest.MonkeyPatch) -> FlakyWatch:
    flaky = FlakyWatch()
    monkeypatch.setattr(watchfiles, "watch", flaky)
    return flaky


async def test_os_watch_failure_falls_back_to_polling_and_keeps_notifying(
    tmp_path: Path, flaky_watch: FlakyWatch, caplog: pytest.LogCaptureFixture
) -> None:
    flaky_watch.mode = "os"
    folder = tmp_path / "descriptions"
    folder.mkdir()
    (folder / "add.json").write_text(version(1))
    middleware = ProgressiveDisclosure(descriptions_dir=folder)
    handler = ListChangedRecorder()
    with caplog.at_level(logging.INFO, logger="fastmcp.progressive"):
        async with connect(make_server(middleware=middleware, auth=False), "legacy",
                           message_handler=handler) as client:
            await description_of(client)
            await client.list_tools()  # notifications follow what this session was shown
            await watcher_ready(middleware)
            # (watchfiles' poller takes its first snapshot ~300 ms after the watch yields,
            # so an edit made in that window is never notified: edit until one is)
            edits = [1]

            async def notified_after_an_edit() -> bool:
                edits.append(n := edits[-1] + 1)
                (folder / "add.json").write_text(version(n, n))
                assert (await description_of(client)).startswith(f"Version {n}.")
                return await reached(lambda: handler.count >= 1, 1)

            await until(notified_after_an_edit, what="list_changed while polling")
    figures.add("faults injected: watcher failures", flaky_watch.failures)
    assert flaky_watch.failures >= 1
    assert any("polling it instead" in r.getMessage() for r in caplog.records)


async def test_watcher_that_fails_entirely_keeps_serving_and_recovers_by_itself(
    tmp_path: Path, flaky_watch: FlakyWatch, caplog: pytest.LogCaptureFixture
) -> None:
    flaky_watch.mode = "all"
    folder = tmp_path / "descriptions"
    folder.mkdir()
    (folder / "add.json").write_text(version(1))
    middleware = ProgressiveDisclosure(descriptions_dir=folder)
    watcher = parts(middleware).hot_reload.watcher
    assert watcher is not None
    handler = ListChangedRecorder()
    with caplog.at_level(logging.INFO, logger="fastmcp.progressive"):
        async with connect(make_server(middleware=middleware, auth=False), "legacy",
                           message_handler=handler) as client:
            await description_of(client)
            await until(lambda: flaky_watch.failures >= 2, what="the watcher tried")
            # the server keeps serving, and edits are served on the next read (stat)
            (folder / "add.json").write_text(version(2, 3))
            assert (await description_of(client)).startswith("Version 2.")
            assert any(r.levelno >= logging.WARNING and "watch" in r.getMessage()
                       for r in caplog.records), "the failure was not logged"
            # the fault clears (inotify slots freed): notifications must come back
            flaky_watch.mode = "none"
            failures_before = flaky_watch.failures
            await client.list_tools()  # ordinary traffic, nothing special
            await until(lambda: watcher.ready.is_set(),
                        what="the watcher armed again by itself once the fault cleared")
            (folder / "add.json").write_text(version(3, 8))
            await until(lambda: handler.count >= 1,
                        what="list_changed after the watcher recovered")
    figures.add("faults injected: watcher failures", failures_before)
