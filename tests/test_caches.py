"""The caches (``caches.py``, all on cachetools): per-tool caches hit on mounted and proxied
servers, stay bounded, never serve stale text and never widen visibility; listed tools keep
their wire form; and what clients and upstreams can make the server keep is bounded by
bytes, not only by count (#21): long client names are kept by digest, and per-tool caches
keep one entry per tool however often its description changes. What the gate keeps between
calls (per-client mode answers, the gateway tools of a server's transforms) is recomputed
when what it was computed from changes.

Retained memory is measured with ``tracemalloc`` (what is still allocated once the clients
are gone and garbage is collected), against a bound far below what the old code kept. The
start-up preload is tested with the listing (``disclosure/test_listing.py``), the confirmed
store grants with the grants (``access/test_grants.py``).
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from fastmcp import FastMCP
from fastmcp.server import create_proxy
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.transforms.search import RegexSearchTransform
from fastmcp.tools.base import Tool

from fastmcp_progressive import (
    CacheSettings,
    ClientSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.gate import gateways_of
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.caches import IdentityCache, ToolCache, with_meta
from fastmcp_progressive.disclosure.listing import Lister
from fastmcp_progressive.files import store as definitions
from tests.conftest import ERAS, build_server, connect, fetch, gated
from tests.parts import names_cached, parts
from tests.servers import add_basic_tools


def _child() -> FastMCP:
    child = FastMCP("child")
    add_basic_tools(child)
    return child


def _gateway(kind: str, middleware: ProgressiveDisclosure) -> FastMCP:
    if kind == "mounted":
        server = FastMCP("gateway")
        server.mount(_child(), namespace="math")
    else:
        server = create_proxy(_child(), name="proxy")
    server.add_middleware(middleware)
    return server


def _name(kind: str, tool: str) -> str:
    return f"math_{tool}" if kind == "mounted" else tool


def _spy_builds(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """Names of the listed lines and full definitions built from here on (each real
    build of a reduced tool writes its one line through ``Lister.summary``)."""
    reduced: list[str] = []
    built: list[str] = []
    real_summary = Lister.summary
    real_definition = definitions.full_definition

    def summary(self: Lister, tool: Any, sig: Any) -> str:
        reduced.append(tool.name)
        return real_summary(self, tool, sig)

    monkeypatch.setattr(Lister, "summary", summary)
    monkeypatch.setattr(definitions, "full_definition",
                        lambda tool, file: built.append(tool.name) or real_definition(tool, file))
    return reduced, built


@pytest.mark.parametrize("kind", ["mounted", "proxied"])
async def test_memos_hit_for_fresh_tool_objects(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reduced, built = _spy_builds(monkeypatch)
    middleware = ProgressiveDisclosure()
    server = _gateway(kind, middleware)
    first_raw = await server.list_tools(run_middleware=False)
    again_raw = await server.list_tools(run_middleware=False)
    assert first_raw[0] is not again_raw[0]  # what makes identity memos miss there
    first = parts(middleware).lister.reduce(first_raw)
    assert sorted(reduced) == sorted(t.name for t in first_raw)
    reduced.clear()
    again = parts(middleware).lister.reduce(again_raw)
    assert all(x is y for x, y in zip(first, again, strict=True))
    assert reduced == []  # every fresh object found its reduced tool by content

    add = _name(kind, "add")
    async with connect(server, "legacy") as client:  # a followed caller: gated
        await client.list_tools()  # a session that lists first is followed (and gated)
        assert await gated(client, add)  # refused, with the definition: built once here
        body = await fetch(client, add)
        assert await fetch(client, add) == body
        assert not await gated(client, add)
    assert built == [add]  # the second read found the first one's definition
    assert reduced == []


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("kind", ["mounted", "proxied"])
async def test_gateway_listings_and_reads_do_their_work_once(
    kind: str, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the protocol: the second listing and the second read of the same tools on
    a mounted gateway or a ``create_proxy`` front build no reduced tool and no definition."""
    reduced, built = _spy_builds(monkeypatch)
    server = _gateway(kind, ProgressiveDisclosure())
    names = [_name(kind, tool) for tool in ("add", "echo")]
    async with connect(server, era) as client:  # type: ignore[arg-type]
        listed = {t.name: t.description for t in await client.list_tools()}
        body = await fetch(client, *names)
        assert set(names) <= set(reduced) and sorted(built) == sorted(names)
        reduced.clear()
        built.clear()
        assert {t.name: t.description for t in await client.list_tools()} == listed
        assert await fetch(client, *names) == body
    assert reduced == [] and built == []


async def test_content_memo_never_widens_visibility() -> None:
    middleware = ProgressiveDisclosure()
    server = _gateway("mounted", middleware)
    async with connect(server, "modern") as client:
        await fetch(client, "math_add", "math_echo")  # memoized while visible
        server.disable(names={"math_echo"})
        listed = {t.name for t in await client.list_tools()}
        body = await fetch(client, "math_echo")
    assert "math_echo" not in listed
    assert "error" in body["math_echo"]


def test_tool_cache_is_bounded() -> None:
    memo: ToolCache[str] = ToolCache(3, key=lambda t: t["name"])
    tools = [{"name": f"t{i}"} for i in range(10)]

    class Box(dict[str, Any]):  # dicts cannot be weakly referenced; a subclass can
        pass

    for tool in tools:
        memo.put(Box(tool), tool["name"])
    assert len(memo) == 3
    assert memo.get(Box(name="t9")) == "t9" and memo.get(Box(name="t0")) is None
    with pytest.raises(ValueError):
        ToolCache(0, key=id)


def test_an_identity_cache_never_answers_for_another_object() -> None:
    class Obj:
        pass

    cache: IdentityCache[str] = IdentityCache(2)
    first = Obj()
    cache.put(first, "first")
    assert cache.get(first) == "first" and cache.get(Obj()) is None
    others = [Obj() for _ in range(2)]  # alive: no id recycled among them
    for other in others:
        cache.put(other, "other")  # the first object's entry is the least recently used
    assert len(cache) == 2 and cache.get(first) is None


def test_every_cache_is_a_cachetools_cache() -> None:
    """One cache policy (#26): no hand-written LRU beside cachetools' (``memo.py`` was one).
    The proxy's pool of connected backend sessions is one too since #35 (a ``TTLCache``
    whose dropped clients are closed), so no module is exempt."""
    package = Path(__file__).resolve().parent.parent / "fastmcp_progressive"
    hand_written = [str(path.relative_to(package)) for path in package.rglob("*.py")
                    if "OrderedDict" in path.read_text(encoding="utf-8")]
    assert hand_written == []


async def test_listing_and_definition_caches_are_bounded() -> None:
    middleware = ProgressiveDisclosure(caches=CacheSettings(listing=2, definitions=1))
    server = FastMCP("t")
    add_basic_tools(server)
    server.add_middleware(middleware)
    async with connect(server, "modern") as client:
        assert {t.name for t in await client.list_tools()} >= {"add", "echo", "shout"}
        await fetch(client, "add", "echo", "shout")
    assert len(parts(middleware).lister._memo) == 2
    assert names_cached(parts(middleware).store) == 1  # the definitions live in the store's entries


async def test_listed_tools_reuse_their_wire_form() -> None:
    middleware = ProgressiveDisclosure()
    server = FastMCP("t")
    add_basic_tools(server)
    server.add_middleware(middleware)
    reduced = parts(middleware).lister.reduce(await server.list_tools(run_middleware=False))
    wire = reduced[0].to_mcp_tool(name=reduced[0].name)
    assert reduced[0].to_mcp_tool() is wire
    renamed = reduced[0].to_mcp_tool(name="other")
    assert renamed.name == "other" and renamed is not wire
    async with connect(server, "modern") as client:
        listed = {t.name: t for t in (await client.list_tools_mcp()).tools}
    assert listed[reduced[0].name].description == wire.description


MIB = 1024 * 1024


def retained(work: Callable[[], Any]) -> int:
    """Bytes still allocated after ``work()`` (its return value dropped, garbage collected)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = work()
        del result
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_long_client_names_are_not_kept() -> None:
    """40 unauthenticated 2 MB client names held 78 MiB in the mode memo (4 GiB at its
    1,024-entry cap); then each was kept as its SHA-256; now a request's decision is held
    by its caller alone (``Caller.decided``)."""
    policy = ModePolicy()
    default = policy.level(Caller(kind="anonymous", era="modern", client_name="host"))

    def forty_clients() -> None:
        for i in range(40):
            name = f"{i}" + "n" * (2 * MIB)
            caller = Caller(kind="anonymous", era="modern", client_name=name,
                            client_version="v" * MIB)
            assert policy.level(caller) == default

    kept = retained(forty_clients)
    assert kept < MIB, f"the mode policy kept {kept / MIB:.1f} MiB of client names"


async def test_long_client_names_over_the_protocol_are_not_kept() -> None:
    server = build_server()
    name = "x" * (2 * MIB)

    async def connect_and_leave(i: int) -> None:
        info = mt.Implementation(name=f"{i}{name}", version="1")
        async with connect(server, "legacy", client_info=info) as client:
            await client.list_tools()

    await connect_and_leave(-1)  # warm up what every server keeps once
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(5):
            await connect_and_leave(i)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2 * MIB, f"5 clients with 2 MB names left {kept / MIB:.1f} MiB behind"


class ChangingDescriptions(Middleware):
    """An upstream whose every tool description changes on every listing (5 KB each)."""

    def __init__(self, size: int = 5000) -> None:
        self.listings = 0
        self.size = size

    async def on_list_tools(self, context: MiddlewareContext[Any],
                            call_next: CallNext[Any, Any]) -> Any:
        self.listings += 1
        tools = await call_next(context)
        text = "d" * self.size
        return [t.model_copy(update={"description": f"listing {self.listings}: " + text})
                for t in tools]


def changing_upstream(tools: int, size: int = 5000) -> FastMCP:
    upstream = FastMCP("changing")
    for i in range(tools):
        upstream.add_tool(Tool.from_function(_tool, name=f"tool_{i}"))
    upstream.add_middleware(ChangingDescriptions(size))
    return upstream


def _tool(x: int) -> int:
    return x


def _changing_proxy(tools: int, size: int = 5000) -> tuple[FastMCP, ProgressiveDisclosure]:
    """A proxy of ``changing_upstream`` with the middleware on, and the middleware."""
    proxy = create_proxy(changing_upstream(tools, size))
    middleware = ProgressiveDisclosure()
    proxy.add_middleware(middleware)
    return proxy, middleware


async def _list_and_read(client: Any, tools: int, times: int) -> None:
    """``times`` listings, each followed by a read of every tool."""
    names = [f"tool_{i}" for i in range(tools)]
    for _ in range(times):
        await client.list_tools()
        await client.call_tool("describe_tools", {"tools": names})


@pytest.mark.slow  # 200 proxied listings and reads: about 10 s
async def test_per_tool_memos_keep_one_entry_per_tool_when_descriptions_keep_changing() -> None:
    """An upstream whose descriptions changed on every listing left 327 MiB behind (one
    memo entry per tool per listing, up to 20,000 listed and 2,048 definitions); a
    changed description now replaces its tool's entry."""
    tools, listings = 20, 200
    proxy, middleware = _changing_proxy(tools)
    async with connect(proxy, "legacy") as client:
        await _list_and_read(client, tools, 1 + listings)
    lister, store = parts(middleware).lister, parts(middleware).store
    for size, values in ((len(lister._memo), lister._memo._values),
                         (names_cached(store), store._cache)):
        assert size <= tools + 1  # + the bridge tool
        kept = sum(len(repr(value)) for value in values.values())
        assert kept < MIB, f"{listings} changing listings kept {kept / MIB:.1f} MiB"


async def test_changing_descriptions_leave_no_memory_behind() -> None:
    """#34: each proxied listing's fresh tool objects had their content key (with the whole
    description) remembered until the 20,000-entry LRU pushed it out: 30 listings of 10
    changing 64 KB descriptions kept 16.8 MiB. Keys now keep long texts as digests, and
    an object's remembered key goes with it."""
    tools, listings = 10, 30
    proxy, middleware = _changing_proxy(tools, size=64 * 1024)
    async with connect(proxy, "legacy") as client:
        await _list_and_read(client, tools, 1)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            await _list_and_read(client, tools, listings)
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        remembered = len(parts(middleware).lister._memo._keys)
    # What the latest listing holds is ~2 MiB (the upstream's tools, the definitions kept,
    # the last answer: new objects, so counted); the old keys added ~1.3 MiB per listing.
    assert kept < 4 * MIB, f"{listings} changing listings kept {kept / MIB:.1f} MiB"
    assert remembered <= 2 * tools + 1  # the live listings' tools (+ the bridge), not 300


def test_a_memo_forgets_a_dead_objects_key_and_keeps_texts_as_digests() -> None:
    class T:
        def __init__(self, name: str, text: str) -> None:
            self.name, self.text = name, text

    memo: ToolCache[str] = ToolCache(100, key=lambda t: (t.name, t.text))
    live = T("a", "x" * 10_000)
    memo.put(live, "a")
    for n in range(50):
        memo.put(T("b", f"{n}" + "y" * 10_000), "b")  # each dies once put
    assert len(memo._keys) == 1
    kept = memo._keys.get(live)
    assert isinstance(kept, tuple) and kept[0] == "a" and len(kept[1]) == 32
    assert memo.get(T("a", "x" * 10_000)) == "a" and memo.get(T("a", "x")) is None


def test_a_memo_keeps_the_latest_content_per_slot_and_its_bound() -> None:
    class T:
        def __init__(self, name: str, text: int) -> None:
            self.name, self.text = name, text

    memo: ToolCache[Any] = ToolCache(3, key=lambda t: (t.name, t.text))
    for n in range(5):
        memo.put(T("a", n), n)
    assert len(memo) == 1 and memo.get(T("a", 4)) == 4
    assert memo.get(T("a", 3)) is None
    for name in "bcd":
        memo.put(T(name, 0), name)
    assert len(memo) == 3 and memo.get(T("a", 4)) is None  # the LRU bound holds
    memo.put(T("a", 5), 5)
    assert len(memo) == 3 and memo.get(T("a", 5)) == 5


async def test_gateway_tools_follow_the_servers_transforms() -> None:
    server: FastMCP = FastMCP("gw")
    assert await gateways_of(server) == frozenset()
    server.add_transform(RegexSearchTransform())
    assert {"search_tools", "call_tool"} <= await gateways_of(server)
    assert await gateways_of(server) is await gateways_of(server)  # kept while the transforms stay


def test_mode_answers_are_exact_per_request_and_keep_nothing_per_client() -> None:
    policy = ModePolicy(ClientSettings(full_clients=["legacy-*"], host_profiles=()))
    legacy = Caller(kind="stream", era="modern", key="a", client_name="legacy-host")
    other = Caller(kind="stream", era="modern", key="b", client_name="new-host")
    for _ in range(2):
        assert policy.level(legacy) == "full"
        assert policy.level(other) == "typed"
    asked = Caller(kind="stream", era="modern", key="c", client_name="legacy-host",
                   headers={"x-progressive-disclosure": "skeleton"})
    assert policy.level(asked) == "skeleton"  # per request: the header still wins

    def many_clients() -> None:
        for i in range(3 * 1024):
            policy.level(Caller(kind="stream", era="modern", key=str(i), client_name=f"c{i}"))

    assert retained(many_clients) < 64 * 1024  # was up to 1,024 answers kept
    assert policy.level(legacy) == "full"


def test_each_mark_keeps_one_copy_per_listed_tool() -> None:
    """Groups and resolution mark through one memo (``caches.with_meta``): the same copy
    while the tool and its mark stay, a new one when the mark changes, the tool untouched."""
    tool = Tool(name="t", parameters={"type": "object"}, meta={"kept": 1})
    first = with_meta(tool, "a", ["x"])
    assert with_meta(tool, "a", ["x"]) is first
    assert first.meta == {"kept": 1, "a": ["x"]} and tool.meta == {"kept": 1}
    both = with_meta(first, "b", {"r": True})
    assert both.meta == {"kept": 1, "a": ["x"], "b": {"r": True}}
    assert with_meta(first, "b", {"r": True}) is both
    changed = with_meta(tool, "a", ["y"])
    assert changed is not first and changed.meta == {"kept": 1, "a": ["y"]}
