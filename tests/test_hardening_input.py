"""Hostile files, names, queries and options: each is refused or contained, clearly.

Every test here failed on the code before the hardening change it names.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest
from fastmcp.tools.base import Tool
from hypothesis import given, settings
from hypothesis import strategies as st
from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive import (
    DESCRIPTIONS_URI,
    GrantSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import _kv_key
from fastmcp_progressive.cli.commands import main
from fastmcp_progressive.disclosure.describer import parse_selection, selection_from_names
from fastmcp_progressive.disclosure.listing import ELLIPSIS, cut_line, summarize
from fastmcp_progressive.files.store import DescriptionStore
from tests.conftest import build_server, connect, fetch, gated, read_json, serve_http
from tests.spies import batch_handled
from tests.waiting import watcher_ready

HUGE_INT = "7" * 4301


# -- hostile description files ------------------------------------------------------------
async def test_a_4301_digit_integer_keeps_the_last_good_version_everywhere(
    tmp_descriptions: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, "fastmcp.progressive")
    path = tmp_descriptions / "add.json"
    path.write_text('{"summary": "Good summary.", "description": "Good text."}')
    middleware = ProgressiveDisclosure(tmp_descriptions)
    async with connect(build_server(middleware=middleware), "legacy") as c:
        assert (await fetch(c, "add"))["add"]["description"] == "Good text."
        await watcher_ready(middleware)
        watcher = middleware.hot_reload.watcher
        assert watcher is not None
        seen = batch_handled(monkeypatch, watcher, {"add"})
        path.write_text('{\n  "summary": "x",\n  "limit": ' + HUGE_INT + "\n}")
        assert await asyncio.to_thread(seen.wait, 5.0), "the watcher never saw the file"
        listed = {t.name: t.description for t in await c.list_tools()}
        assert listed["add"] == "Good summary."
        assert (await fetch(c, "add"))["add"]["description"] == "Good text."
        bridged = await c.call_tool("describe_tools", {"tools": ["add"]})
        assert bridged.structured_content["add"]["description"] == "Good text."  # type: ignore[index]
    messages = [r.getMessage() for r in caplog.records]
    assert any(f"{path}:3:12: Exceeds the limit" in m for m in messages), messages
    assert not any("polling" in m for m in messages)


def test_check_reports_the_huge_integer_at_its_place_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = tmp_path / "app.py"
    app.write_text(
        "from fastmcp import FastMCP\nmcp = FastMCP('a')\n"
        "@mcp.tool\ndef add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n"
    )
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "add.json").write_text('{"examples": [' + HUGE_INT + "]}")
    status = main(["check", f"{app}:mcp", str(folder)])
    out = capsys.readouterr()
    assert status == 1
    assert f"{folder / 'add.json'}:1:15: error: Exceeds the limit" in out.out + out.err
    assert "Traceback" not in out.out + out.err


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
    real_scandir = os.scandir
    monkeypatch.setattr("fastmcp_progressive.files.store.os.scandir",
                        lambda p: scans.append(p) or real_scandir(p))
    for _ in range(5):
        assert set(store.signatures()) == {"add"}
    assert len(scans) == 1
    (tmp_descriptions / "echo.md").write_text("Echo.")
    os.utime(tmp_descriptions, (past + 1, past + 1))  # a new entry moves the folder's stat
    assert set(store.signatures()) == {"add", "echo"}
    store.invalidate("echo")  # the watcher saw something: scan again
    assert set(store.signatures()) == {"add", "echo"}
    assert len(scans) == 3


# -- hostile names and queries ------------------------------------------------------------
class Memcachedish(MemoryStore):
    """A store with memcached's key rules: at most 250 bytes, no spaces or controls."""

    def _refuse(self, key: str, collection: str | None) -> None:
        full = f"{collection}:{key}"
        if len(full.encode()) > 250 or any(c.isspace() or ord(c) < 32 for c in full):
            raise ValueError(f"bad key {full[:40]!r}...")

    async def get(self, key: str, *, collection: str | None = None) -> Any:  # type: ignore[override]
        self._refuse(key, collection)
        return await super().get(key, collection=collection)

    async def put_many(self, keys: Any, values: Any, *, collection: Any = None,  # type: ignore[override]
                       ttl: Any = None) -> None:
        for key in keys:
            self._refuse(key, collection)
        await super().put_many(keys, values, collection=collection, ttl=ttl)


LONG = "t" * 300


@pytest.mark.parametrize("policy", ["open", "closed"])
async def test_one_callers_bad_name_never_changes_anothers_answer(policy: str) -> None:
    server = build_server(
        auth=True,
        grants=GrantSettings(store=Memcachedish(), on_store_error=policy),
    )
    server.add_tool(Tool.from_function(lambda: "long", name=LONG, description="Long name."))
    async with (
        serve_http(server) as url,
        connect(url, "modern", token="alice-token") as alice,
        connect(url, "modern", token="bob-token") as bob,
    ):
        for name in ("x" * 300, "a b\n" * 80, "\x00" * 10):
            await alice.call_tool(name, {}, raise_on_error=False)
        assert await gated(bob, "add")  # not ungated ("open") nor unavailable ("closed")
        await fetch(bob, "add")
        assert not await gated(bob, "add")
        # a real tool with a 300-character name: listed, described, unlocked, called
        assert LONG in [t.name for t in await alice.list_tools()]
        assert await gated(alice, LONG, {})
        assert (await fetch(alice, LONG))[LONG]["name"] == LONG
        called = await alice.call_tool(LONG, {})
        assert not called.is_error and called.content[0].text == "long"  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["principal", "session"]), key=st.text(max_size=400),
       tool=st.text(min_size=1, max_size=400))
def test_store_keys_are_short_plain_and_distinct(kind: str, key: str, tool: str) -> None:
    caller = Caller(kind=kind, era="modern", key=key)  # type: ignore[arg-type]
    made = _kv_key(caller, tool)
    assert len(made) <= 250 and made.isascii() and made.isprintable() and " " not in made
    assert made != _kv_key(caller, tool + "x")


async def test_names_longer_than_256_characters_can_be_unlocked_through_the_bridge() -> None:
    server = build_server()
    server.add_tool(Tool.from_function(lambda: "long", name=LONG, description="Long name."))
    async with connect(server, "legacy") as c:
        assert LONG in [t.name for t in await c.list_tools()]
        body = await c.call_tool("describe_tools", {"tools": [LONG]})
        assert body.structured_content[LONG]["name"] == LONG  # type: ignore[index]
        assert not await gated(c, LONG, {})


async def test_a_fragment_is_not_a_query_and_grants_nothing() -> None:
    async with connect(build_server(), "legacy") as c:
        body = await read_json(c, f"{DESCRIPTIONS_URI}#?tools=add")
        assert body["error"]["code"] == "MISSING_TOOL_SELECTION"
        assert await gated(c, "add")


def test_blank_names_count_toward_no_limit() -> None:
    blanks = ",".join(["%20"] * 40 + ["add"])
    assert parse_selection(f"{DESCRIPTIONS_URI}?tools={blanks}", limit=32).names == ("add",)
    assert selection_from_names([" "] * 40 + ["add"], limit=32).names == ("add",)
    assert selection_from_names([f"t{i}" for i in range(33)], limit=32).names == ()


# -- the one-line summary -----------------------------------------------------------------
def _reference_summary(description: str, max_chars: int) -> str:
    """The rule as first written (quadratic, fine for small inputs): the test oracle."""
    from fastmcp_progressive.disclosure.listing import _ABBREVIATIONS, _SENTENCE_END

    text = " ".join(description.split())
    if not text:
        return ""
    for match in _SENTENCE_END.finditer(text):
        if not text[: match.end()].lower().endswith(_ABBREVIATIONS):
            text = text[: match.end()]
            break
    return cut_line(text, max_chars)


@settings(max_examples=500, deadline=None)
@given(
    parts=st.lists(st.sampled_from(["a", "bc", " ", "\n\t", ".", "!", "?", "e.g.", "No.",
                                    "I.E.", "etc.", "x" * 25, ",", "-"]), max_size=60),
    max_chars=st.integers(min_value=16, max_value=60),
)
def test_summary_matches_the_rule_it_always_had(parts: list[str], max_chars: int) -> None:
    text = "".join(parts)
    assert summarize(text, max_chars) == _reference_summary(text, max_chars)


def test_summary_of_a_300_kb_description_full_of_eg_is_quick() -> None:
    text = "Pass options, e.g. this one, e.g. that one " * 7000  # ~300 KB, no sentence end
    started = time.perf_counter()
    for _ in range(10):
        line = summarize(text, 100)
    assert time.perf_counter() - started < 1.0  # was ~4 s per call (quadratic)
    assert line.endswith(ELLIPSIS) and len(line) <= 100
