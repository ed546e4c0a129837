"""The speed benchmark (issue 35) measures what it says, in a tiny form (never how fast).

Each case checks before timing that its probe does what the case names (ours refuses an
unread tool, a granted call runs, the budget lists one tool and not the other): a change of
behaviour fails here instead of the benchmark quietly timing something else.
"""

from __future__ import annotations

from benchmarks.measure.speed import SMOKE, measure
from benchmarks.report.speed import speed
from benchmarks.results import Results

CASES = {
    "read of 5 names", "read of 20 names", "granted call, legacy",
    "refused call vs plain's call, legacy",
    "granted call, modern (anonymous: judged by arguments)",
    "granted call, modern principal (HTTP, bearer token)",
    "judged by arguments (FastMCP's Client), a tool the budget lists",
    "judged by arguments (FastMCP's Client), a tool the budget leaves out",
}


async def test_the_speed_benchmark_runs_every_case_and_renders() -> None:
    rows = await measure(SMOKE)
    assert {row["case"] for row in rows} == CASES
    for row in rows:
        assert row["ours_us"] > 0 and row["plain_us"] > 0, row
        assert row["met"] == (row["ratio"] <= row["target"])
        assert (row["rounds"], row["repetitions"]) == (SMOKE.rounds, SMOKE.repetitions)
    report = "\n".join(speed(Results(machine={}, config={}, speed=rows)))
    assert "## 9. Speed in CPU time (issue 35)" in report
    assert all(f"| {case} |" in report for case in CASES)
