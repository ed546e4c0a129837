"""The tool-resolution benchmark measures what it says (never how fast)."""

from __future__ import annotations

from benchmarks.resolve_bench import run


async def test_the_resolution_benchmark_runs() -> None:
    """The benchmark measures what it says (never how fast: that is the benchmark's job)."""
    rows = await run(iterations=20)
    assert [row["era"] for row in rows] == ["legacy", "modern"]
    assert all(row["server"]["n"] == 20 and row["server_cpu"]["n"] == 20 for row in rows)
