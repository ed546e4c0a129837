"""How work grows with its input, measured in CPU time within one test (never a bound on
wall time), each figure the best of a few runs, so a machine busy with other work inflates
neither side of a comparison.

- ``cpu_seconds(work)``: the CPU time ``work()`` takes (sync or async), best of ``runs``;
- ``growth(work, small, large)``: how many times longer ``work(large)`` takes than
  ``work(small)``. Linear work grows about as ``large / small``; quadratic as its square.

Example:
    ```python
    assert await growth(lambda n: load(n), 1_000, 10_000) < 30
    assert await cpu_seconds(lambda: read(one_long)) < 4 * await cpu_seconds(lambda: read(many))
    ```
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

RUNS = 3


async def cpu_seconds(work: Callable[[], Any], runs: int = RUNS) -> float:
    """CPU time of ``work()`` (best of ``runs``); ``work`` may be sync or async."""
    times = []
    for _ in range(runs):
        started = time.process_time()
        done = work()
        if inspect.isawaitable(done):
            await done
        times.append(time.process_time() - started)
    return max(min(times), 1e-6)


async def growth(work: Callable[[int], Any], small: int, large: int, runs: int = RUNS) -> float:
    """CPU time of ``work(large)`` over that of ``work(small)`` (best of ``runs`` each)."""
    return (await cpu_seconds(lambda: work(large), runs)
            / await cpu_seconds(lambda: work(small), runs))
