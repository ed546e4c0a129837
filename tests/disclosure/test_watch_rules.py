"""Hot reload: an edit that changes only what a file puts in ``tools/list`` beyond its line
(the ``resolution`` mark, ``always_load``, ``groups``) notifies handshake-era sessions.

A real watcher over a real folder, a real legacy client over streamable HTTP that records
``tools/list_changed``, and no sleeps: each step waits for the notification, or for the
watcher to have handled the batch before asserting that none came.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import FastMCP

from fastmcp_progressive import ProgressiveDisclosure
from fastmcp_progressive.resolution.client import is_resolvable, tool_resolution
from tests.conftest import build_server, connect, serve_http
from tests.parts import parts
from tests.spies import batch_handled
from tests.waiting import PATIENCE, watcher_ready
from tests.waiting import ListChangedRecorder as Recorder

SUMMARY = "Add two numbers."
RULE = {"when": {"a": 0}, "readOnlyHint": True}


@pytest.fixture
def middleware(tmp_descriptions: Path) -> Iterator[ProgressiveDisclosure]:
    mw = ProgressiveDisclosure(tmp_descriptions)
    yield mw
    mw.close()


def _write(folder: Path, **fields: Any) -> None:
    (folder / "add.json").write_text(json.dumps({"summary": SUMMARY, **fields}))


async def test_rule_only_edits_send_list_changed(
    middleware: ProgressiveDisclosure, tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _write(tmp_descriptions)
    rec = Recorder()
    server: FastMCP = build_server(middleware=middleware)
    async with (
        serve_http(server) as url,
        connect(url, "legacy", message_handler=rec, extensions=[tool_resolution()]) as c,
    ):
        listed = {t.name: t for t in await c.list_tools()}
        assert not is_resolvable(listed["add"])
        await watcher_ready(middleware)
        watcher = parts(middleware).hot_reload.watcher
        assert watcher is not None

        _write(tmp_descriptions, resolution=[RULE])  # the same line, now resolvable
        await rec.next()
        assert is_resolvable({t.name: t for t in await c.list_tools()}["add"])

        seen = batch_handled(monkeypatch, watcher, {"add"})
        _write(tmp_descriptions, resolution=[RULE, {"readOnlyHint": False}], examples=[])
        assert await asyncio.to_thread(seen.wait, PATIENCE), "the watcher never saw the edit"
        assert rec.count == 1  # still resolvable: the listing did not change

        _write(tmp_descriptions)  # rules gone: the mark goes
        await rec.next()
        assert not is_resolvable({t.name: t for t in await c.list_tools()}["add"])

        _write(tmp_descriptions, always_load=True)  # pinned: listed in full
        await rec.next()
        assert rec.count == 3
