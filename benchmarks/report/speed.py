"""Section 9 of the report: issue 35's speed targets at 1,000 tools, as CPU-time ratios.

Renders ``results.speed`` (``measure/speed.py``), or nothing when it was not measured.

Example:
    ```python
    lines = speed(results)
    ```
"""

from __future__ import annotations

from ..results import Results
from .markdown import MISSING, table


def speed(results: Results) -> list[str]:
    rows = results.speed
    if not rows:
        return []
    first = rows[0]
    return ["## 9. Speed in CPU time (issue 35)", "",
            f"Measured {results.measured('speed') or MISSING}. {first['tools']:,} synthetic "
            "tools, in memory; plain FastMCP and ours alternately, "
            f"{first['rounds']} rounds of {first['repetitions']} requests a side, which side "
            "goes first swapping each round; a side's figure is the median over rounds of "
            "`time.process_time` per request (client and server share the process), the ratio "
            "ours / plain of those medians, the spread the quartiles of the rounds' own "
            "ratios. Reads against plain answering the same bytes after FastMCP's own "
            "`get_tool` per name (issue 26's floor); a 2026-07-28 caller in memory has no "
            "authorization, so its call after a read is judged by its arguments (the modern "
            "caller that keeps grants, a principal, is timed over streamable HTTP with a bearer "
            "token, the HTTP stack in the same process); FastMCP's "
            "`Client` (`fastmcp`) on the one-line default budget (`ListingSettings()`); a "
            "refusal (`TOOL_DESCRIPTION_REQUIRED`) against plain's successful call of the same "
            "tools (`benchmarks/measure/speed.py`).", "",
            table(("case", "ours µs", "plain µs", "ratio", "rounds' quartiles", "target", "met"),
                  [(r["case"], f"{r['ours_us']:,.0f}", f"{r['plain_us']:,.0f}",
                    f"{r['ratio']:.2f}x", f"{r['low']:.2f}-{r['high']:.2f}x",
                    f"<= {r['target']:.2f}x", "**yes**" if r["met"] else "**no**")
                   for r in rows], "lrrrrrl"), ""]
