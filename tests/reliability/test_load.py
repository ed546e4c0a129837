"""Load: many concurrent clients over real HTTP, in both eras, for a fixed amount of work.

Each client owns one tool (``tNN``), reads only that tool's description, and loops
``tools/list`` -> read its tool -> call its tool -> call another client's tool, once for
each other client and once more. That call must be refused with TOOL_DESCRIPTION_REQUIRED
the first time: the other client has unlocked that tool for itself, so a grant leaking
across sessions or principals shows up as a call that goes through; the last iteration
calls the tool its first refusal taught, which must run. The work is counted, not timed
(issue 34): a slow machine takes longer, and checks exactly as much. Legacy clients all
share one token (one principal), so only the session keeps them apart; 2026-07-28 clients
each have their own principal.

Afterwards the memory the package holds must be back to its baseline: no legacy session
left in the grant store or in the watcher's session registry, and (tracemalloc, filtered
to allocations made in ``fastmcp_progressive`` files) no growth beyond a small bound.
"""

from __future__ import annotations

import gc
import json
import linecache
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

import fastmcp_progressive
from fastmcp_progressive import ProgressiveDisclosure
from tests.conftest import ERAS, Era, connect, fetch, serve_http
from tests.parts import names_cached, parts, sessions_held
from tests.reliability import figures
from tests.reliability.app import make_server
from tests.versions import SERVER_KEEPS_LISTED_TOOLS
from tests.waiting import PATIENCE, reached, until

# 1,600 requests from 20 concurrent clients per era, memory traced
# (the xdist group keeps the file on one worker: tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("timed-processes")]

CLIENTS = 20
ITERATIONS = CLIENTS
"""Loops per client in the load round: every other client's tool once (refused: 19 leak
checks), then the first of them again (taught by its refusal: it runs)."""
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
    i: int, url: str, era: Era, iterations: int, stats: Stats, barrier: Barrier | None
) -> None:
    """One client: read its own tool, then loop ``iterations`` times.

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
            for _ in range(iterations):
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
    except Exception as exc:  # counted, not raised: the test reports every failure
        stats.failures.append(f"{era} client {i}: {type(exc).__name__}: {exc}"[:300])
        if barrier is not None and not barrier.event.is_set():
            await barrier.wait()  # never leave the others waiting


async def _round(
    url: str,
    era: Era,
    stats: Stats,
    iterations: int = 1,
    on_ready: Callable[[], None] | None = None,
    clients: int = CLIENTS,
) -> None:
    """``clients`` clients at once, each looping ``iterations`` times; with ``on_ready``,
    none starts looping before all hold their grant (``on_ready`` runs then)."""
    barrier = Barrier(clients) if on_ready is not None else None
    async with anyio.create_task_group() as group:
        for i in range(clients):
            group.start_soon(_client, i, url, era, iterations, stats, barrier)
        if barrier is not None and on_ready is not None:
            with anyio.fail_after(PATIENCE):
                await barrier.event.wait()
            on_ready()


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
    # load round stopped: each client calls the next tool its refusals taught it. A
    # handshake-era session's grants end with it: the traced round's new sessions start over
    memory = Stats(per_client=load.per_client if era == "modern" else {})

    def released() -> bool:
        return (sessions_held(parts(middleware).grants) == 0
                and len(parts(middleware).hot_reload.sessions) == 0)

    async with serve_http(server) as url:
        # 1. load: every client loops ITERATIONS times, all at once (no tracing)
        held_during: list[int] = []
        await _round(url, era, load, ITERATIONS,
                     lambda: held_during.append(sessions_held(parts(middleware).grants)))
        await until(released, what="sessions released after the load", interval=0.05)

        # 2. memory: tracing starts now, so what a snapshot finds in package files after
        # one more round of sessions has ended is exactly what those sessions left behind
        tracemalloc.start()
        try:
            await _round(url, era, memory, clients=MEMORY_CLIENTS)
            await until(released, what="sessions released", interval=0.05)
            # A request the server is still winding down (its context, caller and headers)
            # is alive for a moment after the client has gone: poll until what is left
            # settles; a real leak stays and fails below.
            left: list[tuple[int, int]] = []

            def settled() -> bool:
                gc.collect()
                left.append(_package_bytes(tracemalloc.take_snapshot()))
                return left[-1][1] < RETAINED_LIMIT

            await reached(settled, PATIENCE, interval=0.1)
            grant_keys, other = left[-1]
        finally:
            tracemalloc.stop()

    for stats in (load, memory):
        assert stats.failures == [], stats.failures[:5]
        assert stats.leaks == [], stats.leaks[:5]
    assert load.iterations == CLIENTS * ITERATIONS  # each client did all its work
    assert load.checks == CLIENTS * (CLIENTS - 1)  # each tried every other client's tool
    if era == "legacy":
        assert held_during == [CLIENTS]  # one grant set per live session, while they live
    # legacy: no grant key at all. 2026-07-28: the grant keys rewritten in FastMCP's state
    # store (each client read its tool twice: a key string per write, ~122 B)
    assert other < RETAINED_LIMIT, f"sessions left {other} B behind in the package"
    assert grant_keys <= (0 if era == "legacy" else MEMORY_CLIENTS * 2 * 256), grant_keys
    assert names_cached(parts(middleware).store) <= CLIENTS

    requests = load.requests + memory.requests
    figures.add("load: requests", requests)
    figures.add("load: failed requests", len(load.failures) + len(memory.failures))
    figures.add("load: cross-session leaks", len(load.leaks) + len(memory.leaks))
    figures.add("load: leak checks", load.checks + memory.checks)
    figures.put("load: concurrency",
                f"{CLIENTS} clients per era x {ITERATIONS} iterations, 2 eras")
    figures.put(f"load: {era} bytes left in package files by {MEMORY_CLIENTS} ended sessions",
                f"{other} (+ {grant_keys} of grant keys held by the state store)")
