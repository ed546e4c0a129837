"""Groups (``io.modelcontextprotocol/grouping``) and a listing within a tool cap.

Through real protocol paths: ``fastmcp.Client`` in memory and over streamable HTTP, both
protocol eras. Groups come from description files, FastMCP tags and mount namespaces;
clients that do not advertise the extension see nothing new; a group with no tool the
caller may see is not listed to it. A capped listing holds at most N entries, its bridge
names the groups, ``describe_tools(groups=...)`` answers each group's tools one line each,
the dispatch bridge reaches every visible tool under its own name through the same gate,
and a followable caller's listing lives where its grants live (two servers, one store).
The cap's call counts (``disclosure/toolcap.py``) hold only tools that exist and are bounded
by bytes as well as by count (#27): a client served in full runs every name it sends, so
the counter is the one place such a name could stay behind.
"""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from key_value.aio.stores.memory import MemoryStore
from mcp.shared.exceptions import MCPError

from fastmcp_progressive import (
    HOST_PROFILES,
    ClientSettings,
    GrantSettings,
    HostProfile,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.grants import GrantStore
from fastmcp_progressive.disclosure.groups import GROUPING_EXTENSION_ID, GROUPS_META_KEY
from fastmcp_progressive.disclosure.toolcap import ToolCap
from fastmcp_progressive.resolution.client import (
    ListGroupsRequest,
    ListGroupsResult,
    grouping,
    list_groups,
    tool_groups,
)
from tests.conftest import (
    ERAS,
    TOKENS,
    TRANSPORT_ERA,
    Era,
    Transport,
    build_server,
    connect,
    serve_http,
    served,
)
from tests.parts import parts
from tests.waiting import PATIENCE

pytestmark = pytest.mark.asyncio


def catalog(folder: Path | None, **options: Any) -> tuple[FastMCP, list[str]]:
    """12 tools: ``billing`` (tags), ``notes`` (files), ``kid`` (a mount), one hidden
    (``secret``, the only member of group ``vault``) and one pinned (``help``)."""
    ran: list[str] = []
    mcp = FastMCP("groups", auth=options.pop("auth", None),
                  list_page_size=options.pop("list_page_size", None))
    kid = FastMCP("kid", instructions="Kid server: weather lookups and forecasts.")

    def make(server: FastMCP, name: str, tags: set[str] | None = None) -> None:
        def tool(text: str) -> str:
            ran.append(name)
            return f"{name}:{text}"

        server.tool(tool, name=name, description=f"The {name} tool. More text here.",
                    tags=tags or set())

    for n in ("create_invoice", "refund_invoice", "list_invoices"):
        make(mcp, n, {"billing"})
    for n in ("read_note", "write_note", "tag_note"):
        make(mcp, n)
    make(mcp, "secret", {"vault"})
    make(mcp, "help", {"always_load"})
    for n in ("forecast", "current", "alerts"):
        make(kid, n)
    mcp.mount(kid, namespace="kid")
    mcp.disable(names={"secret"})
    if folder is not None:
        for n in ("read_note", "write_note", "tag_note"):
            (folder / f"{n}.json").write_text(json.dumps({"groups": ["notes"]}), "utf-8")
        (folder / "groups").mkdir()
        (folder / "groups" / "notes.json").write_text(json.dumps(
            {"title": "Notes", "description": "Read and write notes. Tag them too."}), "utf-8")
    mcp.add_middleware(ProgressiveDisclosure(folder, **options))
    return mcp, ran




def _body(result: Any) -> Any:
    return json.loads(result.content[0].text)


# -- groups ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_groups_list_and_tool_meta(tmp_descriptions: Path, transport: Transport,
                                         era: Era) -> None:
    server, _ = catalog(tmp_descriptions)
    async with served(server, transport) as target, connect(
            target, era, extensions=[grouping()]) as client:
        caps = client.session.server_capabilities
        assert caps is not None and caps.extensions is not None
        assert caps.extensions[GROUPING_EXTENSION_ID] == {"listChanged": True}
        groups = {g["name"]: g for g in await list_groups(client)}
        assert set(groups) == {"billing", "notes", "kid"}  # "vault": its one tool is hidden
        assert groups["notes"]["title"] == "Notes"
        assert groups["notes"]["description"].startswith("Read and write notes.")
        assert groups["kid"]["description"] == "Kid server: weather lookups and forecasts."
        tools = {t.name: t for t in await client.list_tools()}
        assert tool_groups(tools["create_invoice"]) == ["billing"]
        assert tool_groups(tools["read_note"]) == ["notes"]
        assert tool_groups(tools["kid_forecast"]) == ["kid"]
        assert tool_groups(tools["help"]) == []  # the pin tag is not a group
        assert "secret" not in tools


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_clients_without_the_extension_see_nothing_new(
        tmp_descriptions: Path, transport: Transport, era: Era) -> None:
    server, _ = catalog(tmp_descriptions)
    async with served(server, transport) as target, connect(target, era) as client:
        for tool in await client.list_tools():
            assert GROUPS_META_KEY not in (tool.meta or {}), tool.name
            assert tool.name != "run_tool"  # uncapped: no dispatch bridge
            if tool.name == "describe_tools":
                assert set(tool.input_schema["properties"]) == {"tools", "query"}


async def test_groups_list_is_one_page(tmp_descriptions: Path) -> None:
    """Every group in one page, whatever the server's own ``list_page_size``; a cursor
    (never issued) is refused."""
    server, _ = catalog(tmp_descriptions, list_page_size=1)
    async with Client(server, extensions=[grouping()]) as client:
        names = [g["name"] for g in await list_groups(client)]
        assert names == ["billing", "kid", "notes"]
        page = await client.session.send_request(ListGroupsRequest(params=None),
                                                 ListGroupsResult)
        assert len(page.groups) == 3 and page.next_cursor is None
        with pytest.raises(MCPError, match="Invalid cursor"):
            await client.session.send_request(
                mt.ListToolsRequest.model_construct(
                    method="groups/list", params=mt.PaginatedRequestParams(cursor="bogus")),
                mt.Result)


async def test_a_bad_groups_field_is_refused() -> None:
    from fastmcp_progressive.files.model import DescriptionFile

    with pytest.raises(ValueError, match="group name"):
        DescriptionFile.model_validate({"name": "x", "groups": [""]})
    assert "groups" not in DescriptionFile.model_validate(
        {"name": "x", "groups": ["a", "a"]}).fields()


# -- a listing within a tool cap --------------------------------------------------------------
CAP = 6


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_capped_listing(tmp_descriptions: Path, transport: Transport, era: Era) -> None:
    server, ran = catalog(tmp_descriptions, listing=ListingSettings(max_tools=CAP))
    async with served(server, transport) as target, connect(target, era) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert len(tools) <= CAP
        assert {"help", "describe_tools", "run_tool"} <= set(tools)
        bridge = tools["describe_tools"].description or ""
        for group in ("billing", "notes", "kid"):
            assert f"\n{group}: " in bridge
        assert "vault" not in bridge  # its only tool is hidden
        assert "required" not in tools["describe_tools"].input_schema
        answer = _body(await client.call_tool("describe_tools", {"groups": ["kid", "vault"]}))
        assert answer["groups"]["kid"]["tools"] == {
            "kid_forecast": "The forecast tool.", "kid_current": "The current tool.",
            "kid_alerts": "The alerts tool."}
        assert "error" in answer["groups"]["vault"]
        unlisted = next(n for n in ("kid_alerts", "kid_current", "tag_note", "refund_invoice")
                        if n not in tools)
        local = unlisted.removeprefix("kid_")
        result = await client.call_tool("run_tool", {"name": unlisted,
                                                      "arguments": {"text": "hi"}},
                                        raise_on_error=False)
        if result.is_error:  # a followable caller: the teaching refusal, then it runs
            assert "TOOL_DESCRIPTION_REQUIRED" in result.content[0].text
            result = await client.call_tool("run_tool", {"name": unlisted,
                                                          "arguments": {"text": "hi"}})
        assert result.content[0].text == f"{local}:hi"
        assert ran.count(local) == 1
        # Semantic Kernel sends the whole argument set under "arguments" (its kernel
        # functions reserve that parameter name): unwrapped once, the tool gets its own
        wrapped = {"name": unlisted, "arguments": {"text": "sk"}}
        result = await client.call_tool("run_tool", {"name": unlisted, "arguments": wrapped})
        assert result.content[0].text == f"{local}:sk"


class HideCurrent(Middleware):
    """A listing filter of the user's own (a tenant or role rule): hides ``kid_current``."""

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        return [t for t in await call_next(context) if t.name != "kid_current"]


@pytest.mark.parametrize(("transport", "era"), TRANSPORT_ERA)
async def test_hidden_tools_stay_hidden_through_the_bridges(
        tmp_descriptions: Path, transport: Transport, era: Era) -> None:
    server, ran = catalog(tmp_descriptions, listing=ListingSettings(max_tools=CAP))
    server.middleware.insert(0, HideCurrent())  # outside ours
    async with served(server, transport) as target, connect(target, era) as client:
        kid = _body(await client.call_tool("describe_tools", {"groups": ["kid"]}))
        assert set(kid["groups"]["kid"]["tools"]) == {"kid_forecast", "kid_alerts"}
        filtered = await client.call_tool("run_tool", {"name": "kid_current",
                                                        "arguments": {"text": "x"}},
                                          raise_on_error=False)
        assert filtered.is_error and _body(filtered)["error"]["code"] == "UNKNOWN_TOOL"
        await client.list_tools()
        hidden = await client.call_tool("run_tool", {"name": "secret",
                                                      "arguments": {"text": "x"}},
                                        raise_on_error=False)
        unknown = await client.call_tool("run_tool", {"name": "no_such_tool",
                                                       "arguments": {}},
                                         raise_on_error=False)
        assert hidden.is_error and unknown.is_error
        assert _body(hidden)["error"]["code"] == "UNKNOWN_TOOL"
        assert (_body(hidden)["error"]["message"].replace("secret", "X")
                == _body(unknown)["error"]["message"].replace("no_such_tool", "X"))
        answer = _body(await client.call_tool("describe_tools", {"groups": ["vault"]}))
        assert "secret" not in json.dumps(answer["groups"]["vault"])
        assert "secret" not in ran


async def test_the_dispatched_tool_runs_under_its_own_name(tmp_descriptions: Path) -> None:
    seen: list[str] = []

    class Outer(Middleware):
        async def on_call_tool(self, context: MiddlewareContext[Any],
                               call_next: CallNext[Any, Any]) -> Any:
            seen.append(context.message.name)
            return await call_next(context)

    server, ran = catalog(tmp_descriptions, listing=ListingSettings(max_tools=CAP))
    server.add_middleware(Outer())  # inside ours
    async with Client(server, mode="legacy") as client:  # a session: followed, gated
        await client.list_tools()
        refused = await client.call_tool("run_tool", {"name": "kid_alerts",
                                                       "arguments": {"text": "a"}},
                                         raise_on_error=False)
        assert refused.is_error and "TOOL_DESCRIPTION_REQUIRED" in refused.content[0].text
        assert ran == []  # the gate held for the inner call
        await client.call_tool("run_tool", {"name": "kid_alerts",
                                             "arguments": {"text": "a"}})
        assert ran == ["alerts"]
        assert seen == ["kid_alerts"]  # inner middleware saw the real name (not call_tool)


async def test_describing_adds_to_a_sessions_listing_without_a_notification(
        tmp_descriptions: Path) -> None:
    """No ``tools/list_changed`` for a describe: Semantic Kernel deadlocks on it."""
    server, _ = catalog(tmp_descriptions, listing=ListingSettings(max_tools=CAP))
    notes: list[str] = []

    async def handler(message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if isinstance(method, str):
            notes.append(method)

    async with Client(server, mode="legacy", message_handler=handler) as client:
        first = {t.name for t in await client.list_tools()}
        target = next(n for n in ("kid_alerts", "tag_note", "refund_invoice", "kid_current")
                      if n not in first)
        await client.call_tool("describe_tools", {"tools": [target]})
        assert "notifications/tools/list_changed" not in notes
        second = {t.name for t in await client.list_tools()}
        assert target in second and len(second) <= CAP
        assert await client.call_tool(target, {"text": "t"})  # granted: runs by its name


async def test_host_cap_by_client_name(tmp_descriptions: Path) -> None:
    profiles = [HostProfile("tiny-host", None, max_tools=4)]
    server, _ = catalog(tmp_descriptions, clients=ClientSettings(host_profiles=profiles))
    async with Client(server, client_info=mt.Implementation(name="tiny-host", version="1")
                      ) as tiny, Client(server) as other:
        assert len(await tiny.list_tools()) == 4
        assert len(await other.list_tools()) == 11  # uncapped: every visible tool + bridge


async def test_replicas_sharing_a_store_show_a_caller_the_same_listing(
        tmp_descriptions: Path) -> None:
    store = MemoryStore()

    def replica() -> FastMCP:
        server, _ = catalog(None, auth=StaticTokenVerifier(tokens=TOKENS),
                            listing=ListingSettings(max_tools=CAP),
                            grants=GrantSettings(store=store))
        return server

    async with serve_http(replica()) as one, serve_http(replica()) as two:
        async def listing(url: str, token: str) -> set[str]:
            async with Client(StreamableHttpTransport(url, auth=token)) as client:
                return {t.name for t in await client.list_tools()}

        before = await listing(one, "alice-token")
        target = next(n for n in ("kid_alerts", "tag_note", "refund_invoice", "kid_current")
                      if n not in before)
        async with Client(StreamableHttpTransport(one, auth="alice-token")) as alice:
            await alice.call_tool("describe_tools", {"tools": [target]})
        on_two = await listing(two, "alice-token")
        assert target in on_two
        assert on_two == await listing(one, "alice-token")
        assert target not in await listing(two, "bob-token")  # bob's listing is his own


async def test_a_group_change_in_a_file_notifies_grouping_sessions(
        tmp_descriptions: Path) -> None:
    """Hot reload: a file that moves its tool to another group sends a grouping client
    ``notifications/groups/list_changed`` (and every client ``tools/list_changed``)."""
    from tests.waiting import ListChangedRecorder, watcher_ready

    server, _ = catalog(tmp_descriptions)
    middleware = next(m for m in server.middleware if isinstance(m, ProgressiveDisclosure))
    regrouped = asyncio.Event()

    async def groups_changed() -> None:
        regrouped.set()

    tools_changed = ListChangedRecorder()
    try:
        async with serve_http(server) as url, connect(
                url, "legacy", extensions=[grouping(groups_changed)],
                message_handler=tools_changed) as client:
            await client.list_tools()
            await watcher_ready(middleware)
            (tmp_descriptions / "tag_note.json").write_text(
                json.dumps({"groups": ["labels"]}), "utf-8")
            async with asyncio.timeout(PATIENCE):
                await regrouped.wait()
            await tools_changed.next()
            names = {g["name"] for g in await list_groups(client)}
            assert "labels" in names
            (tmp_descriptions / "read_note.json").write_text(
                json.dumps({"groups": ["notes"], "summary": "Read one note."}), "utf-8")
            await tools_changed.next()  # its line changed, its groups did not
            regrouped.clear()
            (tmp_descriptions / "write_note.json").write_text(
                json.dumps({"groups": ["notes", "labels"]}), "utf-8")
            async with asyncio.timeout(PATIENCE):
                await regrouped.wait()
    finally:
        middleware.close()


async def test_a_host_served_in_full_but_capped_gets_described_tools_listed(
        tmp_descriptions: Path) -> None:
    """Cursor is served in full (it defers tools itself) until a server lists more than its
    cap: then its capped listing takes in what it describes, like any followable caller."""
    cursor_row = HostProfile("cursor-vscode", "full", max_tools=5)
    server, _ = catalog(tmp_descriptions,
                        clients=ClientSettings(host_profiles=[cursor_row, *HOST_PROFILES]))
    cursor = mt.Implementation(name="cursor-vscode", version="1.0")
    async with Client(server, mode="legacy", client_info=cursor) as client:
        first = {t.name for t in await client.list_tools()}
        assert len(first) == 5 and "run_tool" in first
        target = next(n for n in ("kid_alerts", "tag_note", "refund_invoice") if n not in first)
        await client.call_tool("describe_tools", {"tools": [target]})
        assert target in {t.name for t in await client.list_tools()}


# -- bounded answers and linear membership (#27) ------------------------------------------
@pytest.mark.parametrize("era", ERAS)
async def test_unknown_groups_name_the_available_ones_once_per_answer(era: Era) -> None:
    """31 unknown group names with 250 long group names around: the available names come
    once per answer, bounded (they came once per unknown name: 1.3 MB)."""
    mcp = FastMCP("many groups")
    tags = [f"g{i:03d}_" + "x" * 200 for i in range(250)]
    for i, tag in enumerate(tags):
        mcp.tool(lambda: "ok", name=f"t{i}", description="A tool.", tags={tag})
    mcp.add_middleware(ProgressiveDisclosure(listing=ListingSettings(max_tools=CAP)))
    unknown = [f"nope{i}_" + "y" * 300 for i in range(31)]
    async with connect(mcp, era) as client:
        result = await client.call_tool("describe_tools", {"groups": [*unknown, tags[0]]})
    text = result.content[0].text
    answer = json.loads(text)
    assert len(text) < 30_000, len(text)  # the names asked, their errors, 8,000 available
    assert text.count('"available_groups"') == 1
    assert answer["groups"][tags[0]]["tools"] == {"t0": "A tool."}
    for name in unknown:
        assert set(answer["groups"][name]) == {"error"}
        assert answer["groups"][name]["error"].startswith(f"Group {name[:128]!r} not found")
    listed = answer["available_groups"]
    assert listed == tags[: len(listed)] and 0 < len(listed) < len(tags)
    assert answer["available_groups_left_off"] == len(tags) - len(listed)
    assert sum(map(len, listed)) <= 8_000


class _CountingPrefixes(dict[str, str]):
    """A prefix map that counts the characters of every name looked up in it."""

    looked_up = 0

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.looked_up += len(key)
        return super().get(key, default)


async def test_group_membership_is_linear_in_a_tool_names_length() -> None:
    """A 100,000-character upstream name full of ``_``: membership looks up one prefix per
    prefix length, not one per ``_`` (that was quadratic: about 1 s per grouped listing)."""
    mcp = FastMCP("long names")
    kid = FastMCP("kid")
    long_name = "a_" * 50_000
    kid.tool(lambda: "ok", name=long_name, description="Long.")
    mcp.mount(kid, namespace="kid")
    middleware = ProgressiveDisclosure()
    mcp.add_middleware(middleware)
    async with Client(mcp, extensions=[grouping()]) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert tool_groups(tools[f"kid_{long_name}"]) == ["kid"]
    prefixes = _CountingPrefixes({"kid_": "kid", "kid_a_": "deep", "zzzz_" * 5: "other"})
    tool = next(t for t in await mcp.list_tools(run_middleware=False)
                if t.name == f"kid_{long_name}")
    assert parts(middleware).groups.of(tool, {}, prefixes) == ("kid", "deep")
    assert prefixes.looked_up <= 4 + 6 + 25


async def test_a_group_described_by_instructions_reads_as_their_first_sentence() -> None:
    """An upstream's instructions open with a Markdown heading: the group's line is the
    first sentence of prose after it, markup removed."""
    mcp = FastMCP("gateway")
    kid = FastMCP("kid", instructions=(
        "<!-- generated -->\n# Kid Server – Server Instructions\n\n## Overview\n\n"
        "> **Weather** lookups and `forecasts` for [any city](https://example.com). "
        "Data from the met office.\n\n## Tools\n- `forecast`: ..."))
    for n in ("forecast", "current"):
        kid.tool(lambda: "ok", name=n, description=f"The {n} tool.")
    mcp.tool(lambda: "ok", name="other", description="Another tool.")
    mcp.mount(kid, namespace="kid")
    mcp.add_middleware(ProgressiveDisclosure(listing=ListingSettings(max_tools=3)))
    async with Client(mcp, mode="legacy") as client:
        bridge = next(t for t in await client.list_tools() if t.name == "describe_tools")
        answer = _body(await client.call_tool("describe_tools", {"groups": ["kid"]}))
    line = "Weather lookups and forecasts for any city."
    assert f"\nkid: {line}" in (bridge.description or "")
    assert answer["groups"]["kid"]["description"] == line


# -- the cap's call counts (#27) -----------------------------------------------------------
MIB = 1024 * 1024


def blocks_of(size: int) -> int:
    """Memory blocks of ``size`` bytes or more allocated since ``tracemalloc.start()`` and
    still held: each long tool name kept is one. (The total would also count what a
    background thread allocates meanwhile, such as the tokenizer an earlier test's server
    loads.)"""
    return sum(1 for trace in tracemalloc.take_snapshot().traces if trace.size >= size)


async def test_calls_of_tools_that_do_not_exist_are_not_counted() -> None:
    """Calls of made-up names from a client served in full (``claude-code``) were counted:
    40 calls with 1 MB names kept 41 MiB. What does not exist is not counted now (20 KB
    names here, below the counts' own bound in characters), so none stays."""
    server = build_server()
    info = mt.Implementation(name="claude-code", version="1")
    size = 20_000
    async with connect(server, "legacy", client_info=info) as client:
        await client.list_tools()
        await client.call_tool("add", {"a": 1, "b": 2})  # warm up what a call keeps once
        await client.call_tool("nope", {}, raise_on_error=False)
        gc.collect()
        tracemalloc.start()
        try:
            for i in range(40):
                result = await client.call_tool(f"{i}" + "n" * size, {},
                                                raise_on_error=False)
                assert result.is_error
            del result
            gc.collect()
            kept = blocks_of(size)
        finally:
            tracemalloc.stop()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).data == 3
    # the last call's name and its answer may still be referenced; 40 names not
    assert kept <= 3, f"{kept} of 40 unknown tool names were left behind"


async def test_counted_names_are_bounded_by_characters_not_only_by_count() -> None:
    """Counted names were bounded only by their number (100,000): 40 real tools with 1 MB
    names kept 40 MB of them; the counts start over past ``MAX_COUNTED_CHARS``."""
    cap = ToolCap(GrantStore(), max_tools=5)

    async def forty_long_names() -> None:  # real tools: a gateway's names can be that long
        for i in range(40):
            cap.note_call(f"{i}" + "t" * MIB)

    gc.collect()
    tracemalloc.start()
    try:
        await forty_long_names()
        gc.collect()
        kept = blocks_of(MIB)
    finally:
        tracemalloc.stop()
    assert kept <= 2, f"the counts kept {kept} 1 MB names"  # the latest, at most
    cap.note_call("search")
    assert cap.popular(["a", "search"], 1) == ["search"]  # counting goes on after a restart
