"""BENCHMARKS.md's "What hosts send the model" section, its headline line and its targets.

Pure formatting over ``Results.hosts`` (measured by ``host_bench.py``). The targets are
issue 19's, on github-mcp-server at the default level: the ``tools`` array each framework
sends at least 60% below plain in every framework and at least 70% in the median one; the
whole session of a scripted first use (every model request, summed) at least 50% below plain
in every framework.

Example:
    ```python
    lines = section(results)      # Markdown lines, empty when hosts were not measured
    ```
"""

from __future__ import annotations

from pathlib import Path
from statistics import median

from .markdown import MISSING, figure, table
from .results import HostRow, Results

TARGET_CATALOG = "github-mcp-server"
TOOLS_CUT = 0.60
MEDIAN_TOOLS_CUT = 0.70
SESSION_CUT = 0.50
LISTINGS = ("plain", "default", "minimal", "skeleton")


def find(results: Results, host: str, catalog: str, listing: str) -> HostRow | None:
    return next((r for r in results.hosts
                 if (r.host, r.catalog, r.listing) == (host, catalog, listing)), None)


def hosts(results: Results) -> list[str]:
    return list(dict.fromkeys(r.host for r in results.hosts))


def cut(row: HostRow | None, plain: HostRow | None) -> float | None:
    """How far below plain ``row``'s tools array is (0.85 = 85% fewer tokens)."""
    if row is None or plain is None or row.tokens < 0 or plain.tokens <= 0:
        return None
    return 1 - row.tokens / plain.tokens


def session_cut(row: HostRow | None, plain: HostRow | None) -> float | None:
    """How far below plain ``row``'s whole session is (every model request, summed)."""
    if row is None or plain is None or row.session_tokens < 0 or plain.session_tokens <= 0:
        return None
    return 1 - row.session_tokens / plain.session_tokens


def cuts(results: Results, catalog: str = TARGET_CATALOG
         ) -> list[tuple[str, float | None, float | None]]:
    """(host, tools-array cut, session cut) at the default level, one per host."""
    out = []
    for host in hosts(results):
        plain = find(results, host, catalog, "plain")
        ours = find(results, host, catalog, "default")
        out.append((host, cut(ours, plain), session_cut(ours, plain)))
    return out


def target_rows(results: Results) -> list[tuple[str, str, str, bool | None]]:
    """(name, goal, measured, met): per host its tools array and its session, then the
    median host's tools array."""
    out: list[tuple[str, str, str, bool | None]] = []
    measured: list[float] = []
    for host in hosts(results):
        plain = find(results, host, TARGET_CATALOG, "plain")
        ours = find(results, host, TARGET_CATALOG, "default")
        name = f"{host}: {TARGET_CATALOG}, default level"
        share = cut(ours, plain)
        if share is None or ours is None or plain is None:
            out.append((f"{name}, tools array sent", f">= {TOOLS_CUT:.0%} below plain",
                        "not measured", None))
        else:
            measured.append(share)
            names = ours.tools_sent >= plain.tools_sent
            out.append((f"{name}, tools array sent",
                        f">= {TOOLS_CUT:.0%} below plain, all names",
                        f"{ours.tokens:,} vs {plain.tokens:,} tokens: -{share:.1%}, "
                        f"{ours.tools_sent} tools sent", share >= TOOLS_CUT and names))
        whole = session_cut(ours, plain)
        out.append((f"{name}, whole session of a first use",
                    f">= {SESSION_CUT:.0%} below plain",
                    "not measured" if whole is None or ours is None or plain is None else
                    f"{ours.session_tokens:,} vs {plain.session_tokens:,} tokens in "
                    f"{ours.requests} vs {plain.requests} requests: -{whole:.1%}"
                    + ("" if ours.body_ran and ours.arguments_intact else
                       " (the tool body never ran)"),
                    None if whole is None or ours is None else
                    whole >= SESSION_CUT and ours.body_ran and ours.arguments_intact))
    if measured:
        middle = median(measured)
        out.append((f"median framework: {TARGET_CATALOG}, default level, tools array sent",
                    f">= {MEDIAN_TOOLS_CUT:.0%} below plain", f"-{middle:.1%}",
                    middle >= MEDIAN_TOOLS_CUT))
    return out


def headline(results: Results) -> list[str]:
    """The BENCHMARKS.md headline line for what hosts send (empty when not measured)."""
    rows = [(find(results, h, TARGET_CATALOG, "default"), find(results, h, TARGET_CATALOG,
                                                                     "plain"))
            for h in hosts(results)]
    measured = [(o, p) for o, p in rows if o and p and o.tokens > 0 and p.tokens > 0]
    if not measured:
        return []
    low = min(o.tokens for o, _ in measured)
    high = max(o.tokens for o, _ in measured)
    plain_low = min(p.tokens for _, p in measured)
    plain_high = max(p.tokens for _, p in measured)
    tools = [cut(o, p) or 0.0 for o, p in measured]
    sessions = [s for s in (session_cut(o, p) for o, p in measured) if s is not None]
    line = (f"- **What hosts send the model** ({TARGET_CATALOG}, {len(measured)} agent "
            f"framework paths, default level): **{low:,} to {high:,} tokens** of tool "
            f"definitions (plain: {plain_low:,} to {plain_high:,}), -{min(tools):.0%} to "
            f"-{max(tools):.0%} (median -{median(tools):.0%})")
    if sessions:
        line += (f"; the whole session of a first use -{min(sessions):.0%} to "
                 f"-{max(sessions):.0%}")
    return [line + "."]


def _session(plain: HostRow | None, ours: HostRow | None) -> str:
    if plain is None or ours is None or plain.session_tokens < 0 or ours.session_tokens < 0:
        return MISSING
    share = session_cut(ours, plain)
    return (f"{plain.session_tokens:,} / {ours.session_tokens:,}"
            + (f" ({-share:+.0%})" if share is not None else ""))


def _steps(row: HostRow | None) -> str:
    if row is None:
        return MISSING
    if row.steps_to_first_success is None:
        return "never"
    return f"{row.steps_to_first_success}" + (f" ({row.refusals} refused)" if row.refusals
                                              else "")


def section(results: Results, figures: dict[str, Path] | None = None,
            report: Path | None = None) -> list[str]:
    """The Markdown section (empty when the run did not measure hosts)."""
    if not results.hosts:
        return []
    out = [
        "## What hosts send the model",
        "",
        "Real agent frameworks (`tests/hosts/`, each in its own virtualenv) connected over "
        "streamable HTTP, with the model replaced by a scripted OpenAI-compatible endpoint "
        "that records each request. Tokens: o200k_base over the compact JSON of the `tools` "
        "array in the host's first model request, as sent (the host's own wrapping "
        "included, the bridge tool too). `default` is the middleware as shipped (whatever "
        "level it picks for that host); `minimal` and `skeleton` force a level. Steps: model "
        "requests up to and including the one whose tool call first succeeded. Session: "
        "o200k_base of every request body the host sent the model in the run (system "
        "prompt, messages, tool results and the `tools` array each time), summed, for the "
        "scripted first use of one tool (plain: call, answer; ours: the refusal and what "
        "it carries too).",
        "",
    ]
    if figures and report is not None:
        out += figure(figures, "hosts_cuts", "tokens below plain per framework", report)
    if results.config.get("hosts_measured"):
        out += [f"Measured {results.config['hosts_measured']}.", ""]
    for catalog in dict.fromkeys(r.catalog for r in results.hosts):
        rows = []
        for host in hosts(results):
            plain = find(results, host, catalog, "plain")
            cells = [host, plain.client if plain else MISSING]
            for listing in LISTINGS:
                row = find(results, host, catalog, listing)
                share = cut(row, plain) if listing != "plain" else None
                tokens = MISSING if row is None or row.tokens < 0 else f"{row.tokens:,}"
                cells.append(tokens + (f" (-{share:.0%})" if share is not None else ""))
            cells += [_steps(find(results, host, catalog, listing)) for listing in LISTINGS]
            cells.append(_session(plain, find(results, host, catalog, "default")))
            rows.append(cells)
        header = ["host", "clientInfo", *[f"tokens {x}" for x in LISTINGS],
                  *[f"steps {x}" for x in LISTINGS], "session plain / default"]
        sent = next((r.tools_sent for r in results.hosts
                     if r.catalog == catalog and r.listing == "default"), 0)
        out += [f"### {catalog} ({sent} tools sent at the default level)", "",
                table(header, rows), ""]
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
        plain = find(results, host, TARGET_CATALOG, "plain")
        ours = find(results, host, TARGET_CATALOG, "default")
        if plain is None or ours is None or ours.tokens < 0 or ours.floor_tokens < 0:
            continue
        allowed = int(plain.tokens * (1 - TOOLS_CUT))
        budget = allowed - ours.floor_tokens
        spent = ours.tokens - ours.floor_tokens
        per = max(ours.tools_sent, 1)
        args = " / ".join(
            (find(results, host, TARGET_CATALOG, x) or ours).arguments_declared or MISSING
            for x in ("default", "minimal", "skeleton"))
        rows.append([host, f"{allowed:,}", f"{ours.tokens:,}",
                     f"{ours.floor_tokens:,} (-{cut_of(ours.floor_tokens, plain.tokens):.1%})",
                     f"{spent:,} ({spent / per:.1f} per tool)",
                     f"{budget:,} ({budget / per:.1f} per tool)" if budget > 0 else "none",
                     args])
    if not rows:
        return []
    return [
        f"### Reaching -{TOOLS_CUT:.0%} on {TARGET_CATALOG}",
        "",
        "`floor`: the default-level array the host sent with every description removed "
        "(the host's own wrapping, the names and the schemas). The description budget is "
        "what the one-line summaries may cost in total for the target to hold. `arguments "
        "in the sent schema` (default / minimal / skeleton), for the scenario's tool: "
        "`declared` (listed properties), `open` (not listed, not forbidden) or `forbidden` "
        "(`additionalProperties: false` without them: a model that obeys the schema calls "
        "without arguments and learns them from the refusal).",
        "",
        table(["host", "allowed", "default", "floor", "descriptions now",
               "description budget", "arguments in the sent schema"], rows),
        "",
    ]


def cut_of(part: int, whole: int) -> float:
    return 1 - part / whole if whole else 0.0
