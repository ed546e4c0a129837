"""How work grows with its input, measured in CPU time within one test (never a bound on
wall time): ``growth(work, small, large)`` is how many times longer ``work(large)`` takes
than ``work(small)``, each the best of a few runs, so a machine busy with other work
inflates neither. Linear work grows about as ``large / small``; quadratic work as its square.

Example:
    ```python
    assert growth(lambda n: parse("x" * n), 2_000_000, 32_000_000) < 16 * 3
    ```
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

RUNS = 3


async def growth(work: Callable[[int], Any], small: int, large: int, runs: int = RUNS) -> float:
    """CPU time of ``work(large)`` over that of ``work(small)`` (best of ``runs`` each);
    ``work`` may be sync or async."""

    async def best(size: int) -> float:
        times = []
        for _ in range(runs):
            started = time.process_time()
            done = work(size)
            if inspect.isawaitable(done):
                await done
            times.append(time.process_time() - started)
        return max(min(times), 1e-6)

    return await best(large) / await best(small)
