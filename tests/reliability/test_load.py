"""Load: many concurrent clients over real HTTP, in both eras, for a bounded time.

Each client owns one tool (``tNN``), reads only that tool's description, and loops
``tools/list`` -> read its tool -> call its tool -> call the next client's tool. The last
call must be refused with TOOL_DESCRIPTION_REQUIRED every time: the next client has
unlocked that tool for itself, so a grant leaking across sessions or principals shows up
as a call that goes through. Legacy clients all share one token (one principal), so only
the session keeps them apart; 2026-07-28 clients each have their own principal.

Afterwards the memory the package holds must be back to its baseline: no legacy session
left in the grant store or in the watcher's session registry, and (tracemalloc, filtered
to allocations made in ``fastmcp_progressive`` files) no growth beyond a small bound.
"""

from __future__ import annotations

import gc
import json
import linecache
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

import fastmcp_progressive
from fastmcp_progressive import ProgressiveDisclosure
from tests.conftest import ERAS, Era, connect, fetch, serve_http
from tests.reliability import figures
from tests.reliability.app import make_server
from tests.versions import SERVER_KEEPS_LISTED_TOOLS
from tests.waiting import cost_checks_done, reached, until

# seconds of load from 20 clients per era, memory traced
# (the xdist group keeps the file on one worker: tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("timed-processes")]

CLIENTS = 20
SECONDS = 3.0
PACKAGE_DIR = str(Path(fastmcp_progressive.__file__).parent)
MEMORY_CLIENTS = 10  # sessions in the traced round (tracemalloc slows everything ~4x)
# Bytes those sessions may leave in package files: a leaked session would leave its grant
# set and registry entry (~400 B each, 4 KiB for 10); what is legitimately alive at the
# snapshot (the watcher's current batch, a grown dict table) is a few hundred bytes.
RETAINED_LIMIT = 2048


@dataclass
class Stats:
    requests: int = 0
    iterations: int = 0
    checks: int = 0
    failures: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    per_client: dict[int, int] = field(default_factory=dict)


def stats_for_client(stats: Stats, i: int) -> int:
    """How many foreign calls client ``i`` has made so far (and count this one)."""
    k = stats.per_client.get(i, 0)
    stats.per_client[i] = k + 1
    return k


class Barrier:
    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.event = anyio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived >= self.parties:
            self.event.set()
        await self.event.wait()


def _token(era: Era, i: int) -> str:
    return "alice-token" if era == "legacy" else f"user-{i}-token"


async def _client(
    i: int, url: str, era: Era, stop_at: list[float], stats: Stats, barrier: Barrier | None
) -> None:
    """One client: read its own tool, then loop until ``stop_at[0]`` (at least once).

    Each iteration calls another client's tool this client has not called yet, which must
    be refused (a grant never crosses clients); the refusal teaches and grants it to this
    client, so once every other tool has been tried, calls run.
    """
    own = f"t{i:02d}"
    try:
        async with connect(url, era, token=_token(era, i)) as c:
            assert (await fetch(c, own))[own]["name"] == own
            stats.requests += 1
            if barrier is not None:
                await barrier.wait()  # every client holds its grant before anyone checks
            while True:
                listed = {t.name: t for t in await c.list_tools()}
                assert listed[own].input_schema["properties"] == {"x": {"type": "integer"}}
                body = await fetch(c, own)
                assert body[own]["description"].startswith(f"Add {i} to x.")
                result = await c.call_tool(own, {"x": 1})
                assert result.structured_content == {"result": 1 + i}
                k = stats_for_client(stats, i)
                index = (i + 1 + k % (CLIENTS - 1)) % CLIENTS
                foreign = f"t{index:02d}"
                other = await c.call_tool(foreign, {"x": 1}, raise_on_error=False)
                stats.requests += 4
                stats.iterations += 1
                code = (other.structured_content or {}).get("error", {}).get("code")
                if k < CLIENTS - 1:
                    stats.checks += 1
                    if code != "TOOL_DESCRIPTION_REQUIRED":
                        stats.leaks.append(f"{era} client {i} called {foreign}: {other.content}")
                elif other.structured_content != {"result": 1 + index}:  # taught: it runs
                    stats.failures.append(f"{era} client {i}: {foreign} after its refusal")
                if time.monotonic() >= stop_at[0]:
                    break
    except Exception as exc:  # counted, not raised: the test reports every failure
        stats.failures.append(f"{era} client {i}: {type(exc).__name__}: {exc}"[:300])
        if barrier is not None and not barrier.event.is_set():
            await barrier.wait()  # never leave the others waiting


async def _round(
    url: str,
    era: Era,
    stats: Stats,
    seconds: float | None,
    on_ready: Callable[[], None] = lambda: None,
    clients: int = CLIENTS,
) -> float:
    """CLIENTS clients at once; each loops for ``seconds`` once all hold their grant
    (``on_ready`` runs then), or once through when ``seconds`` is None. Returns the
    seconds the loops ran."""
    barrier = Barrier(clients) if seconds is not None else None
    stop_at = [float("inf") if seconds is not None else 0.0]
    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for i in range(clients):
            group.start_soon(_client, i, url, era, stop_at, stats, barrier)
        if barrier is not None and seconds is not None:
            with anyio.fail_after(60):
                await barrier.event.wait()
            on_ready()
            started = time.monotonic()
            stop_at[0] = started + seconds
    return time.monotonic() - started


def _package_bytes(snapshot: tracemalloc.Snapshot) -> tuple[int, int]:
    """(bytes of grant-store keys, every other byte) allocated in package files and alive."""
    mine = snapshot.filter_traces([tracemalloc.Filter(True, f"{PACKAGE_DIR}/*")])
    keys = other = 0
    for stat in mine.statistics("lineno"):
        frame = stat.traceback[0]
        line = linecache.getline(frame.filename, frame.lineno)
        if frame.filename.endswith("grants.py") and "|" in line:
            keys += stat.size  # the f"{prefix}|{tool}" key string handed to the key-value store
        elif SERVER_KEEPS_LISTED_TOOLS and (
            "super().to_mcp_tool(" in line or "self._build_wire(**overrides)" in line
        ):
            continue  # FastMCP 4.2's server-wide copy of the last listing, not per session
        else:
            other += stat.size
    return keys, other


@pytest.mark.parametrize("era", ERAS)
async def test_concurrent_clients_no_failures_no_leaks_memory_back_to_baseline(
    era: Era, tmp_path: Path
) -> None:
    folder = tmp_path / "descriptions"
    folder.mkdir()
    for i in range(CLIENTS):
        (folder / f"t{i:02d}.json").write_text(json.dumps({
            "summary": f"Add {i} to x.",
            "description": f"Add {i} to x. Returns an integer.",
            "examples": [{"description": "one", "input": {"x": 1}}],
        }))
    middleware = ProgressiveDisclosure(descriptions_dir=folder)
    server = make_server(tools=CLIENTS, middleware=middleware)
    load = Stats()
    # principal grants outlive a round (by design), so the traced round goes on where the
    # load round stopped: each client still calls only tools it was never refused
    memory = Stats(per_client=load.per_client)

    def released() -> bool:
        return (middleware.grants.held_in_memory() == 0
                and len(middleware.hot_reload.sessions) == 0)

    async with serve_http(server) as url:
        # 1. load: every client loops for SECONDS, all at once (no tracing: full speed)
        held_during: list[int] = []
        elapsed = await _round(url, era, load, SECONDS,
                               lambda: held_during.append(middleware.grants.held_in_memory()))
        await until(released, 10, "sessions released after the load", interval=0.05)

        # 2. memory: tracing starts now, so what a snapshot finds in package files after
        # one more round of sessions has ended is exactly what those sessions left behind
        cost_checks_done()
        tracemalloc.start()
        try:
            await _round(url, era, memory, None, clients=MEMORY_CLIENTS)
            await until(released, 10, "sessions released", interval=0.05)
            # A request the server is still winding down (its context, caller and headers)
            # is alive for a moment after the client has gone: poll until what is left
            # settles; a real leak stays and fails below.
            left: list[tuple[int, int]] = []

            # The gate's Recall (a bounded LRU of the tools called, not of sessions) kept
            # each tool this round called first: emptied, so what stays is what sessions
            # left (a Found a session still held would stay and count).
            middleware._recall._kept.clear()

            def settled() -> bool:
                gc.collect()
                left.append(_package_bytes(tracemalloc.take_snapshot()))
                return left[-1][1] < RETAINED_LIMIT

            await reached(settled, 5, interval=0.1)
            grant_keys, other = left[-1]
        finally:
            tracemalloc.stop()

    for stats in (load, memory):
        assert stats.failures == [], stats.failures[:5]
        assert stats.leaks == [], stats.leaks[:5]
    assert load.iterations >= 2 * CLIENTS, "the clients barely ran"
    if era == "legacy":
        assert held_during == [CLIENTS]  # one grant set per live session, while they live
    # legacy: no grant key at all. 2026-07-28: the grant keys rewritten in FastMCP's state
    # store (each client read its tool twice: a key string per write, ~122 B)
    assert other < RETAINED_LIMIT, f"sessions left {other} B behind in the package"
    assert grant_keys <= (0 if era == "legacy" else MEMORY_CLIENTS * 2 * 256), grant_keys
    assert middleware.store.cached() <= CLIENTS

    requests = load.requests + memory.requests
    figures.add("load: requests", requests)
    figures.add("load: failed requests", len(load.failures) + len(memory.failures))
    figures.add("load: cross-session leaks", len(load.leaks) + len(memory.leaks))
    figures.add("load: leak checks", load.checks + memory.checks)
    figures.put("load: concurrency", f"{CLIENTS} clients per era x {SECONDS:.0f}s, 2 eras")
    figures.put(f"load: {era} requests/s (untraced phase)", round(load.requests / elapsed))
    figures.put(f"load: {era} bytes left in package files by {MEMORY_CLIENTS} ended sessions",
                f"{other} (+ {grant_keys} of grant keys held by the state store)")
