"""GrantStore on its own: TTL, isolation between kinds, a failing key-value store, and keys
any real store accepts whatever the tool name."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from fastmcp.tools.base import Tool
from hypothesis import given, settings
from hypothesis import strategies as st
from key_value.aio.stores.memory import MemoryStore

from fastmcp_progressive import (
    GrantSettings,
)
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import (
    CONFIRMED_SECONDS,
    GrantStore,
    GrantStoreUnavailable,
    _kv_key,
)
from fastmcp_progressive.options import MAX_STORE_TIMEOUT
from tests.conftest import build_server, connect, fetch, gated, serve_http
from tests.waiting import PATIENCE

ALICE = Caller(kind="principal", era="modern", key="user:alice")


class HangingStore:
    """A key-value store that never answers, counting how often it is asked."""

    def __init__(self) -> None:
        self.calls = 0

    async def get(self, key: str, *, collection: str | None = None) -> Any:
        self.calls += 1
        await anyio.sleep_forever()

    async def put_many(
        self, keys: Any, values: Any, *, collection: Any = None, ttl: Any = None
    ) -> None:
        self.calls += 1
        await anyio.sleep_forever()


@pytest.fixture
def long_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller's rest after a store failure (``STORE_RETRY_SECONDS``, 1 s) that outlasts
    every step of the test, so a loaded machine cannot end it before the test looks: the
    steps are counted (store calls), never raced against the clock (issue 34)."""
    from fastmcp_progressive.access import grants as module

    monkeypatch.setattr(module, "STORE_RETRY_SECONDS", PATIENCE)


@pytest.mark.usefixtures("long_rest")
async def test_store_that_hangs_fails_open_then_is_left_alone_for_a_moment() -> None:
    store = HangingStore()
    grants = GrantStore(GrantSettings(store_timeout=0.05, on_store_error="open", store=store))
    assert await grants.has(ALICE, "add")  # timed out: open policy lets it through
    assert await grants.has(ALICE, "add")  # cool-down: answered without asking
    await grants.add(ALICE, ["add"])  # logged, never raised
    assert store.calls == 1


async def test_store_that_hangs_fails_closed_when_asked() -> None:
    grants = GrantStore(
        GrantSettings(store_timeout=0.05, on_store_error="closed", store=HangingStore()),
    )
    with pytest.raises(GrantStoreUnavailable):
        await grants.has(ALICE, "add")


async def test_sessions_never_share_grants() -> None:
    grants = GrantStore()
    a = Caller(kind="session", era="legacy", key="a")
    b = Caller(kind="session", era="legacy", key="b")
    s = Caller(kind="session", era="legacy", key="s1")
    await grants.add(a, ["add"])
    assert await grants.has(a, "add")
    assert not await grants.has(b, "add")
    assert not await grants.has(s, "add")
    await grants.add(s, ["echo"])
    grants.release("s1")
    assert not await grants.has(s, "echo")


class FlakyStore:
    """A working key-value store that fails on demand: the next ``fail_next`` operations
    (a burst past Redis ``maxclients`` refuses whatever arrives), or every write (a Redis
    that refuses writes, ``NOREPLICAS``/``READONLY``)."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.fail_next = 0
        self.refuse_writes = False
        self.asked = 0

    def _maybe_fail(self) -> None:
        self.asked += 1
        if self.fail_next:
            self.fail_next -= 1
            raise ConnectionError("max number of clients reached")

    async def get(self, key: str, *, collection: str | None = None) -> Any:
        self._maybe_fail()
        return self.data.get(key)

    async def put_many(self, keys: Any, values: Any, *, collection: Any = None,
                       ttl: Any = None) -> None:
        self._maybe_fail()
        if self.refuse_writes:
            raise ConnectionError("NOREPLICAS Not enough good replicas to write")
        self.data.update(zip(keys, values, strict=True))


def _resting(grants: GrantStore) -> int:
    """Callers whose store operations rest now (their ``_until`` keys end in ``|``)."""
    now = time.monotonic()
    return sum(1 for key, until in grants._until.items() if key.endswith("|") and until > now)


def _confirmed(grants: GrantStore) -> int:
    """Store grants trusted in memory (every other ``_until`` key)."""
    return sum(1 for key in grants._until if not key.endswith("|"))


def _principal(name: str) -> Caller:
    return Caller(kind="principal", era="modern", key=f"user:{name}")


async def test_one_callers_failing_writes_never_open_the_gate_for_others() -> None:
    """Policy "open": a Redis refusing writes made the attacker's grant write fail, which
    paused the store for everyone, so every never-granted principal ran the tool (32-38
    of ~40 in the probe). Each caller's lookup now goes to the store."""
    store = FlakyStore()
    grants = GrantStore(GrantSettings(store=store, on_store_error="open"))
    store.refuse_writes = True
    assert not await grants.add(_principal("mallory"), ["add"])  # refused: not kept
    ungated = [name for name in (f"p{i}" for i in range(40))
               if await grants.has(_principal(name), "add")]
    assert ungated == []
    assert _resting(grants) == 0  # a refused write is no outage: no caller rests
    assert not await grants.has(_principal("mallory"), "add")  # the store still answers


@pytest.mark.usefixtures("long_rest")
async def test_one_callers_burst_never_refuses_anothers_granted_call() -> None:
    """Policy "closed": the attacker's burst made the store fail once, and for 1 s every
    granted caller was refused GRANT_STORE_UNAVAILABLE. Now only the failed call is."""
    store = FlakyStore()
    grants = GrantStore(GrantSettings(store=store, on_store_error="closed"))
    granted = [_principal(f"p{i}") for i in range(40)]
    for caller in granted:
        await grants.add(caller, ["add"])
    store.fail_next = 1  # the burst: whatever arrives now fails
    with pytest.raises(GrantStoreUnavailable):
        await grants.has(_principal("mallory"), "add")
    assert [await grants.has(caller, "add") for caller in granted] == [True] * 40
    with pytest.raises(GrantStoreUnavailable):  # mallory's own calls rest a moment
        await grants.has(_principal("mallory"), "add")


class DistantStore(MemoryStore):
    """A store 50 ms away that notes, in order, the keys it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def get(self, key: str, *, collection: str | None = None) -> Any:
        self.asked.append(key)
        await anyio.sleep(0.05)  # the store's latency, not a synchronisation
        return await super().get(key, collection=collection)


def _session(key: str, principal: str) -> Caller:
    return Caller(kind="session", era="legacy", key=key, principal=principal)


async def test_one_principals_many_sessions_queue_behind_themselves() -> None:
    """#34: with ``shared_sessions`` and ``"closed"``, one principal opening 200 sessions
    queued their lookups ahead of everyone, first come first served; another session's
    granted call waited behind all 200 and answered GRANT_STORE_UNAVAILABLE once they
    outlasted ``store_timeout``. Turns now go round the clients: it waits for one."""
    store = DistantStore()
    # the longest store timeout allowed: a loaded machine must not time out a lookup, the
    # order the answers come in is what this checks
    grants = GrantStore(GrantSettings(store=store, shared_sessions=True,
                                      on_store_error="closed", store_timeout=MAX_STORE_TIMEOUT))
    alice = _session("alice-1", "alice")
    await grants.add(alice, ["add"])
    mallory = [_session(f"mallory-{i}", "mallory") for i in range(200)]
    answers: list[bool] = []

    async def lookup(caller: Caller) -> None:
        answers.append(await grants.has(caller, "add"))

    async with anyio.create_task_group() as tg:
        for caller in mallory:
            tg.start_soon(lookup, caller)
        await anyio.wait_all_tasks_blocked()  # all 200 asked or waiting for their turn
        assert await grants.has(alice, "add")
    position = store.asked.index(_kv_key(alice, "add"))
    assert position <= 2 * 8, f"alice's lookup was the store's {position + 1}th"
    assert answers == [False] * 200  # mallory's own lookups are answered too


class HangsUntilOpened(MemoryStore):
    """A store whose lookups never answer until the test sets ``opened``."""

    def __init__(self) -> None:
        super().__init__()
        self.opened = False

    async def get(self, key: str, *, collection: str | None = None) -> Any:
        if not self.opened:
            await anyio.sleep_forever()
        return await super().get(key, collection=collection)


async def test_turns_given_up_by_timed_out_operations_go_to_the_next() -> None:
    """A lookup that timed out in the store and one that timed out waiting for its turn
    both give their turn back: the next caller is answered by the store.

    Both have the same timeout, so which one's deadline the event loop sees first is the
    machine's: on a busy one the second may get the slot before its own deadline. Its
    store lookup then hangs too, and it times out in the store instead: the turns it took
    must come back either way."""
    store = HangsUntilOpened()
    grants = GrantStore(GrantSettings(store=store, store_operations=1, store_timeout=0.05,
                                      on_store_error="closed"))
    outcomes: list[str] = []

    async def lookup(name: str) -> None:
        try:
            outcomes.append(str(await grants.has(_principal(name), "add")))
        except GrantStoreUnavailable:
            outcomes.append("unavailable")

    async with anyio.create_task_group() as tg:
        tg.start_soon(lookup, "hangs")
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(lookup, "waits")
    assert outcomes == ["unavailable", "unavailable"]
    store.opened = True
    await grants.add(_principal("next"), ["add"])
    assert await grants.has(_principal("next"), "add")


@pytest.mark.usefixtures("long_rest")
async def test_resting_callers_are_bounded() -> None:
    """A rest is an entry of the bounded map confirmed grants live in (``_until``)."""
    store = FlakyStore()
    grants = GrantStore(GrantSettings(store=store, on_store_error="open"), confirmed_size=3)
    store.fail_next = 10
    for i in range(10):
        await grants.has(_principal(f"m{i}"), "add")
    assert _resting(grants) == 3


def test_async_key_value_instances_are_accepted() -> None:
    assert GrantSettings(store=MemoryStore()).store is not None
    assert GrantSettings(store=FlakyStore()).store is not None


# -- keys a real store accepts, whatever the name ----------------------------------------
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
    assert kv.gets == 2 and _confirmed(other) == 1


async def test_confirmation_never_outlives_the_grant() -> None:
    kv = CountingStore()
    grants = GrantStore(GrantSettings(ttl=5, store=kv))
    before = time.monotonic()
    await grants.add(PRINCIPAL, ["a"])
    after = time.monotonic()
    # trusted now, and for no longer than the grant's own TTL (5 s) nor CONFIRMED_SECONDS
    assert before < grants._until["user:abc|a"] <= after + min(5, CONFIRMED_SECONDS)
    almost_gone = time.time() + 2.5  # a grant another replica wrote long ago
    await kv.put("user:abc|b", {"granted": True, "until": almost_gone},
                 collection="fastmcp_progressive_grants")
    assert await grants.has(PRINCIPAL, "b")
    # trusted until its own expiry (2.5 s), not CONFIRMED_SECONDS (5 s); not at all once
    # that has passed (a loaded machine may get there first: then no entry, which holds too)
    assert grants._until.get("user:abc|b", 0.0) <= time.monotonic() + 2.5
    grants._until["user:abc|a"] = time.monotonic() - 1  # as when its time is up
    assert await grants.has(PRINCIPAL, "a")
    assert kv.gets == 2  # an expired confirmation asks the store again


async def test_grant_without_a_known_expiry_is_not_trusted() -> None:
    kv = CountingStore()
    await kv.put("user:abc|a", {"granted": True}, collection="fastmcp_progressive_grants")
    grants = GrantStore(GrantSettings(ttl=600, store=kv))
    assert await grants.has(PRINCIPAL, "a") and await grants.has(PRINCIPAL, "a")
    assert kv.gets == 2 and _confirmed(grants) == 0


def test_confirmed_grants_are_bounded() -> None:
    grants = GrantStore(confirmed_size=2)
    for i in range(5):
        grants._confirm(f"k{i}", time.time() + 60)
    assert _confirmed(grants) == 2
