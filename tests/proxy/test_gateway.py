"""Many upstreams behind one progressive front: ``progressive_gateway`` / ``proxy --config``.

The fast tests here put the gateway (front in memory, or over streamable HTTP on 127.0.0.1)
in front of plain FastMCP servers served over streamable HTTP on 127.0.0.1 (URL entries of
an ``mcpServers`` config) plus an entry whose command does not exist, in both protocol
eras: each server under its namespace, FastMCP's own per-server keys and ours (filters),
the gate on namespaced tools, a failed server named (status resource, instructions, its
tools' calls) while the others serve. The config file's errors are checked one by one.
Real processes (npm servers, a Python stdio server, the CLI over stdio and HTTP, roots,
process groups) are in ``test_gateway_processes.py``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.utilities.tests import run_server_async

from fastmcp_progressive import ClientSettings
from fastmcp_progressive.proxy.gateway import (
    STATUS_URI,
    ConfigError,
    ToolFilter,
    Upstreams,
    load_config,
    progressive_gateway,
    upstreams_of,
)
from fastmcp_progressive.proxy.upstream import Upstream
from fastmcp_progressive.resolution.client import grouping, list_groups, tool_groups
from tests.conftest import ERAS, TOKENS, TRANSPORTS, Era, Transport, connect, fetch, serve_http
from tests.scaling import growth
from tests.servers import add_basic_tools
from tests.waiting import PATIENCE


def math_server() -> FastMCP:
    mcp = FastMCP("math", instructions="Arithmetic on integers.")
    add_basic_tools(mcp)  # add, echo, shout

    @mcp.tool(tags={"danger"})
    def wipe() -> str:
        """Erase everything."""
        return "wiped"

    return mcp


def notes_server() -> FastMCP:
    mcp = FastMCP("notes", instructions="A notebook.")

    @mcp.tool
    def write_note(text: str) -> str:
        """Write a note."""
        return f"noted: {text}"

    @mcp.tool
    def read_notes() -> list[str]:
        """Read every note."""
        return ["first"]

    @mcp.tool
    def delete_notes() -> str:
        """Delete every note."""
        return "deleted"

    return mcp


@asynccontextmanager
async def two_upstreams() -> AsyncIterator[dict[str, Any]]:
    """An ``mcpServers`` dict: two HTTP servers (with filters) and one that cannot start."""
    async with run_server_async(math_server()) as math_url, \
            run_server_async(notes_server()) as notes_url:
        yield {"mcpServers": {
            "math": {"url": math_url, "exclude_tags": ["danger"],
                     "tools": {"shout": {"enabled": False}}},
            "notes": {"url": notes_url, "include_tools": ["*_notes", "write_*"],
                      "exclude_tools": ["delete_*"]},
            "broken": {"command": "no-such-mcp-server-xyz", "args": ["--flag"]},
            "off": {"command": "never-started", "disabled": True},
        }}


@asynccontextmanager
async def front(config: dict[str, Any], transport: Transport, era: Era,
                **options: Any) -> AsyncIterator[tuple[FastMCP, Client[Any]]]:
    auth = StaticTokenVerifier(tokens=TOKENS) if transport == "http" else None
    if era == "modern" and transport == "memory":  # no identity: one shared grant set
        options.setdefault("clients", ClientSettings(anonymous="shared"))
    gateway = progressive_gateway(config, auth=auth, startup_timeout=PATIENCE, **options)
    async with AsyncExitStack() as stack:
        target: FastMCP | str = gateway
        if transport == "http":
            target = await stack.enter_async_context(serve_http(gateway))
        token = "alice-token" if transport == "http" else None
        client = await stack.enter_async_context(connect(target, era, token=token))
        yield gateway, client


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("era", ERAS)
async def test_every_server_under_its_namespace_with_its_filters(
    transport: Transport, era: Era
) -> None:
    async with two_upstreams() as config, front(config, transport, era) as (gateway, client):
        names = {t.name for t in await client.list_tools()}
        assert {"math_add", "math_echo", "notes_write_note", "notes_read_notes",
                "describe_tools"} <= names
        assert "math_wipe" not in names  # exclude_tags (FastMCP's key)
        assert "math_shout" not in names  # tools: {shout: {enabled: false}} (FastMCP's key)
        assert "notes_delete_notes" not in names  # exclude_tools wins over include_tools
        assert not any(n.startswith(("broken_", "off_")) for n in names)

        # the gate holds on namespaced tools, and a read unlocks them
        refused = await client.call_tool("math_add", {"a": 1, "b": 2}, raise_on_error=False)
        assert refused.is_error
        assert (refused.structured_content or {})["error"]["code"] == "TOOL_DESCRIPTION_REQUIRED"
        described = await fetch(client, "math_add")
        assert described["math_add"]["inputSchema"]["required"] == ["a", "b"]
        assert (await client.call_tool("math_add", {"a": 1, "b": 2})).data == 3
        await client.call_tool("describe_tools", {"tools": ["notes_write_note"]})
        noted = await client.call_tool("notes_write_note", {"text": "hi"})
        assert noted.data == "noted: hi"

        # filtered tools cannot be called either
        hidden = await client.call_tool("notes_delete_notes", {}, raise_on_error=False)
        assert hidden.is_error and "deleted" not in str(hidden.content)

        # the failed server is named: in its tools' calls, the status resource
        failed = await client.call_tool("broken_anything", {}, raise_on_error=False)
        text = failed.content[0].text  # type: ignore[union-attr]
        assert failed.is_error and "`broken`" in text and "not found" in text
        status = json.loads((await client.read_resource(STATUS_URI))[0].text)  # type: ignore[union-attr]
        states = {u["name"]: u for u in status["upstreams"]}
        assert set(states) == {"math", "notes", "broken"}  # a disabled one is not started
        assert states["math"]["state"] == states["notes"]["state"] == "serving"
        assert states["broken"]["state"] == "failed"
        assert "no-such-mcp-server-xyz" in states["broken"]["reason"]
        assert [u.name for u in upstreams_of(gateway)] == ["math", "notes", "broken"]


@pytest.mark.parametrize("era", ERAS)
async def test_instructions_name_each_server_and_the_one_that_failed(era: Era) -> None:
    async with two_upstreams() as config:
        gateway = progressive_gateway(config, instructions="Our gateway.")
        async with connect(gateway, era) as client:
            await client.list_tools()
            told = client.instructions or ""
    assert told.startswith("Our gateway.")
    assert "- math: Arithmetic on integers." in told
    assert "- notes: A notebook." in told
    assert "- broken: NOT AVAILABLE (cannot start upstream MCP server `broken`" in told
    assert told.index("- broken") < told.index("tool_descriptions")  # ours appended after


def test_a_servers_line_in_the_instructions_is_its_first_prose_not_its_heading() -> None:
    """An upstream's instructions often open with a Markdown heading (server-everything's
    "# Everything Server – Server Instructions"); the front's line for it says what it is."""

    class Serving:
        name = label = "everything"
        instructions = ("# Everything Server – Server Instructions\n\n"
                        "Audience: these instructions are for an LLM. Tools show every feature.")

        def status(self) -> dict[str, str]:
            return {"state": "serving"}

    summary = Upstreams([Serving()]).summary()  # type: ignore[list-item]
    assert "- everything: Audience: these instructions are for an LLM." in summary
    assert "#" not in summary and "Server Instructions" not in summary


async def test_upstreams_start_concurrently_and_stop_with_the_front() -> None:
    async with two_upstreams() as config:
        gateway = progressive_gateway(config)
        upstreams = upstreams_of(gateway)
        assert [u.state for u in upstreams] == ["not started"] * 3
        async with Client(gateway) as client:
            await client.list_tools()
            assert [u.state for u in upstreams] == ["serving", "serving", "failed"]
        assert [u.state for u in upstreams] == ["not started"] * 3  # stopped; a new run retries


# -- the configuration file ------------------------------------------------------------------------
def write(tmp_path: Path, content: Any) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    ([1, 2], "expected a JSON object"),
    ({"mcpServers": {}}, "no servers"),
    ({"mcpServers": {"a": {"args": ["x"]}}}, "server 'a' needs a \"command\""),
    ({"mcpServers": {"a": "npx"}}, "server 'a' needs a \"command\""),
    ({"mcpServers": {"a": {"command": "x", "include_tools": "read_*"}}}, None),
    ({"mcpServers": {"a": {"command": "x", "include_tools": [3]}}}, "include_tools must be"),
    ({"mcpServers": {"a": {"command": "x", "exclude_tools": {"x": 1}}}}, "exclude_tools must"),
    ({"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}, "disabled must be true"),
    ({"mcpServers": {" a": {"command": "x"}}}, "cannot be a namespace"),
    # names model APIs refuse as tool-name prefixes, or no description file can carry (#34)
    ({"mcpServers": {"my memory!": {"command": "x"}}},
     "server name 'my memory!' cannot be a namespace: its tools are named <server>_<tool>, "
     "and OpenAI and Anthropic refuse tool names outside ^[a-zA-Z0-9_-]{1,64}$; use only "
     "letters, digits, '_' and '-', at most 62 characters (e.g. 'my_memory')"),
    ({"mcpServers": {"fs/v2": {"url": "http://127.0.0.1:9/mcp"}}}, "(e.g. 'fs_v2')"),
    ({"mcpServers": {"x" * 63: {"command": "x"}}}, "at most 62 characters"),
    # env values are text: null and true reached the upstream as None and True (#34)
    ({"mcpServers": {"a": {"command": "x", "env": {"N": None}}}},
     "server 'a': env 'N' is null, not a string; environment variables hold text: write it "
     "in quotes (e.g. \"N\": \"\"), or leave N out to not set it"),
    ({"mcpServers": {"a": {"command": "x", "env": {"T": True}}}},
     "env 'T' is true, not a string; environment variables hold text: write it in quotes "
     "(e.g. \"T\": \"true\")"),
    ({"mcpServers": {"a": {"command": "x", "env": {"P": 8080}}}}, "(e.g. \"P\": \"8080\")"),
    # VS Code's own variables are VS Code's to expand, not sent as they are
    ({"servers": {"gh": {"type": "http", "url": "https://x/mcp",
                         "headers": {"Authorization": "Bearer ${input:token}"}}}},
     "server 'gh': headers.Authorization uses VS Code's variable ${input:token}, which the "
     "proxy does not expand; write the value itself"),
    ({"mcpServers": {"a": {"command": "x", "args": "not-a-list"}}}, "mcpServers.a"),
    # a's tool b_echo and a_b's echo would both be a_b_echo: refused, naming both (#27)
    ({"mcpServers": {"a_b": {"command": "x"}, "a": {"command": "y"}}},
     "servers 'a' and 'a_b' cannot both be served"),
])
def test_config_errors_name_the_file_and_the_server(
    tmp_path: Path, content: Any, message: str | None
) -> None:
    path = write(tmp_path, content)
    if message is None:
        assert "a" in load_config(path).mcpServers  # a single pattern is accepted
        return
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(path) in str(raised.value) and message in str(raised.value)


def test_config_file_missing_and_all_disabled(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.json")
    with pytest.raises(ConfigError, match="every server in the configuration is disabled"):
        progressive_gateway({"mcpServers": {"a": {"command": "x", "disabled": True}}})
    # a disabled server lists nothing, so it shadows nothing
    shadow_off = {"a": {"command": "x", "disabled": True}, "a_b": {"command": "y"}}
    assert set(load_config(shadow_off).mcpServers) == {"a", "a_b"}


def test_names_and_env_of_a_disabled_server_are_not_judged() -> None:
    """A host's file may hold servers only other hosts run: a disabled one is not served,
    so its name and values stop nothing."""
    config = {"mcpServers": {"my memory!": {"command": "x", "disabled": True,
                                            "env": {"N": None}},
                             "ok-name_2": {"command": "y", "env": {"K": "v"}}}}
    assert set(load_config(config).mcpServers) == {"my memory!", "ok-name_2"}


def test_vscode_servers_form_is_read(tmp_path: Path) -> None:
    """VS Code's ``mcp.json`` (``servers``, a ``type`` per server, ``inputs``) is read as
    its servers, not as one server named ``servers`` (#34); ``type: sse`` picks SSE."""
    vscode = {"inputs": [{"type": "promptString", "id": "k", "password": True}],
              "servers": {"memory": {"type": "stdio", "command": "npx",
                                     "args": ["-y", "@modelcontextprotocol/server-memory"]},
                          "remote": {"type": "sse", "url": "http://127.0.0.1:9/events"},
                          "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}
    servers = load_config(write(tmp_path, vscode)).mcpServers
    assert set(servers) == {"memory", "remote", "web"}
    assert servers["memory"].args == ["-y", "@modelcontextprotocol/server-memory"]
    assert [servers[n].transport for n in ("remote", "web")] == ["sse", "http"]
    # a server that is itself named "servers", at the root, is still that server
    assert set(load_config({"servers": {"command": "x"}}).mcpServers) == {"servers"}


async def test_many_servers_load_in_time_linear_in_their_number() -> None:
    """20,000 enabled servers took about 25 s to load: every pair of names was compared for
    shadowing. Each name's prefixes are looked up instead: ten times the servers, about ten
    times the work (measured as CPU time in this test; quadratic would be a hundred)."""

    def load(count: int) -> None:
        load_config({"mcpServers": {f"server{i}_x": {"command": "x"} for i in range(count)}})

    assert await growth(load, 1_000, 10_000) < 30
    gateway = Upstreams([Upstream(["x"], name=n) for n in ("a", "a_b", "c")])
    assert [gateway.owning(t) for t in ("a_b_echo", "a_echo", "c_", "b_echo", "cat")] == [
        gateway["a_b"], gateway["a"], gateway["c"], None, None]


def test_claude_desktop_and_root_level_forms_are_read(tmp_path: Path) -> None:
    desktop = {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "pkg", "/data"],
                                     "env": {"KEY": "v"}}},
               "globalShortcut": "Ctrl+Space"}  # other keys of the host's file are ignored
    assert load_config(write(tmp_path, desktop)).mcpServers["fs"].args == ["-y", "pkg", "/data"]
    bare = {"fs": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k"}}}
    assert set(load_config(bare).mcpServers) == {"fs"}


def test_tool_filter_patterns() -> None:
    only = ToolFilter(include=["read_*", "list"], exclude=["read_secret*"])
    assert only.allows("read_file") and only.allows("list")
    assert not only.allows("read_secret_key") and not only.allows("write_file")
    assert ToolFilter().allows("anything")


@pytest.mark.parametrize("era", ERAS)
async def test_each_server_is_a_group_described_by_its_instructions(era: Era) -> None:
    """A client of the grouping extension sees one group per server, described by that
    server's own instructions (the mounted proxy carries them once connected)."""
    async with two_upstreams() as config:
        gateway = progressive_gateway(config)
        async with connect(gateway, era, extensions=[grouping()]) as client:
            tools = {t.name: t for t in await client.list_tools()}
            groups = {g["name"]: g for g in await list_groups(client)}
    assert groups["math"].get("description") == "Arithmetic on integers."
    assert groups["notes"].get("description") == "A notebook."
    assert tool_groups(tools["math_add"]) == ["math"]
    assert "broken" not in groups  # no tools, no group


async def test_filters_match_the_upstreams_own_names_whatever_tools_renames() -> None:
    """``include_tools``/``exclude_tools`` name the upstream's tools, as written in its own
    listing: a rename (FastMCP's ``tools`` key) neither lifts an exclusion nor defeats an
    inclusion, for listing, describing and calling."""
    async with run_server_async(notes_server()) as url:
        config = {"mcpServers": {
            "ren": {"url": url, "exclude_tools": ["delete_*"],
                    "tools": {"delete_notes": {"name": "tidy"}}},
            "inc": {"url": url, "include_tools": ["read_*"],
                    "tools": {"read_notes": {"name": "fetch"}}},
        }}
        async with front(config, "memory", "legacy") as (_, client):
            names = {t.name for t in await client.list_tools()}
            assert "ren_tidy" not in names and "ren_delete_notes" not in names
            assert {"ren_write_note", "ren_read_notes", "inc_fetch"} <= names
            assert not {"inc_read_notes", "inc_write_note", "inc_delete_notes"} & names
            described = await client.call_tool(
                "describe_tools", {"tools": ["ren_tidy", "inc_fetch"]}, raise_on_error=False)
            assert "Delete every note" not in str(described.content)
            assert "Read every note" in str(described.content)
            for hidden in ("ren_tidy", "ren_delete_notes"):
                refused = await client.call_tool(hidden, {}, raise_on_error=False)
                assert refused.is_error and "deleted" not in str(refused.content), hidden
            assert (await client.call_tool("inc_fetch", {})).data == ["first"]
