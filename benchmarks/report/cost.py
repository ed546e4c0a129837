"""Sections 2 to 4 of the report: cost per request, scale, and scaling against plain.

Example:
    ```python
    lines = [*cost(results, figs), *scale(results, figs), *scaling(results)]
    ```
"""

from __future__ import annotations

from collections.abc import Sequence

from ..results import DEFAULT, FIRST_LISTING_CASE, GROUPED_CASE, LatencyRow, Results
from .markdown import MISSING, duration, figure, latency_table, ms, ratio, table
from .targets import unknown_sizes

SHARED_LOAD = 1.5
"""A load average at or above this means other jobs ran beside the benchmark (which keeps
about one of the 2 cores busy by itself)."""


def cost(results: Results, figures: str) -> list[str]:
    if not results.latency:
        return []
    cfg = results.config
    out = ["## 2. Cost", "", *figure(figures, "latency_ratios", "latency ratios"),
           f"Measured {results.measured('latency')}. Catalog: **{cfg.get('latency_catalog')}** "
           f"({cfg.get('latency_tools')} tools). Two servers, plain FastMCP and ours (`{DEFAULT}`, "
           "the default level, every tool listed as plain lists them: `max_tools=None`, since "
           "the default budget lists at most 20 entries above 50 tools; one description file "
           "per tool), connected at once and timed back "
           "to back, alternating which goes first, in one process (HTTP servers run in it too, "
           "on 127.0.0.1, as `run_server_async` does). Client-side time is the awaited request "
           "of the raw client call (`list_tools_mcp(cache_mode=\"bypass\")`, `call_tool_mcp`, "
           "`read_resource_mcp`). **Server side** is measured by a pass-through middleware added "
           "before ours: our hook plus FastMCP's handler, without JSON-RPC framing, transport or "
           "serialization (it has no `on_list_tools`, see Findings, so listings have no server "
           "column). Medians and p95 per side; ratios are ours / plain.", "",
           "- `tools/call (granted)`: a tool whose description was read, called with its "
           "required arguments; `(refused)`: ours answers `TOOL_DESCRIPTION_REQUIRED` where "
           "plain runs the tool (only where ours gates: a handshake-era session or a bearer "
           "token; a 2026-07-28 caller without auth, in memory too since #21, is anonymous: "
           "no grants, each call's arguments checked against the full schema, "
           "`anonymous=\"validate\"`).",
           "- `resources/read N`: plain serves the same JSON as a static resource, so the ratio "
           "is the price of building definitions on demand. `hit`: files unchanged; `miss`: "
           "every file of the selection touched (new mtime) before each read, so it is stat'ed, "
           "re-read, parsed, merged and hashed.",
           "- Transports: `memory` (the default in-memory client, 2026-07-28, anonymous), "
           "`http` (streamable HTTP, 2026-07-28 without auth, anonymous), `http legacy` "
           "(handshake era; grants per `Mcp-Session-Id`), `http+auth` (2026-07-28 with a bearer "
           "token; grants per principal in FastMCP's session-state store); `+ listing "
           "middleware`: another middleware hooking `tools/list` next to ours, in memory "
           "(`memory legacy`: the handshake era, where ours gates).", ""]
    per_catalog = [r for r in results.latency if r.op.startswith("tools/list ") and "(" in r.op
                   and "cold" not in r.op]
    for transport in dict.fromkeys(r.transport for r in results.latency):
        rows = [r for r in results.latency if r.transport == transport and r not in per_catalog]
        if rows:
            out += [f"### {transport}", "", latency_table(rows), ""]
    if per_catalog:
        out += [f"### tools/list per catalog (memory, `{DEFAULT}`, every tool listed, no files)",
                "",
                latency_table(per_catalog), ""]
    return out


def scale(results: Results, figures: str) -> list[str]:
    if not (results.listing_scale or results.grants or results.file_edits):
        return []
    out = ["## 3. Scale", "", f"Measured {results.measured('scale')}.", ""]
    if results.listing_scale:
        out += [*figure(figures, "scale_listing", "listing at scale"),
                "Synthetic catalogs (seeded, ~1 KB of JSON per tool), in memory; ours at "
                f"`{DEFAULT}`, the default level, listing every tool (`max_tools=None`; the "
                "default budget lists at most 20 entries above 50 tools). `ours+files` has a "
                "description file per tool. Cold: the first listing of a fresh server. Server: "
                "median time of the listing "
                "chain below a pass-through middleware. Peak: tracemalloc peak of a fresh "
                "server's first listing (client included); held: what the server still holds "
                "after the client left.", "",
                table(("tools", "variant", "cold", "median", "p95", "server", "peak", "held"),
                      [(f"{r.tools:,}", r.variant, f"{r.cold_ms:,.1f} ms", duration(r.warm),
                        f"{r.warm.p95_us / 1000:,.1f} ms", f"{r.server_ms:,.1f} ms",
                        f"{r.peak_kib / 1024:,.1f} MiB", f"{r.retained_kib / 1024:,.2f} MiB")
                       for r in results.listing_scale], "rlrrrrrr"), ""]
    if results.grants:
        out += ["### Grant store", "",
                "`GrantStore` filled directly (no server): sessions live in its in-memory TTL "
                "cache; principals in py-key-value's `MemoryStore`, FastMCP's default "
                "session-state store. Memory traced by tracemalloc; lookups timed in batches of "
                "100 `has()` calls; writes: one more grant for each caller of 100-caller "
                "batches of newcomers, untraced.", "",
                table(("caller kind", "callers", "grants each", "fill (traced)", "memory",
                       "per caller", "write (untraced)", "lookup: granted",
                       "lookup: not granted"),
                      [(g.kind, f"{g.callers:,}", g.grants_each, f"{g.fill_s:,.1f} s",
                        f"{g.memory_mib:,.1f} MiB", f"{g.bytes_per_caller:,.0f} B",
                        duration(g.write), duration(g.hit), duration(g.miss))
                       for g in results.grants]), ""]
    if results.file_edits:
        out += ["### From a file write to the first read that serves it", "",
                "In-memory client reading `?tools=<one tool>` back to back after each write "
                "until the new text appears (deadline 3 s). The last kind keeps the file's "
                "size, inode and mtime (as a coarse-clock filesystem shows a quick same-length "
                "edit): a `stat` cannot see it, only the description-file watcher can.", "",
                table(("write", "served", "median", "p95", "most reads needed", "stale reads"),
                      [(f.how, f"{f.served}/{f.trials}", duration(f.write_to_served),
                        f"{f.write_to_served.p95_us / 1000:,.1f} ms" if f.write_to_served
                        else MISSING, f.max_reads, f.stale_reads) for f in results.file_edits],
                      "lrrrrr"), ""]
    return out


def _load(results: Results) -> str:
    loads = [v for k, v in results.facts.items() if k.startswith("load_") and v == v]
    if not loads:
        return ""
    span = f"1-minute load average {min(loads):.1f} to {max(loads):.1f} on 2 cores"
    if max(loads) < SHARED_LOAD:
        return (f" The machine ran nothing else ({span}, the benchmark's own); the ratios, "
                "measured interleaved, are what count.")
    return (f" The machine was shared with other jobs during this run ({span}), so absolute "
            "times are inflated and noisy; the ratios, measured interleaved, are what count.")


def _plain_vs_ours(rows: Sequence[LatencyRow]) -> str:
    return latency_table(rows, server=False)


def scaling(results: Results) -> list[str]:
    """The ``## 4. Scaling`` section, or nothing when it was not measured."""
    rows = [r for r in results.scaling if r.case not in (FIRST_LISTING_CASE, GROUPED_CASE)]
    if not rows:
        return []
    sizes = sorted({r.tools for r in rows})
    cells = {(r.case, r.op, r.tools): r for r in rows}
    out = ["## 4. Scaling (100 / 1,000 / 10,000 tools)", "",
           f"Measured {results.measured('scaling')}. "
           "Synthetic catalogs (~1 KB of JSON per tool), one description file per tool for ours "
           f"(`{DEFAULT}`, the default level). Each cell is ours / plain FastMCP, median (p95 in "
           "brackets), timed interleaved in this run. Reads compare with plain serving a static "
           "resource of the very same bytes. `local` is in memory, 2026-07-28 (anonymous since "
           "#21: calls checked by their arguments); `local, legacy` the handshake era in memory "
           "(gated, so refusals are timed there); `listing middleware`: a pass-through "
           "`on_list_tools` middleware next to ours; `lookup floor`: not ours but plain "
           "serving the same bytes after FastMCP's own `get_tool` of each name the read "
           "selects, the least a read that asks FastMCP per name can cost (issue 26); "
           "`mounted`: the catalog on a child server "
           "mounted on a gateway (fresh tool objects per request), ours on the gateway (up to "
           "1,000 tools); `proxied`: behind `create_proxy` (100 tools); `http legacy` (handshake "
           "era), `http` (2026-07-28 anonymous: calls argument-checked) and `http+auth` (bearer "
           "token, grants per principal): streamable HTTP on 127.0.0.1, both servers listing in "
           "pages of 1,000 tools (FastMCP's `list_page_size`: a 10,000-tool listing in one answer "
           "exceeds the client's 1 MiB limit per server-sent event, plain and ours alike). Fewer "
           "sizes where each request costs seconds at 10,000 tools. `tools/list` server times are "
           "FastMCP's `list_tools` with its middleware (ours included), seen by a listing hook "
           "placed outermost for that row; the wire form, the SDK's serialization and the "
           "transport are only in the client-side time. Each listing sample starts from a "
           "collected heap (`gc.collect()`, untimed, before each side's request), so neither side "
           "pays for the other's garbage." + _load(results), "",
           table(("case", "operation", *(f"{n:,} tools" for n in sizes)),
                 [(case, op, *(ratio(cells.get((case, op, n)), "") for n in sizes))
                  for case, op in dict.fromkeys((r.case, r.op) for r in rows)],
                 "ll" + "r" * len(sizes)), "",
           "<details><summary>Medians per side</summary>", "",
           table(("tools", "case", "operation", "n", "plain", "ours", "server: plain",
                  "server: ours"),
                 [(f"{r.tools:,}", r.case, r.op, r.ours.n, duration(r.plain), duration(r.ours),
                   duration(r.plain_server), duration(r.ours_server)) for r in rows],
                 "rllrrrrr"), "", "</details>", "", *_lookups(results, sizes)]
    grouped = [r for r in results.scaling if r.case == GROUPED_CASE]
    if grouped:
        out += [f"### Groups and a tool cap ({grouped[0].tools:,} tools, tagged into groups)", "",
                "One server, tool *i* tagged `g<i mod groups>`; ours capped at 40 tools. The "
                "capped listing and `groups/list` are set against plain's whole `tools/list` "
                "(what a plain client reads to learn what exists); the group read and the "
                "describe against a plain tool call answering the very same bytes. `groups/list` "
                "and a group read need the caller's visible tools: about one server-side listing "
                "without the middleware chain (FastMCP's own `list_tools`), so they are set "
                "against a call they are far from.", "", _plain_vs_ours(grouped), ""]
    first = [r for r in results.scaling if r.case == FIRST_LISTING_CASE]
    if first:
        facts = results.facts
        out += ["### First listing with a description file per tool", "",
                f"{results.config.get('first_listing_catalog', '')} ({first[0].tools} tools, one "
                "file each), fresh servers per iteration. Ours starts reading the files in a "
                "background thread when it is constructed (the constructor takes "
                f"{facts.get('constructor_us', 0):,.0f} µs; the thread "
                f"{facts.get('preload_ms', 0):,.1f} ms); requests never wait for it.", "",
                _plain_vs_ours(first), ""]
    out += _unknown(results)
    return out + _memory(results)


def _lookups(results: Results, sizes: Sequence[int]) -> list[str]:
    """FastMCP's own lookup and listing times per size, when measured."""
    facts = results.facts
    found = [n for n in sizes if f"lookup_us_{n}" in facts and f"list_us_{n}" in facts]
    if not found:
        return []
    at = " / ".join(f"{n:,}" for n in found)
    lookups = " / ".join(f"{facts[f'lookup_us_{n}']:,.0f}" for n in found)
    listings = " / ".join(f"{facts[f'list_us_{n}']:,.0f}" for n in found)
    worth = " / ".join(f"{facts[f'list_us_{n}'] / facts[f'lookup_us_{n}']:,.0f}"
                       for n in found)
    return [f"FastMCP's own lookup of one name (`get_tool`, a scan of its catalog) takes "
            f"{lookups} µs at {at} tools, its `list_tools` without middleware {listings} µs: "
            f"one listing costs as much as {worth} lookups, so it never beats a lookup per "
            "name for a read of 5 or 20. A read, a refused call and a call judged by its "
            "arguments whose tool is not kept look each name up through FastMCP (a read must: "
            "only FastMCP's own lookup says what this caller may see); a granted call and a "
            "judged one whose tool is kept leave the lookup to FastMCP's own call path.", ""]


def _unknown(results: Results) -> list[str]:
    sizes = unknown_sizes(results)
    if not sizes:
        return []
    facts = results.facts

    def cell(kind: str, n: int) -> str:
        return ms(facts[f"{kind}_ms_{n}"]) if f"{kind}_ms_{n}" in facts else MISSING

    return ["### Unknown, hidden and known names", "",
            "Reads of `resource:///tool_descriptions?tools=...` on ours, medians: 32 names that "
            "do not exist (the answer's size, bounded whatever the catalog); one unknown name, "
            "a typo of a real one (its suggestions come from the caller's listing); one known "
            "name; one hidden by component auth, which must answer (and cost) like an unknown "
            "one.", "",
            table(("tools", "32 unknown: answer", "32 unknown", "one unknown", "one known",
                   "one hidden"),
                  [(f"{n:,}", f"{facts[f'unknown_bytes_{n}'] / 1024:,.1f} KiB",
                    *(cell(k, n) for k in ("unknown", "typo", "known", "hidden")))
                   for n in sizes]), ""]


def _memory(results: Results) -> list[str]:
    if not results.memory and not results.grants:
        return []
    rows: list[Sequence[object]] = [
        (m.cache, f"{m.entries:,}", f"{m.bytes_per_entry:,.0f} B", f"{m.bound:,}", m.note)
        for m in results.memory]
    rows += [(f"grants, {g.kind}s ({g.grants_each} each)", f"{g.callers:,}",
              f"{g.bytes_per_caller:,.0f} B",
              "TTL + `max_sessions`" if g.kind == "session" else "TTL (store)",
              f"{g.memory_mib:,.1f} MiB in all") for g in results.grants]
    out = ["### Memory per cache entry", "",
           "tracemalloc's count of what each cache holds once filled (identity memo entries "
           "included), divided by its entries, next to its bound (the README lists them). "
           "Grants for many callers come from section 3.", "",
           table(("cache", "entries measured", "per entry", "bound (entries)", "set by"), rows,
                 "lrrrl"), ""]
    confirmed = results.facts.get("grant_lookup_confirmed_us")
    store = results.facts.get("grant_lookup_store_us")
    if confirmed is not None and store is not None:
        out += [f"A principal's granted lookup (`GrantStore.has`, FastMCP's default "
                f"`MemoryStore`): {confirmed:,.1f} µs when confirmed in memory, {store:,.1f} µs "
                "when it asks the store.", ""]
    return out
