"""What a run measures (a ``Plan``), the sections it runs, and how they merge into one file.

``FULL`` (every catalog and section) and ``SMOKE`` (the smallest catalog, few iterations:
about a minute, for CI). Sections are independent: a run of some (``--section``) replaces
just theirs in ``results.json``, each stamped with when, on which revision and under what
load it ran (``config["measured"]``).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import platform
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from tests.corpus import REPO_ROOT, load_tasks

from .measure import (
    cost,
    gateway,
    hostile,
    hosts,
    proxy_start,
    ranking,
    resolve,
    scale,
    scaling,
    speed,
    tokens,
)
from .measure.catalogs import Catalog, load_corpus, scenario_for
from .results import DEFAULT, HEADLINE_CATALOG, RANK_CATALOG, Results

PACKAGES = ("fastmcp", "mcp", "mcp-types", "fastmcp-progressive", "pydantic", "uvicorn",
            "py-key-value-aio", "bpe-openai", "bm25s", "matplotlib")


@dataclass(frozen=True)
class Plan:
    """Everything a run measures and how hard; see ``FULL`` and ``SMOKE``."""

    name: str
    sections: tuple[str, ...]
    catalogs: tuple[str, ...] | None = None
    latency_catalog: str = "azure-mcp"
    transports: tuple[str, ...] = ("memory", "http", "http legacy", "http+auth")
    budget: cost.Budget = cost.FULL
    listing_sizes: tuple[int, ...] = scale.LISTING_SIZES
    listing_iterations: int = 20
    grant_callers: int = 100_000
    grant_batches: int = 50
    edit_trials: int = 20
    scaling: scaling.ScalingBudget = scaling.FULL
    resolutions: int = 2_000
    hostile_repeat: int = 3
    proxy_rounds: int = 5
    speed: speed.SpeedBudget = speed.FULL


async def _tokens(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    for catalog in catalogs:
        rows, anatomy = await tokens.measure_catalog(catalog)
        results.tokens += rows
        results.anatomy += anatomy
    by_name = {c.name: c for c in catalogs}
    if HEADLINE_CATALOG in by_name:
        results.sweep = await tokens.sweep_summary_chars(by_name[HEADLINE_CATALOG])
    results.config["session_tools"] = {c.name: scenario_for(c).tools(5) for c in catalogs}


async def _ranking(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    chosen = [c for c in catalogs if c.name == RANK_CATALOG]
    if chosen:
        tasks = load_tasks()
        results.ranking = await ranking.measure_ranking(chosen[0], tasks)
        results.selection, results.config["selection"] = await ranking.measure_selection(
            chosen[0], tasks)


def _latency_catalog(plan: Plan, catalogs: list[Catalog]) -> Catalog:
    chosen = [c for c in catalogs if c.name == plan.latency_catalog]
    return chosen[0] if chosen else catalogs[-1]


async def _latency(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    catalog = _latency_catalog(plan, catalogs)
    results.config.update(latency_catalog=catalog.name, latency_tools=len(catalog.tools))
    results.latency = await cost.measure(catalog, budget=plan.budget, transports=plan.transports)
    if plan.budget.per_catalog_lists:
        results.latency += await cost.listing_per_catalog(catalogs, plan.budget.per_catalog_lists)


async def _scale(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.listing_scale = await scale.listing_scale(plan.listing_sizes,
                                                      iterations=plan.listing_iterations)
    results.grants = await scale.grant_scale(plan.grant_callers, batches=plan.grant_batches)
    results.file_edits = await scale.file_edits(catalogs[0], trials=plan.edit_trials)


async def _scaling(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    first = _latency_catalog(plan, catalogs)
    results.scaling, results.memory, results.facts = await scaling.measure(plan.scaling, first)
    results.config["first_listing_catalog"] = first.name


async def _hosts(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.hosts = await asyncio.to_thread(hosts.measure)


async def _gateway(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.gateway = await gateway.measure()


async def _resolution(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.resolution = await resolve.measure(plan.resolutions)


async def _hostile(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.hostile = await hostile.measure(plan.hostile_repeat)


async def _proxy_start(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.proxy_start = await proxy_start.measure(plan.proxy_rounds)


async def _speed(results: Results, plan: Plan, catalogs: list[Catalog]) -> None:
    results.speed = await speed.measure(plan.speed)


Section = Callable[[Results, Plan, list[Catalog]], Awaitable[None]]
SECTIONS: dict[str, tuple[Section, tuple[str, ...], tuple[str, ...]]] = {
    "tokens": (_tokens, ("tokens", "anatomy", "sweep"), ("session_tools",)),
    "ranking": (_ranking, ("ranking", "selection"), ("selection",)),
    "hosts": (_hosts, ("hosts",), ()),
    "latency": (_latency, ("latency",), ("latency_catalog", "latency_tools")),
    "scale": (_scale, ("listing_scale", "grants", "file_edits"), ()),
    "scaling": (_scaling, ("scaling", "memory", "facts"), ("first_listing_catalog",)),
    "gateway": (_gateway, ("gateway",), ()),
    "resolution": (_resolution, ("resolution",), ()),
    "hostile": (_hostile, ("hostile",), ()),
    "proxy-start": (_proxy_start, ("proxy_start",), ()),
    "speed": (_speed, ("speed",), ()),
}
"""Each section: what measures it, the ``Results`` fields and config keys it fills."""

FULL = Plan("full", tuple(SECTIONS))
SMOKE = Plan("smoke", ("tokens", "latency", "scale", "scaling"), transports=("memory", "http"),
             budget=cost.SMOKE, listing_sizes=(10, 100), listing_iterations=3,
             grant_callers=1_000, grant_batches=5, edit_trials=2, scaling=scaling.SMOKE,
             speed=speed.SMOKE)


def _read(path: str, prefix: str) -> str:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return ""
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith(prefix)), "")


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def describe() -> dict[str, str]:
    """Machine, OS, interpreter, package versions and source revision of this run."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True,
                              text=True, check=True).stdout.strip()

    try:
        dirty = " + uncommitted changes" if git("status", "--porcelain", "-uno") else ""
        revision = git("rev-parse", "--short", "HEAD") + dirty
    except (OSError, subprocess.CalledProcessError):
        revision = "unknown"
    kib = int((_read("/proc/meminfo", "MemTotal") or "0 kB").split()[0])
    info = {"date": _now(), "cpu": f"{_read('/proc/cpuinfo', 'model name') or platform.machine()}"
            f" ({len(os.sched_getaffinity(0))} of {os.cpu_count()} logical CPUs usable)",
            "memory": f"{kib / 2**20:.1f} GiB", "os": platform.platform(),
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "revision": revision}
    for package in PACKAGES:
        try:
            info[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            info[package] = "not installed"
    return info


async def run(plan: Plan) -> Results:
    """Measure every section the plan names, each stamped with when and under what load."""
    catalogs = load_corpus(plan.catalogs)
    if plan.name == "smoke" and plan.catalogs is None:
        catalogs = catalogs[:1]
    config: dict[str, Any] = {"plan": asdict(plan), "ours_level": DEFAULT, "measured": {}}
    results = Results(machine=describe(), config=config)
    began = time.perf_counter()
    for name in plan.sections:
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        before, started, began_at = os.getloadavg()[0], time.perf_counter(), _now()
        await SECTIONS[name][0](results, plan, catalogs)
        low, high = sorted((before, os.getloadavg()[0]))
        config["measured"][name] = (f"{began_at} to {_now()[11:]} on "
                                    f"{results.machine['revision']}, 1-minute load {low:.1f} "
                                    f"to {high:.1f} (at its start and end)")
        print(f"[bench] {name}: {time.perf_counter() - started:.1f} s", file=sys.stderr,
              flush=True)
    results.seconds = time.perf_counter() - began
    return results


def merged(previous: Results, new: Results, sections: tuple[str, ...]) -> Results:
    """``previous`` with the sections ``new`` measured taken from ``new``: a run of one
    section (``--section hosts``) updates the report without dropping the others."""
    config = {**previous.config, "measured": {**previous.config.get("measured", {})}}
    out = replace(previous, machine=new.machine, config=config)
    for section in sections:
        _, names, keys = SECTIONS[section]
        for name in names:
            setattr(out, name, getattr(new, name))
        config.update({k: new.config[k] for k in keys if k in new.config})
        config["measured"][section] = new.config["measured"][section]
    return out


def customized(plan: Plan, *, catalogs: list[str] | None, sections: list[str] | None) -> Plan:
    """``plan`` restricted to some catalogs and/or sections (command-line overrides)."""
    if catalogs:
        plan = replace(plan, catalogs=tuple(catalogs))
    if sections:
        unknown = set(sections) - set(SECTIONS)
        if unknown:
            raise ValueError(f"unknown sections {sorted(unknown)}; choose from {list(SECTIONS)}")
        plan = replace(plan, sections=tuple(sections))
    return plan
