"""The issue's targets, judged against a run's results (one place, used by report and CLI).

Token targets are judged on both model-visible counts (per field, the README's; one JSON
array, the issue's own "plain: 25,136"), because they disagree on github-mcp-server.
A target whose input was not measured in this run (the smoke run has no github catalog)
is reported as not measured rather than passed.

Example:
    ```python
    for t in judge(results):
        print(t.name, t.measured, t.met)
    ```
"""

from __future__ import annotations

from dataclasses import dataclass

from fastmcp_progressive import ListingSettings

from .host_report import target_rows
from .replay import DEFAULT
from .results import Results

HEADLINE_CATALOG = "github-mcp-server"
DEFAULT_CUT = 0.60
"""Issue #19: the default listing at least this much smaller than plain (server side; the
host matrix judges the same cut in each framework's own ``tools`` array)."""
MEANING_RATIO = 0.9
LISTING_BUDGET = 3_000
SESSION_BUDGET = 4_000
CALL_RATIO = 1.05
LIST_RATIO = 1.10
READ_BUDGET_US = 1_000.0
MAIN_TRANSPORTS = ("memory", "http", "http legacy", "http+auth")
LISTING_OPS = ("tools/list", "tools/list (cold)", "tools/list (cold, no files)")


@dataclass(frozen=True)
class Target:
    """One target: what it asks, what was measured, and whether it holds (None: unmeasured)."""

    name: str
    goal: str
    measured: str
    met: bool | None


def _tokens(results: Results) -> list[Target]:
    """The default level's cut against plain (issue #19: what keeps every host working),
    and the earlier absolute budgets, which only ``minimal`` (no arguments declared) buys."""
    out: list[Target] = []
    plain = results.token(HEADLINE_CATALOG, "plain")
    default = results.token(HEADLINE_CATALOG, DEFAULT)
    for count in ("fields", "json"):
        label = "per field" if count == "fields" else "as one JSON array"
        if plain is None or default is None:
            out.append(Target(f"{HEADLINE_CATALOG} default listing ({label})",
                              f">= {DEFAULT_CUT:.0%} smaller than plain, all names",
                              "not measured", None))
            continue
        ours, theirs = getattr(default, count), getattr(plain, count)
        cut = 1 - ours / theirs if theirs else 0.0
        out.append(Target(
            f"{HEADLINE_CATALOG} default (`{DEFAULT}`) listing ({label})",
            f">= {DEFAULT_CUT:.0%} smaller than plain, all {default.tools} names visible",
            f"{theirs:,} -> {ours:,} tokens (-{cut:.1%}), "
            f"{default.names_visible}/{default.tools} names",
            cut >= DEFAULT_CUT and default.names_visible == default.tools,
        ))
    listing = results.token(HEADLINE_CATALOG, "minimal")
    session = results.token(HEADLINE_CATALOG, "minimal+2")
    for count in ("fields", "json"):
        label = "per field" if count == "fields" else "as one JSON array"
        if listing is None or session is None:
            out.append(Target(f"{HEADLINE_CATALOG} `minimal` listing ({label})",
                              f"<= {LISTING_BUDGET:,}, all names", "not measured", None))
            continue
        value = getattr(listing, count)
        all_names = listing.names_visible == listing.tools
        out.append(Target(
            f"{HEADLINE_CATALOG} `minimal` listing ({label})",
            f"<= {LISTING_BUDGET:,} tokens, all {listing.tools} names visible",
            f"{value:,} tokens, {listing.names_visible}/{listing.tools} names",
            value <= LISTING_BUDGET and all_names,
        ))
        value = getattr(session, count)
        out.append(Target(
            f"{HEADLINE_CATALOG} `minimal` 2-tool session ({label})",
            f"<= {SESSION_BUDGET:,} tokens",
            f"{value:,} tokens",
            value <= SESSION_BUDGET,
        ))
    return out


def _meaning(results: Results) -> list[Target]:
    """Issue #19: a ranker finds a task's tools from the listing about as well as from the
    full definitions (at the default ``summary_max_chars``)."""
    default = ListingSettings.summary_max_chars
    full = {(r.ranker, r.k): r for r in results.ranking if r.summary_max_chars is None}
    out = []
    for row in results.ranking:
        base = full.get((row.ranker, row.k))
        if row.summary_max_chars != default or base is None or not base.found:
            continue
        ratio = row.found / base.found
        out.append(Target(
            f"{row.catalog}: {row.ranker} finds tasks' tools in the top {row.k} "
            "from the listing",
            f">= {MEANING_RATIO} of what the full definitions give",
            f"{row.found} vs {base.found} of {row.total} ({ratio:.2f})",
            ratio >= MEANING_RATIO,
        ))
    return out


def _latency(results: Results) -> list[Target]:
    out: list[Target] = []
    rows = [r for r in results.latency if r.transport in MAIN_TRANSPORTS]
    for row in rows:
        if row.op == "tools/call (granted)":
            out.append(Target(f"tools/call, {row.transport}",
                              f"<= {CALL_RATIO:.2f}x plain (median)",
                              f"{row.ratio_median:.2f}x (p95 {row.ratio_p95:.2f}x)",
                              row.ratio_median <= CALL_RATIO))
    tools = results.config.get("latency_tools")
    for row in rows:
        if row.op in LISTING_OPS:
            out.append(Target(f"{row.op} of {tools} tools, {row.transport}",
                              f"<= {LIST_RATIO:.2f}x plain (median)",
                              f"{row.ratio_median:.2f}x (p95 {row.ratio_p95:.2f}x)",
                              row.ratio_median <= LIST_RATIO))
    for row in rows:
        if row.op == "resources/read 5 (hit)" and row.ours_server is not None:
            value = row.ours_server.median_us
            out.append(Target(f"5 cached descriptions, server side, {row.transport}",
                              f"< {READ_BUDGET_US / 1000:.0f} ms (median)",
                              f"{value / 1000:.2f} ms (p95 {row.ours_server.p95_us / 1000:.2f} ms)",
                              value < READ_BUDGET_US))
    return out


def judge(results: Results) -> list[Target]:
    """Every target of the issue with this run's measurement."""
    from .scaling_report import scaling_targets  # it builds on this module's Target

    hosts = [Target(name, goal, measured, met) for name, goal, measured, met
             in target_rows(results)]
    return (_tokens(results) + _meaning(results) + _latency(results) + hosts
            + scaling_targets(results))
