"""Description files: the format, validation with locations, and the store's read rules.

Real files in temporary directories: an edit is served by the next read, a broken file
keeps its last good version, a deleted one gives the registered definition back, nothing
outside the directory is read, and the LRU stays bounded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from fastmcp import FastMCP
from fastmcp.tools.base import Tool

from fastmcp_progressive import (
    ProgressiveDisclosure,
)
from fastmcp_progressive.cli.checks import check
from fastmcp_progressive.cli.commands import render
from fastmcp_progressive.files import folder as description_folder
from fastmcp_progressive.files import store as descriptions
from fastmcp_progressive.files.definitions import full_definition
from fastmcp_progressive.files.errors import DescriptionError
from fastmcp_progressive.files.folder import read_description, read_folder
from fastmcp_progressive.files.model import SUMMARY_MAX_CHARS
from fastmcp_progressive.files.parsing import parse_text
from fastmcp_progressive.files.places import key_location
from fastmcp_progressive.files.store import DescriptionStore
from tests.conftest import answer_of, build_server, connect, fetch
from tests.parts import names_cached, parts
from tests.spies import batch_handled, count_calls
from tests.waiting import PATIENCE, watcher_ready

LOGGER = "fastmcp.progressive.descriptions"


async def _tool() -> Tool:
    mcp = FastMCP("t")

    @mcp.tool
    def create_invoice(customer_id: str, amount: int) -> dict[str, int]:
        """Create an invoice. Long registered text."""
        return {"amount": amount}

    tool = await mcp.get_tool("create_invoice")
    assert tool is not None
    return tool


def _write(folder: Path, name: str, data: dict[str, Any] | str, suffix: str = ".json") -> Path:
    path = folder / f"{name}{suffix}"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# -- format ------------------------------------------------------------------------------
async def test_json_file_fields_override_and_unknown_keys_are_served(tmp_path: Path) -> None:
    _write(tmp_path, "create_invoice", {
        "summary": "Create an invoice.",
        "description": "Creates a draft invoice.",
        "examples": [{"description": "Basic", "input": {"customer_id": "c1", "amount": 5},
                      "explanation": "Five units."}],
        "usage_guidance": {"when": "billing"},
        "error_guidance": ["retry on 503"],
        "x_owner": "billing-team",
    })
    file = read_description(tmp_path, "create_invoice", ".json")
    definition = full_definition(await _tool(), file)

    assert definition["description"] == "Creates a draft invoice."
    assert definition["x_owner"] == "billing-team"
    assert definition["usage_guidance"] == {"when": "billing"}
    assert definition["examples"][0]["explanation"] == "Five units."
    assert "summary" not in definition  # the summary is for the listing only
    assert definition["inputSchema"]["required"] == ["customer_id", "amount"]  # registered
    assert definition["digest"].startswith("sha256:")


async def test_file_schema_overrides_registered_and_digest_follows_content(
    tmp_path: Path,
) -> None:
    tool = await _tool()
    registered = full_definition(tool, None)
    schema = {"type": "object", "properties": {"customer_id": {"type": "string"}}}
    _write(tmp_path, "create_invoice", {"inputSchema": schema})
    overridden = full_definition(tool, read_description(tmp_path, "create_invoice", ".json"))

    assert overridden["inputSchema"] == schema
    assert overridden["digest"] != registered["digest"]
    assert full_definition(tool, None)["digest"] == registered["digest"]  # stable


def test_markdown_front_matter_and_body() -> None:
    text = (
        "---\n"
        '{"summary": "Create an invoice.", "examples": [{"description": "d", "input": {}}]}\n'
        "---\n"
        "# Create invoice\n\nThe whole body is the description.\n"
    )
    parsed = parse_text(text, ".md", "create_invoice")

    assert parsed.name == "create_invoice"
    assert parsed.summary == "Create an invoice."
    assert parsed.description == "# Create invoice\n\nThe whole body is the description."
    assert parsed.examples is not None and parsed.examples[0].description == "d"


def test_markdown_without_front_matter_is_all_description() -> None:
    parsed = parse_text("Just prose.\n\nTwo paragraphs.", ".md", "t")
    assert parsed.description == "Just prose.\n\nTwo paragraphs."
    assert parsed.summary is None


def test_summary_is_one_line_and_bounded() -> None:
    assert parse_text('{"summary": "a\\n  b"}', ".json", "t").summary == "a b"
    with pytest.raises(DescriptionError, match="field summary"):
        parse_text(json.dumps({"summary": "x" * (SUMMARY_MAX_CHARS + 1)}), ".json", "t")


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ('{\n  "summary": "a",\n  oops\n}', ".json", "line 3, column 3: Expecting property"),
        ('{\n  "summary": 5\n}', ".json", "line 2, column 3: field summary:"),
        ('{\n "name": "other"\n}', ".json", "line 2, column 2: field name: says 'other'"),
        ('{"examples": [{"input": {}}]}', ".json",
         "line 1, column 2: field examples.0.description: Field required"),
        ("[1, 2]", ".json", "line 1, column 1: expected a JSON object"),
        ('---\n{\n  "summary": 1\n}\n---\nbody', ".md", "line 3, column 3: field summary"),
        ('---\n{"summary": "a",}\n---\n', ".md", "line 2, column 17"),
        ('---\n{"summary": "a"}\n', ".md",
         "line 1, column 1: front matter opened with '---' is never"),
        ('{\n  "x":\n   ' + "7" * 4301 + "}", ".json", "line 3, column 4: Exceeds the limit"),
        ('---\n{"a": ' + "1" * 5000 + "}\n---\n", ".md", "line 2, column 7: Exceeds the limit"),
        ("[" * 100_000 + "]" * 100_000, ".json", "line 1, column 1:"),
    ],
)
def test_errors_say_where(text: str, suffix: str, message: str) -> None:
    with pytest.raises(DescriptionError) as caught:
        parse_text(text, suffix, "t")
    assert str(caught.value).startswith(message), str(caught.value)


def test_key_location_only_counts_top_level_keys() -> None:
    text = '{"examples": [{"summary": 1}],\n  "summary": 2}'
    assert key_location(text, ".json", "summary") == (2, 3)
    assert key_location(text, ".json", "missing") is None
    assert key_location('---\n{"a": 1,\n "b": 2}\n---\n', ".md", "b") == (3, 2)


def test_bom_and_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_bytes(b'\xef\xbb\xbf{"summary": "ok"}')
    assert read_description(tmp_path, "t", ".json").summary == "ok"
    (tmp_path / "u.json").write_bytes(b'{"summary": "\xff"}')
    with pytest.raises(DescriptionError, match="line 1, column 14: byte 13 is not valid UTF-8"):
        read_description(tmp_path, "u", ".json")


# -- the store: hot reload by stat -------------------------------------------------------
def test_edit_is_served_by_next_read(tmp_path: Path) -> None:
    store = DescriptionStore(tmp_path)
    _write(tmp_path, "t", {"summary": "first"})
    assert (file := store.lookup("t")) is not None and file.summary == "first"
    _write(tmp_path, "t", {"summary": "second version"})
    assert (file := store.lookup("t")) is not None and file.summary == "second version"


def test_cache_hit_costs_a_stat_and_no_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DescriptionStore(tmp_path)
    _write(tmp_path, "t", {"summary": "cached"})
    assert store.lookup("t") is not None
    reads: list[Any] = []

    def no_read(*args: Any, **kwargs: Any) -> Any:
        reads.append(args)
        raise AssertionError("a cache hit read the file")

    monkeypatch.setattr(descriptions, "read_description", no_read)
    for _ in range(5):
        assert (file := store.lookup("t")) is not None and file.summary == "cached"
    assert reads == []


def test_broken_file_keeps_last_good_and_logs_once_per_change(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = DescriptionStore(tmp_path)
    _write(tmp_path, "t", {"summary": "good"})
    assert store.lookup("t") is not None
    caplog.set_level(logging.WARNING, LOGGER)

    path = _write(tmp_path, "t", '{"summary": "half')
    for _ in range(3):
        assert (file := store.lookup("t")) is not None and file.summary == "good"
    warnings = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(warnings) == 1
    assert f"{path}:1:13: Unterminated string" in warnings[0]

    _write(tmp_path, "t", '{"summary": 42, "more": "bytes"}')  # a different broken change
    assert (file := store.lookup("t")) is not None and file.summary == "good"
    assert len([r for r in caplog.records if r.name == LOGGER]) == 2


def test_broken_file_without_good_version_serves_registered(tmp_path: Path) -> None:
    store = DescriptionStore(tmp_path)
    _write(tmp_path, "t", "{not json")
    assert store.lookup("t") is None


def test_deleted_file_gives_registered_definition_back(tmp_path: Path) -> None:
    store = DescriptionStore(tmp_path)
    path = _write(tmp_path, "t", {"summary": "from file"})
    assert store.lookup("t") is not None
    path.unlink()
    assert store.lookup("t") is None
    _write(tmp_path, "t", "{broken")  # back, but broken: the deleted version is not resurrected
    assert store.lookup("t") is None


def test_rename_moves_the_description(tmp_path: Path) -> None:
    store = DescriptionStore(tmp_path)
    path = _write(tmp_path, "old", {"summary": "moving"})
    assert store.lookup("old") is not None
    path.rename(tmp_path / "new.json")
    assert store.lookup("old") is None
    assert (file := store.lookup("new")) is not None and file.summary == "moving"


def test_same_stat_edit_needs_invalidate(tmp_path: Path) -> None:
    """Why the watcher invalidates: an in-place edit can keep size, inode and mtime."""
    store = DescriptionStore(tmp_path)
    path = _write(tmp_path, "t", {"summary": "AAAA"})
    assert (file := store.lookup("t")) is not None and file.summary == "AAAA"
    before = os.stat(path)
    with open(path, "r+", encoding="utf-8") as handle:  # same inode, same size
        handle.write(json.dumps({"summary": "BBBB"}))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    assert (file := store.lookup("t")) is not None and file.summary == "AAAA"  # stat says same
    store.invalidate("t")
    assert (file := store.lookup("t")) is not None and file.summary == "BBBB"


def test_json_wins_over_markdown(tmp_path: Path) -> None:
    store = DescriptionStore(tmp_path)
    _write(tmp_path, "t", "---\n{\"summary\": \"md\"}\n---\nbody", ".md")
    assert (file := store.lookup("t")) is not None and file.summary == "md"
    _write(tmp_path, "t", {"summary": "json"})
    assert (file := store.lookup("t")) is not None and file.summary == "json"
    assert store.signatures()["t"][3] == ".json"


# -- the store: nothing outside the directory --------------------------------------------
def test_symlink_pointing_out_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "descriptions"
    folder.mkdir()
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"summary": "outside"}), encoding="utf-8")
    (folder / "t.json").symlink_to(secret)
    _write(folder, "inside_target", {"summary": "inside"})
    (folder / "alias.json").symlink_to(folder / "inside_target.json")
    store = DescriptionStore(folder)
    caplog.set_level(logging.WARNING, LOGGER)

    assert store.lookup("t") is None
    assert any("links outside" in r.getMessage() for r in caplog.records)
    assert (file := store.lookup("alias")) is not None and file.summary == "inside"


def test_symlink_into_a_subfolder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "descriptions"
    (folder / "sub").mkdir(parents=True)
    _write(folder / "sub", "t", {"summary": "nested"})
    (folder / "t.json").symlink_to(folder / "sub" / "t.json")
    (folder / "u.json").symlink_to(Path("sub") / "t.json")  # relative link, same target
    store = DescriptionStore(folder)
    assert store.lookup("t") is None
    assert store.lookup("u") is None
    with pytest.raises(DescriptionError, match="links outside"):
        read_description(folder, "t", ".json")


@pytest.mark.parametrize("name", ["../secret", "/etc/passwd", ".hidden", "a/b", "", "..", "a\\b"])
def test_path_tricks_are_refused_before_any_io(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "descriptions"
    folder.mkdir()
    (tmp_path / "secret.json").write_text('{"summary": "outside"}', encoding="utf-8")
    (folder / ".hidden.json").write_text('{"summary": "hidden"}', encoding="utf-8")
    store = DescriptionStore(folder)
    reads = count_calls(monkeypatch, descriptions, "read_description")

    assert store.signature(name) is None
    assert store.lookup(name) is None
    with pytest.raises(DescriptionError):
        read_description(folder, name, ".json")
    assert reads.count == 0


def test_directory_symlink_itself_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    _write(real, "t", {"summary": "via link"})
    (tmp_path / "link").symlink_to(real)
    assert (file := DescriptionStore(tmp_path / "link").lookup("t")) is not None
    assert file.summary == "via link"


def test_fifo_and_oversized_files_are_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    _write(tmp_path, "big", {"summary": "x", "description": "y" * 200})
    store = DescriptionStore(tmp_path, max_file_bytes=100)
    assert store.lookup("pipe") is None  # and does not hang waiting for a writer
    assert store.lookup("big") is None


# -- the store: directory lifecycle and LRU ----------------------------------------------
def test_missing_directory_warns_then_is_picked_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "later"
    caplog.set_level(logging.WARNING, LOGGER)
    store = DescriptionStore(folder)
    assert any("does not exist" in r.getMessage() for r in caplog.records)
    assert store.lookup("t") is None and store.signatures() == {}

    folder.mkdir()
    _write(folder, "t", {"summary": "arrived"})
    assert (file := store.lookup("t")) is not None and file.summary == "arrived"
    assert set(store.signatures()) == {"t"}


def test_lru_evicts_and_reloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = DescriptionStore(tmp_path, cache_size=2)
    files_read = count_calls(monkeypatch, descriptions, "read_description")
    for name in ("a", "b", "c"):
        _write(tmp_path, name, {"summary": name})
        assert store.lookup(name) is not None
    assert names_cached(store) == 2
    reads = files_read.count

    assert (file := store.lookup("c")) is not None and file.summary == "c"  # most recent
    assert files_read.count == reads
    assert (file := store.lookup("a")) is not None and file.summary == "a"  # evicted: reread
    assert files_read.count == reads + 1
    assert names_cached(store) == 2


def test_cache_size_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cache_size"):
        DescriptionStore(tmp_path, cache_size=0)


def test_a_file_too_deep_to_serve_counts_as_broken() -> None:
    deep = '{"usage_guidance": ' + "[" * 400 + "1" + "]" * 400 + "}"
    with pytest.raises(DescriptionError, match="cannot be served"):
        parse_text(deep, ".json", "t")
    assert parse_text('{"usage_guidance": [[[1]]]}', ".json", "t").usage_guidance == [[[1]]]


async def test_invalidate_also_refreshes_the_listing(tmp_path: Path) -> None:
    """The listing memo follows the store: an invalidated file is summarized again."""
    from fastmcp_progressive.disclosure.listing import Lister

    store = DescriptionStore(tmp_path)
    lister = Lister(store)
    tool = await _tool()
    path = _write(tmp_path, "create_invoice", {"summary": "AAAA"})
    assert lister.reduce([tool])[0].description == "AAAA"
    before = os.stat(path)
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(json.dumps({"summary": "BBBB"}))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    store.invalidate("create_invoice")
    assert lister.reduce([tool])[0].description == "BBBB"
    store.invalidate()
    assert lister.reduce([tool])[0].description == "BBBB"


def test_invalidated_signatures_never_repeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(descriptions, "MAX_GENERATIONS", 2)  # force the epoch roll-over
    store = DescriptionStore(tmp_path)
    names = ("a", "b", "c")
    for name in names:
        _write(tmp_path, name, {"summary": name})
    seen = {name: {store.signature(name)} for name in names}
    for round_ in range(4):
        for name in names:
            store.invalidate(name)
            signature = store.signature(name)
            assert signature not in seen[name], (round_, name)
            seen[name].add(signature)
        store.invalidate()
        for name in names:
            assert store.signature(name) not in seen[name]
            seen[name].add(store.signature(name))
    assert store.signatures() == {name: store.signature(name) for name in names}


HUGE_INT = "7" * 4301


# -- a number no parser should build: the last good version stays ----------------------
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
        watcher = parts(middleware).hot_reload.watcher
        assert watcher is not None
        seen = batch_handled(monkeypatch, watcher, {"add"})
        path.write_text('{\n  "summary": "x",\n  "limit": ' + HUGE_INT + "\n}")
        assert await asyncio.to_thread(seen.wait, PATIENCE), "the watcher never saw the file"
        listed = {t.name: t.description for t in await c.list_tools()}
        assert listed["add"] == "Good summary."
        assert (await fetch(c, "add"))["add"]["description"] == "Good text."
        bridged = await c.call_tool("describe_tools", {"tools": ["add"]})
        assert answer_of(bridged)["add"]["description"] == "Good text."
    messages = [r.getMessage() for r in caplog.records]
    assert any(f"{path}:3:12: Exceeds the limit" in m for m in messages), messages
    assert not any("polling" in m for m in messages)


def _server() -> FastMCP:
    mcp = FastMCP("t")

    @mcp.tool
    def both() -> str:
        """Has a JSON and a Markdown file."""
        return ""

    @mcp.tool
    def prose() -> str:
        """Has a Markdown file only."""
        return ""

    return mcp


def test_store_and_check_read_the_same_file_and_check_says_why_not_the_other(
    tmp_path: Path,
) -> None:
    (tmp_path / "both.json").write_text(json.dumps({"summary": "From JSON."}))
    (tmp_path / "both.md").write_text("From Markdown.")
    (tmp_path / "prose.md").write_text("Only prose.")
    (tmp_path / "bad:name.json").write_text("{}")
    (tmp_path / ".hidden.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")

    store = DescriptionStore(tmp_path)
    read = {name: sig[3] for name, sig in store.signatures().items()}
    assert read == read_folder(tmp_path).files == {"both": ".json", "prose": ".md"}
    assert (file := store.lookup("both")) is not None and file.summary == "From JSON."

    tools = {t.name: t for t in asyncio.run(_server().list_tools())}
    warnings = [str(p) for p in check(tools, tmp_path) if p.severity == "warning"]
    assert warnings == [
        f"{tmp_path / 'bad:name.json'}: warning: ignored: not a usable tool name",
        f"{tmp_path / 'both.md'}: warning: ignored: both.json takes precedence",
    ]


def test_extracted_markdown_parses_back_to_what_was_written() -> None:
    tool = asyncio.run(_server().get_tool("prose"))
    assert tool is not None
    for suffix in (".md", ".json"):
        text = render(tool, suffix, 100)
        parsed = parse_text("\ufeff" + text, suffix, "prose")  # a BOM changes nothing
        assert parsed.summary == "Has a Markdown file only."
        assert parsed.description == "Has a Markdown file only."


def _fstat_moving(monkeypatch: pytest.MonkeyPatch, moves: int) -> list[int]:
    """Make ``os.fstat`` in the reader report a size change across the first ``moves``
    reads (as an in-place rewrite during the read would); returns the reads seen."""
    real = description_folder.os.fstat
    calls: list[int] = []

    def fstat(fd: int) -> os.stat_result:
        calls.append(fd)
        st = real(fd)
        if len(calls) <= 2 * moves and len(calls) % 2 == 0:  # the "after" stat of a read
            fields = list(st)
            fields[stat.ST_SIZE] += 1
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(description_folder.os, "fstat", fstat)
    return calls


def test_a_file_rewritten_during_the_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "add.json").write_text('{"description": "Add them."}', encoding="utf-8")
    calls = _fstat_moving(monkeypatch, moves=1)
    parsed = description_folder.read_description(tmp_path, "add", ".json")
    assert parsed.description == "Add them."
    assert len(calls) == 4  # the first read was thrown away, the second kept


def test_a_file_that_never_settles_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "add.json").write_text('{"description": "Add them."}', encoding="utf-8")
    _fstat_moving(monkeypatch, moves=description_folder.READ_ATTEMPTS)
    with pytest.raises(description_folder.ChangedWhileRead, match="changed while being read"):
        description_folder.read_description(tmp_path, "add", ".json")
