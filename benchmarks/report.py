"""Render a run's results as BENCHMARKS.md: targets first, then one section per question.

Pure formatting: every number comes from ``Results``; nothing here measures. Figures are
linked relative to the report, so the file renders on GitHub and in a local preview.

Example:
    ```python
    Path("BENCHMARKS.md").write_text(render(results, figures, Path("BENCHMARKS.md")))
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from . import host_report
from .markdown import MISSING, duration, figure, number, saved, table
from .replay import DEFAULT
from .results import LatencyRow, Results
from .scaling_report import render_scaling
from .targets import HEADLINE_CATALOG, judge

LISTING_MODES = ("plain", "typed", "minimal", "skeleton", "regex", "bm25")
SESSION_MODES = ("typed+2", "typed+5", "typed+5 largest", "minimal+2", "minimal+5",
                 "skeleton+2", "skeleton+5", "regex+search", "bm25+search", "extras")
JSON_MODES = ("plain", "typed", "minimal", "skeleton", "typed+2", "typed+5")
WIRE_MODES = ("plain", "typed", "minimal", "skeleton", "regex", "bm25", "typed+2", "typed+5",
              "regex+search", "bm25+search")


def _headline(results: Results) -> list[str]:
    lines: list[str] = []
    plain = results.token(HEADLINE_CATALOG, "plain")
    ours = results.token(HEADLINE_CATALOG, DEFAULT)
    session = results.token(HEADLINE_CATALOG, f"{DEFAULT}+2")
    if plain and ours and session:
        lines.append(
            f"- **{HEADLINE_CATALOG}** ({plain.tools} tools), default level: the listing the "
            f"model sees drops from **{plain.fields:,} to {ours.fields:,} tokens** "
            f"(-{saved(ours.fields, plain.fields)}), every name still listed; a session that "
            f"then fetches 2 tools costs **{session.fields:,}** (per-field count; as one JSON "
            f"array: {plain.json:,} → {ours.json:,}, session {session.json:,})."
        )
    call = results.latency_row("memory", "tools/call (granted)")
    listing = results.latency_row("memory", "tools/list")
    read = results.latency_row("memory", "resources/read 5 (hit)")
    tools = results.config.get("latency_tools")
    if call and listing:
        lines.append(
            f"- Cost in memory on {tools} tools: tools/call **{call.ratio_median:.2f}x** "
            f"plain (median), tools/list **{listing.ratio_median:.2f}x** (smaller listings "
            f"serialize faster)."
        )
    if read and read.ours_server:
        lines.append(f"- Reading 5 cached descriptions: **{duration(read.ours_server)}** "
                     "server side (median, in memory).")
    biggest = [r for r in results.listing_scale if r.variant == "ours"]
    if biggest:
        top = max(biggest, key=lambda r: r.tools)
        lines.append(f"- {top.tools:,} tools: our listing takes {duration(top.warm)} in memory; "
                     f"the server keeps {top.retained_kib / 1024:,.1f} MiB after the first one.")
    return lines


def _targets(results: Results) -> str:
    rows = [(t.name, t.goal, t.measured,
             MISSING if t.met is None else ("**yes**" if t.met else "**no**"))
            for t in judge(results)]
    return table(("target", "goal", "measured", "met"), rows, "llll")


def _tokens(results: Results, figures: dict[str, Path], report: Path) -> list[str]:
    catalogs = list(dict.fromkeys(r.catalog for r in results.tokens))
    if not catalogs:
        return []
    out = ["## 1. Tokens", ""]
    out += figure(figures, "tokens_by_mode", "tokens per catalog by mode", report)
    out += [
        "Counted with o200k_base (`bpe_openai.get_encoding('o200k_base')`) over what an "
        "in-memory `fastmcp.Client` received from a FastMCP server replaying each catalog. "
        "**Model-visible, per field** = tokens(name) + tokens(description) + tokens(compact "
        "`inputSchema`) per listed tool (hosts rewrite the listing into their own function "
        "format, so the JSON around those fields is not what the model reads). **As one JSON "
        "array** counts `[{\"name\",\"description\",\"inputSchema\"}, ...]` with keys and "
        "punctuation. **Wire** is the whole JSON-RPC result. JSON is "
        "`json.dumps(x, separators=(',', ':'))`. Ours serves no description files here and "
        "lists its `describe_tools` bridge tool (on by default); \"names\" counts the "
        "catalog's tools a model can name after the step.",
        "",
        "### Listing, model-visible (per field)",
        "",
    ]
    rows: list[Sequence[object]] = []
    for c in catalogs:
        cells: list[object] = [c, _tool_count(results, c)]
        cells += [number(getattr(results.token(c, mode), "fields", None)) for mode in LISTING_MODES]
        plain, ours = results.token(c, "plain"), results.token(c, DEFAULT)
        cells.append(saved(ours.fields, plain.fields) if plain and ours else MISSING)
        regex = results.token(c, "regex")
        cells.append(f"{number(ours.names_visible if ours else None)} / "
                     f"{number(regex.names_visible if regex else None)}")
        rows.append(cells)
    out += [table(("catalog", "tools", *LISTING_MODES, f"{DEFAULT} saves",
                   "names: ours / search"),
                   rows), ""]
    out += ["### Sessions, model-visible (per field)", "",
            "Listing plus one read of the full definitions of the session's first 2 or 5 "
            "tools (or the 5 largest); a search transform's listing plus one search (regex "
            "pattern / BM25 query aimed at the first tool). Plain FastMCP's session is its "
            "listing. `extras`: our instructions paragraph, resource entry and prompt entry, "
            "paid once if the host shows them (not included in the other columns).", ""]
    out += [_by_mode(results, catalogs, ("plain", *SESSION_MODES), "fields"), ""]
    out += ["Session tools: " + "; ".join(
        f"{c}: {', '.join(scenario_for_name(results, c))}" for c in catalogs), ""]
    out += ["### Model-visible as one JSON array (the issue's count)", ""]
    out += [_by_mode(results, catalogs, JSON_MODES, "json"), ""]
    out += ["### Whole wire result", ""]
    out += [_by_mode(results, catalogs, WIRE_MODES, "wire"), "",
            "Ours keeps titles, annotations, icons and `_meta` in the listing (hosts use "
            "them), which is why its wire result shrinks less than what the model sees.", ""]
    if results.anatomy:
        out += ["### Where listing tokens go (per field)", ""]
        rows = [(a.catalog, a.mode, a.listed, number(a.names), number(a.descriptions),
                 number(a.schemas)) for a in results.anatomy]
        out += [table(("catalog", "mode", "tools listed", "names", "descriptions",
                        "inputSchema"), rows, "llrrrr"), ""]
    out += _ranking(results)
    if results.sweep:
        out += [f"### `summary_max_chars` on {results.sweep[0].catalog} (default level)", ""]
        rows = [(s.summary_max_chars, number(s.fields), number(s.json)) for s in results.sweep]
        out += [table(("summary_max_chars", "per field", "as JSON array"), rows), ""]
    return out


def _ranking(results: Results) -> list[str]:
    """What the listing keeps of a tool's meaning (``ranking.py``)."""
    if not results.ranking:
        return []
    catalog = results.ranking[0].catalog
    full = {(r.ranker, r.k): r for r in results.ranking if r.summary_max_chars is None}
    out = [f"### What the listing keeps of a tool's meaning ({catalog}, LiveMCPBench tasks)",
           "",
           "An offline BM25 ranker (`benchmarks/ranking.py`) scores every tool of the catalog "
           "against each task's question, once over the full definitions (name, description, "
           "argument names and descriptions) and once over what the default listing shows "
           "(name, one-line summary, listed argument names); a task's tool counts as found "
           "when it ranks in the top k. Ratio: listing / full definitions (target >= 0.9). "
           "Two rankers (our BM25, shared with section 5, and PyPI `bm25s` with English stop "
           "words): with 114 task tools a ranker's details move the counts by a few either way.",
           ""]
    rows = []
    for r in results.ranking:
        base = full.get((r.ranker, r.k))
        ratio = (f"{r.found / base.found:.2f}" if base is not None and base.found
                 else MISSING)
        chars = MISSING if r.summary_max_chars is None else str(r.summary_max_chars)
        rows.append((r.ranker, r.source, chars, r.k, f"{r.found} / {r.total}",
                     f"{r.recall:.1%}", ratio))
    out += [table(("ranker", "ranked over", "summary_max_chars", "top k", "found", "recall",
                   "ratio"), rows, "lllrrrr"), ""]
    return out


def _by_mode(results: Results, catalogs: list[str], modes: Sequence[str], count: str) -> str:
    """One row per catalog, one column per mode: that mode's ``count`` (fields/json/wire)."""
    rows = [[c, *(number(getattr(results.token(c, mode), count, None)) for mode in modes)]
            for c in catalogs]
    return table(("catalog", *modes), rows)


def scenario_for_name(results: Results, catalog: str) -> list[str]:
    picks: list[str] = results.config.get("session_tools", {}).get(catalog, [])
    return picks


def _tool_count(results: Results, catalog: str) -> int:
    row = results.token(catalog, "plain")
    return row.tools if row else 0


def _latency_table(rows: list[LatencyRow]) -> str:
    body = [
        (r.op, r.ours.n, duration(r.plain), duration(r.ours), f"{r.ratio_median:.2f}x",
         f"{r.ratio_p95:.2f}x", duration(r.plain_server), duration(r.ours_server))
        for r in rows
    ]
    return table(("operation", "n", "plain", "ours", "ratio", "p95 ratio", "server: plain",
                   "server: ours"), body)


def _latency(results: Results, figures: dict[str, Path], report: Path) -> list[str]:
    if not results.latency:
        return []
    cfg = results.config
    out = ["## 2. Cost", ""]
    out += figure(figures, "latency_ratios", "latency ratios", report)
    out += [
        f"Catalog: **{cfg.get('latency_catalog')}** ({cfg.get('latency_tools')} tools). Two "
        "servers, plain FastMCP and ours (default level, one description file per tool), "
        "connected at once and timed back to back, alternating which goes first, in one "
        "process (HTTP servers run in it too, on 127.0.0.1, as `run_server_async` does). "
        "Client-side time is the awaited request of the raw client call "
        "(`list_tools_mcp(cache_mode=\"bypass\")`, `call_tool_mcp`, `read_resource_mcp`). "
        "**Server side** is measured by a pass-through middleware added before ours: our hook "
        "plus FastMCP's handler, without JSON-RPC framing, transport or serialization "
        "(it has no `on_list_tools`, see Findings, so listings have no server column). "
        "Medians and p95 per side; ratios are ours / plain.",
        "",
        "- `tools/call (granted)`: a tool whose description was read, called with its "
        "required arguments; `(refused)`: ours answers `TOOL_DESCRIPTION_REQUIRED` where "
        "plain runs the tool (only where ours gates).",
        "- `resources/read N`: plain serves the same JSON as a static resource, so the ratio "
        "is the price of building definitions on demand. `hit`: files unchanged; `miss`: "
        "every file of the selection touched (new mtime) before each read, so it is "
        "stat'ed, re-read, parsed, merged and hashed.",
        "- Transports: `memory` (default client, 2026-07-28; grants per client stream), "
        "`http` (streamable HTTP, 2026-07-28 without auth: no grants, ours checks each "
        "call's arguments against the schema, `anonymous=\"validate\"`), "
        "`http legacy` (handshake era; grants per `Mcp-Session-Id`), "
        "`http+auth` (2026-07-28 with a bearer token; grants per principal in FastMCP's "
        "session-state store).",
        "",
    ]
    per_catalog = [r for r in results.latency if r.op.startswith("tools/list ") and "(" in r.op
                   and "cold" not in r.op]
    for transport in dict.fromkeys(r.transport for r in results.latency):
        rows = [r for r in results.latency if r.transport == transport and r not in per_catalog]
        if rows:
            out += [f"### {transport}", "", _latency_table(rows), ""]
    if per_catalog:
        out += ["### tools/list per catalog (memory, default level, no files)", "",
                _latency_table(per_catalog), ""]
    return out


def _scale(results: Results, figures: dict[str, Path], report: Path) -> list[str]:
    if not (results.listing_scale or results.grants or results.file_edits):
        return []
    out = ["## 3. Scale", ""]
    if results.listing_scale:
        out += figure(figures, "scale_listing", "listing at scale", report)
        out += ["Synthetic catalogs (seeded, ~1 KB of JSON per tool), in memory. `ours+files` "
                "has a description file per tool. Cold: the first listing of a fresh server. "
                "Server: median time of the listing chain below a pass-through middleware. "
                "Peak: tracemalloc peak of a fresh server's first listing (client included); "
                "held: what the server still holds after the client left.", ""]
        rows: list[Sequence[object]] = [
            (f"{r.tools:,}", r.variant, f"{r.cold_ms:,.1f} ms", duration(r.warm),
             f"{r.warm.p95_us / 1000:,.1f} ms", f"{r.server_ms:,.1f} ms",
             f"{r.peak_kib / 1024:,.1f} MiB", f"{r.retained_kib / 1024:,.2f} MiB")
            for r in results.listing_scale
        ]
        out += [table(("tools", "variant", "cold", "median", "p95", "server", "peak", "held"),
                       rows, "rlrrrrrr"), ""]
    if results.grants:
        out += ["### Grant store", "",
                "`GrantStore` filled directly (no server): sessions live in its in-memory TTL "
                "cache; principals in py-key-value's `MemoryStore`, FastMCP's default "
                "session-state store. Memory traced by tracemalloc; lookups timed in batches "
                "of 100 `has()` calls; writes: one more grant for each caller of 100-caller "
                "batches of newcomers, untraced.", ""]
        rows = [(g.kind, f"{g.callers:,}", g.grants_each, f"{g.fill_s:,.1f} s",
                 f"{g.memory_mib:,.1f} MiB", f"{g.bytes_per_caller:,.0f} B", duration(g.write),
                 duration(g.hit), duration(g.miss)) for g in results.grants]
        out += [table(("caller kind", "callers", "grants each", "fill (traced)", "memory",
                        "per caller", "write (untraced)", "lookup: granted",
                        "lookup: not granted"), rows), ""]
    if results.file_edits:
        out += ["### From a file write to the first read that serves it", "",
                "In-memory client reading `?tools=<one tool>` back to back after each write "
                "until the new text appears (deadline 3 s). The last kind keeps the file's "
                "size, inode and mtime (as a coarse-clock filesystem shows a quick same-length "
                "edit): a `stat` cannot see it, only the description-file watcher can.", ""]
        rows = [(f.how, f"{f.served}/{f.trials}", duration(f.write_to_served),
                 f"{f.write_to_served.p95_us / 1000:,.1f} ms" if f.write_to_served else MISSING,
                 f.max_reads, f.stale_reads) for f in results.file_edits]
        out += [table(("write", "served", "median", "p95", "most reads needed",
                        "stale reads"), rows, "lrrrrr"), ""]
    return out


def render(results: Results, figures: dict[str, Path], report: Path, command: str) -> str:
    """The whole Markdown report."""
    out = [
        "# Benchmarks: what progressive disclosure saves and costs",
        "",
        f"Generated by `{command}` in {results.seconds:,.0f} s on {results.machine['date']}. "
        "Do not edit by hand: run it again. Raw numbers: `results.json` beside the figures' "
        "folder.",
        "",
        *_headline(results),
        *host_report.headline(results),
        "",
        "## Targets",
        "",
        _targets(results),
        "",
        "## Machine and versions",
        "",
        table(("", ""), results.machine.items(), "ll"),
        "",
    ]
    out += _tokens(results, figures, report)
    out += host_report.section(results, figures, report)
    out += _latency(results, figures, report)
    out += _scale(results, figures, report)
    out += render_scaling(results)
    if results.findings:
        out += ["## Findings", "", *[f"- {f}" for f in results.findings], ""]
    out += [
        "## Reproduce",
        "",
        "```bash",
        "pip install -e \".[dev]\" matplotlib   # matplotlib only for the figures",
        "python -m benchmarks                  # full run (~15 min): this file, figures",
        "python -m benchmarks --smoke --out /tmp/bench   # ~15 s, smallest catalog (CI)",
        "```",
        "",
        "The corpus is read from `../shared/corpus` (or `$FASTMCP_PROGRESSIVE_CORPUS`).",
        "",
    ]
    return "\n".join(out)

