"""Markdown for the benchmark report, written once: tables, figures and number formats.

Every section of BENCHMARKS.md formats through here, so a table looks the same wherever
it is and a missing value always reads "–".

Example:
    ```python
    table(("catalog", "tools"), [("github", 117)])    # header, alignment row, one row
    duration(stats)                                   # "412 µs" or "1.41 ms" (median)
    ```
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from .results import Stats

MISSING = "–"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> str:
    """A Markdown table; ``align`` has one ``l``/``r`` per column (default: first left,
    the rest right, as numbers are)."""
    align = align or "l" + "r" * (len(header) - 1)
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def number(value: float | None) -> str:
    """A count with thousands separators."""
    return MISSING if value is None else f"{value:,.0f}"


def duration(stats: Stats | None) -> str:
    """A median time in µs, or in ms from one millisecond up."""
    if stats is None:
        return MISSING
    value = stats.median_us
    return f"{value / 1000:,.2f} ms" if value >= 1000 else f"{value:,.0f} µs"


def saved(part: int, whole: int) -> str:
    """How much smaller ``part`` is than ``whole``, in whole percent."""
    return f"{100 * (1 - part / whole):.0f}%" if whole else MISSING


def figure(figures: dict[str, Path], key: str, alt: str, report: Path) -> list[str]:
    """The image line for a drawn figure (and a blank line), linked relative to the
    report so it renders on GitHub and in a local preview; nothing when not drawn."""
    if key not in figures:
        return []
    link = os.path.relpath(figures[key], report.parent).replace(os.sep, "/")
    return [f"![{alt}]({link})", ""]
