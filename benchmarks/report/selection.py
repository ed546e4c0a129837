"""Selection (issue 28): is a task's tool in front of the model, listed or answered by a query?

Rendered from ``results.selection`` (one ``SelectionPair`` per LiveMCPBench task-tool pair)
and ``config["selection"]`` (how ours ran: the listing a new caller got, the query or its
stand-in); every figure is counted here from the pairs, so the table, the coverage and the
misses always agree.

Example:
    ```python
    lines = section(results)
    covered, base = coverage(results.selection, FULL_RANKERS[0], 5)
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..results import FULL_RANKERS, QUERY, SEARCH, Results, SelectionPair
from .markdown import MISSING, table

TOP = (5, 10)
COVERAGE = 0.9
"""Issue 28's target: ours covers this share of the pairs a full-definition ranker finds."""
ABOVE_SEARCH = 1.5
""""Well above search alone", made a number: ours finds this many times search's pairs."""
QUESTION_CHARS = 70


def hits(pairs: Sequence[SelectionPair], found: Callable[[SelectionPair], bool]) -> int:
    return sum(1 for pair in pairs if found(pair))


def coverage(pairs: Sequence[SelectionPair], method: str, k: int, warm: bool = False
             ) -> tuple[int, int]:
    """(pairs ``method`` finds in its top ``k`` that ours also has in front of the model
    at ``k``, on a new server or, ``warm``, the estimated warm one; pairs ``method`` finds
    in its top ``k``)."""
    base = [p for p in pairs if p.found(method, k)]
    return hits(base, lambda p: p.ours_warm(k) if warm else p.ours(k)), len(base)


def by(method: str) -> Callable[[SelectionPair, int], bool]:
    """Whether a pair is in ``method``'s top k."""
    return lambda pair, k: pair.found(method, k)


def share(part: int, whole: int) -> str:
    return f"{part} / {whole} ({part / whole:.2f})" if whole else MISSING


def _rank(place: int | None) -> str:
    return MISSING if place is None else str(place)


def section(results: Results) -> list[str]:
    pairs = results.selection
    if not pairs:
        return []
    how = results.config.get("selection", {})
    total = len(pairs)
    rankers = [m for m in FULL_RANKERS if m in pairs[0].ranks]
    def row(label: str, found: Callable[[SelectionPair, int], bool]) -> tuple[object, ...]:
        return (label, *(share(sum(1 for p in pairs if found(p, k)), total) for k in TOP))

    rows = [row(f"(a) {m}", by(m)) for m in rankers]
    rows += [row(f"(b) {SEARCH} (`search_tools`)", by(SEARCH)),
             row("(c) ours: listed, or in the query's answer", SelectionPair.ours),
             row(f"- listed alone ({how.get('listed', MISSING)} entries)",
                 lambda p, k: p.listed),
             row(f"- {QUERY} alone", by(QUERY)),
             row(f"(c, warm) the {how.get('popular_slots', MISSING)} tools the other tasks use "
                 "most, or in the query's answer (estimate)", SelectionPair.ours_warm),
             row("(d) the full listing (budget off)", lambda p, k: p.listed_all)]
    covered = [(m, *(share(*coverage(pairs, m, k)) for k in TOP),
                *(share(*coverage(pairs, m, k, warm=True)) for k in TOP)) for m in rankers]
    first = rankers[0] if rankers else None
    missed = [p for p in pairs if first and p.found(first, 5) and not p.ours(5)]
    return [f"### Selection: a task's tool listed or found by the query ({pairs[0].catalog}, "
            "LiveMCPBench tasks, issue 28)", "",
            f"Measured {results.measured('ranking') or MISSING}, with the subsection above. "
            f"Per task-tool pair ({total} pairs, {how.get('tasks', MISSING)} tasks; "
            "`benchmarks/measure/ranking.py`), where the task's tool is: (a) in the top k of a "
            "ranker over the full definitions (name, description, argument names and "
            f"descriptions); (b) among the top k `{SEARCH}` returns for the task's question "
            "(a plain FastMCP server with the catalog, `search_tools` called through "
            "`fastmcp.Client`); (c) in the listing a new caller of ours gets "
            f"(`{how.get('listing', MISSING)}`), or in the top k of the answer to "
            f"`describe_tools({{\"query\": <question>}})` ({how.get('query', MISSING)}), "
            "both through the real server and `fastmcp.Client`; (d) in the listing with the "
            "budget off (every tool). (c, warm) estimates a server whose callers ran the other "
            "tasks' tools: its listing would start a new caller with the tools called most "
            "(`toolcap.py`), here as many as (c)'s listing has tool entries, ties in catalog "
            "order; counted, not served (the server snapshots its call counts hourly). A task "
            "names tools without their server prefix: a name on two servers counts when "
            "either is found.", "",
            table(("found", *(f"top {k}" for k in TOP)), rows), "",
            f"Coverage: of the pairs a full-definition ranker finds in its top k, how many "
            f"(c) has in front of the model at k (issue 28's target: >= {COVERAGE} at 5).", "",
            table(("pairs found by", *(f"top {k}: (c) also" for k in TOP),
                   *(f"top {k}: (c, warm) also" for k in TOP)), covered), "",
            *([f"Pairs (a) {first} finds in its top 5 that (c) misses (places: 1-based, "
               f"{MISSING} = not in the top 10):", "",
               table(("task question", "tool", *(m.split(", ")[-1] for m in rankers),
                      "search", "query"),
                     [(p.question[:QUESTION_CHARS].replace("|", "/") + (
                         "…" if len(p.question) > QUESTION_CHARS else ""), f"`{p.tool}`",
                       *(_rank(p.ranks.get(m)) for m in rankers), _rank(p.ranks.get(SEARCH)),
                       _rank(p.ranks.get(QUERY))) for p in missed], "llrrrr"), ""]
              if missed else [])]
