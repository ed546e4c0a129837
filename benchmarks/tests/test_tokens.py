"""The tokens benchmark measures what its rows are named for (never how fast).

Since the listing budget (issue 28) the package's default lists at most 20 entries above 50
tools, so a level's row must ask for every tool to measure that level's whole listing, and
the shipped default gets its own row.
"""

from __future__ import annotations

from fastmcp import Client

from benchmarks.measure.catalogs import synthetic_catalog
from benchmarks.measure.servers import build_server
from benchmarks.measure.tokens import measure_catalog
from benchmarks.results import BUDGETED, DEFAULT
from fastmcp_progressive import ListingSettings

LARGE = synthetic_catalog(60)  # above the default budget's threshold (50 tools)
SMALL = synthetic_catalog(12)


async def test_a_level_of_ours_lists_every_tool_of_a_large_catalog() -> None:
    async with Client(build_server(LARGE, DEFAULT).mcp) as client:
        names = {t.name for t in await client.list_tools()}
    assert set(LARGE.names) <= names


async def test_the_per_level_rows_count_every_tool_and_the_default_row_its_budget() -> None:
    rows, anatomy = await measure_catalog(LARGE)
    by_mode = {r.mode: r for r in rows}
    for level in ("typed", "minimal", "skeleton"):
        assert by_mode[level].names_visible == len(LARGE.tools), level
    default = by_mode[BUDGETED]
    assert 0 < default.names_visible < len(LARGE.tools)
    listed = {a.mode: a.listed for a in anatomy}
    assert listed[BUDGETED] <= 20 + 2  # the budget, plus the describe_tools/run_tool bridges
    assert default.fields < by_mode[DEFAULT].fields < by_mode["plain"].fields
    assert {f"{BUDGETED}+2", f"{BUDGETED}+5", "extras"} <= set(by_mode)


async def test_below_the_threshold_the_default_row_is_the_typed_listing() -> None:
    rows, _ = await measure_catalog(SMALL)
    by_mode = {r.mode: r for r in rows}
    typed, default = by_mode[DEFAULT], by_mode[BUDGETED]
    assert (default.fields, default.json, default.names_visible) == (
        typed.fields, typed.json, typed.names_visible) and typed.names_visible == 12
    assert ListingSettings().max_tools == "auto"
