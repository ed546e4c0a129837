"""Plain-language take-aways, each computed from the results (never typed in by hand), so a
re-run that changes the picture changes the text, and one whose data is missing is left out.

Example:
    ```python
    lines = derive(results)
    ```
"""

from __future__ import annotations

from ..results import BUDGETED, DEFAULT, HEADLINE_CATALOG, Results

H = HEADLINE_CATALOG


def _listing_anatomy(results: Results) -> str | None:
    parts = next((a for a in results.anatomy if a.catalog == H and a.mode == DEFAULT), None)
    plain, ours = results.token(H, "plain"), results.token(H, DEFAULT)
    if parts is None or plain is None or ours is None:
        return None
    return (f"{H} at the default level with every tool listed (`max_tools=None`) lists "
            f"{parts.listed} tools (bridge included): names "
            f"{parts.names:,}, one-line descriptions {parts.descriptions:,}, typed schemas "
            f"{parts.schemas:,} tokens = {ours.fields:,} per field (plain: {plain.fields:,}, "
            f"-{1 - ours.fields / max(plain.fields, 1):.0%}). The schemas are most of it: "
            "every argument keeps its name and a plain type, which hosts that read the listing "
            "as the contract need; `minimal` drops them for clients known to pass undeclared "
            "arguments.")


def _search(results: Results) -> str | None:
    ours, listing = results.token(H, f"{DEFAULT}+2"), results.token(H, "bm25")
    bm25, regex = results.token(H, "bm25+search"), results.token(H, "regex+search")
    budgeted = results.token(H, f"{BUDGETED}+2")
    if ours is None or listing is None or bm25 is None or regex is None:
        return None
    return (f"Search transforms list only two tools ({listing.fields:,} tokens for BM25) but the "
            f"model can name none of the catalog's tools before searching; one search returning "
            f"full definitions costs {regex.fields:,} (regex) / {bm25.fields:,} (BM25) in total "
            f"on {H}, against {ours.fields:,} for ours with all names listed and 2 tools "
            "fetched" + (f", {budgeted.fields:,} within the default listing budget "
                         f"({budgeted.names_visible} names listed)."
                         if budgeted is not None else "."))


def _listing_hook(results: Results) -> str | None:
    hooked = next((r for r in results.latency if r.transport == "memory + listing middleware"
                   and r.op.startswith("resources/read")), None)
    base = hooked and results.latency_row("memory", hooked.op)
    if hooked is None or not base or base.ours_server is None or hooked.ours_server is None:
        return None
    return (f"Another middleware with an `on_list_tools` hook next to ours (a logger, a timer, "
            f"AuthMiddleware) makes each description read and refused call check its tools "
            f"against the caller's listing (`access/catalog.py`, `Catalog.tool` → "
            f"`Catalog.names`): {hooked.op} on {results.config.get('latency_tools')} tools goes "
            f"from {base.ours_server.median_us / 1000:.2f} ms to "
            f"{hooked.ours_server.median_us / 1000:.2f} ms server side. The benchmark's own "
            "timer therefore has no `on_list_tools`.")


def _principal_store(results: Results) -> str | None:
    principal = next((g for g in results.grants if g.kind == "principal"), None)
    session = next((g for g in results.grants if g.kind == "session"), None)
    if principal is None or session is None:
        return None
    return (f"Principal grants in FastMCP's default `MemoryStore` cost "
            f"{principal.hit.median_us:.0f} µs per granted lookup and "
            f"{principal.write.median_us:.0f} µs per grant written (`GrantStore.add` awaits one "
            f"`put` per tool, so a read of 5 tools pays 5), against {session.hit.median_us:.1f} "
            f"µs / {session.write.median_us:.1f} µs for an in-memory session; "
            f"{principal.bytes_per_caller:,.0f} B per principal with one grant, "
            f"{session.bytes_per_caller:,.0f} B per session with {session.grants_each}.")


def _edits(results: Results) -> str | None:
    coarse = next((f for f in results.file_edits if "mtime" in f.how), None)
    if coarse is None:
        return None
    if coarse.served < coarse.trials or coarse.write_to_served is None:
        return (f"An edit that keeps size, inode and mtime was served in only "
                f"{coarse.served}/{coarse.trials} trials within the deadline.")
    return (f"Edits a `stat` can see are served by the very next read; one it cannot see "
            f"(same size, inode and mtime) is served once the watcher reports it: median "
            f"{coarse.write_to_served.median_us / 1000:.0f} ms, p95 "
            f"{coarse.write_to_served.p95_us / 1000:.0f} ms.")


def _listing_time(results: Results) -> str | None:
    """Where a repeated listing's time goes: the server (ours' share of the work) against
    the rest, which follows the size of the listing (#19)."""
    rows = sorted((r for r in results.scaling if r.transport == "local"
                   and r.op == "tools/list" and r.plain_server and r.ours_server),
                  key=lambda r: r.tools)
    cells = []
    for row in rows:
        assert row.plain_server is not None and row.ours_server is not None
        plain_rest = row.plain.median_us - row.plain_server.median_us
        ours_rest = row.ours.median_us - row.ours_server.median_us
        if plain_rest <= 0 or ours_rest <= 0:
            continue
        cells.append(f"{row.tools:,} tools: server {row.ours_server.median_us / 1000:,.1f} ms "
                     f"(plain {row.plain_server.median_us / 1000:,.1f}), the rest "
                     f"{ours_rest / 1000:,.1f} ms (plain {plain_rest / 1000:,.1f}, "
                     f"{ours_rest / plain_rest:.2f}x)")
    if not cells:
        return None
    return ("Where a repeated `tools/list` in memory spends its time (section 4, medians; "
            "server: FastMCP's listing with its middleware, ours included; the rest: the "
            "answer serialized, validated by the client, carried): " + "; ".join(cells) + ". "
            "The rest is most of it and follows the bytes listed: at `typed` every argument "
            "keeps its name and type, so that share is the level's price, not ours' waste "
            "(`minimal` lists no arguments). Ours' own work on a repeated listing is one "
            "`stat` per description file (an edit is served by the very next listing) and "
            "lookups: a profile (#19) found the listed schema derived twice per tool on a "
            "first listing and deep-copied, the bridges' places found afresh on every listing, "
            "and every file stat'ed three times for a client speaking the grouping and "
            "resolution extensions; now the schema is built once, the bridges' places once "
            "per change, and each file stat'ed once per listing.")


def derive(results: Results) -> list[str]:
    """Every finding the results have data for."""
    found = (f(results) for f in (_listing_anatomy, _search, _listing_hook, _listing_time,
                                  _principal_store, _edits))
    return [text for text in found if text]
