"""Markdown for the report, written once: tables, number formats, figure links.

Every section formats through here, so a table looks the same wherever it is and a missing
value always reads "–".

Example:
    ```python
    table(("catalog", "tools"), [("github", 117)])    # header, alignment row, one row
    duration(stats)                                   # "412 µs" or "1.41 ms" (median)
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..results import LatencyRow, Stats

MISSING = "–"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> str:
    """A Markdown table; ``align`` has one ``l``/``r`` per column (default: first left,
    the rest right, as numbers are)."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
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


def ms(value: float) -> str:
    return f"{value:,.2f} ms"


def saved(part: int, whole: int) -> str:
    """How much smaller ``part`` is than ``whole``, in whole percent."""
    return f"{100 * (1 - part / whole):.0f}%" if whole else MISSING


def ratio(row: LatencyRow | None, p95: str = "p95 ") -> str:
    """``0.45x (p95 0.44x)``: ours / plain, median and p95."""
    return MISSING if row is None else f"{row.ratio_median:.2f}x ({p95}{row.ratio_p95:.2f}x)"


def latency_table(rows: Sequence[LatencyRow], server: bool = True) -> str:
    """One row per operation: samples, medians per side, ratios, server-side medians."""
    header = ["operation", "n", "plain", "ours", "ratio", "p95 ratio"]
    body: list[list[object]] = [[r.op, r.ours.n, duration(r.plain), duration(r.ours),
                                 f"{r.ratio_median:.2f}x", f"{r.ratio_p95:.2f}x"] for r in rows]
    if server:
        header += ["server: plain", "server: ours"]
        for cells, r in zip(body, rows, strict=True):
            cells += [duration(r.plain_server), duration(r.ours_server)]
    return table(header, body)


def figure(folder: str, key: str, alt: str) -> list[str]:
    """The image line for a figure in ``folder`` (relative to the report), a blank line."""
    return [f"![{alt}]({folder}/{key}.png)", ""]
