"""Command line: ``python -m benchmarks [--smoke] [--section NAME] [--from-json] [--out DIR]``.

- ``python -m benchmarks``: measure every section into ``benchmarks/results.json``, then
  write ``BENCHMARKS.md`` and ``benchmarks/figures/*.png`` from that file;
- ``--section NAME`` (repeatable): measure only those sections; the others are kept from
  ``results.json``, so the report still has them;
- ``--from-json``: measure nothing; write the report and figures from ``results.json``
  (what ``benchmarks/tests/test_report.py`` checks reproduces the committed report);
- ``--smoke``: the quick run CI uses (smallest catalog, few iterations), into ``--out`` or
  a new temporary folder, never over the real report; ``--catalog NAME`` narrows a run.

Run from the repository root with ``pip install -e ".[dev,bench]"``. Exit status 0 whether
or not targets are met: benchmarks report, tests assert.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from tests.corpus import REPO_ROOT

from .measure.servers import quiet_logs
from .report import write_report
from .report.targets import judge
from .results import Results
from .run import FULL, SECTIONS, SMOKE, customized, merged, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="quick run on the smallest catalog")
    parser.add_argument("--out", type=Path, help="folder for BENCHMARKS.md, figures/, results.json")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    parser.add_argument("--catalog", action="append", help="only this corpus catalog")
    parser.add_argument("--section", action="append", help=", ".join(SECTIONS))
    parser.add_argument("--from-json", action="store_true", help="re-render, measure nothing")
    args = parser.parse_args(argv)
    if args.out is None and args.smoke:
        args.out = Path(tempfile.mkdtemp(prefix="fastmcp-progressive-bench-"))
    if args.out is None:
        report, data = REPO_ROOT / "BENCHMARKS.md", REPO_ROOT / "benchmarks" / "results.json"
    else:
        report, data = args.out / "BENCHMARKS.md", args.out / "results.json"
    figures = report.parent / ("benchmarks/figures" if args.out is None else "figures")
    if args.from_json:
        results = Results.read_json(data)
    else:
        quiet_logs()
        plan = customized(SMOKE if args.smoke else FULL, catalogs=args.catalog,
                          sections=args.section)
        results = asyncio.run(run(plan))
        if args.section and data.exists():
            results = merged(Results.read_json(data), results, plan.sections)
        results.write_json(data)
    drawn = write_report(results, report, figures, draw=not args.no_plots)
    for target in judge(results):
        verdict = {None: "not measured", True: "met", False: "NOT met"}[target.met]
        print(f"{verdict:>12}  {target.name}: {target.measured} (goal {target.goal})")
    print(f"{'read' if args.from_json else 'wrote'} {data}")
    for path in drawn:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
