"""Command line: ``python -m benchmarks [--smoke] [--out DIR] [--no-plots] ...``.

- ``python -m benchmarks``: the full run; writes ``BENCHMARKS.md`` at the repository root,
  PNGs in ``benchmarks/figures/`` and the raw numbers in ``benchmarks/results.json``.
- ``python -m benchmarks --smoke``: the quick run CI uses (smallest catalog, few
  iterations); writes into ``--out`` or a new temporary folder, never over the real report.
- ``--catalog NAME`` (repeatable) and ``--section tokens|latency|scale|scaling|hosts``
  (repeatable) narrow a run while working on one part. Written over the real report, a
  ``--section`` run replaces only its sections in ``results.json`` and re-renders the rest
  from it (``python -m benchmarks --section hosts`` after changing a framework driver).
- ``--from-json PATH``: measure nothing; re-render the report and figures from a
  ``results.json`` (after changing the report's layout).

Run from the repository root with the project installed (``pip install -e ".[dev]"``;
``matplotlib`` for the figures). Exit status 0 whether or not targets are met: benchmarks
report, tests assert.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from .findings import derive
from .plots import write_figures
from .quiet import quiet_logs
from .report import render
from .results import Results
from .run import FULL, SMOKE, customized, default_paths, merged, run
from .targets import judge


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="quick run on the smallest catalog")
    parser.add_argument("--out", type=Path, help="folder for BENCHMARKS.md, figures/, results.json")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    parser.add_argument("--catalog", action="append", help="only this corpus catalog (repeatable)")
    parser.add_argument("--section", action="append",
                        help="tokens, latency, scale or hosts (repeatable)")
    parser.add_argument("--from-json", type=Path, help="re-render from a results.json, no runs")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    plan = customized(SMOKE if args.smoke else FULL, catalogs=args.catalog,
                      sections=args.section)
    out = args.out
    if out is None and args.smoke:
        out = Path(tempfile.mkdtemp(prefix="fastmcp-progressive-bench-"))
    report, figures_dir, data = default_paths(plan, out)
    quiet_logs()
    if args.from_json is not None:
        results = Results.read_json(args.from_json)
        results.findings = derive(results)
    else:
        results = asyncio.run(run(plan))
        if args.section and out is None and data.exists():
            results = merged(Results.read_json(data), results, plan.sections)
            results.findings = derive(results)
    figures = {} if args.no_plots else {p.stem: p for p in write_figures(results, figures_dir)}
    command = "python -m benchmarks" + (" --smoke" if args.smoke else "")
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(render(results, figures, report, command), encoding="utf-8")
    results.write_json(data)
    for target in judge(results):
        verdict = {None: "not measured", True: "met", False: "NOT met"}[target.met]
        print(f"{verdict:>12}  {target.name}: {target.measured} (goal {target.goal})")
    print(f"report: {report}")
    print(f"data: {data}")
    for path in figures.values():
        print(f"figure: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
