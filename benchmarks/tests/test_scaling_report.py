from __future__ import annotations

from benchmarks.results import Results
from benchmarks.scaling_report import _load


def _results(*loads: float) -> Results:
    results = Results(machine={}, config={"scaling_measured": "today"})
    results.facts = {f"load_{i}": load for i, load in enumerate(loads)}
    return results


def test_an_idle_run_is_not_called_shared() -> None:
    text = _load(_results(0.6, 1.1))
    assert "ran nothing else (1-minute load average 0.6 to 1.1" in text
    assert "shared" not in text


def test_a_loaded_run_says_its_times_are_inflated() -> None:
    text = _load(_results(0.9, 9.5))
    assert "shared with other jobs during this run (1-minute load average 0.9 to 9.5" in text
    assert text.startswith(" Measured today.")
