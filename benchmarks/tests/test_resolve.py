"""The tool-resolution benchmark measures what it says (never how fast)."""

from __future__ import annotations

from benchmarks.measure.resolve import measure


async def test_the_resolution_benchmark_runs() -> None:
    rows = await measure(iterations=20)
    assert [row["era"] for row in rows] == ["legacy", "modern"]
    assert all(row["server"]["n"] == 20 and row["server_cpu"]["n"] == 20 for row in rows)
