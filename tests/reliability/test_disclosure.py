"""Disclosure: a description file for a hidden, disabled or unauthorized tool is never served.

Every description file below carries a marker (``SECRET-<tool>``). A caller who may not
see a tool must never receive its marker, by any path: ``tools/list``, the descriptions
resource (alone, mixed with visible tools, percent-encoded, without a selection), the
``describe_tools`` bridge, or a call. Hidden and unknown tools must be answered alike, so
an answer does not even reveal that a hidden tool exists. Positive controls (the admin,
the session that unlocked ``beta``) prove each file would be served to a caller allowed
to see it, so the test would notice if markers simply never got out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from fastmcp_progressive import DESCRIPTIONS_URI
from tests.conftest import ERAS, Era, connect, fetch, read_json, serve_http
from tests.reliability import figures
from tests.reliability.app import HIDDEN_TOOLS, make_server

VISIBLE = {"add", "echo", "shout", "unlock_beta"}


def secret(tool: str) -> str:
    return f"SECRET-{tool}-c0ffee"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "descriptions"
    folder.mkdir()
    for tool in (*HIDDEN_TOOLS, "ghost", "shout"):  # ghost: a file for no tool at all
        (folder / f"{tool}.json").write_text(json.dumps({
            "summary": f"Summary {secret(tool)}.",
            "description": f"Full text {secret(tool)}.",
            "examples": [{"description": secret(tool), "input": {}}],
        }))
    (folder / "add.md").write_text(f"---\n{{\"summary\": \"Add.\"}}\n---\n{secret('add')}\n")
    return folder


SECRETS = [secret(t) for t in (*HIDDEN_TOOLS, "ghost")]


async def everything_a_caller_sees(c: Client[Any], names: list[str]) -> str:
    """Every answer a caller can get about ``names``, concatenated."""
    seen: list[str] = []
    tools = await c.list_tools()
    seen.append(json.dumps([t.model_dump(mode="json") for t in tools]))
    seen.append(json.dumps(await read_json(c, DESCRIPTIONS_URI)))
    for name in names:
        seen.append(json.dumps(await fetch(c, name)))
        seen.append(json.dumps(await fetch(c, name, "add")))
        raw = await c.session.read_resource(f"{DESCRIPTIONS_URI}?tools=%{ord(name[0]):02X}"
                                            f"{name[1:]}")
        seen.append(raw.contents[0].text)  # type: ignore[union-attr]
        if any(t.name == "describe_tools" for t in tools):
            bridge = await c.call_tool("describe_tools", {"tools": [name]},
                                       raise_on_error=False)
            seen.append("".join(getattr(x, "text", "") for x in bridge.content))
        called = await c.call_tool(name, {}, raise_on_error=False)
        seen.append("".join(getattr(x, "text", "") for x in called.content))
        figures.add("disclosure: probes of hidden tools")
    return "\n".join(seen)


_SUGGESTED = re.compile(r'\\?"available_tools\\?":\s*\[([^\]]*)\]')


def _swap(text: str, name: str) -> str:
    """``text`` with ``name`` and every ``available_tools`` list replaced by placeholders:
    the suggestions follow the asked name (closest first), never whether it is hidden."""
    text = _SUGGESTED.sub('"available_tools": [SUGGESTED]', text)
    return text.replace(f"'{name}'", "'NAME'").replace(f'"{name}"', '"NAME"')


def suggested_names(text: str) -> set[str]:
    """Every name any ``available_tools`` list in ``text`` carries."""
    return {
        name
        for listed in _SUGGESTED.findall(text)
        for name in re.findall(r'\\?"((?:[^"\\]|\\[^"])*)\\?"', listed)
    }


def hidden_like_unknown(texts: dict[str, str]) -> None:
    """The answers for each hidden name equal those for an unknown one, name swapped (and
    the suggested names, which follow the asked name, set aside: only visible ones)."""
    for text in texts.values():
        assert suggested_names(text) <= VISIBLE | {"describe_tools"}, suggested_names(text)
    unknown = _swap(texts.pop("no_such_tool"), "no_such_tool")
    for name, text in texts.items():
        assert _swap(text, name) == unknown, name


@pytest.mark.parametrize("era", ERAS)
async def test_hidden_disabled_unauthorized_and_orphan_files_never_served(
    era: Era, folder: Path
) -> None:
    server = make_server(descriptions_dir=folder, hidden=True)
    async with (
        serve_http(server) as url,  # (a FastMCP server object can be served only once)
        connect(url, era, token="alice-token") as alice,
        connect(url, era, token="admin-token") as admin,
    ):
        listed = {t.name for t in await alice.list_tools()}
        assert listed & set(HIDDEN_TOOLS) == set()
        assert listed >= VISIBLE
        text = await everything_a_caller_sees(alice, [*HIDDEN_TOOLS, "ghost"])
        for marker in SECRETS:
            assert marker not in text, marker
        figures.assert_clean(text, str(folder))

        # hidden answers exactly like unknown: only the name differs
        answers = {}
        for name in (*HIDDEN_TOOLS, "no_such_tool"):
            body = await fetch(alice, name)
            called = await alice.call_tool(name, {}, raise_on_error=False)
            answers[name] = json.dumps(body) + "".join(
                getattr(x, "text", "") for x in called.content)
            assert called.is_error
        hidden_like_unknown(answers)

        # nothing a hidden read did unlocked anything
        refused = await alice.call_tool("shout", {"text": "x"}, raise_on_error=False)
        assert refused.structured_content["error"]["code"] == "TOOL_DESCRIPTION_REQUIRED"  # type: ignore[index]

        # positive control: the admin scope sees admin_wipe and gets its file
        body = await fetch(admin, "admin_wipe")
        assert secret("admin_wipe") in json.dumps(body)
        for tool in ("secret_disabled", "internal_ops", "beta", "ghost"):
            assert secret(tool) not in json.dumps(await fetch(admin, tool))


@pytest.mark.parametrize("era", ERAS)
async def test_tool_unlocked_per_session_or_principal_is_served_only_there(
    era: Era, folder: Path
) -> None:
    """``beta`` is hidden until a caller runs ``unlock_beta`` (``ctx.enable_components``):
    per session in the handshake era, per principal in 2026-07-28."""
    server = make_server(descriptions_dir=folder, hidden=True)
    other_token = "alice-token" if era == "legacy" else "bob-token"
    async with (
        serve_http(server) as url,
        connect(url, era, token="alice-token") as unlocked,
        connect(url, era, token=other_token) as other,
    ):
        await fetch(unlocked, "unlock_beta")
        assert (await unlocked.call_tool("unlock_beta", {})).content[0].text == "unlocked"  # type: ignore[union-attr]
        assert secret("beta") in json.dumps(await fetch(unlocked, "beta"))  # control
        assert not (await unlocked.call_tool("beta", {}, raise_on_error=False)).is_error
        text = await everything_a_caller_sees(other, ["beta"])
        assert secret("beta") not in text
        assert "beta" not in {t.name for t in await other.list_tools()}


@pytest.mark.parametrize("era", ERAS)
async def test_tool_disabled_after_it_was_granted_is_no_longer_served_or_run(
    era: Era, folder: Path
) -> None:
    server = make_server(descriptions_dir=folder)
    async with serve_http(server) as url, connect(url, era, token="alice-token") as c:
        assert secret("shout") in json.dumps(await fetch(c, "shout"))  # granted
        assert (await c.call_tool("shout", {"text": "x"})).content[0].text == "X"  # type: ignore[union-attr]
        server.disable(names={"shout"})  # the operator turns it off while it is granted
        body = await fetch(c, "shout")
        assert body["shout"]["error"] == "Tool 'shout' not found"
        assert secret("shout") not in json.dumps(body)
        called = await c.call_tool("shout", {"text": "x"}, raise_on_error=False)
        assert called.is_error and "".join(getattr(x, "text", "") for x in called.content) != "X"
        text = await everything_a_caller_sees(c, ["shout"])
        assert secret("shout") not in text
        figures.assert_clean(text, str(folder))


async def test_broken_and_unreadable_files_never_leak_paths_or_traces(folder: Path) -> None:
    (folder / "echo.json").write_text('{"description": "unterminated')
    (folder / "add.md").unlink()
    (folder / "add.json").symlink_to("/etc/passwd")
    server = make_server(descriptions_dir=folder)
    async with serve_http(server) as url, connect(url, "modern", token="alice-token") as c:
        body = await fetch(c, "add", "echo")
        text = json.dumps(body)
        assert body["add"]["name"] == "add" and body["echo"]["name"] == "echo"
        assert "root:" not in text  # /etc/passwd content
        figures.assert_clean(text, str(folder))
        for name in ("add", "echo", "nope"):
            called = await c.call_tool(name, {"a": 1, "b": 2}, raise_on_error=False)
            figures.assert_clean("".join(getattr(x, "text", "") for x in called.content),
                                 str(folder))
