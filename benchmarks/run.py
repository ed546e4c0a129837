"""What a run measures (a ``Plan``) and the loop that measures it into ``Results``.

Two plans: ``FULL`` (every catalog, four transports, synthetic catalogs up to 10,000
tools, 100,000 callers: under ten minutes on two cores) and ``SMOKE`` (the smallest
catalog, a few iterations, small sizes: well under a minute, for CI). The sections are
independent, so ``sections`` can pick some of them while working on one.

Example:
    ```python
    results = asyncio.run(run(SMOKE))
    ```
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from . import host_bench, latency_bench, ranking, scale_bench, scaling_bench, token_bench
from .corpus import REPO_ROOT, Catalog, load_corpus
from .findings import derive
from .latency_bench import Budget
from .machine import describe
from .replay import DEFAULT
from .results import Results
from .scenarios import scenario_for
from .targets import HEADLINE_CATALOG

SECTIONS = ("tokens", "latency", "scale", "hosts", "scaling")


@dataclass(frozen=True)
class Plan:
    """Everything a run measures and how hard; see ``FULL`` and ``SMOKE``."""

    name: str
    catalogs: tuple[str, ...] | None
    latency_catalog: str | None
    transports: tuple[str, ...]
    budget: Budget
    per_catalog_lists: int
    listing_sizes: tuple[int, ...]
    listing_iterations: int
    grant_callers: int
    grant_batches: int
    edit_trials: int
    scaling: scaling_bench.ScalingBudget = scaling_bench.FULL
    sections: tuple[str, ...] = SECTIONS


FULL = Plan(
    name="full", catalogs=None, latency_catalog=None,
    transports=tuple(latency_bench.TRANSPORTS), budget=latency_bench.FULL,
    per_catalog_lists=40, listing_sizes=scale_bench.LISTING_SIZES, listing_iterations=20,
    grant_callers=100_000, grant_batches=50, edit_trials=20,
)
SMOKE = Plan(
    name="smoke", catalogs=None, latency_catalog=None,
    transports=("memory", "http"), budget=latency_bench.SMOKE,
    per_catalog_lists=0, listing_sizes=(10, 100), listing_iterations=3,
    grant_callers=1_000, grant_batches=5, edit_trials=2, scaling=scaling_bench.SMOKE,
    sections=("tokens", "latency", "scale", "scaling"),  # hosts need the framework virtualenvs
)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def _timed(label: str, work: Callable[[], Awaitable[Any]]) -> Any:
    began = time.perf_counter()
    _log(f"[bench] {label} ...")
    result = await work()
    _log(f"[bench] {label}: {time.perf_counter() - began:.1f} s")
    return result


def _catalogs(plan: Plan) -> list[Catalog]:
    catalogs = load_corpus(plan.catalogs)
    return catalogs[:1] if plan.name == "smoke" and plan.catalogs is None else catalogs


async def _tokens(results: Results, catalogs: list[Catalog]) -> None:
    for catalog in catalogs:
        rows, anatomy = await _timed(f"tokens {catalog.name}",
                                     functools.partial(token_bench.measure_catalog, catalog))
        results.tokens += rows
        results.anatomy += anatomy
    headline = next((c for c in catalogs if c.name == HEADLINE_CATALOG), None)
    if headline is not None:
        results.sweep = await _timed("summary_max_chars sweep",
                                     lambda: token_bench.sweep_summary_chars(headline))
    ranked = next((c for c in catalogs if c.name == ranking.RANK_CATALOG), None)
    if ranked is not None and (ranked_tasks := ranking.load_tasks()):
        results.ranking = await _timed(
            "ranking (BM25, LiveMCPBench tasks)",
            lambda: ranking.measure_ranking(ranked, ranked_tasks))


async def _latency(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    name = plan.latency_catalog
    catalog = load_corpus([name])[0] if name else catalogs[-1]
    results.config["latency_catalog"] = catalog.name
    results.config["latency_tools"] = len(catalog.tools)
    results.latency += await _timed(
        f"latency {catalog.name}",
        lambda: latency_bench.measure(catalog, budget=plan.budget, transports=plan.transports))
    results.latency += await _timed(
        "latency with a listing middleware",
        lambda: latency_bench.listing_hook_cost(catalog, budget=plan.budget))
    if plan.per_catalog_lists:
        results.latency += await _timed(
            "tools/list per catalog",
            lambda: latency_bench.listing_per_catalog(catalogs, plan.per_catalog_lists))


async def _scale(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.listing_scale = await _timed(
        "listing at scale",
        lambda: scale_bench.listing_scale(plan.listing_sizes, iterations=plan.listing_iterations))
    results.grants = await _timed(
        "grant store at scale",
        lambda: scale_bench.grant_scale(plan.grant_callers, batches=plan.grant_batches))
    results.file_edits = await _timed(
        "file edits", lambda: scale_bench.file_edits(catalogs[0], trials=plan.edit_trials))


async def _scaling(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    name = plan.latency_catalog
    first = load_corpus([name])[0] if name else catalogs[-1]
    results.scaling, results.memory, facts = await _timed(
        "scaling (issue 14)", lambda: scaling_bench.measure(plan.scaling, first))
    results.facts.update(facts)
    results.config["first_listing_catalog"] = first.name


async def _hosts(results: Results) -> None:
    results.hosts = await _timed("what hosts send", lambda: asyncio.to_thread(host_bench.measure))
    results.config["hosts_measured"] = f"{results.machine['date']}, {results.machine['revision']}"


async def run(plan: Plan) -> Results:
    """Measure every section the plan names."""
    began = time.perf_counter()
    catalogs = _catalogs(plan)
    config: dict[str, Any] = {k: v for k, v in asdict(plan).items() if k != "budget"}
    config["budget"] = asdict(plan.budget)
    config["session_tools"] = {c.name: scenario_for(c).tools(5) for c in catalogs}
    config["ours_level"] = DEFAULT
    results = Results(machine=describe(REPO_ROOT), config=config)
    if "tokens" in plan.sections:
        await _tokens(results, catalogs)
    if "latency" in plan.sections:
        await _latency(results, plan, catalogs)
    if "scale" in plan.sections:
        await _scale(results, plan, catalogs)
    if "scaling" in plan.sections:
        await _scaling(results, plan, catalogs)
    if "hosts" in plan.sections:
        await _hosts(results)
    results.findings = derive(results)
    results.seconds = time.perf_counter() - began
    return results


SECTION_FIELDS = {"tokens": ("tokens", "anatomy", "sweep"), "latency": ("latency",),
                  "scale": ("listing_scale", "grants", "file_edits"),
                  "scaling": ("scaling", "memory", "facts"), "hosts": ("hosts",)}
SECTION_CONFIG = {"latency": ("latency_catalog", "latency_tools"),
                  "scaling": ("first_listing_catalog",), "hosts": ("hosts_measured",)}
"""Which ``Results`` fields and config keys each section fills (``merged``)."""


def merged(previous: Results, new: Results, sections: Sequence[str]) -> Results:
    """``previous`` with the sections ``new`` measured replaced by ``new``'s: a run of one
    section (``--section hosts``) updates the report without dropping the others."""
    out = replace(previous, config=dict(previous.config))
    for section in sections:
        for name in SECTION_FIELDS[section]:
            setattr(out, name, getattr(new, name))
        for key in SECTION_CONFIG.get(section, ()):
            if key in new.config:
                out.config[key] = new.config[key]
    return out


def customized(plan: Plan, *, catalogs: list[str] | None, sections: list[str] | None) -> Plan:
    """``plan`` restricted to some catalogs and/or sections (command-line overrides)."""
    if catalogs:
        plan = replace(plan, catalogs=tuple(catalogs))
    if sections:
        unknown = set(sections) - set(SECTIONS)
        if unknown:
            raise ValueError(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
        plan = replace(plan, sections=tuple(sections))
    return plan


def default_paths(plan: Plan, out: Path | None) -> tuple[Path, Path, Path]:
    """(report, figures folder, results JSON) for a run writing into ``out``."""
    if out is not None:
        return out / "BENCHMARKS.md", out / "figures", out / "results.json"
    return (REPO_ROOT / "BENCHMARKS.md", REPO_ROOT / "benchmarks" / "figures",
            REPO_ROOT / "benchmarks" / "results.json")
