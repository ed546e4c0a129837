"""Issue 20's gateway targets, from ``benchmarks/measure/gateway.py`` on the LiveMCPTool corpus.

The capped listing (40) the server emits stays under the in-host budget with room for what
hosts add, and our BM25 over the group lines plus the capped listing's tools finds each
LiveMCPBench task's tools at least as often as over the plain listing's names alone.
"""

from __future__ import annotations

import pytest

from tests.corpus import servers_path

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


async def test_capped_listing_and_ranker() -> None:
    if not servers_path().exists():
        pytest.skip(f"the LiveMCPTool corpus is not at {servers_path()}")
    from benchmarks.measure.gateway import CAP, capped, ranker

    cap = await capped()
    assert (cap["tools"], cap["groups"]) == (CAP, 70)
    assert cap["tokens"] <= 5_000
    found = ranker(cap["listed"], cap["bridge_description"])
    for k in ("top1", "top3", "top5"):
        assert found["groups_plus_listed"][k] >= found["plain_names"][k], (k, found)
