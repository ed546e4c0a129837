"""Section 1 of the report: tokens per catalog and level, what they keep, and a budget sweep.

Example:
    ```python
    lines = section(results, "benchmarks/figures")
    ```
"""

from __future__ import annotations

from collections.abc import Sequence

from fastmcp_progressive import ListingSettings

from ..results import BUDGETED, DEFAULT, RankRow, Results
from . import selection
from .markdown import MISSING, figure, number, saved, table

LISTING_MODES = ("plain", "typed", "minimal", "skeleton", BUDGETED, "regex", "bm25")
SESSION_MODES = ("plain", "typed+2", "typed+5", "typed+5 largest", "minimal+2", "minimal+5",
                 "skeleton+2", "skeleton+5", f"{BUDGETED}+2", f"{BUDGETED}+5", "regex+search",
                 "bm25+search", "extras")
JSON_MODES = ("plain", "typed", "minimal", "skeleton", BUDGETED, "typed+2", "typed+5")
WIRE_MODES = ("plain", "typed", "minimal", "skeleton", BUDGETED, "regex", "bm25", "typed+2",
              "typed+5", "regex+search", "bm25+search")


def _by_mode(results: Results, catalogs: list[str], modes: Sequence[str], count: str) -> str:
    """One row per catalog, one column per mode: that mode's ``count`` (fields/json/wire)."""
    return table(("catalog", *modes), [
        [c, *(number(getattr(results.token(c, m), count, None)) for m in modes)]
        for c in catalogs])


def section(results: Results, figures: str) -> list[str]:
    catalogs = list(dict.fromkeys(r.catalog for r in results.tokens))
    if not catalogs:
        return []
    rows = []
    for c in catalogs:
        plain, ours, budgeted, regex = (results.token(c, m)
                                        for m in ("plain", DEFAULT, BUDGETED, "regex"))
        rows.append([c, plain.tools if plain else 0,
                     *(number(getattr(results.token(c, m), "fields", None)) for m in LISTING_MODES),
                     *(saved(mine.fields, plain.fields) if plain and mine else MISSING
                       for mine in (ours, budgeted)),
                     " / ".join(number(row.names_visible if row else None)
                                for row in (ours, budgeted, regex))])
    sessions = results.config.get("session_tools", {})
    out = ["## 1. Tokens", "", *figure(figures, "tokens_by_mode", "tokens per catalog by mode"),
           f"Measured {results.measured('tokens')}. Counted with o200k_base "
           "(`bpe_openai.get_encoding('o200k_base')`) over what an in-memory `fastmcp.Client` "
           "received from a FastMCP server replaying each catalog, ours at each listing level "
           f"(`{DEFAULT}` is the default), each **listing every tool** (`max_tools=None`: the "
           f"level's whole listing), and ours as one line ships it: **`{BUDGETED}`** = "
           f"`ProgressiveDisclosure()`, the `{DEFAULT}` level within the default listing budget "
           "(`max_tools=\"auto\"`: every tool up to 50 tools, above at most 20 entries plus the "
           "`describe_tools` and `run_tool` bridges; the rest found through `describe_tools`), "
           f"so `{BUDGETED}` equals `{DEFAULT}` up to 50 tools. **Model-visible, per field** = "
           "tokens(name) + tokens(description) + tokens(compact `inputSchema`) per listed tool "
           "(hosts rewrite the listing into their own function format, so the JSON around those "
           "fields is not what the model reads). **As one JSON array** counts "
           "`[{\"name\",\"description\",\"inputSchema\"}, ...]` with keys and punctuation. "
           "**Wire** is the whole JSON-RPC result. JSON is `json.dumps(x, separators=(',', "
           "':'))`. Ours serves no description files here and lists its `describe_tools` bridge "
           "tool (on by default); \"names\" counts the catalog's tools a model can name after "
           "the step (the catalog's size for a listing of every tool).", "",
           "### Listing, model-visible (per field)", "",
           table(("catalog", "tools", *LISTING_MODES, f"{DEFAULT} saves", f"{BUDGETED} saves",
                  f"names: {DEFAULT} / {BUDGETED} / search"), rows), "",
           "### Sessions, model-visible (per field)", "",
           "Listing plus one read of the full definitions of the session's first 2 or 5 tools "
           f"(or the 5 largest; for `{BUDGETED}` the read a tool outside the budget needs, "
           "through `describe_tools` or the resource); a search transform's listing plus one "
           "search (regex pattern / BM25 query aimed at the first tool). Plain FastMCP's session "
           "is its listing. `extras`: our instructions paragraph, resource entry and prompt "
           f"entry (of `{BUDGETED}`), paid once if the host shows them (not included in the other "
           "columns).", "",
           _by_mode(results, catalogs, SESSION_MODES, "fields"), "",
           "Session tools: " + "; ".join(f"{c}: {', '.join(sessions.get(c, []))}"
                                         for c in catalogs), "",
           "### Model-visible as one JSON array (the issue's count)", "",
           _by_mode(results, catalogs, JSON_MODES, "json"), "",
           "### Whole wire result", "", _by_mode(results, catalogs, WIRE_MODES, "wire"), "",
           "Ours keeps titles, annotations, icons and `_meta` in the listing (hosts use them), "
           "which is why its wire result shrinks less than what the model sees.", ""]
    if results.anatomy:
        out += ["### Where listing tokens go (per field)", "",
                table(("catalog", "mode", "tools listed", "names", "descriptions", "inputSchema"),
                      [(a.catalog, a.mode, a.listed, number(a.names), number(a.descriptions),
                        number(a.schemas)) for a in results.anatomy], "llrrrr"), ""]
    out += _ranking(results) + selection.section(results)
    if results.sweep:
        out += [f"### `summary_max_chars` on {results.sweep[0].catalog} (default level)", "",
                table(("summary_max_chars", "per field", "as JSON array"),
                      [(s.summary_max_chars, number(s.fields), number(s.json))
                       for s in results.sweep]), ""]
    return out


def _ranking(results: Results) -> list[str]:
    """What the listing keeps of a tool's meaning (``measure/ranking.py``)."""
    if not results.ranking:
        return []
    full = {(r.ranker, r.k): r for r in results.ranking if r.summary_max_chars is None}

    def share(r: RankRow) -> str:
        base = full.get((r.ranker, r.k))
        return f"{r.found / base.found:.2f}" if base is not None and base.found else MISSING

    chars = ListingSettings.summary_max_chars
    rankers = list(dict.fromkeys(r.ranker for r in results.ranking))
    at_default = {(r.ranker, r.k): r for r in results.ranking if r.summary_max_chars == chars}
    ks = sorted({r.k for r in results.ranking})
    return [f"### What the listing keeps of a tool's meaning ({results.ranking[0].catalog}, "
            "LiveMCPBench tasks)", "",
            "A ranker (`benchmarks/measure/ranking.py`) scores every tool of the catalog "
            "against each task's question, once over the full definitions (name, description, "
            "argument names and descriptions) and once over what the default listing shows "
            "(name, one-line summary, listed argument names); a task's tool counts as found when "
            "it ranks in the top k. Ratio: listing / full definitions (issue 19's target: >= "
            f"0.9 at the default `summary_max_chars`, {chars}). Two rankers, our BM25 (also "
            "section 5's) and PyPI `bm25s` with English stop words: with 114 task tools a "
            "ranker's details move the counts by a few either way.", "",
            table(("ranker", *(f"top {k}: ratio" for k in ks)),
                  [(name, *(share(at_default[(name, k)]) if (name, k) in at_default else MISSING
                            for k in ks)) for name in rankers]), "",
            table(("ranker", "ranked over", "summary_max_chars", "top k", "found", "recall",
                   "ratio"),
                  [(r.ranker, r.source, MISSING if r.summary_max_chars is None
                    else r.summary_max_chars, r.k, f"{r.found} / {r.total}", f"{r.recall:.1%}",
                    share(r)) for r in results.ranking], "lllrrrr"), ""]
