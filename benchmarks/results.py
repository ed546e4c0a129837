"""The measured numbers as plain data: what ``measure/`` writes and ``report/`` reads.

The bottom of the benchmarks (it imports nothing else of them): the rows, the names both
sides agree on, and ``results.json`` in and out, so the report is re-rendered from the file
alone and the smoke test asserts on numbers instead of scraping Markdown.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

DEFAULT = "typed"
"""The listing level ours runs at unless a row names another (``ListingSettings``' default)."""
BUDGETED = "default"
"""The token mode of ours as one line ships it, ``ProgressiveDisclosure()``: the default level
and the default budget (``max_tools="auto"``: every tool up to 50, above at most 20 entries).
Every other mode of ours lists every tool (``max_tools=None``)."""
HEADLINE_CATALOG = "github-mcp-server"
RANK_CATALOG = "livemcptool"
GROUPED_CASE = "groups, capped"
FIRST_LISTING_CASE = "first listing"
FULL_RANKERS = ("full definitions, our BM25", "full definitions, bm25s")
"""Selection's yardsticks (a): rankers over the full definitions, ours first."""
SEARCH = "FastMCP BM25SearchTransform"
QUERY = "describe_tools query"
QUERY_IN_USE = "describe_tools query, server in use"
YARDSTICKS = (*FULL_RANKERS, SEARCH)
"""Selection's yardsticks: rankers over the full definitions; FastMCP's BM25 (``SEARCH``)
is one too, its documents being a tool's name, description, argument names and theirs."""


@dataclass(frozen=True)
class Stats:
    """Summary of timing samples, in microseconds."""

    n: int
    median_us: float
    p95_us: float

    @classmethod
    def from_ns(cls, samples: list[int]) -> Stats:
        if not samples:
            raise ValueError("no samples")
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return cls(n=len(ordered), median_us=statistics.median(ordered) / 1e3, p95_us=p95 / 1e3)


@dataclass(frozen=True)
class TokenRow:
    """Tokens one mode costs on one catalog (per field, one JSON array, the whole wire
    result); ``names_visible``: the catalog's tools the model can name afterwards."""

    catalog: str
    tools: int
    mode: str
    fields: int
    json: int
    wire: int
    names_visible: int


@dataclass(frozen=True)
class AnatomyRow:
    """Where a listing's per-field tokens go: names, descriptions, input schemas."""

    catalog: str
    mode: str
    listed: int
    names: int
    descriptions: int
    schemas: int


@dataclass(frozen=True)
class SweepRow:
    """Default-level listing tokens at one ``summary_max_chars``."""

    catalog: str
    summary_max_chars: int
    fields: int
    json: int


@dataclass(frozen=True)
class RankRow:
    """Task tools a ranker finds in the top ``k``, ranking over ``source`` (the full
    definitions, or the listing at ``summary_max_chars``)."""

    catalog: str
    ranker: str
    source: str
    summary_max_chars: int | None
    k: int
    found: int
    total: int

    @property
    def recall(self) -> float:
        return self.found / self.total if self.total else 0.0


@dataclass(frozen=True)
class SelectionPair:
    """One LiveMCPBench task-tool pair (issue 28): where each way of finding tools puts the
    task's tool. ``ranks``: per method (``YARDSTICKS``, ``QUERY``, ``QUERY_IN_USE``), the
    tool's 1-based place in its answer to the task's ``question`` (``None``: not among the
    ones it returned); ``listed``: in the listing a new caller gets by default; ``listed_all``: in
    the listing with the budget off; ``listed_in_use``: in the listing a new caller gets on
    a server whose earlier callers ran the other tasks (``QUERY_IN_USE``: its query)."""

    catalog: str
    task: str
    question: str
    tool: str
    listed: bool
    listed_all: bool
    ranks: dict[str, int | None]
    listed_in_use: bool = False

    def found(self, method: str, k: int) -> bool:
        """In ``method``'s top ``k``."""
        place = self.ranks.get(method)
        return place is not None and place <= k

    def ours(self, k: int) -> bool:
        """Listed for a new caller, or in the query's top ``k``: what ours puts in front
        of the model without a search of its own."""
        return self.listed or self.found(QUERY, k)

    def ours_in_use(self, k: int) -> bool:
        """``ours`` on a server whose earlier callers ran the other tasks' tools."""
        return self.listed_in_use or self.found(QUERY_IN_USE, k)


@dataclass(frozen=True)
class LatencyRow:
    """Plain FastMCP against ours for one operation, timed alternately; ``transport``
    names the case (transport and deployment shape), ``tools`` the catalog size."""

    transport: str
    op: str
    plain: Stats
    ours: Stats
    plain_server: Stats | None = None
    ours_server: Stats | None = None
    tools: int = 0

    @property
    def case(self) -> str:
        return self.transport

    @property
    def ratio_median(self) -> float:
        return self.ours.median_us / self.plain.median_us

    @property
    def ratio_p95(self) -> float:
        return self.ours.p95_us / self.plain.p95_us



@dataclass(frozen=True)
class ListingScaleRow:
    """Listing cost of one synthetic catalog size under one variant."""

    tools: int
    variant: str
    cold_ms: float
    warm: Stats
    server_ms: float
    peak_kib: float
    retained_kib: float


@dataclass(frozen=True)
class GrantScaleRow:
    """Memory and lookup time of the grant store holding many callers."""

    kind: str
    callers: int
    grants_each: int
    fill_s: float
    memory_mib: float
    write: Stats
    hit: Stats
    miss: Stats

    @property
    def bytes_per_caller(self) -> float:
        return self.memory_mib * 2**20 / self.callers


@dataclass(frozen=True)
class FileEditRow:
    """From a description-file write to the first read serving it: ``served`` trials
    before the deadline, ``stale_reads`` over them that still answered the old text."""

    how: str
    trials: int
    served: int
    write_to_served: Stats | None
    max_reads: int
    stale_reads: int


@dataclass(frozen=True)
class MemoryRow:
    """What one of ours' caches holds per entry, and its bound (entries)."""

    cache: str
    entries: int
    bound: int
    kib: float
    note: str = ""

    @property
    def bytes_per_entry(self) -> float:
        return self.kib * 1024 / self.entries if self.entries else 0.0


@dataclass(frozen=True)
class HostRow:
    """One agent host's run for one catalog, listing and target (``measure/hosts.py``):
    ``tokens`` of its first request's ``tools`` array (-1: none sent), ``floor_tokens`` of
    the same without descriptions, ``session_tokens`` of every request body (``requests`` of
    them), ``steps_to_first_success`` the request whose call first ran the tool;
    ``target_listed``: whether the target was in the first ``tools`` array; ``setting``: the
    documented setting the run made (``tests/hosts/frameworks.py``), "" for the defaults."""

    host: str
    catalog: str
    listing: str
    tools_sent: int
    tokens: int
    steps_to_first_success: int | None
    refusals: int
    body_ran: bool
    arguments_intact: bool
    client: str
    floor_tokens: int = -1
    arguments_declared: str = ""
    error: str = ""
    session_tokens: int = -1
    requests: int = 0
    target: str = "listed"
    transport: str = "http"
    target_listed: bool = True
    setting: str = ""


ROWS: dict[str, type] = {
    "tokens": TokenRow, "anatomy": AnatomyRow, "sweep": SweepRow, "ranking": RankRow,
    "selection": SelectionPair, "latency": LatencyRow, "listing_scale": ListingScaleRow,
    "grants": GrantScaleRow,
    "file_edits": FileEditRow, "scaling": LatencyRow, "memory": MemoryRow, "hosts": HostRow,
}
"""The ``Results`` lists of rows, and each one's row type (``read_json``)."""


@dataclass
class Results:
    """Everything measured, where and how. ``config["measured"]`` says per section when, on
    which revision and under what load it ran (sections are measured and merged apart)."""

    machine: dict[str, str]
    config: dict[str, Any]
    tokens: list[TokenRow] = field(default_factory=list)
    anatomy: list[AnatomyRow] = field(default_factory=list)
    sweep: list[SweepRow] = field(default_factory=list)
    ranking: list[RankRow] = field(default_factory=list)
    selection: list[SelectionPair] = field(default_factory=list)
    latency: list[LatencyRow] = field(default_factory=list)
    listing_scale: list[ListingScaleRow] = field(default_factory=list)
    grants: list[GrantScaleRow] = field(default_factory=list)
    file_edits: list[FileEditRow] = field(default_factory=list)
    scaling: list[LatencyRow] = field(default_factory=list)
    memory: list[MemoryRow] = field(default_factory=list)
    facts: dict[str, float] = field(default_factory=dict)
    hosts: list[HostRow] = field(default_factory=list)
    gateway: dict[str, Any] = field(default_factory=dict)
    gateway_hosts: dict[str, Any] = field(default_factory=dict)
    """The host matrix on the gateway (``note``, ``rows``), copied from a run of
    ``tests/hosts/test_matrix.py``: no section measures it, so none replaces it."""
    lookups: dict[str, Any] = field(default_factory=dict)
    resolution: list[dict[str, Any]] = field(default_factory=list)
    hostile: dict[str, Any] = field(default_factory=dict)
    proxy_start: dict[str, Any] = field(default_factory=dict)
    speed: list[dict[str, Any]] = field(default_factory=list)
    """Issue 35's CPU-time ratios at 1,000 tools (``measure/speed.py``), one dict a case."""
    seconds: float = 0.0

    def token(self, catalog: str, mode: str) -> TokenRow | None:
        return next((r for r in self.tokens if r.catalog == catalog and r.mode == mode), None)

    def latency_row(self, transport: str, op: str) -> LatencyRow | None:
        return next((r for r in self.latency if r.transport == transport and r.op == op), None)

    def measured(self, section: str) -> str:
        """When and where ``section`` was measured ("" when unknown)."""
        stamp: str = self.config.get("measured", {}).get(section, "")
        return stamp

    @classmethod
    def read_json(cls, path: Path) -> Results:
        """Results as ``write_json`` stored them (to re-render without measuring again)."""
        data = json.loads(path.read_text(encoding="utf-8"))
        known = {f.name for f in fields(cls)}
        out = cls(**{k: v for k, v in data.items() if k in known and k not in ROWS})
        for name, row_type in ROWS.items():
            setattr(out, name, [_row(row_type, raw) for raw in data.get(name, [])])
        return out

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = asdict(self)
        for name in ("latency", "scaling"):
            for row, raw in zip(getattr(self, name), data[name], strict=True):
                raw["ratio_median"] = round(row.ratio_median, 4)
                raw["ratio_p95"] = round(row.ratio_p95, 4)
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _row(row_type: type, raw: dict[str, Any]) -> Any:
    """One row from its JSON (timing summaries back to ``Stats``; derived ratios dropped)."""
    names = {f.name: f.type for f in fields(row_type)}
    values = {k: Stats(**v) if isinstance(v, dict) and "median_us" in v else v
              for k, v in raw.items() if k in names}
    return row_type(**values)
