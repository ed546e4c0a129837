"""Grants shared across replicas through a real Redis (py-key-value ``RedisStore``).

A real ``redis-server`` (temp dir, free 127.0.0.1 port) and real replica processes
(``replica_server.py``). 2026-07-28 authenticated callers are keyed by principal, so a
grant made on replica A is honoured on replica B. Handshake-era session ids live in one
process (FastMCP keeps the ``Mcp-Session-Id`` transport in memory), so a legacy session
cannot move between replicas at all; ``shared_sessions=True`` is tested at the
``GrantStore`` level with two stores (two "replicas") on one Redis, and in process over
HTTP to show where the grant goes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any, SupportsFloat

import anyio
import pytest
from fastmcp import Client
from key_value.aio.protocols.key_value import AsyncKeyValue
from key_value.aio.stores.redis import RedisStore
from key_value.aio.wrappers.base import BaseWrapper
from redis.asyncio import Redis

from fastmcp_progressive import GrantSettings
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.grants import GRANTS_COLLECTION, GrantStore, GrantStoreUnavailable
from tests.conftest import connect, fetch, serve_http
from tests.parts import parts, sessions_held
from tests.reliability import figures
from tests.reliability.app import make_server
from tests.reliability.conftest import needs_redis
from tests.reliability.procs import RedisServer, Replica, start_replicas
from tests.waiting import PATIENCE, until

# redis-server and replica processes
# (the xdist group keeps the file on one worker: tests/conftest.py)
pytestmark = [needs_redis, pytest.mark.slow, pytest.mark.xdist_group("timed-processes")]

STORE_TIMEOUT = 2.0
"""Where Redis is frozen: each wait is counted, not timed, so its length only has to keep a
store that answers (before the freeze) from being cut off on a loaded machine."""
ANSWERING_TIMEOUT = 20.0
"""Where Redis answers (or refuses at once): never reached, even on 2 cores beside 8 busy
processes, so no answer is decided by how slow the machine is."""
TIMED_OUT = "(timed out)"  # in the one log line each store operation that timed out leaves


async def outcome(client: Client[Any], name: str = "add") -> tuple[str, str]:
    """(``ok`` or the error code, the text the client got) of one call."""
    args: dict[str, Any] = {"a": 1, "b": 2} if name == "add" else {"text": "x"}
    with anyio.fail_after(PATIENCE):  # a hang fails the test instead of wedging the suite
        result = await client.call_tool(name, args, raise_on_error=False)
    figures.add("store: calls made")
    text = "".join(getattr(c, "text", "") for c in result.content)
    if not result.is_error:
        return "ok", text
    body = result.structured_content or {}
    error = body.get("error") if isinstance(body, dict) else None
    return (error.get("code", "?") if isinstance(error, dict) else "?"), text


class Started(BaseWrapper):
    """Counts the grant-store operations begun (one that times out counts too): how many
    ``store_timeout`` waits a request can have cost, counted instead of timed."""

    def __init__(self, key_value: AsyncKeyValue) -> None:
        self.key_value = key_value
        self.started = 0
        super().__init__()

    async def get(self, key: str, *, collection: str | None = None) -> dict[str, Any] | None:
        self.started += 1
        found: dict[str, Any] | None = await super().get(key, collection=collection)
        return found

    async def put_many(self, keys: Sequence[str], values: Sequence[Mapping[str, Any]], *,
                       collection: str | None = None,
                       ttl: SupportsFloat | None = None) -> None:
        self.started += 1
        await super().put_many(keys, values, collection=collection, ttl=ttl)


async def grant_keys(redis_url: str) -> dict[str, int]:
    """The grant keys in Redis and their remaining TTLs (seconds)."""
    redis = Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = [k async for k in redis.scan_iter(match=f"{GRANTS_COLLECTION}::*")]
        return {k: int(await redis.ttl(k)) for k in keys}
    finally:
        await redis.aclose()


async def grant_lives(redis_url: str) -> dict[str, float]:
    """The grant keys in Redis and the seconds each has left, to the millisecond."""
    redis = Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = [k async for k in redis.scan_iter(match=f"{GRANTS_COLLECTION}::*")]
        lives = {k: int(await redis.pttl(k)) / 1000 for k in keys}
        return {k: life for k, life in lives.items() if life > 0}  # (-2: gone meanwhile)
    finally:
        await redis.aclose()


async def test_grant_made_on_one_replica_is_honoured_on_the_other(
    redis_server: RedisServer, replicas: Callable[..., Replica]
) -> None:
    a = replicas(redis_server.url, name="A")
    b = replicas(redis_server.url, name="B")
    start_replicas([a, b])
    async with (
        connect(a.url, "modern", token="alice-token") as alice_a,
        connect(b.url, "modern", token="alice-token") as alice_b,
        connect(a.url, "modern", token="bob-token") as bob_a,
        connect(b.url, "modern", token="bob-token") as bob_b,
    ):
        # A refusal teaches and grants like a read does, so each principal's first refusal
        # on one replica is already honoured on the other, through Redis.
        assert (await outcome(alice_a))[0] == "TOOL_DESCRIPTION_REQUIRED"
        assert (await outcome(alice_b))[0] == "ok"  # the refusal's grant crossed replicas
        assert (await outcome(bob_b))[0] == "TOOL_DESCRIPTION_REQUIRED"  # per principal
        assert (await outcome(bob_a))[0] == "ok"
        assert "inputSchema" in (await fetch(alice_a, "echo"))["echo"]
        assert (await outcome(alice_b, "echo"))[0] == "ok"  # the read's grant crossed too
        assert (await outcome(bob_a, "echo"))[0] == "TOOL_DESCRIPTION_REQUIRED"  # per principal
        await fetch(bob_b, "shout")  # and the other way round
        assert (await outcome(bob_a, "shout"))[0] == "ok"
        assert (await outcome(alice_a, "shout"))[0] == "TOOL_DESCRIPTION_REQUIRED"
    keys = await grant_keys(redis_server.url)
    # (alice|bob) x (add, echo, shout): every grant made by a read or a refusal, one key each
    assert len(keys) == 6, keys
    assert all(key.endswith(("|add", "|echo", "|shout")) for key in keys)
    assert all(0 < ttl <= 3600 for ttl in keys.values())
    assert not any("alice" in key or "bob" in key for key in keys)  # principals are hashed
    figures.add("store: cross-replica checks", 9)


async def test_grant_ttl_expires_on_every_replica(
    redis_server: RedisServer, replicas: Callable[..., Replica]
) -> None:
    ttl = 5.0  # the shortest grant TTL accepted (options.MIN_GRANT_TTL)
    a = replicas(redis_server.url, "--grant-ttl", str(ttl), name="A")
    b = replicas(redis_server.url, "--grant-ttl", str(ttl), name="B")
    start_replicas([a, b])
    async with (
        connect(a.url, "modern", token="alice-token") as on_a,
        connect(b.url, "modern", token="alice-token") as on_b,
    ):
        # one read grants both at once, so "echo" expires with "add" (two reads a loaded
        # second apart gave "echo" a later expiry than the one polled on replica B)
        await fetch(on_a, "add", "echo")
        # Redis counts each grant's life down from its write: never longer than grant_ttl
        # (RedisStore stores whole seconds, rounded down). Redis's own count, not a clock
        # of ours, so a slow machine cannot make it fail.
        lives = await grant_lives(redis_server.url)
        assert len(lives) == 2 and all(0 < life <= ttl for life in lives.values()), lives
        assert (await outcome(on_b))[0] == "ok"
        # principals' grants expire per grant (documented): using it does not extend it
        assert all(life <= lives[key] for key, life in (await grant_lives(
            redis_server.url)).items()), "a call extended its grant"
        states: list[str] = []

        async def expired() -> bool:
            states.append((await outcome(on_b))[0])
            return states[-1] != "ok"

        await until(expired, what="the grant to expire", interval=0.1)
        assert states[-1] == "TOOL_DESCRIPTION_REQUIRED"
        # refused once Redis dropped the grants, not on the replica's own earlier say: the
        # refusal just seen re-granted "add" only (it teaches), "echo" is gone from Redis
        assert [key for key in await grant_lives(redis_server.url)
                if key.endswith("|echo")] == []
        # expired on replica A too
        assert (await outcome(on_a, "echo"))[0] == "TOOL_DESCRIPTION_REQUIRED"
        await fetch(on_b, "shout")  # a fresh read grants again, on every replica
        assert (await outcome(on_a, "shout"))[0] == "ok"
    figures.put("store: grant ttl 5s, calls it answered before expiring", len(states) - 1)


async def test_store_down_fails_open_or_closed_as_configured_and_recovers(
    redis_server: RedisServer, replicas: Callable[..., Replica]
) -> None:
    options = ("--store-timeout", str(STORE_TIMEOUT))
    closed = replicas(redis_server.url, *options, "--on-store-error", "closed", name="closed")
    opened = replicas(redis_server.url, *options, "--on-store-error", "open", name="open")
    start_replicas([closed, opened])
    waits: list[int] = []  # store operations that timed out, per request while it is down
    texts: list[str] = []

    def timed_out() -> int:
        return closed.log().count(TIMED_OUT) + opened.log().count(TIMED_OUT)
    async with (
        connect(closed.url, "modern", token="alice-token") as alice_closed,
        connect(opened.url, "modern", token="bob-token") as bob_open,
    ):
        await fetch(alice_closed, "add")
        assert (await outcome(alice_closed))[0] == "ok"
        assert (await outcome(bob_open))[0] == "TOOL_DESCRIPTION_REQUIRED"  # store up: gated

        for fault in ("stopped", "frozen"):
            if fault == "stopped":
                redis_server.stop()  # connection refused
            else:
                redis_server.start()
                redis_server.freeze()  # accepts, never answers: only the timeout helps
            figures.add("faults injected: grant store down")
            # Each answer comes although the store never does (frozen: only store_timeout
            # can end the wait) and after at most one store_timeout wait: counted in the
            # replicas' logs (one "(timed out)" line per operation that timed out), never
            # timed, so a slow machine cannot fail it and a second wait always does.
            before = timed_out()
            code, text = await outcome(alice_closed)
            waits.append(timed_out() - before)
            assert code == "GRANT_STORE_UNAVAILABLE", (fault, text)
            texts.append(text)
            before = timed_out()
            code, text = await outcome(bob_open)
            waits.append(timed_out() - before)
            assert code == "ok", (fault, text)  # fail open: let through (and logged)
            before = timed_out()
            with anyio.fail_after(PATIENCE):
                body = await fetch(alice_closed, "echo")  # the read is served; grant not kept
            waits.append(timed_out() - before)
            assert "inputSchema" in body["echo"]
            assert max(waits) <= 1, (fault, waits)

        redis_server.thaw()

        async def closed_recovered() -> bool:  # by itself: no restart of the replica
            await fetch(alice_closed, "add")  # this Redis lost the old grants (no persistence)
            return (await outcome(alice_closed))[0] == "ok"

        async def open_gates_again() -> bool:  # once its 1 s rest after the last store
            return (await outcome(bob_open))[0] == "TOOL_DESCRIPTION_REQUIRED"  # failure passed

        await until(closed_recovered, what="recovery after Redis came back", interval=0.1)
        await until(open_gates_again, what="the open replica to recover", interval=0.1)

    for text in texts:
        figures.assert_clean(text, redis_server.url, str(redis_server.port))
    closed_log, open_log = closed.log(), opened.log()
    assert "grant store lookup failed (timed out); failing closed" in closed_log
    assert "grant store lookup failed (timed out); failing open" in open_log
    assert "grant store write failed" in closed_log
    assert "Traceback" not in closed_log + open_log  # one clear line each, no stack dump
    assert timed_out() >= 1  # the frozen store was waited for, and given up on
    figures.peak("store down: store_timeout waits per answer (most)", max(waits))
    figures.put("store down: store_timeout (s)", STORE_TIMEOUT)


async def test_shared_session_grants_are_seen_by_another_store_on_the_same_redis(
    redis_server: RedisServer,
) -> None:
    async with (
        RedisStore(url=redis_server.url) as kv_a,
        RedisStore(url=redis_server.url) as kv_b,
    ):
        a = GrantStore(GrantSettings(shared_sessions=True, ttl=60, store=kv_a))
        b = GrantStore(GrantSettings(shared_sessions=True, ttl=60, store=kv_b))
        s1 = Caller(kind="session", era="legacy", key="0123abcd")
        s2 = Caller(kind="session", era="legacy", key="4567ef01")
        await a.add(s1, ["add", "echo"])
        assert await b.has(s1, "add")
        assert await b.has(s1, "echo")
        assert not await b.has(s1, "shout")
        assert not await b.has(s2, "add")  # another session: nothing
        assert sessions_held(a) == sessions_held(b) == 0
        # a principal can never collide with a session's keys
        principal = Caller(kind="principal", era="modern", key="0123abcd")
        assert not await b.has(principal, "add")
    keys = await grant_keys(redis_server.url)
    assert sorted(k.rsplit("::", 1)[1] for k in keys) == [
        "session:0123abcd|add", "session:0123abcd|echo",
    ]
    assert all(0 < ttl <= 60 for ttl in keys.values())


async def test_shared_legacy_sessions_keep_grants_in_redis_not_in_memory(
    redis_server: RedisServer,
) -> None:
    async with RedisStore(url=redis_server.url) as kv:
        server = make_server(grants=GrantSettings(store=kv, shared_sessions=True))
        middleware = server.middleware[-1]
        async with (
            serve_http(server) as url,
            connect(url, "legacy", token="alice-token") as first,
            connect(url, "legacy", token="alice-token") as second,
        ):
            await fetch(first, "add")
            assert (await outcome(first))[0] == "ok"
            await second.list_tools()  # a session that lists first is followed, not validated
            assert (await outcome(second))[0] == "TOOL_DESCRIPTION_REQUIRED"  # per session
            assert sessions_held(parts(middleware).grants) == 0
        # one grant per session (the read's, and the teaching refusal's), each under its id
        keys = sorted(await grant_keys(redis_server.url))
        assert len(keys) == 2, keys
        assert all(k.startswith(f"{GRANTS_COLLECTION}::session:") for k in keys)
        assert all(k.endswith("|add") for k in keys) and keys[0] != keys[1]


async def test_store_timeout_bounds_reads_of_many_tools_and_the_store_recovers(
    redis_server: RedisServer,
) -> None:
    timeout = STORE_TIMEOUT
    principal = Caller(kind="principal", era="modern", key="user:feed")
    names = [f"t{i:02d}" for i in range(32)]
    async with RedisStore(url=redis_server.url) as kv:
        store = Started(kv)
        open_store = GrantStore(
            GrantSettings(store_timeout=timeout, on_store_error="open", store=store),
        )
        closed_store = GrantStore(
            GrantSettings(store_timeout=timeout, on_store_error="closed", store=store),
        )
        await open_store.add(principal, ["add"])  # connect while Redis answers
        redis_server.freeze()
        figures.add("faults injected: grant store down")
        # Redis never answers now: each call ends only by store_timeout, and costs as many
        # waits as store operations it began (counted, not timed)
        begun = store.started
        with anyio.fail_after(PATIENCE):
            await open_store.add(principal, names)
        assert store.started == begun + 1  # 32 writes, one operation: one timeout
        with anyio.fail_after(PATIENCE):
            assert await open_store.has(principal, "t00")  # fail open: granted
        assert store.started <= begun + 2  # resting after its failure, or one more wait
        begun = store.started
        with anyio.fail_after(PATIENCE), pytest.raises(GrantStoreUnavailable):
            await closed_store.has(principal, "add")
        assert store.started == begun + 1  # one lookup, one timeout
        redis_server.thaw()

        async def recovered() -> bool:
            try:
                return await closed_store.has(principal, "add")
            except GrantStoreUnavailable:
                return False

        await until(recovered, what="the store to recover after a thaw", interval=0.05)
        assert not await closed_store.has(principal, "shout")  # never granted
        # (a write that timed out while Redis was frozen may still land after the thaw:
        # it was already in the socket; the log's "the grant is not kept" overstates it)


@pytest.mark.parametrize("policy", ["open", "closed"])
async def test_a_redis_refusing_one_callers_write_decides_only_that_callers_calls(
    redis_server: RedisServer, policy: str,
) -> None:
    """A Redis that refuses writes (``min-replicas-to-write`` with no replica: NOREPLICAS)
    failed the attacker's grant write; that used to pause the store for every caller for
    1 s, so never-granted principals ran tools ("open") or granted ones were refused
    ("closed"). Each caller's lookup is now answered by Redis itself."""
    principals = [Caller(kind="principal", era="modern", key=f"user:p{i}") for i in range(40)]
    granted, never = principals[:20], principals[20:]
    async with RedisStore(url=redis_server.url) as kv:
        grants = GrantStore(GrantSettings(store=kv, on_store_error=policy,  # type: ignore[arg-type]
                                          store_timeout=ANSWERING_TIMEOUT))
        for caller in granted:
            await grants.add(caller, ["add"])
        redis = Redis.from_url(redis_server.url)
        try:
            await redis.config_set("min-replicas-to-write", 1)
            mallory = Caller(kind="principal", era="modern", key="user:mallory")
            assert not await grants.add(mallory, ["add"])  # refused by Redis: not kept
            assert [await grants.has(c, "add") for c in granted] == [True] * 20
            assert [await grants.has(c, "add") for c in never] == [False] * 20
            assert not await grants.has(mallory, "add")  # a refusal is no outage: no rest
        finally:
            await redis.config_set("min-replicas-to-write", 0)
            await redis.aclose()


@pytest.mark.parametrize("policy", ["open", "closed"])
async def test_one_principals_burst_past_maxclients_decides_no_other_principals_answer(
    redis_server: RedisServer, policy: str,
) -> None:
    """Redis at ``maxclients 16``; bob's 40 concurrent lookups opened 40 connections, the
    refused ones failed whichever caller's operation they hit: principals who never read
    ``add`` ran it ("open", 100 of 110 answers wrong) and alice's granted ``echo`` answered
    ``GRANT_STORE_UNAVAILABLE`` ("closed", 110 of 110). Store operations now wait their
    turn below the cap (``store_operations``): every answer is what Redis holds."""
    redis = Redis.from_url(redis_server.url)
    try:
        await redis.config_set("maxclients", 16)
    finally:
        await redis.aclose()
    alice = Caller(kind="principal", era="modern", key="user:alice")
    bob = Caller(kind="principal", era="modern", key="user:bob")
    never = [Caller(kind="principal", era="modern", key=f"user:p{i}") for i in range(10)]
    async with RedisStore(url=redis_server.url) as kv:
        grants = GrantStore(GrantSettings(store=kv, on_store_error=policy,  # type: ignore[arg-type]
                                          store_timeout=ANSWERING_TIMEOUT))
        await grants.add(alice, ["echo"])

        async def answer(caller: Caller, tool: str) -> bool | str:
            try:
                return await grants.has(caller, tool)
            except GrantStoreUnavailable:
                return "GRANT_STORE_UNAVAILABLE"

        wrong: list[tuple[str, bool | str]] = []
        for _ in range(10):
            answers = await asyncio.gather(
                *(answer(bob, "add") for _ in range(40)),
                answer(alice, "echo"), *(answer(p, "add") for p in never),
            )
            figures.add("store: lookups in a burst past maxclients", len(answers))
            alices, nevers = answers[40], answers[41:]
            wrong += [("alice", alices)] if alices is not True else []
            wrong += [(p.key or "", a) for p, a in zip(never, nevers, strict=True)
                      if a is not False]
        assert wrong == [], f"{len(wrong)} of 110 answers decided by bob's burst: {wrong[:5]}"


@pytest.mark.parametrize("policy", ["open", "closed"])
async def test_a_grant_that_cannot_be_written_answers_by_policy_not_by_a_refusal(
    redis_server: RedisServer, policy: str,
) -> None:
    """A Redis refusing writes (here NOREPLICAS; a read-only replica or ``maxmemory`` with
    ``noeviction`` alike) locked every tool not yet granted in a refusal loop under both
    policies: each refusal said it grants the tool, and the write failed. A grant that
    cannot be written is answered by ``on_store_error``: "open" runs the tool, "closed"
    answers ``GRANT_STORE_UNAVAILABLE``; granted tools keep running."""
    async with RedisStore(url=redis_server.url) as kv:
        server = make_server(grants=GrantSettings(
            store=kv, on_store_error=policy,  # type: ignore[arg-type]
            store_timeout=ANSWERING_TIMEOUT))
        async with (serve_http(server) as url,
                    connect(url, "modern", token="alice-token") as alice):
            await fetch(alice, "echo")  # granted while Redis still takes writes
            redis = Redis.from_url(redis_server.url)
            try:
                await redis.config_set("min-replicas-to-write", 1)
                expected = "ok" if policy == "open" else "GRANT_STORE_UNAVAILABLE"
                assert (await outcome(alice, "add"))[0] == expected
                assert (await outcome(alice, "shout"))[0] == expected
                if policy == "closed":  # no lookup failed: a granted tool still runs
                    assert (await outcome(alice, "echo"))[0] == "ok"
            finally:
                await redis.config_set("min-replicas-to-write", 0)
                await redis.aclose()
