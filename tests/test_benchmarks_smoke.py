"""The benchmark suite's smoke run, so it never rots: smallest catalog, few iterations.

Runs ``python -m benchmarks --smoke`` exactly as documented, in a subprocess (it starts
HTTP servers and its own event loop), then checks the report and the raw numbers say
real things: the catalog's row is there, ours lists fewer tokens than plain with every
name still visible, a session costs more than its listing, each latency row has
samples, grants were measured, and an edit a ``stat`` can see is served at once.
Timing values are never asserted: benchmarks are not timed tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import corpus_dir, smallest_catalog
from tests.run_once import kept_result

# runs `python -m benchmarks --smoke` in a process
# (the xdist group keeps the file on one worker: tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("benchmarks-smoke")]

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    if not list(corpus_dir().glob("*.tools.json")):
        pytest.skip(f"no tool catalogs in {corpus_dir()}")
    with kept_result(tmp_path_factory, "benchmarks-smoke") as kept:  # once per test run
        if not kept.exists():
            out = tmp_path_factory.mktemp("bench")
            done = subprocess.run(
                [sys.executable, "-m", "benchmarks", "--smoke", "--out", str(out)],
                cwd=REPO, capture_output=True, text=True, timeout=1800,  # a hang guard only
            )
            assert done.returncode == 0, done.stderr[-4000:]
            kept.write_text(str(out), encoding="utf-8")
        out = Path(kept.read_text(encoding="utf-8"))
    return out, json.loads((out / "results.json").read_text(encoding="utf-8"))


def _token(data: dict[str, Any], mode: str) -> dict[str, Any]:
    catalog, _ = smallest_catalog()
    return next(r for r in data["tokens"] if r["catalog"] == catalog and r["mode"] == mode)


def test_report_names_the_catalog_machine_and_targets(smoke: tuple[Path, dict[str, Any]]) -> None:
    out, _ = smoke
    report = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    name, tools = smallest_catalog()
    assert f"| {name} | {len(tools)} |" in report
    for heading in ("## Targets", "## Machine and versions", "## 1. Tokens", "## 2. Cost",
                    "## 3. Scale"):
        assert heading in report
    assert "fastmcp" in report and "o200k_base" in report


def test_progressive_listing_is_smaller_and_keeps_every_name(
    smoke: tuple[Path, dict[str, Any]],
) -> None:
    _, data = smoke
    plain, ours, skeleton = (_token(data, m) for m in ("plain", "typed", "skeleton"))
    assert _token(data, "minimal")["fields"] < ours["fields"] <= skeleton["fields"]
    assert skeleton["fields"] < plain["fields"]
    assert ours["json"] < plain["json"] and ours["wire"] < plain["wire"]
    assert ours["names_visible"] == plain["names_visible"] == plain["tools"]
    assert _token(data, "regex")["names_visible"] == 0  # a search lists no catalog tool


def test_sessions_add_the_descriptions_they_fetch(smoke: tuple[Path, dict[str, Any]]) -> None:
    _, data = smoke
    listing = _token(data, "typed")["fields"]
    two, five = _token(data, "typed+2")["fields"], _token(data, "typed+5")["fields"]
    assert listing < two < five
    assert _token(data, "bm25+search")["fields"] > _token(data, "bm25")["fields"]


def test_latency_rows_compare_both_sides(smoke: tuple[Path, dict[str, Any]]) -> None:
    _, data = smoke
    ops = {(r["transport"], r["op"]) for r in data["latency"]}
    for transport in ("memory", "http"):
        assert (transport, "tools/list") in ops
        assert (transport, "tools/call (granted)") in ops
        assert (transport, "tools/list (cold)") in ops
    assert ("memory legacy + listing middleware", "tools/call (refused)") in ops  # gated
    for anonymous in ("memory", "http"):  # 2026-07-28 without auth: checked, not gated
        assert (anonymous, "tools/call (refused)") not in ops
    for row in data["latency"]:
        assert row["plain"]["n"] > 0 and row["ours"]["n"] > 0
        assert row["plain"]["median_us"] > 0 and row["ours"]["median_us"] > 0
        if row["op"].startswith("resources/read"):
            assert row["ours_server"] is not None  # the server-side clock saw every read


def test_scale_sections_ran(smoke: tuple[Path, dict[str, Any]]) -> None:
    _, data = smoke
    assert {r["variant"] for r in data["listing_scale"]} == {"plain", "ours", "ours+files"}
    assert {g["kind"] for g in data["grants"]} == {"session", "principal"}
    edits = {e["how"]: e for e in data["file_edits"]}
    for how in ("atomic replace", "in place"):
        assert edits[how]["served"] == edits[how]["trials"]
        assert edits[how]["stale_reads"] == 0  # a stat sees these: the next read serves them


def test_scaling_section_ran(smoke: tuple[Path, dict[str, Any]]) -> None:
    out, data = smoke
    cases = {(r["transport"], r["op"]) for r in data["scaling"]}
    for case in ("local", "local, legacy", "listing middleware", "listing middleware, legacy",
                 "mounted", "proxied", "http legacy", "http+auth"):
        assert any(c == case for c, _ in cases), case
    assert ("first listing", "tools/list, after start-up") in cases
    assert {m["cache"] for m in data["memory"]} >= {
        "reduced tools + wire forms", "full definitions (and their parsed files)",
        "confirmed store grants"}
    assert all(m["entries"] <= m["bound"] for m in data["memory"])
    assert data["facts"]["unknown_bytes_100"] > 0
    assert "## 4. Scaling" in (out / "BENCHMARKS.md").read_text(encoding="utf-8")


def test_the_report_is_its_results_file_rendered(smoke: tuple[Path, dict[str, Any]]) -> None:
    """``--from-json`` re-renders the very report the run wrote, from results.json alone."""
    out, _ = smoke
    written = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    again = out.parent / f"{out.name}-again"
    again.mkdir(exist_ok=True)
    (again / "results.json").write_bytes((out / "results.json").read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--from-json", "--no-plots", "--out", str(again)],
        cwd=REPO, capture_output=True, text=True, timeout=1800)  # a hang guard
    assert done.returncode == 0, done.stderr[-4000:]
    assert (again / "BENCHMARKS.md").read_text(encoding="utf-8") == written
