"""The report is results.json rendered: the committed file reproduces the committed report,
and the scaling section says honestly whether the machine was shared."""

from __future__ import annotations

from pathlib import Path

from benchmarks.report import render
from benchmarks.report.cost import _load
from benchmarks.results import Results

ROOT = Path(__file__).resolve().parents[2]


def test_committed_results_reproduce_the_committed_report() -> None:
    results = Results.read_json(ROOT / "benchmarks" / "results.json")
    rendered = render(results)
    committed = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert rendered == committed, (
        "BENCHMARKS.md differs from what benchmarks/results.json renders: run "
        "`python -m benchmarks --from-json` (never edit BENCHMARKS.md by hand)")


def test_results_survive_a_round_trip(tmp_path: Path) -> None:
    results = Results.read_json(ROOT / "benchmarks" / "results.json")
    results.write_json(tmp_path / "results.json")
    assert render(Results.read_json(tmp_path / "results.json")) == render(results)


def _results(*loads: float) -> Results:
    return Results(machine={}, config={}, facts={f"load_{i}": v for i, v in enumerate(loads)})


def test_an_idle_run_is_not_called_shared() -> None:
    text = _load(_results(0.6, 1.1))
    assert "ran nothing else (1-minute load average 0.6 to 1.1" in text
    assert "shared" not in text


def test_a_loaded_run_says_its_times_are_inflated() -> None:
    assert "shared with other jobs during this run (1-minute load average 0.9 to 9.5" in _load(
        _results(0.9, 9.5))
