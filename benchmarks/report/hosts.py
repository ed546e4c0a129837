"""The "What hosts send the model" section, its headline line, and the cuts it judges.

Issue 19's targets, on github-mcp-server at the default level: the ``tools`` array each
framework sends at least 60% below plain in every framework and 70% in the median one; the
whole session of a scripted first use at least 50% below plain in every framework.

Example:
    ```python
    lines = section(results, "benchmarks/figures")   # [] when hosts were not measured
    ```
"""

from __future__ import annotations

from statistics import median

from ..results import HEADLINE_CATALOG, HOST_LISTINGS, HostRow, Results
from .markdown import MISSING, figure, table

TOOLS_CUT = 0.60
MEDIAN_TOOLS_CUT = 0.70
SESSION_CUT = 0.50


def find(results: Results, host: str, catalog: str, listing: str) -> HostRow | None:
    return next((r for r in results.hosts
                 if (r.host, r.catalog, r.listing) == (host, catalog, listing)), None)


def hosts(results: Results) -> list[str]:
    return list(dict.fromkeys(r.host for r in results.hosts))


def cut(row: HostRow | None, plain: HostRow | None, session: bool = False) -> float | None:
    """How far below plain ``row``'s tools array (or whole session) is: 0.85 = 85% fewer."""
    if row is None or plain is None:
        return None
    ours, theirs = ((row.session_tokens, plain.session_tokens) if session
                    else (row.tokens, plain.tokens))
    return None if ours < 0 or theirs <= 0 else 1 - ours / theirs


def cuts(results: Results) -> list[tuple[str, float | None, float | None]]:
    """(host, tools-array cut, session cut) at the default level on the headline catalog."""
    out = []
    for host in hosts(results):
        plain = find(results, host, HEADLINE_CATALOG, "plain")
        ours = find(results, host, HEADLINE_CATALOG, "default")
        out.append((host, cut(ours, plain), cut(ours, plain, session=True)))
    return out


def headline(results: Results) -> list[str]:
    """The report's headline line for what hosts send (empty when not measured)."""
    pairs = [(find(results, h, HEADLINE_CATALOG, "default"),
              find(results, h, HEADLINE_CATALOG, "plain")) for h in hosts(results)]
    measured = [(o, p) for o, p in pairs if o and p and o.tokens > 0 and p.tokens > 0]
    if not measured:
        return []
    tools = [cut(o, p) or 0.0 for o, p in measured]
    sessions = [s for s in (cut(o, p, session=True) for o, p in measured) if s is not None]
    line = (f"- **What hosts send the model** ({HEADLINE_CATALOG}, {len(measured)} agent "
            f"framework paths, default level): **{min(o.tokens for o, _ in measured):,} to "
            f"{max(o.tokens for o, _ in measured):,} tokens** of tool definitions (plain: "
            f"{min(p.tokens for _, p in measured):,} to {max(p.tokens for _, p in measured):,}"
            f"), -{min(tools):.0%} to -{max(tools):.0%} (median -{median(tools):.0%})")
    if sessions:
        line += f"; the whole session of a first use -{min(sessions):.0%} to -{max(sessions):.0%}"
    return [line + "."]


def _steps(row: HostRow | None) -> str:
    if row is None:
        return MISSING
    if row.steps_to_first_success is None:
        return "never"
    return f"{row.steps_to_first_success}" + (f" ({row.refusals} refused)" if row.refusals
                                              else "")


def _session(plain: HostRow | None, ours: HostRow | None) -> str:
    if plain is None or ours is None or plain.session_tokens < 0 or ours.session_tokens < 0:
        return MISSING
    share = cut(ours, plain, session=True)
    return (f"{plain.session_tokens:,} / {ours.session_tokens:,}"
            + (f" ({-share:+.0%})" if share is not None else ""))


def section(results: Results, figures: str) -> list[str]:
    """The Markdown section (empty when the run did not measure hosts)."""
    if not results.hosts:
        return []
    out = ["## What hosts send the model", "",
           "Real agent frameworks (`tests/hosts/`, each in its own virtualenv) connected over "
           "streamable HTTP, with the model replaced by a scripted OpenAI-compatible endpoint "
           "that records each request. Tokens: o200k_base over the compact JSON of the "
           "`tools` array in the host's first model request, as sent (the host's own wrapping "
           "included, the bridge tool too). `default` is the middleware as shipped (whatever "
           "level it picks for that host); `minimal` and `skeleton` force a level. Steps: "
           "model requests up to and including the one whose tool call first succeeded. "
           "Session: o200k_base of every request body the host sent the model in the run "
           "(system prompt, messages, tool results and the `tools` array each time), summed, "
           "for the scripted first use of one tool (plain: call, answer; ours: the refusal "
           "and what it carries too).", "",
           *figure(figures, "hosts_cuts", "tokens below plain per framework"),
           f"Measured {results.measured('hosts')}.", ""]
    for catalog in dict.fromkeys(r.catalog for r in results.hosts):
        rows = []
        for host in hosts(results):
            plain = find(results, host, catalog, "plain")
            cells = [host, plain.client if plain else MISSING]
            for listing in HOST_LISTINGS:
                row = find(results, host, catalog, listing)
                share = cut(row, plain) if listing != "plain" else None
                cells.append((MISSING if row is None or row.tokens < 0 else f"{row.tokens:,}")
                             + (f" (-{share:.0%})" if share is not None else ""))
            cells += [_steps(find(results, host, catalog, x)) for x in HOST_LISTINGS]
            cells.append(_session(plain, find(results, host, catalog, "default")))
            rows.append(cells)
        sent = next((r.tools_sent for r in results.hosts
                     if r.catalog == catalog and r.listing == "default"), 0)
        out += [f"### {catalog} ({sent} tools sent at the default level)", "",
                table(["host", "clientInfo", *[f"tokens {x}" for x in HOST_LISTINGS],
                       *[f"steps {x}" for x in HOST_LISTINGS], "session plain / default"],
                      rows), ""]
    out += _reaching(results)
    broken = [r for r in results.hosts if r.listing != "plain" and not r.arguments_intact]
    if broken:
        out += ["Cells where the tool body never ran with the model's arguments: "
                + ", ".join(f"{r.host}/{r.catalog}/{r.listing}" for r in broken) + ".", ""]
    return out


def _reaching(results: Results) -> list[str]:
    """What the default level leaves for descriptions under the 60% target, host by host."""
    rows = []
    for host in hosts(results):
        plain = find(results, host, HEADLINE_CATALOG, "plain")
        ours = find(results, host, HEADLINE_CATALOG, "default")
        if plain is None or ours is None or min(plain.tokens, ours.tokens, ours.floor_tokens) <= 0:
            continue  # a cell with no request sent (the host could not load the catalog)
        allowed = int(plain.tokens * (1 - TOOLS_CUT))
        budget, spent = allowed - ours.floor_tokens, ours.tokens - ours.floor_tokens
        per = max(ours.tools_sent, 1)
        args = " / ".join((find(results, host, HEADLINE_CATALOG, x) or ours).arguments_declared
                          or MISSING for x in ("default", "minimal", "skeleton"))
        rows.append([host, f"{allowed:,}", f"{ours.tokens:,}",
                     f"{ours.floor_tokens:,} (-{1 - ours.floor_tokens / plain.tokens:.1%})",
                     f"{spent:,} ({spent / per:.1f} per tool)",
                     f"{budget:,} ({budget / per:.1f} per tool)" if budget > 0 else "none", args])
    if not rows:
        return []
    return [f"### Reaching -{TOOLS_CUT:.0%} on {HEADLINE_CATALOG}", "",
            "`floor`: the default-level array the host sent with every description removed "
            "(the host's own wrapping, the names and the schemas). The description budget is "
            "what the one-line summaries may cost in total for the target to hold. `arguments "
            "in the sent schema` (default / minimal / skeleton), for the scenario's tool: "
            "`declared` (listed properties), `open` (not listed, not forbidden) or `forbidden` "
            "(`additionalProperties: false` without them: a model that obeys the schema calls "
            "without arguments and learns them from the refusal).", "",
            table(["host", "allowed", "default", "floor", "descriptions now",
                   "description budget", "arguments in the sent schema"], rows), ""]
