"""Issue 20's gateway targets, from ``benchmarks/gateway_bench.py`` on the LiveMCPTool corpus.

The capped listing (40) the server emits stays under the in-host budget with room for what
hosts add, and a BM25 ranker over the group lines plus the capped listing's tools finds each
LiveMCPBench task's tools at least as often as one over the plain listing's names alone.
"""

from __future__ import annotations

import pytest

from benchmarks.gateway import servers_path

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


@pytest.fixture(scope="module")
def corpus() -> None:
    if not servers_path().exists():
        pytest.skip(f"the LiveMCPTool corpus is not at {servers_path()}")
    pytest.importorskip("bpe_openai")


async def test_capped_listing_and_ranker(corpus: None) -> None:
    from benchmarks.gateway_bench import CAP, capped, ranker

    cap = await capped()
    assert cap["tools"] == CAP
    assert cap["tokens"] <= 5_000
    assert cap["groups"] == 70
    found = ranker(cap["listed"], cap["bridge_description"])
    for k in ("top1", "top3", "top5"):
        assert found["groups_plus_listed"][k] >= found["plain_names"][k], (k, found)
