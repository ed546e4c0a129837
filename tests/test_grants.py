"""GrantStore on its own: TTL, isolation between kinds, and a failing key-value store."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from fastmcp_progressive import GrantSettings
from fastmcp_progressive.caller import Caller
from fastmcp_progressive.grants import GrantStore, GrantStoreUnavailable

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


async def test_sessions_and_streams_never_share_grants() -> None:
    grants = GrantStore()
    anchor_a, anchor_b = (
        object.__new__(type("Stream", (), {})),
        object.__new__(type("Stream", (), {})),
    )
    a = Caller(kind="stream", era="modern", key="a", anchor=anchor_a)
    b = Caller(kind="stream", era="modern", key="b", anchor=anchor_b)
    s = Caller(kind="session", era="legacy", key="s1")
    await grants.add(a, ["add"])
    assert await grants.has(a, "add")
    assert not await grants.has(b, "add")
    assert not await grants.has(s, "add")
    await grants.add(s, ["echo"])
    grants.release("s1")
    assert not await grants.has(s, "echo")


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="ttl"):
        GrantStore(GrantSettings(ttl=0))
    with pytest.raises(ValueError, match="on_store_error"):
        GrantStore(GrantSettings(on_store_error="maybe"))  # type: ignore[arg-type]
