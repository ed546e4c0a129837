"""A listing costs what its listed tools cost, not what the descriptions folder holds (#21).

A listing used to ``stat`` every description file in the folder: 50,000 files for tools
that do not exist made each ``tools/list`` take 774 ms instead of 1 ms. It now stats only
the files of the tools it lists (which files exist comes from a directory scan kept until
the folder changes), so an edit to a listed tool's file is still served by the very next
listing. ``benchmarks/measure/hostile.py`` times it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fastmcp_progressive import (
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.files import store as descriptions_module
from fastmcp_progressive.files.store import DescriptionStore
from tests.conftest import ERAS, Era, build_server, connect

ORPHANS = 1_000


class StatCounter:
    """Counts the per-file stats a listing makes on the thread serving requests."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.thread = threading.current_thread()
        real = descriptions_module.stats_in

        @contextmanager
        def counted(directory: Path, **kwargs: Any) -> Iterator[Callable[[str], Any]]:
            with real(directory, **kwargs) as stat_file:
                def stat(name: str) -> Any:
                    if threading.current_thread() is self.thread:
                        self.count += 1
                    return stat_file(name)
                yield stat

        monkeypatch.setattr(descriptions_module, "stats_in", counted)


def _folder(folder: Path) -> Path:
    for i in range(ORPHANS):
        (folder / f"gone_{i}.json").write_text('{"description": "no such tool"}')
    for name in ("add", "echo"):
        (folder / f"{name}.json").write_text(f'{{"summary": "{name} v1"}}')
    return folder


@pytest.mark.parametrize("era", ERAS)
async def test_a_listing_stats_only_the_listed_tools_files(
    tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch, era: Era,
) -> None:
    folder = _folder(tmp_descriptions)
    middleware = ProgressiveDisclosure(folder, listing=ListingSettings(preload=False))
    server = build_server(middleware=middleware)
    stats = StatCounter(monkeypatch)
    async with connect(server, era) as client:
        await client.list_tools()  # the first listing scans the folder once
        stats.count = 0
        listed = {t.name: t.description for t in await client.list_tools()}
        assert listed["add"] == "add v1" and listed["echo"] == "echo v1"
        assert stats.count <= 2, f"one listing stat'ed {stats.count} files"

        (folder / "echo.json").write_text('{"summary": "echo v2, longer"}')
        listed = {t.name: t.description for t in await client.list_tools()}
        assert listed["echo"] == "echo v2, longer"  # served by the very next listing


async def test_a_new_file_for_a_listed_tool_is_seen(tmp_descriptions: Path) -> None:
    folder = _folder(tmp_descriptions)
    middleware = ProgressiveDisclosure(folder, listing=ListingSettings(preload=False))
    async with connect(build_server(middleware=middleware), "legacy") as client:
        await client.list_tools()
        (folder / "shout.json").write_text('{"summary": "shout from file"}')

        async def shout() -> str | None:
            listed = {t.name: t.description for t in await client.list_tools()}
            return listed["shout"]

        from tests.waiting import until

        await until(lambda: _is(shout, "shout from file"), 10, "the new file in a listing")


async def _is(get: Callable[[], Any], expected: str) -> bool:
    return bool(await get() == expected)


def test_listing_does_not_rescan_a_folder_full_of_other_files(
    tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(2000):
        (tmp_descriptions / f"unrelated_{i}.txt").write_text("")
    (tmp_descriptions / "add.json").write_text('{"summary": "Sum."}')
    past = time.time() - 60
    os.utime(tmp_descriptions, (past, past))
    store = DescriptionStore(tmp_descriptions)
    scans = []
    real_listdir = os.listdir
    monkeypatch.setattr("fastmcp_progressive.files.store.os.listdir",
                        lambda p: scans.append(p) or real_listdir(p))
    for _ in range(5):
        assert set(store.signatures()) == {"add"}
    assert len(scans) == 1
    (tmp_descriptions / "echo.md").write_text("Echo.")
    os.utime(tmp_descriptions, (past + 1, past + 1))  # a new entry moves the folder's stat
    assert set(store.signatures()) == {"add", "echo"}
    store.invalidate("echo")  # the watcher saw something: scan again
    assert set(store.signatures()) == {"add", "echo"}
    assert len(scans) == 3
