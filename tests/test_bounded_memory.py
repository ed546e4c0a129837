"""What clients and upstreams can make the server keep is bounded by bytes, not only by count
(#21): client names outlive their clients in the mode memo, and per-tool memos keep one
entry per distinct content a tool ever had.

Retained memory is measured with ``tracemalloc`` (what is still allocated once the clients
are gone and garbage is collected), against a bound far below what the old code kept.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import mcp_types as mt

from fastmcp_progressive.caller import Caller
from fastmcp_progressive.compat import ModePolicy
from tests.conftest import build_server, connect

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


def test_long_client_names_are_kept_by_digest_not_whole() -> None:
    """40 unauthenticated 2 MB client names held 78 MiB in the mode memo (4 GiB at its
    1,024-entry cap); each is now kept as its SHA-256."""
    policy = ModePolicy()
    default = policy.level(Caller(kind="anonymous", era="modern", client_name="some-host"))

    def forty_clients() -> None:
        for i in range(40):
            name = f"{i}" + "n" * (2 * MIB)
            caller = Caller(kind="anonymous", era="modern", client_name=name,
                            client_version="v" * MIB)
            assert policy.level(caller) == default

    kept = retained(forty_clients)
    assert kept < MIB, f"the mode memo kept {kept / MIB:.1f} MiB of client names"
    same = Caller(kind="anonymous", era="modern", client_name="0" + "n" * (2 * MIB),
                  client_version="v" * MIB)
    assert policy.level(same) == default  # still answered from the memo


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
