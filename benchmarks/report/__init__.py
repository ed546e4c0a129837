"""The report: BENCHMARKS.md and its figures, written from ``Results`` alone.

Holds formatting only (it imports ``benchmarks.results`` and never ``benchmarks.measure``):
every number comes from ``results.json``, so re-rendering the committed file reproduces the
committed report (``benchmarks/tests/test_report.py``). Modules: ``markdown`` (tables,
formats), ``targets`` (the issues' goals judged), ``findings`` (take-aways), one module per
group of sections (``tokens``, ``hosts``, ``cost``, ``more``, ``speed``), ``plots`` (the PNGs).

Example:
    ```python
    write_report(Results.read_json(path), Path("BENCHMARKS.md"), Path("benchmarks/figures"))
    ```
"""

from __future__ import annotations

import os
from pathlib import Path

from ..results import BUDGETED, DEFAULT, HEADLINE_CATALOG, Results
from . import cost, hosts, more, tokens
from .findings import derive
from .markdown import MISSING, duration, saved, table
from .plots import write_figures
from .speed import speed
from .targets import judge


def _headline(results: Results) -> list[str]:
    lines: list[str] = []
    plain, ours = results.token(HEADLINE_CATALOG, "plain"), results.token(HEADLINE_CATALOG, DEFAULT)
    session = results.token(HEADLINE_CATALOG, f"{DEFAULT}+2")
    budgeted = results.token(HEADLINE_CATALOG, BUDGETED)
    if plain and ours and session:
        lines.append(
            f"- **{HEADLINE_CATALOG}** ({plain.tools} tools), default level with every tool "
            f"listed: the listing the model sees drops from **{plain.fields:,} to "
            f"{ours.fields:,} tokens** (-{saved(ours.fields, plain.fields)}), every name still "
            f"listed; a session that then fetches 2 tools costs **{session.fields:,}** "
            f"(per-field count; as one JSON array: {plain.json:,} → {ours.json:,}, session "
            f"{session.json:,}).")
    if plain and budgeted and budgeted.names_visible < budgeted.tools:
        lines.append(
            f"- The one-line default (`ProgressiveDisclosure()`, its listing budget) lists "
            f"{budgeted.names_visible} of {HEADLINE_CATALOG}'s {budgeted.tools} tools: "
            f"**{budgeted.fields:,} tokens** (-{saved(budgeted.fields, plain.fields)}); the "
            "rest are found through `describe_tools`.")
    call = results.latency_row("memory", "tools/call (granted)")
    listing = results.latency_row("memory", "tools/list")
    read = results.latency_row("memory", "resources/read 5 (hit)")
    if call and listing:
        lines.append(f"- Cost in memory on {results.config.get('latency_tools')} tools, default "
                     f"level: tools/call **{call.ratio_median:.2f}x** plain (median), tools/list "
                     f"**{listing.ratio_median:.2f}x** (smaller listings serialize faster).")
    if read and read.ours_server:
        lines.append(f"- Reading 5 cached descriptions: **{duration(read.ours_server)}** "
                     "server side (median, in memory).")
    ours_rows = [r for r in results.listing_scale if r.variant == "ours"]
    if ours_rows:
        top = max(ours_rows, key=lambda r: r.tools)
        lines.append(f"- {top.tools:,} tools: our listing takes {duration(top.warm)} in memory; "
                     f"the server keeps {top.retained_kib / 1024:,.1f} MiB after the first one.")
    return lines + hosts.headline(results)


def render(results: Results, figures: str = "benchmarks/figures") -> str:
    """The whole Markdown report; ``figures``: the figures' folder, relative to the report."""
    out = ["# Benchmarks: what progressive disclosure saves and costs", "",
           "Generated from `benchmarks/results.json` by `python -m benchmarks` (which measures "
           "into that file first; `--from-json` only renders it). Do not edit by hand. Each "
           "section says when, on which revision and under what load it was measured; ours runs "
           f"at `{DEFAULT}`, the default level, unless a column or row names another.", "",
           *_headline(results), "", "## Targets", "",
           table(("target", "goal", "measured", "met"),
                 [(t.name, t.goal, t.measured,
                   MISSING if t.met is None else ("**yes**" if t.met else "**no**"))
                  for t in judge(results)], "llll"), "",
           "## Machine and versions", "",
           f"The machine of the latest run ({results.machine.get('date', MISSING)}).", "",
           table(("", ""), results.machine.items(), "ll"), "",
           *tokens.section(results, figures), *hosts.section(results, figures),
           *cost.cost(results, figures), *cost.scale(results, figures), *cost.scaling(results),
           *more.gateway(results), *more.proxy_start(results), *more.resolution(results),
           *more.hostile(results), *speed(results)]
    findings = derive(results)
    if findings:
        out += ["## Findings", "", *[f"- {f}" for f in findings], ""]
    out += ["## Reproduce", "", "```bash",
            "pip install -e \".[dev,bench]\"              # bench: matplotlib (figures), bm25s",
            "python -m benchmarks                       # measure every section, then write this",
            "python -m benchmarks --section scaling     # measure one section, keep the others",
            "python -m benchmarks --from-json           # only re-render from results.json",
            "python -m benchmarks --smoke --out /tmp/b  # about a minute, smallest catalog (CI)",
            "```", "",
            "The corpus is read from `../shared/corpus` (or `$FASTMCP_PROGRESSIVE_CORPUS`).", ""]
    return "\n".join(out)


def write_report(results: Results, report: Path, figures: Path, draw: bool = True
                 ) -> list[Path]:
    """Write the report and (``draw``, matplotlib installed) the figures; the paths written."""
    drawn = write_figures(results, figures) if draw else []
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(render(results, os.path.relpath(figures, report.parent).replace(os.sep, "/")),
                      encoding="utf-8")
    return [report, *drawn]
