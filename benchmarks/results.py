"""The measured numbers, as plain dataclasses shared by the benches, the report and plots.

Keeping results as data (and dumping them to ``results.json``) separates measuring from
presenting: the report and the plots can be re-rendered, and the smoke test can assert
on numbers instead of scraping Markdown.

Example:
    ```python
    stats = Stats.from_ns([1_000, 2_000, 3_000])
    stats.median_us  # 2.0
    ```
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


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
    """Tokens one mode costs on one catalog (see ``tokens.py`` for the three counts).

    ``names_visible``: how many of the catalog's tools the model can name afterwards.
    """

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
    """How many of the tasks' tools an offline BM25 ranker finds in the top ``k``, ranking
    over ``source`` (the full definitions, or the listing at ``summary_max_chars``)."""

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
class LatencyRow:
    """Plain FastMCP vs ours for one operation on one transport, measured alternately."""

    transport: str
    op: str
    plain: Stats
    ours: Stats
    plain_server: Stats | None = None
    ours_server: Stats | None = None

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
    """From a description-file write to the first read that serves the new content.

    ``served``: trials whose new text was served before the deadline; ``stale_reads``:
    reads, over all served trials, that still answered the old text.
    """

    how: str
    trials: int
    served: int
    write_to_served: Stats | None
    max_reads: int
    stale_reads: int


@dataclass(frozen=True)
class ScalingRow(LatencyRow):
    """A ``LatencyRow`` at one catalog size; ``transport`` names the case (deployment
    shape and transport, e.g. ``mounted`` or ``http+auth``)."""

    tools: int = 0

    @property
    def case(self) -> str:
        return self.transport


@dataclass(frozen=True)
class MemoryRow:
    """What one of ours' caches holds per entry, and its bound (entries; 0: none)."""

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
    """One agent host's first model request for one catalog and listing (``host_bench.py``).

    ``tokens``: o200k_base of the ``tools`` array as the host sent it (compact JSON);
    ``tools_sent``: entries in it; ``steps_to_first_success``: model steps up to and
    including the one whose tool call first succeeded (None: never); ``floor_tokens``: the
    same array with every tool's description removed (what the host's wrapping, the names
    and the schemas cost on their own); ``arguments_declared``: whether the schema sent for
    the scenario's tool lets a model send its arguments (``declared``, ``open``,
    ``forbidden``: ``additionalProperties: false`` without them); ``session_tokens``: o200k
    of every request body the host sent the model in the run, summed (``requests`` of them).
    """

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


@dataclass
class Results:
    """Everything one run measured, plus where and how it ran."""

    machine: dict[str, str]
    config: dict[str, Any]
    tokens: list[TokenRow] = field(default_factory=list)
    anatomy: list[AnatomyRow] = field(default_factory=list)
    sweep: list[SweepRow] = field(default_factory=list)
    ranking: list[RankRow] = field(default_factory=list)
    latency: list[LatencyRow] = field(default_factory=list)
    listing_scale: list[ListingScaleRow] = field(default_factory=list)
    grants: list[GrantScaleRow] = field(default_factory=list)
    file_edits: list[FileEditRow] = field(default_factory=list)
    scaling: list[ScalingRow] = field(default_factory=list)
    memory: list[MemoryRow] = field(default_factory=list)
    facts: dict[str, float] = field(default_factory=dict)
    hosts: list[HostRow] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def token(self, catalog: str, mode: str) -> TokenRow | None:
        return next((r for r in self.tokens if r.catalog == catalog and r.mode == mode), None)

    def latency_row(self, transport: str, op: str) -> LatencyRow | None:
        return next((r for r in self.latency if r.transport == transport and r.op == op), None)

    @classmethod
    def read_json(cls, path: Path) -> Results:
        """Results as ``write_json`` stored them (to re-render without measuring again)."""
        data = json.loads(path.read_text(encoding="utf-8"))

        def stats(raw: dict[str, Any] | None) -> Stats | None:
            return Stats(**raw) if raw else None

        def stats_of(raw: dict[str, Any], *keys: str) -> dict[str, Any]:
            return {**raw, **{k: stats(raw[k]) for k in keys}}

        def timed(raw: dict[str, Any]) -> dict[str, Any]:
            kept = {k: v for k, v in raw.items() if not k.startswith("ratio")}
            return stats_of(kept, "plain", "ours", "plain_server", "ours_server")

        latency = [LatencyRow(**timed(row)) for row in data["latency"]]
        return cls(
            machine=data["machine"], config=data["config"],
            tokens=[TokenRow(**r) for r in data["tokens"]],
            anatomy=[AnatomyRow(**r) for r in data["anatomy"]],
            sweep=[SweepRow(**r) for r in data["sweep"]],
            ranking=[RankRow(**r) for r in data.get("ranking", [])],
            latency=latency,
            listing_scale=[ListingScaleRow(**stats_of(r, "warm")) for r in data["listing_scale"]],
            grants=[GrantScaleRow(**stats_of(r, "write", "hit", "miss")) for r in data["grants"]],
            file_edits=[FileEditRow(**stats_of(r, "write_to_served")) for r in data["file_edits"]],
            scaling=[ScalingRow(**timed(r)) for r in data.get("scaling", [])],
            memory=[MemoryRow(**r) for r in data.get("memory", [])],
            facts=data.get("facts", {}),
            hosts=[HostRow(**r) for r in data.get("hosts", [])],
            findings=data["findings"], seconds=data["seconds"],
        )

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = asdict(self)
        rows = [*self.latency, *self.scaling]
        for row, raw in zip(rows, [*data["latency"], *data["scaling"]], strict=True):
            raw["ratio_median"] = round(row.ratio_median, 4)
            raw["ratio_p95"] = round(row.ratio_p95, 4)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
