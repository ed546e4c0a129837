"""Section 4 of BENCHMARKS.md and the issue-14 targets, from ``Results.scaling``.

Kept apart from ``report.py`` and ``targets.py`` (which call in here) so the scaling
section can change without touching the rest of the report.

Example:
    ```python
    lines = render_scaling(results)
    targets = scaling_targets(results)
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .results import Results, ScalingRow, Stats
from .scaling_bench import GROUPED_CAP, GROUPED_CASE
from .targets import CALL_RATIO, Target

READ_20_RATIO = 1.5
HOOKED_RATIO = 1.5
WARM_LISTING_RATIO = 0.35
FIRST_LISTING_RATIO = 1.2
SHAPE_READ_RATIO = 1.5
FIRST_LISTING_OP = "tools/list, after start-up"


def _row(results: Results, tools: int, case: str, op: str) -> ScalingRow | None:
    return next((r for r in results.scaling
                 if r.tools == tools and r.case == case and r.op == op), None)


def _largest(results: Results, case: str, op: str) -> ScalingRow | None:
    rows = [r for r in results.scaling if r.case == case and r.op == op]
    return max(rows, key=lambda r: r.tools) if rows else None


def _ratio(row: ScalingRow) -> str:
    return f"{row.ratio_median:.2f}x (p95 {row.ratio_p95:.2f}x)"


def _target(name: str, goal: str, row: ScalingRow | None, limit: float) -> Target:
    if row is None:
        return Target(name, goal, "not measured", None)
    return Target(f"{name} ({row.tools:,} tools)", goal, _ratio(row),
                  row.ratio_median <= limit)


def scaling_targets(results: Results) -> list[Target]:
    """The issue-14 targets judged at the largest size this run measured."""
    if not results.scaling:
        return []
    out = [
        _target("read of 20 vs a static resource", f"<= {READ_20_RATIO}x",
                _largest(results, "local", "resources/read 20 (hit)"), READ_20_RATIO),
        _target("refused call, listing middleware present", f"<= {HOOKED_RATIO}x",
                _largest(results, "listing middleware", "tools/call (refused)"), HOOKED_RATIO),
        _target("read of 5, listing middleware present", f"<= {HOOKED_RATIO}x",
                _largest(results, "listing middleware", "resources/read 5 (hit)"),
                HOOKED_RATIO),
        _target("warm listing", f"<= {WARM_LISTING_RATIO}x",
                _largest(results, "local", "tools/list"), WARM_LISTING_RATIO),
    ]
    for case in dict.fromkeys(r.case for r in results.scaling):
        row = _largest(results, case, "tools/call (granted)")
        if row is not None:
            out.append(_target(f"granted call, {case}", f"<= {CALL_RATIO:.2f}x", row,
                               CALL_RATIO))
    for case in ("mounted", "proxied"):
        out.append(_target(f"read of 5, {case}", f"<= {SHAPE_READ_RATIO}x (memos hit)",
                           _largest(results, case, "resources/read 5 (hit)"),
                           SHAPE_READ_RATIO))
    first = next((r for r in results.scaling if r.op == FIRST_LISTING_OP), None)
    out.append(_target("first listing with a file per tool, after start-up",
                       f"<= {FIRST_LISTING_RATIO}x", first, FIRST_LISTING_RATIO))
    sizes = sorted(int(k.rsplit("_", 1)[1]) for k in results.facts if k.startswith(
        "unknown_bytes_"))
    if sizes:
        small, big = (results.facts[f"unknown_bytes_{n}"] for n in (sizes[0], sizes[-1]))
        out.append(Target(f"answer naming 32 unknown tools, {sizes[0]:,} → {sizes[-1]:,} tools",
                          "bounded whatever the catalog",
                          f"{small / 1024:,.1f} KiB → {big / 1024:,.1f} KiB",
                          big <= max(small * 1.5, 64 * 1024)))
    return out


def _cell(row: ScalingRow | None) -> str:
    return "–" if row is None else f"{row.ratio_median:.2f}x ({row.ratio_p95:.2f}x)"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str) -> str:
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _us(stats: Stats | None) -> str:
    if stats is None:
        return "–"
    value = stats.median_us
    return f"{value / 1000:,.2f} ms" if value >= 1000 else f"{value:,.0f} µs"


SHARED_LOAD = 1.5
"""A load average at or above this means other jobs ran beside the benchmark (which keeps
about one of the 2 cores busy by itself)."""


def _load(results: Results) -> str:
    when = results.config.get("scaling_measured")
    measured = f" Measured {when}." if when else ""
    loads = [v for k, v in results.facts.items() if k.startswith("load_") and v == v]
    if not loads:
        return measured
    span = f"1-minute load average {min(loads):.1f} to {max(loads):.1f} on 2 cores"
    if max(loads) < SHARED_LOAD:
        return (f"{measured} The machine ran nothing else ({span}, the benchmark's own); "
                f"the ratios, measured interleaved, are what count.")
    return (f"{measured} The machine was shared with other jobs during this run ({span}), "
            f"so absolute times are inflated and noisy; the ratios, measured interleaved, "
            f"are what count.")


def render_scaling(results: Results) -> list[str]:
    """The ``## 4. Scaling`` section, or nothing when the run did not measure it."""
    rows = [r for r in results.scaling if r.case not in ("first listing", GROUPED_CASE)]
    if not rows:
        return []
    sizes = sorted({r.tools for r in rows})
    out = ["## 4. Scaling (100 / 1,000 / 10,000 tools)", "",
           "Synthetic catalogs (`synthetic.py`, ~1 KB of JSON per tool), one description file "
           "per tool for ours. Each cell is ours / plain FastMCP, median (p95 in brackets), "
           "timed interleaved in this run. Reads compare with plain serving a static resource "
           "of the very same bytes. `local` is in memory, 2026-07-28; `local, legacy` the "
           "handshake era in memory; `listing middleware`: a pass-through `on_list_tools` "
           "middleware next to ours; `mounted`: the catalog on a child server mounted on a "
           "gateway (fresh tool objects per request), ours on the gateway (up to 1,000 tools); "
           "`proxied`: behind `create_proxy` (100 tools); `http legacy` (handshake era), "
           "`http` (2026-07-28 anonymous: calls argument-checked) and `http+auth` (bearer "
           "token, grants per principal): streamable HTTP on 127.0.0.1, both servers listing "
           "in pages of 1,000 tools (FastMCP's `list_page_size`: a 10,000-tool listing in one "
           "answer exceeds the client's 1 MiB limit per server-sent event, plain and ours "
           "alike). Fewer sizes where each request costs seconds at 10,000 tools. "
           "`tools/list` server times are FastMCP's `list_tools` with its middleware (ours "
           "included), seen by a listing hook placed outermost for that row; the wire form, "
           "the SDK's serialization and the transport are only in the client-side time. Each "
           "listing sample starts from a collected heap (`gc.collect()`, untimed, before each "
           "side's request), so neither side pays for the other's garbage."
           + _load(results), ""]
    cases = list(dict.fromkeys((r.case, r.op) for r in rows))
    body = [(case, op, *(_cell(_row(results, n, case, op)) for n in sizes))
            for case, op in cases]
    out += [_table(("case", "operation", *(f"{n:,} tools" for n in sizes)), body,
                   "ll" + "r" * len(sizes)), ""]
    out += ["<details><summary>Medians per side</summary>", "",
            _table(("tools", "case", "operation", "n", "plain", "ours", "server: plain",
                    "server: ours"),
                   [(f"{r.tools:,}", r.case, r.op, r.ours.n, _us(r.plain), _us(r.ours),
                     _us(r.plain_server), _us(r.ours_server)) for r in rows],
                   "rllrrrrr"), "", "</details>", ""]
    out += _grouped(results)
    out += _first_listing(results)
    out += _unknown(results)
    out += _memory(results)
    return out


def _grouped(results: Results) -> list[str]:
    rows = [r for r in results.scaling if r.case == GROUPED_CASE]
    if not rows:
        return []
    tools = rows[0].tools
    return [f"### Groups and a tool cap ({tools:,} tools, tagged into groups)", "",
            f"One server, tool *i* tagged `g<i mod groups>`; ours capped at {GROUPED_CAP} "
            "tools. The capped listing and `groups/list` are set against plain's whole "
            "`tools/list` (what a plain client reads to learn what exists); the group read and "
            "the describe against a plain tool call answering the very same bytes. `groups/list` "
            "and a group read need the caller's visible tools: about one server-side listing "
            "without the middleware chain (FastMCP's own `list_tools`).", "",
            _table(("operation", "n", "plain", "ours", "ratio", "p95 ratio"),
                   [(r.op, r.ours.n, _us(r.plain), _us(r.ours), f"{r.ratio_median:.2f}x",
                     f"{r.ratio_p95:.2f}x") for r in rows], "lrrrrr"), ""]


def _first_listing(results: Results) -> list[str]:
    rows = [r for r in results.scaling if r.case == "first listing"]
    if not rows:
        return []
    facts = results.facts
    catalog = results.config.get("first_listing_catalog", "")
    out = ["### First listing with a description file per tool", "",
           f"{catalog} ({rows[0].tools} tools, one file each), fresh servers per iteration. "
           "Ours starts reading the files in a background thread when it is constructed "
           f"(the constructor takes {facts.get('constructor_us', 0):,.0f} µs; the thread "
           f"{facts.get('preload_ms', 0):,.1f} ms); requests never wait for it.", ""]
    out += [_table(("operation", "n", "plain", "ours", "ratio", "p95 ratio"),
                   [(r.op, r.ours.n, _us(r.plain), _us(r.ours), f"{r.ratio_median:.2f}x",
                     f"{r.ratio_p95:.2f}x") for r in rows], "lrrrrr"), ""]
    return out


def _unknown(results: Results) -> list[str]:
    sizes = sorted(int(k.rsplit("_", 1)[1]) for k in results.facts
                   if k.startswith("unknown_bytes_"))
    if not sizes:
        return []
    rows = [(f"{n:,}", f"{results.facts[f'unknown_bytes_{n}'] / 1024:,.1f} KiB",
             f"{results.facts[f'unknown_ms_{n}']:,.2f} ms") for n in sizes]
    return ["### A read naming 32 unknown tools", "",
            _table(("tools", "answer", "time (median of 5)"), rows, "rrr"), ""]


def _memory(results: Results) -> list[str]:
    if not results.memory and not results.grants:
        return []
    out = ["### Memory per cache entry", "",
           "tracemalloc's count of what each cache holds once filled (identity memo "
           "entries included), divided by its entries, next to its bound (the README lists "
           "them). Grants for many callers come from section 3.", ""]
    rows: list[Sequence[object]] = [
        (m.cache, f"{m.entries:,}", f"{m.bytes_per_entry:,.0f} B", f"{m.bound:,}", m.note)
        for m in results.memory
    ]
    rows += [(f"grants, {g.kind}s ({g.grants_each} each)", f"{g.callers:,}",
              f"{g.bytes_per_caller:,.0f} B", "TTL + `max_sessions`" if g.kind == "session"
              else "TTL (store)", f"{g.memory_mib:,.1f} MiB in all")
             for g in results.grants]
    out += [_table(("cache", "entries measured", "per entry", "bound (entries)", "set by"),
                   rows, "lrrrl"), ""]
    confirmed = results.facts.get("grant_lookup_confirmed_us")
    store = results.facts.get("grant_lookup_store_us")
    if confirmed is not None and store is not None:
        out += [f"A principal's granted lookup (`GrantStore.has`, FastMCP's default "
                f"`MemoryStore`): {confirmed:,.1f} µs when confirmed in memory, "
                f"{store:,.1f} µs when it asks the store.", ""]
    return out
