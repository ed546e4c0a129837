"""Selection (issue 28): is a task's tool in front of the model, listed or answered by a query?

Rendered from ``results.selection`` (one ``SelectionPair`` per LiveMCPBench task-tool pair)
and ``config["selection"]`` (how ours ran: the listing a new caller got, the query, the
server in use); every figure is counted here from the pairs, so the table and the coverage
always agree.

Example:
    ```python
    lines = section(results)
    covered, base = coverage(results.selection, YARDSTICKS[0], 5, in_use=True)
    ```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..results import QUERY, SEARCH, YARDSTICKS, Results, SelectionPair
from .markdown import MISSING, table

TOP = (5, 10)
COVERAGE = 0.9
"""Issue 28's target: ours covers this share of the pairs a full-definition ranker finds."""
ABOVE_SEARCH = 1.5
""""Well above search alone", made a number: ours finds this many times search's pairs."""


def hits(pairs: Sequence[SelectionPair], found: Callable[[SelectionPair], bool]) -> int:
    return sum(1 for pair in pairs if found(pair))


def coverage(pairs: Sequence[SelectionPair], method: str, k: int, in_use: bool = False
             ) -> tuple[int, int]:
    """(pairs ``method`` finds in its top ``k`` that ours also has in front of the model
    at ``k``, on a new server or, ``in_use``, on a server in use; pairs ``method`` finds
    in its top ``k``)."""
    base = [p for p in pairs if p.found(method, k)]
    return hits(base, lambda p: p.ours_in_use(k) if in_use else p.ours(k)), len(base)


def by(method: str) -> Callable[[SelectionPair, int], bool]:
    """Whether a pair is in ``method``'s top k."""
    return lambda pair, k: pair.found(method, k)


def share(part: int, whole: int) -> str:
    return f"{part} / {whole} ({part / whole:.2f})" if whole else MISSING


def section(results: Results) -> list[str]:
    pairs = results.selection
    if not pairs:
        return []
    how = results.config.get("selection", {})
    total = len(pairs)
    yardsticks = [m for m in YARDSTICKS if m in pairs[0].ranks]

    def row(label: str, found: Callable[[SelectionPair, int], bool]) -> tuple[object, ...]:
        return (label, *(share(sum(1 for p in pairs if found(p, k)), total) for k in TOP))

    rows = [row(m, by(m)) for m in yardsticks]
    rows += [row("ours, new server: listed or in the query's answer", SelectionPair.ours),
             row(f"- listed alone ({how.get('listed', MISSING)} entries)",
                 lambda p, k: p.listed),
             row(f"- {QUERY} alone", by(QUERY)),
             row("ours, server in use: listed or in the query's answer",
                 SelectionPair.ours_in_use),
             row("- listed alone", lambda p, k: p.listed_in_use),
             row("full listing (budget off)", lambda p, k: p.listed_all)]
    covered = [(m, *(share(*coverage(pairs, m, k)) for k in TOP),
                *(share(*coverage(pairs, m, k, in_use=True)) for k in TOP)) for m in yardsticks]
    ceiling = [sum(1 for p in pairs if p.found(m, 5)) for m in yardsticks]
    span = f"{min(ceiling)}-{max(ceiling)}" if ceiling else MISSING
    return [f"### Selection: a task's tool listed or found by the query ({pairs[0].catalog}, "
            "LiveMCPBench tasks, issue 28)", "",
            f"Measured {results.measured('ranking') or MISSING}. Per task-tool pair ({total} "
            f"pairs, {how.get('tasks', MISSING)} tasks; `benchmarks/measure/ranking.py`): is "
            "the tool in a method's top k for the task's question? The first rows are the "
            "yardsticks, rankers over the full definitions (name, description, argument names "
            f"and theirs): our BM25, bm25s, and `{SEARCH}` (FastMCP's own BM25 over the same "
            "text: `search_tools` on a plain server). Ours, through the real server and "
            "`fastmcp.Client`: in the listing a new caller gets "
            f"(`{how.get('listing', MISSING)}`) or in the answer to "
            "`describe_tools({\"query\": <question>})`; on a new server the listing holds the "
            "catalog's first tools, on a server in use the tools its callers called most "
            f"(`toolcap.py`; {how.get('in_use', MISSING)}). On these long task texts a "
            f"lexical ranker finds {span} pairs in its top 5 over the full definitions, so "
            "finding well more than search can only come from the listing. A task names "
            "tools without their server prefix: a name on two servers counts when either is "
            "found.", "",
            table(("found", *(f"top {k}" for k in TOP)), rows), "",
            f"Coverage: of the pairs a yardstick finds in its top k, how many ours has in "
            f"front of the model at k (issue 28's target: >= {COVERAGE} at 5).", "",
            table(("pairs found by", *(f"top {k}, new server" for k in TOP),
                   *(f"top {k}, in use" for k in TOP)), covered), ""]
