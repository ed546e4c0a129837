"""The PNG figures (matplotlib, the optional ``bench`` extra; without it they are left as
they are): tokens per catalog and mode, latency ratios, listing at scale, what hosts send.

Example:
    ```python
    paths = write_figures(results, Path("benchmarks/figures"))
    ```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..results import BUDGETED, Results
from .hosts import SESSION_CUT, catalogs, cuts

TOKEN_MODES = ("plain", "skeleton", "typed", "minimal", BUDGETED, "typed+2", "typed+5",
               "regex+search", "bm25+search")
TOKEN_LABELS = {"typed": "typed (every tool)", BUDGETED: "default (its listing budget)"}
TRANSPORT_COLORS = {"memory": "#4c72b0", "http": "#55a868", "http legacy": "#c44e52",
                    "http+auth": "#8172b2"}


def _save(plt: Any, fig: Any, path: Path) -> Path:
    """Write ``fig`` to ``path`` the way every figure here is written, and free it."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _pyplot() -> Any | None:
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_figures(results: Results, folder: Path) -> list[Path]:
    """Draw every figure the results have data for; [] when matplotlib is missing."""
    plt = _pyplot()
    if plt is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for draw in (_tokens, _latency, _scale, _hosts):
        path = draw(plt, results, folder)
        if path is not None:
            paths.append(path)
    return paths


def _tokens(plt: Any, results: Results, folder: Path) -> Path | None:
    catalogs = list(dict.fromkeys(r.catalog for r in results.tokens))
    if not catalogs:
        return None
    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.9 * len(catalogs)))
    height = 0.8 / len(TOKEN_MODES)
    cmap = plt.get_cmap("tab10")
    for m, mode in enumerate(TOKEN_MODES):
        ys, xs = [], []
        for c, catalog in enumerate(catalogs):
            row = results.token(catalog, mode)
            if row is not None:
                ys.append(c + (m - len(TOKEN_MODES) / 2 + 0.5) * height)
                xs.append(row.fields)
        ax.barh(ys, xs, height=height, label=TOKEN_LABELS.get(mode, mode), color=cmap(m))
    for c, catalog in enumerate(catalogs):
        plain, ours = results.token(catalog, "plain"), results.token(catalog, "typed")
        if plain and ours:
            ax.annotate(f"{plain.fields:,} → {ours.fields:,}", (plain.fields, c - 0.42),
                        xytext=(4, 0), textcoords="offset points", fontsize=7, ha="left",
                        va="top")
    ax.set_yticks(range(len(catalogs)))
    ax.set_yticklabels([f"{c} ({getattr(results.token(c, 'plain'), 'tools', 0)})"
                        for c in catalogs])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("model-visible tokens (o200k_base, per field; log scale)")
    ax.set_title("Tokens per catalog: plain FastMCP, our levels and sessions, search transforms")
    ax.set_xlim(right=max(r.fields for r in results.tokens) * 4)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(plt, fig, folder / "tokens_by_mode.png")


def _latency(plt: Any, results: Results, folder: Path) -> Path | None:
    rows = [r for r in results.latency if not r.op.startswith("tools/list ") or "(cold" in r.op]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.28 * len(rows)))
    labels = [f"{r.transport}: {r.op}" for r in rows]
    ys = range(len(rows))
    colors = [TRANSPORT_COLORS.get(r.transport, "#777777") for r in rows]
    ax.barh(ys, [r.ratio_median for r in rows], color=colors, label="median")
    ax.scatter([r.ratio_p95 for r in rows], ys, color="black", s=10, zorder=3, label="p95")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(1.05, color="grey", linestyle="--", linewidth=0.8, label="1.05x (tools/call)")
    ax.axvline(1.10, color="grey", linestyle=":", linewidth=0.8, label="1.10x (tools/list)")
    ax.set_yticks(list(ys))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("time ours / plain FastMCP (log scale; < 1 is faster)")
    ax.set_title("Latency ratios, measured alternately in one process")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(plt, fig, folder / "latency_ratios.png")


def _scale(plt: Any, results: Results, folder: Path) -> Path | None:
    rows = results.listing_scale
    if not rows:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for variant in dict.fromkeys(r.variant for r in rows):
        mine = [r for r in rows if r.variant == variant]
        sizes = [r.tools for r in mine]
        left.plot(sizes, [r.warm.median_us / 1e3 for r in mine], marker="o", label=variant)
        right.plot(sizes, [max(r.retained_kib, 1.0) / 1024 for r in mine], marker="o",
                   label=variant)
    left.set_title("tools/list, in memory (median)")
    left.set_ylabel("ms")
    right.set_title("held by the server after its first listing")
    right.set_ylabel("MiB")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tools in the catalog")
        ax.legend(fontsize=8)
    return _save(plt, fig, folder / "scale_listing.png")


def _hosts(plt: Any, results: Results, folder: Path) -> Path | None:
    names = catalogs(results)
    rows = [(host, shares) for host, shares in cuts(results)
            if any(s is not None for s in shares)]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.42 * len(rows)))
    ys = list(range(len(rows)))
    height = 0.8 / max(len(names), 1)
    colors = ("#4c72b0", "#55a868", "#c44e52", "#8172b2")
    for i, catalog in enumerate(names):
        offset = (i - (len(names) - 1) / 2) * height
        ax.barh([y + offset for y in ys], [100 * (shares[i] or 0) for _, shares in rows],
                height, color=colors[i % len(colors)], label=catalog)
    ax.axvline(100 * SESSION_CUT, color="black", linestyle="--", linewidth=0.8,
               label=f"{SESSION_CUT:.0%} (every framework)")
    ax.set_yticks(ys)
    ax.set_yticklabels([host for host, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(min(0, *(100 * (s or 0) for _, shares in rows for s in shares)), 100)
    ax.set_xlabel("% fewer o200k tokens in the whole session than against the plain server "
                  "(a tool not in the default listing; no bar: plain does not load, or the "
                  "tool never ran)")
    ax.set_title("A first use in agent frameworks, the one-line default")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(plt, fig, folder / "hosts_cuts.png")
