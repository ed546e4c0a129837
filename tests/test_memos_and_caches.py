"""Per-tool memos hit on mounted and proxied servers, stay bounded, and never serve stale
text; listed tools keep their wire form; the start-up preload; confirmed store grants."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.server import create_proxy
from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive import (
    CacheSettings,
    GrantSettings,
    ListingSettings,
    ProgressiveDisclosure,
)
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import CONFIRMED_SECONDS, GrantStore
from fastmcp_progressive.caches import IdentityCache, ToolCache
from fastmcp_progressive.disclosure.listing import THREAD_NAME, Lister, Preload
from fastmcp_progressive.files import store as definitions
from fastmcp_progressive.files import store as descriptions
from tests.conftest import ERAS, connect, fetch, gated
from tests.servers import add_basic_tools
from tests.spies import count_calls
from tests.waiting import watcher_armed


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
    first = middleware.lister.reduce(first_raw)
    assert sorted(reduced) == sorted(t.name for t in first_raw)
    reduced.clear()
    again = middleware.lister.reduce(again_raw)
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
    The proxy's pool of connected backend sessions is a pool of live connections (each
    closed when it leaves), not a cache, and is not counted."""
    package = Path(__file__).resolve().parent.parent / "fastmcp_progressive"
    hand_written = [str(path.relative_to(package)) for path in package.rglob("*.py")
                    if "OrderedDict" in path.read_text(encoding="utf-8")
                    and path != package / "proxy" / "backend_sessions.py"]
    assert hand_written == []


async def test_listing_and_definition_caches_are_bounded() -> None:
    middleware = ProgressiveDisclosure(caches=CacheSettings(listing=2, definitions=1))
    server = FastMCP("t")
    add_basic_tools(server)
    server.add_middleware(middleware)
    async with connect(server, "modern") as client:
        assert {t.name for t in await client.list_tools()} >= {"add", "echo", "shout"}
        await fetch(client, "add", "echo", "shout")
    assert len(middleware.lister._memo) == 2
    assert len(middleware.definitions._memo) == 1


async def test_listed_tools_reuse_their_wire_form() -> None:
    middleware = ProgressiveDisclosure()
    server = FastMCP("t")
    add_basic_tools(server)
    server.add_middleware(middleware)
    reduced = middleware.lister.reduce(await server.list_tools(run_middleware=False))
    wire = reduced[0].to_mcp_tool(name=reduced[0].name)
    assert reduced[0].to_mcp_tool() is wire
    renamed = reduced[0].to_mcp_tool(name="other")
    assert renamed.name == "other" and renamed is not wire
    async with connect(server, "modern") as client:
        listed = {t.name: t for t in (await client.list_tools_mcp()).tools}
    assert listed[reduced[0].name].description == wire.description


# -- the start-up preload -------------------------------------------------------------
def _write(folder: Path, name: str, summary: str) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"summary": summary}), encoding="utf-8")
    return path


def _spy_parses(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(file name, thread name) of every description file parsed from here on."""
    parsed: list[tuple[str, str]] = []
    real = descriptions.read_description

    def spy(directory: Path, name: str, suffix: str, **kwargs: Any) -> Any:
        parsed.append((name, threading.current_thread().name))
        return real(directory, name, suffix, **kwargs)

    monkeypatch.setattr(descriptions, "read_description", spy)
    return parsed


async def test_preload_reads_files_before_the_first_listing(
    tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = _spy_parses(monkeypatch)
    for name in ("add", "echo", "shout"):
        _write(tmp_descriptions, name, f"{name} from file")
    middleware = ProgressiveDisclosure(tmp_descriptions)
    assert middleware.preload.done.wait(10.0)
    assert sorted(parsed) == [(name, THREAD_NAME) for name in ("add", "echo", "shout")]
    reads = len(parsed)
    server = FastMCP("t")
    add_basic_tools(server)
    server.add_middleware(middleware)
    async with connect(server, "modern") as client:
        listed = {t.name: t.description for t in await client.list_tools()}
    assert listed["add"] == "add from file"
    assert len(parsed) == reads  # nothing parsed on the request path


@pytest.mark.parametrize("era", ERAS)
async def test_request_during_or_after_preload_never_gets_a_stale_line(
    tmp_descriptions: Path, era: str
) -> None:
    path = _write(tmp_descriptions, "add", "old line")
    middleware = ProgressiveDisclosure(tmp_descriptions)
    assert middleware.preload.done.wait(10.0)
    _write(tmp_descriptions, "add", "new line, longer than the old one")  # edited after
    server = FastMCP("t")
    add_basic_tools(server)
    server.add_middleware(middleware)
    async with connect(server, era) as client:  # type: ignore[arg-type]
        listed = {t.name: t.description for t in await client.list_tools()}
    assert listed["add"] == "new line, longer than the old one"
    assert path.exists()


def _described_server(folder: Path, count: int) -> tuple[FastMCP, ProgressiveDisclosure]:
    """``count`` tools with a file each; ours' preload starts as this returns."""
    for i in range(count):
        _write(folder, f"t{i}", f"line {i}")
    server = FastMCP("t")
    for i in range(count):
        server.tool(name=f"t{i}")(lambda: "ok")
    middleware = ProgressiveDisclosure(folder)
    server.add_middleware(middleware)
    return server, middleware


async def test_listing_racing_the_preload_is_exact(tmp_descriptions: Path) -> None:
    server, middleware = _described_server(tmp_descriptions, 200)
    async with Client(server) as client:  # lists at once, most likely mid-preload
        listed = {t.name: t.description for t in await client.list_tools()}
    assert all(listed[f"t{i}"] == f"line {i}" for i in range(200))
    assert middleware.preload.done.wait(10.0)


@pytest.mark.parametrize("era", ERAS)
async def test_listing_and_preload_parse_each_file_once(
    tmp_descriptions: Path, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing racing the start-up preload shares its work: every file is parsed once,
    by whichever of the two reaches it first, and the listing is exact."""
    parsed = _spy_parses(monkeypatch)
    server, middleware = _described_server(tmp_descriptions, 300)
    async with connect(server, era) as client:  # type: ignore[arg-type]
        listed = {t.name: t.description for t in await client.list_tools()}
    assert middleware.preload.done.wait(10.0)
    assert all(listed[f"t{i}"] == f"line {i}" for i in range(300))
    names = [name for name, _ in parsed]
    assert sorted(names) == sorted(f"t{i}" for i in range(300))  # none twice, none skipped


def test_no_preload_without_a_folder_or_when_disabled(
    tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Preload] = []
    real = Preload.start
    monkeypatch.setattr(Preload, "start", lambda self: started.append(self) or real(self))
    assert not ProgressiveDisclosure().preload.start()
    started.clear()
    off = ProgressiveDisclosure(tmp_descriptions, listing=ListingSettings(preload=False))
    assert not off.preload.done.is_set() and started == []


# -- confirmed store grants -----------------------------------------------------------
PRINCIPAL = Caller(kind="principal", era="modern", key="user:abc")


class CountingStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.gets = 0

    async def get(self, key: str, *, collection: str | None = None) -> Any:  # type: ignore[override]
        self.gets += 1
        return await super().get(key, collection=collection)


async def test_store_grants_are_confirmed_in_memory_without_a_lookup() -> None:
    kv = CountingStore()
    grants = GrantStore(GrantSettings(ttl=600, store=kv))
    await grants.add(PRINCIPAL, ["a"])
    assert await grants.has(PRINCIPAL, "a")
    assert kv.gets == 0  # written here: trusted at once
    assert not await grants.has(PRINCIPAL, "b")
    assert kv.gets == 1  # refusals always ask the store (another replica may grant)

    other = GrantStore(GrantSettings(ttl=600, store=kv))  # a replica that did not write the grant
    assert await other.has(PRINCIPAL, "a") and await other.has(PRINCIPAL, "a")
    assert kv.gets == 2 and other.confirmed() == 1


async def test_confirmation_never_outlives_the_grant() -> None:
    kv = CountingStore()
    grants = GrantStore(GrantSettings(ttl=5, store=kv))
    before = time.monotonic()
    await grants.add(PRINCIPAL, ["a"])
    after = time.monotonic()
    # trusted now, and for no longer than the grant's own TTL (5 s) nor CONFIRMED_SECONDS
    assert before < grants._confirmed["user:abc|a"] <= after + min(5, CONFIRMED_SECONDS)
    almost_gone = time.time() + 0.5  # a grant another replica wrote long ago
    await kv.put("user:abc|b", {"granted": True, "until": almost_gone},
                 collection="fastmcp_progressive_grants")
    assert await grants.has(PRINCIPAL, "b")
    assert grants._confirmed["user:abc|b"] <= time.monotonic() + 0.5
    grants._confirmed["user:abc|a"] = time.monotonic() - 1  # as when its time is up
    assert await grants.has(PRINCIPAL, "a")
    assert kv.gets == 2  # an expired confirmation asks the store again


async def test_grant_without_a_known_expiry_is_not_trusted() -> None:
    kv = CountingStore()
    await kv.put("user:abc|a", {"granted": True}, collection="fastmcp_progressive_grants")
    grants = GrantStore(GrantSettings(ttl=600, store=kv))
    assert await grants.has(PRINCIPAL, "a") and await grants.has(PRINCIPAL, "a")
    assert kv.gets == 2 and grants.confirmed() == 0


def test_confirmed_grants_are_bounded() -> None:
    grants = GrantStore(confirmed_size=2)
    for i in range(5):
        grants._confirm(f"k{i}", time.time() + 60)
    assert grants.confirmed() == 2


async def test_watcher_baseline_reuses_the_preloaded_lines(
    tmp_descriptions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("add", "echo", "shout"):
        _write(tmp_descriptions, name, f"{name} from file")
    middleware = ProgressiveDisclosure(tmp_descriptions,
                                       caches=CacheSettings(definitions=1))  # files LRU: 1
    assert middleware.preload.done.wait(10.0)
    reads = count_calls(monkeypatch, descriptions, "read_description")
    server = FastMCP("t")
    add_basic_tools(server)
    server.add_middleware(middleware)
    async with connect(server, "legacy") as client:
        await client.list_tools()
        watcher_armed(middleware)
    assert reads.count == 0  # neither the listing nor the watcher re-parsed
