"""What a listed copy of a tool keeps, and whose "listing for myself" flag a middleware sees.

A listed tool is the registered one with its description and schema reduced: every other
field FastMCP's ``Tool`` has (``auth``, ``timeout``, ``return_type``, ...) comes along, and
a copy made from it later (a resolution mark) is serialized afresh. Each middleware
instance's catalog has its own passthrough flag, like FastMCP's ``CatalogTransform``: a
parent's and a mounted child's never see each other's.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server.auth import AuthContext
from fastmcp.tools.base import Tool

from fastmcp_progressive import ListingSettings, ProgressiveDisclosure, ResolutionSettings
from fastmcp_progressive.disclosure import listed_schema
from fastmcp_progressive.disclosure.groups import GROUPS_META_KEY
from fastmcp_progressive.disclosure.listing import ListedTool, Lister
from fastmcp_progressive.files import store as store_module
from fastmcp_progressive.files.store import DescriptionStore
from fastmcp_progressive.resolution.client import grouping, is_resolvable, tool_resolution
from tests.conftest import ERAS, Era, connect
from tests.servers import ADD_TYPED, add_basic_tools
from tests.waiting import watcher_ready

LONG = "Add two integers and return their sum. Overflow is not a concern in Python at all."


def anyone(context: AuthContext) -> bool:
    """A component auth check that admits every caller (it is kept, not exercised, here)."""
    return True


def timed_tool_server(**options: Any) -> FastMCP:
    server = FastMCP("fields")

    @server.tool(timeout=7.5, auth=anyone, tags={"math"}, meta={"k": "v"})
    def add(a: int, b: int) -> int:
        """Add two integers and return their sum. Overflow is not a concern in Python at all."""
        return a + b

    server.add_middleware(ProgressiveDisclosure(**options))
    return server


def registered(server: FastMCP) -> Tool:
    return next(iter(server.local_provider._components.values()))  # type: ignore[return-value]


def test_a_listed_tool_keeps_every_field_but_description_and_schemas() -> None:
    server = timed_tool_server()
    tool = registered(server)
    (listed,) = Lister(DescriptionStore(None)).reduce([tool])
    assert isinstance(listed, ListedTool)
    assert listed.description == "Add two integers and return their sum."
    assert listed.parameters == ADD_TYPED and listed.output_schema is None
    assert listed.timeout == 7.5
    assert listed.auth is tool.auth and listed.auth is not None
    assert listed.return_type is tool.return_type and listed.return_type is not None
    kept = set(Tool.model_fields) - {"description", "parameters", "output_schema"}
    assert {f: getattr(listed, f) for f in kept} == {f: getattr(tool, f) for f in kept}
    assert tool.description == LONG and tool.parameters["required"] == ["a", "b"]


async def test_the_listing_a_server_hands_out_keeps_them_too() -> None:
    server = timed_tool_server()
    tool = registered(server)
    listed = {t.name: t for t in await server.list_tools()}["add"]  # no client request
    assert isinstance(listed, ListedTool) and listed.description != LONG
    assert (listed.timeout, listed.auth, listed.return_type) == (
        tool.timeout, tool.auth, tool.return_type)


def test_tools_differing_only_in_a_kept_field_get_their_own_copies() -> None:
    """The listing memo's content key covers the fields a copy keeps, so a fresh object
    (a mounted or proxied tool) never gets a copy carrying another tool's timeout."""
    tool = registered(timed_tool_server())
    slower = tool.model_copy(update={"timeout": 60.0})
    lister = Lister(DescriptionStore(None))
    first, second = lister.reduce([tool]), lister.reduce([slower])
    assert (first[0].timeout, second[0].timeout) == (7.5, 60.0)


def test_a_copy_of_a_listed_tool_is_serialized_afresh() -> None:
    (listed,) = Lister(DescriptionStore(None)).reduce([registered(timed_tool_server())])
    before = listed.to_mcp_tool(name=listed.name)
    marked = listed.model_copy(update={"meta": {"mark": True}})
    assert (marked.to_mcp_tool(name=marked.name).meta or {}).get("mark") is True
    assert listed.to_mcp_tool(name=listed.name) is before  # the original keeps its own


@pytest.mark.parametrize("level", ["minimal", "typed", "skeleton"])
def test_a_listed_schema_shares_nothing_with_the_registered_one(level: str) -> None:
    """A listed copy's schema is built of new dicts and lists (no deep copy of the whole
    is made): editing the registered schema, or another listed copy, changes no listing."""
    schema = {"type": "object", "properties": {
        "mode": {"type": "object", "enum": [{"deep": ["a"]}], "properties": {}},
        "region": {"type": ["string", "null"], "x-mcp-header": {"name": ["Region"]}},
        "n": {"type": "integer"}}, "required": ["mode"]}
    tool = Tool(name="t", description="T.", parameters=schema)
    lister = Lister(DescriptionStore(None), ListingSettings(level=level))  # type: ignore[arg-type]
    (listed,) = lister.reduce([tool])
    before = listed.to_mcp_tool(name="t").inputSchema
    shown = copy.deepcopy(listed.parameters)
    for value in _containers(schema):
        value.clear()
    assert listed.parameters == shown
    second = Lister(DescriptionStore(None), ListingSettings(level=level))  # type: ignore[arg-type]
    (other,) = second.reduce([Tool(name="t", description="T.", parameters=copy.deepcopy(
        tool.parameters))])
    for value in _containers(other.parameters):
        value.clear()
    assert listed.parameters == shown and listed.to_mcp_tool(name="t").inputSchema == before


def _containers(value: Any) -> list[Any]:
    """Every dict and list inside ``value`` (itself included), innermost first."""
    found: list[Any] = []
    inner = value.values() if isinstance(value, dict) else value if isinstance(
        value, list) else ()
    for item in inner:
        found += _containers(item)
    if isinstance(value, dict | list):
        found.append(value)
    return found


def test_a_first_listing_derives_each_listed_schema_once(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """The content key and the listed copy share one derivation of the typed schema."""
    derived: list[str] = []
    real = listed_schema.typed

    def counted(schema: dict[str, Any]) -> dict[str, Any]:
        derived.append(next(iter(schema.get("properties", {})), ""))
        return real(schema)

    monkeypatch.setitem(listed_schema.LEVELS, "typed", counted)
    tools = [Tool(name=f"t{i}", description="T.", parameters={
        "type": "object", "properties": {f"a{i}": {"type": "integer"}}}) for i in range(5)]
    lister = Lister(DescriptionStore(None))
    assert [t.parameters for t in lister.reduce(tools)] == [
        {"type": "object", "properties": {f"a{i}": {"type": "integer"}}} for i in range(5)]
    assert sorted(derived) == [f"a{i}" for i in range(5)]
    assert lister.reduce(tools) == lister.reduce(tools) and len(derived) == 5


def test_a_repeated_listing_answers_the_very_same_reduced_tuple() -> None:
    """What the tools/list path derives from a listing (the bridges' places) is kept by the
    identity of the lister's answer, which therefore stays one object while nothing changes."""
    tools = [registered(timed_tool_server())]
    lister = Lister(DescriptionStore(None))
    first = lister.reduced(tools)[0]
    assert lister.reduced(tools)[0] is first and lister.reduce(tools) == list(first)
    assert lister.reduced(tools, exempt={"add"})[0] is not first


@pytest.mark.parametrize("era", ERAS)
async def test_a_marked_listing_stats_each_description_file_once(
        era: Era, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The grouping and resolution marks take the listing's own file signatures: a client
    speaking both extensions costs one stat per file per listing, as any other client."""
    for name, groups in (("add", ["math"]), ("echo", ["text"])):
        (tmp_path / f"{name}.json").write_text(json.dumps({"summary": f"{name} it.",
                                                           "groups": groups}))
    server = FastMCP("marks")
    add_basic_tools(server)
    middleware = ProgressiveDisclosure(tmp_path, resolution=ResolutionSettings(
        resolvers={"add": lambda arguments: None}))
    server.add_middleware(middleware)
    stats: list[str] = []
    real = store_module.stats_in

    @contextlib.contextmanager
    def counted(directory: Path, *, few: bool = False) -> Iterator[Any]:
        with real(directory, few=few) as stat_file:
            yield lambda name: stats.append(name) or stat_file(name)

    async with connect(server, era, extensions=[tool_resolution(), grouping()]) as client:
        await client.list_tools()
        await watcher_ready(middleware)  # its preload and baseline stat in their own thread
        monkeypatch.setattr(store_module, "stats_in", counted)
        listed = {t.name: t for t in await client.list_tools()}
    assert sorted(stats) == ["add.json", "echo.json"]
    assert is_resolvable(listed["add"]) and listed["add"].description == "add it."
    assert (listed["echo"].meta or {}).get(GROUPS_META_KEY) == ["text"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_resolution_mark_reaches_a_client_after_an_unmarked_listing(era: Era) -> None:
    """A client without tool resolution lists first (its wire form is kept), then one with
    it: the second still sees the mark (a marked copy is serialized afresh)."""
    server = FastMCP("marks")
    add_basic_tools(server)
    server.add_middleware(ProgressiveDisclosure(
        resolution=ResolutionSettings(resolvers={"add": lambda arguments: None}),
    ))
    async with connect(server, era, extensions=[]) as plain:
        assert not any(is_resolvable(t) for t in await plain.list_tools())
    async with connect(server, era, extensions=[tool_resolution()]) as advertising:
        marked = {t.name for t in await advertising.list_tools() if is_resolvable(t)}
    assert marked == {"add"}


# -- per-instance flags ----------------------------------------------------------------------
def mounted_pair() -> tuple[FastMCP, ProgressiveDisclosure, ProgressiveDisclosure]:
    child, parent = FastMCP("child"), FastMCP("parent")
    add_basic_tools(child)

    @parent.tool
    def ping(message: str) -> str:
        """Answer with the message. It goes back exactly as it came, nothing else added."""
        return message

    child_middleware, parent_middleware = ProgressiveDisclosure(), ProgressiveDisclosure()
    child.add_middleware(child_middleware)
    parent.add_middleware(parent_middleware)
    parent.mount(child, namespace="kid")
    return parent, parent_middleware, child_middleware


async def test_a_catalogs_passthrough_is_its_own() -> None:
    _, parent_middleware, child_middleware = mounted_pair()
    with parent_middleware.catalog._passthrough():
        assert parent_middleware.catalog.passthrough()
        assert not child_middleware.catalog.passthrough()
    with child_middleware.catalog._passthrough():
        assert not parent_middleware.catalog.passthrough()
    assert not parent_middleware.catalog.passthrough()


async def test_a_parents_listing_for_itself_leaves_the_childs_middleware_reducing() -> None:
    """While the parent's catalog lists for itself, its own middleware passes tools on
    unreduced, and the mounted child's middleware, which did not ask, still reduces its own."""
    parent, parent_middleware, _ = mounted_pair()
    with parent_middleware.catalog._passthrough():
        tools = {t.name: t for t in await parent.list_tools()}
    assert tools["ping"].description is not None and "nothing else" in tools["ping"].description
    assert tools["kid_add"].parameters == ADD_TYPED  # reduced by the child's middleware
    async with Client(parent) as client:  # and a client's own listing is reduced by both
        listed = {t.name: t for t in await client.list_tools()}
    assert listed["ping"].description == "Answer with the message."
    assert listed["kid_add"].inputSchema == ADD_TYPED
