"""Sections 5 to 8 of the report: the gateway, proxy start-up, tool resolution, hostile input.

Each renders what ``results.json`` holds for it, or nothing when it was not measured.

Example:
    ```python
    lines = [*gateway(results), *proxy_start(results), *resolution(results), *hostile(results)]
    ```
"""

from __future__ import annotations

from typing import Any

from ..results import Results
from .markdown import table


def gateway(results: Results) -> list[str]:
    g = results.gateway
    if not g:
        return []
    c, ranker = g["capped"], g["ranker"]
    out = ["## 5. Gateway scale: LiveMCPTool (issue 20)", "",
           f"Measured {results.measured('gateway')}. LiveMCPBench's 70 servers (527 tools) "
           "replayed as a gateway (`tests/replay.py`, `gateway()`): each server mounted under "
           "its name (a group, described by its own instructions). Tokens: o200k over the "
           "`tools/list` result's `tools`, compact UTF-8 JSON, as an in-memory `fastmcp.Client` "
           "receives them; mcpproxy-go's published cuts (`schema_deferred`) beside ours, per "
           "level, every tool listed (`max_tools=None`; the default budget lists 20 entries "
           "above 50 tools) (the 45-tool figure beside the corpus' 45-tool catalog).", "",
           table(("catalog", "level", "plain tokens", "ours", "cut", "mcpproxy-go cut"),
                 [(r["catalog"], r["level"], f"{r['plain']:,}", f"{r['ours']:,}",
                   f"{r['cut']:.1%}", f"{r['mcpproxy_go_cut']:.1%}") for r in g["levels"]],
                 "llrrrr"), "",
           f"Capped at 40: {c['tools']} entries, {c['tokens']:,} tokens "
           f"({c['tokens_with_group_meta']:,} with group `_meta`), of which the bridge's group "
           f"lines {c['bridge_description_tokens']:,}; `groups/list`: {c['groups']} groups, "
           f"{c['groups_list_tokens']:,} tokens.", "",
           table(("ranker (our BM25, LiveMCPBench public tasks)", "top 1", "top 3", "top 5"),
                 [(label, *(f"{ranker[key][f'top{k}']:.1%}" for k in (1, 3, 5)))
                  for label, key in (("plain listing, names alone", "plain_names"),
                                     ("group lines + capped listing", "groups_plus_listed"))]),
           "",
           "The ranker: our BM25 (section 1) ranks, for each of the "
           f"{ranker['tasks']} public LiveMCPBench tasks, (a) the plain listing's 527 tool "
           "names alone, (b) the capped listing's group lines (the `describe_tools` "
           "description) plus its listed tools (name and description); a needed tool is found "
           "when a top-k entry is the tool or the group holding it "
           "(`benchmarks/tests/test_gateway.py` holds ours >= plain at each k).", ""]
    matrix = results.gateway_hosts
    if matrix:
        out += [matrix["note"], "",
                table(("framework path", "tools sent", "tokens (o200k)", "steps to first use"),
                      [(h["framework"], h["tools_sent"], h["tokens"], h["steps"])
                       for h in matrix["rows"]]), ""]
    return out


def _spread(s: dict[str, float]) -> str:
    return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"


def proxy_start(results: Results) -> list[str]:
    p = results.proxy_start
    if not p:
        return []
    alone = p["upstream alone (spawn to first tools/list, s)"]
    one, three = p["proxy, one upstream (fs)"], p["proxy --config, three upstreams"]
    rows = [("`server-filesystem` alone", _spread(alone["fs"])),
            ("`server-memory` alone", _spread(alone["memory"])),
            ("Python FastMCP server alone", _spread(alone["calc"])),
            ("`proxy -- server-filesystem`: total", _spread(one["total"])),
            ("`proxy -- server-filesystem`: own (total minus the upstream alone)",
             _spread(one["own"])),
            ("`proxy --config` (the three): total", _spread(three["total"])),
            ("`proxy --config`: own (total minus the slowest upstream alone)",
             _spread(three["own"])),
            ("the three upstreams one after another",
             _spread(three["upstreams one after another"]))]
    before = p.get("before #26")  # measured alongside, with the upstreams started early
    if before:
        early = f"own, upstreams started early ({before['revision']})"
        rows += [(f"`proxy -- server-filesystem`: {early}",
                  _spread(before["proxy, one upstream (fs)"]["own"])),
                 (f"`proxy --config`: {early}",
                  _spread(before["proxy --config, three upstreams"]["own"]))]
    return ["## 6. Proxy start (issue 20)", "",
            f"Measured {results.measured('proxy-start')}; on a loaded machine every figure is "
            "several times its idle value, but the rows were measured interleaved, so they "
            "compare. Seconds from spawning a process to its first `tools/list` answer over "
            f"stdio, median (min-max) of {p['rounds']}. Issue 20's target: the proxy's own time "
            "(its total minus its slowest upstream's) at most 1.0 s.", "",
            table(("what", "seconds"), rows), "",
            "The proxy's own time is almost entirely importing FastMCP's server and client "
            + (f"stack ({_spread(p['imports (s)']['fastmcp'])} s in a fresh interpreter, "
               f"{_spread(p['imports (s)']['fastmcp and ours'])} s with our proxy module too). "
               if "imports (s)" in p else "stack. ")
            + "The proxy starts its upstream commands once it has imported it, concurrently, "
            "each through its own client transport (`proxy/upstream.py:UpstreamCommand`): three "
            "upstreams cost the proxy about what one does."
            + (" Until #26 it started them before importing FastMCP (`proxy/prespawn.py`, the "
               "reason the package's `__init__` was lazy); the rows measured that way, at the "
               "same time on the same machine, differ by no more than the load's noise, so the "
               "simpler start stays." if before else ""), ""]


def _us(stats: dict[str, Any]) -> str:
    return f"{stats['median_us']:,.0f} µs (p95 {stats['p95_us']:,.0f} µs)"


def resolution(results: Results) -> list[str]:
    if not results.resolution:
        return []
    return ["## 7. Tool resolution", "",
            f"Measured {results.measured('resolution')}. `tools/resolve` of the demo server's "
            "`manage_notes` (three rules in `examples/tool_descriptions`), its description file "
            "cached, cycling through its actions, by an in-memory client. Server side: a "
            "middleware outside ours covers our whole answer (capability check, FastMCP's "
            "visibility lookup, the file's stat and cache hit, schema validation, matching), "
            "in wall time and this thread's CPU time (preemption on a shared machine inflates "
            "the wall-time tail; CPU time is what the answer costs). Target: well under 1 ms "
            "server side.", "",
            table(("era", "n", "server, wall", "server, CPU", "client", "under 1 ms"),
                  [(r["era"], r["server"]["n"], _us(r["server"]), _us(r["server_cpu"]),
                    _us(r["client"]), "yes" if r["under_target"] else "no")
                   for r in results.resolution], "lrrrrl"), ""]


def hostile(results: Results) -> list[str]:
    h = results.hostile
    if not h:
        return []
    attacks = h["attacks"]
    changing, names, orphans = h["changing-descriptions"], h["long-client-names"], h["orphan-files"]
    return ["## 8. Hostile input (issue 21)", "",
            f"Measured {results.measured('hostile')}. In memory, 2026-07-28 without auth (the "
            "caller whose arguments are checked), plain FastMCP and ours, best of "
            "several runs. `unique-items`: a `set[str]` tool called with 14,000 strings and one "
            "int; `backtracking-pattern`: 27 characters against `^(\\w+\\s?)*$` (before issue "
            "21: 4.2 s and 6.7 s). Target: ours within milliseconds of plain.", "",
            table(("attack", "plain call", "ours: call", "ours: `tools/resolve`"),
                  [(name, *(f"{a[k] * 1000:,.1f} ms" for k in ("plain_call_s", "ours_call_s",
                                                               "ours_resolve_s")))
                   for name, a in attacks.items()]), "",
            f"Memory kept: {changing['kept_mib']:,.2f} MiB after {changing['listings']} "
            f"listings (and reads of every definition) of a proxied upstream whose "
            f"{changing['tools']} descriptions change on every listing (memo entries: listing "
            f"{changing['listing_memo_entries']}, definitions "
            f"{changing['definition_memo_entries']}); {names['kept_mib']:,.3f} MiB after "
            f"{names['clients']} clients with 2 MB names. `tools/list` of 10 tools with "
            f"{orphans['orphans']:,} description files of tools that do not exist: "
            f"{orphans['ours_list_s'] * 1000:,.1f} ms (plain FastMCP: "
            f"{orphans['plain_list_s'] * 1000:,.1f} ms).", ""]
