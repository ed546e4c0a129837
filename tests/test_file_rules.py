"""Rules about description files that several parts of the package share, checked together.

Each rule is written once (``files/folder.py``, ``files/format.py``, ``disclosure/describer.py``):
these tests pin that the parts using it agree: the store and ``check`` read the same file for a
tool, ``extract`` writes front matter the parser reads back, and the guidance recognises
the descriptions resource by every address a read accepts.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest
from fastmcp import FastMCP

from fastmcp_progressive.cli.checks import check
from fastmcp_progressive.cli.commands import render
from fastmcp_progressive.disclosure.guidance import agent_guidance, system_prompt
from fastmcp_progressive.files import folder as description_folder
from fastmcp_progressive.files.folder import read_folder
from fastmcp_progressive.files.parsing import parse_text
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.payloads import is_descriptions_uri


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


def test_guidance_recognises_the_resource_by_every_address_a_read_accepts() -> None:
    for uri in ("resource:///tool_descriptions", "resource:///tool_descriptions/",
                "resource://tool_descriptions", "resource:///tool_descriptions#top",
                "resource:///tool_descriptions?tools=a"):
        assert is_descriptions_uri(uri)
        assert agent_guidance([], [{"uri": uri}]) == system_prompt(None), uri
    assert agent_guidance([], [{"uri": "resource:///tool_descriptionsx"}]) is None


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
