"""Section ``speed``: issue 35's speed targets at 1,000 tools, as CPU-time ratios in one run.

Wall time on a shared two-core machine measures the neighbours; what a request costs this
process is its CPU time. So every case runs plain FastMCP and ours alternately in rounds (which
side goes first swaps each round), each side ``repetitions`` requests in a row timed by
``time.process_time``; a side's cost is the median over rounds of its CPU time per request,
the ratio ours / plain of those medians (``low``/``high``: the quartiles of the rounds' own
ratios, to show how steady the run was). Many short rounds: on a shared core a request's CPU
time itself swings with what the core's other hyperthread runs, so the sides alternate often.
Client and server share the process (in memory): both sides' client work is in both figures.

The cases (each target from issue 35):

- a ``resources/read`` of the descriptions URI naming 5 and 20 tools, against plain FastMCP
  answering the same bytes after its own ``get_tool`` for each name (``LookupFloor``: the
  floor issue 26 measured, FastMCP's lookup being a scan): <= 1.15x;
- a granted call (the tool read first) against the same call on plain, in both eras: a
  handshake-era session keeps grants; a 2026-07-28 caller in memory has no authorization,
  so it is anonymous and its call is judged by its arguments after the read; the modern
  caller that keeps grants, a principal, over streamable HTTP with a bearer token (client,
  server and HTTP stack in this process, so its ratio is diluted by HTTP's work): <= 1.15x;
- a call by FastMCP's default ``Client`` (``clientInfo`` ``fastmcp``, 2026-07-28, judged by
  its arguments) on the one-line default listing budget (``ListingSettings()``), of a tool
  the budget lists for a generic host and of one it does not, through ``Client.call_tool``
  (whose result parsing lists again for a tool its listing lacks, issue 33): <= 1.5x;
- a refused call (``TOOL_DESCRIPTION_REQUIRED``, handshake era, each tool once: a refusal
  grants its tool) against plain's successful call of the same tools: <= 1.5x.

Servers are built as section 4 builds its 1,000-tool ones (``build_server``, a description
file per tool for ours, every tool listed unless the case is about the budget). Before timing,
each probe is run once and checked to do what its case says (a refusal refuses, a call runs,
the budget lists one tool and not the other), so a change of behaviour fails the benchmark's
test instead of timing something else.

Example:
    ```python
    rows = await measure(SMOKE)
    print(render_table(rows))
    ```
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from fastmcp import Client

from fastmcp_progressive import ListingSettings
from fastmcp_progressive.payloads import TOOL_DESCRIPTION_REQUIRED, resource_uri_for

from ..results import DEFAULT
from .catalogs import Catalog, read_selection, scenario_for, synthetic_catalog
from .scaling import LookupFloor
from .servers import (
    TRANSPORTS,
    ReplayServer,
    build_server,
    connect,
    host_client,
    sample_arguments,
    text_of,
    unread_calls,
    write_descriptions,
)

Op = Callable[[], Awaitable[Any]]
READ_TARGET = 1.15
GRANTED_TARGET = 1.15
JUDGED_TARGET = 1.5
REFUSED_TARGET = 1.5


@dataclass(frozen=True)
class SpeedBudget:
    """The catalog's size, the rounds per case and each side's requests per round."""

    tools: int
    rounds: int
    repetitions: int
    warmup: int = 3


FULL = SpeedBudget(tools=1_000, rounds=90, repetitions=5)
SMOKE = SpeedBudget(tools=60, rounds=2, repetitions=2, warmup=1)


@dataclass(frozen=True)
class SpeedRow:
    """One case: each side's median CPU µs per request, their ratio, the target."""

    case: str
    ours_us: float
    plain_us: float
    ratio: float
    low: float
    """The rounds' own ratios (ours / plain): first quartile."""
    high: float
    """Third quartile."""
    target: float
    rounds: int
    repetitions: int
    tools: int

    @property
    def met(self) -> bool:
        return self.ratio <= self.target


async def _cpu_per_request(op: Op, repetitions: int) -> float:
    """CPU seconds per request over ``repetitions`` requests, from a collected heap."""
    gc.collect()
    began = time.process_time()
    for _ in range(repetitions):
        await op()
    return (time.process_time() - began) / repetitions


async def compared_cpu(case: str, plain: Op, ours: Op, target: float, budget: SpeedBudget
                       ) -> SpeedRow:
    """Plain and ours alternately, ``budget.rounds`` rounds after ``budget.warmup`` requests
    each, which side goes first swapping every round."""
    for _ in range(budget.warmup):
        await plain()
        await ours()
    plain_s: list[float] = []
    ours_s: list[float] = []
    gc.collect()
    gc.freeze()  # the servers' heap out of every collection: a round's gc.collect stays cheap
    try:
        for i in range(budget.rounds):
            sides = [(plain, plain_s), (ours, ours_s)]
            for op, into in sides[:: -1 if i % 2 else 1]:
                into.append(await _cpu_per_request(op, budget.repetitions))
    finally:
        gc.unfreeze()
    per_round = [o / p for o, p in zip(ours_s, plain_s, strict=True) if p > 0] or [float("nan")]
    low, high = (statistics.quantiles(per_round, n=4)[::2] if len(per_round) > 1
                 else per_round * 2)
    ours_us, plain_us = statistics.median(ours_s) * 1e6, statistics.median(plain_s) * 1e6
    print(f"[bench]   {case}: {ours_us / plain_us if plain_us else float('inf'):.2f}x",
          file=sys.stderr, flush=True)
    return SpeedRow(case, ours_us, plain_us, ours_us / plain_us if plain_us else float("inf"),
                    low, high, target, budget.rounds, budget.repetitions, budget.tools)


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(f"speed benchmark: {what}; the case would time something else")


def _refused(result: Any) -> bool:
    return bool(result.is_error) and TOOL_DESCRIPTION_REQUIRED in text_of(result.content)


def _each(client: Client[Any], calls: list[tuple[str, dict[str, Any]]]) -> Op:
    """The next of ``calls`` each time (a refusal grants its tool: never the same twice)."""
    turn = iter(range(len(calls)))

    def run() -> Awaitable[Any]:
        name, arguments = calls[next(turn)]
        return client.call_tool_mcp(name, arguments)

    return run


async def _reads(catalog: Catalog, files: Path, budget: SpeedBudget) -> list[SpeedRow]:
    ours = build_server(catalog, DEFAULT, descriptions_dir=files)
    uris = {n: resource_uri_for(read_selection(catalog, n)) for n in (5, 20)}
    async with host_client(ours.mcp) as o:
        bodies = {uri: text_of((await o.read_resource_mcp(uri)).contents)
                  for uri in uris.values()}
    floor = build_server(catalog, "plain", static_resources=bodies, outer=[LookupFloor(
        {uris[n]: read_selection(catalog, n) for n in uris})])
    rows: list[SpeedRow] = []
    async with host_client(floor.mcp) as p, host_client(ours.mcp) as o:
        await ours.settle()
        for n, uri in uris.items():
            _expect(text_of((await o.read_resource_mcp(uri)).contents) == bodies[uri],
                    "ours' read answered other bytes than the floor serves")
            rows.append(await compared_cpu(
                f"read of {n} names", partial(p.read_resource_mcp, uri),
                partial(o.read_resource_mcp, uri), READ_TARGET, budget))
    ours.close()
    return rows


async def _granted(case: str, p: Client[Any], o: Client[Any], ours: ReplayServer,
                   target: str, arguments: dict[str, Any], budget: SpeedBudget) -> SpeedRow:
    """``target`` read by ``o``'s caller, then called on both sides."""
    for client in (p, o):
        await client.list_tools_mcp()
    await o.read_resource_mcp(resource_uri_for([target]))
    await ours.settle()
    for client in (p, o):
        _expect(not (await client.call_tool_mcp(target, arguments)).is_error,
                f"the granted call of {target} ({case}) failed")
    return await compared_cpu(case, partial(p.call_tool_mcp, target, arguments),
                              partial(o.call_tool_mcp, target, arguments), GRANTED_TARGET,
                              budget)


async def _gated(catalog: Catalog, files: Path, budget: SpeedBudget) -> list[SpeedRow]:
    """Granted calls in both eras and refused calls, on servers listing every tool."""
    plain = build_server(catalog, "plain")
    ours = build_server(catalog, DEFAULT, descriptions_dir=files)
    target = scenario_for(catalog).tools(1)[0]
    arguments = sample_arguments(catalog.tool(target))
    unread = unread_calls(catalog, {target})
    needed = budget.warmup + budget.rounds * budget.repetitions
    _expect(len(unread) > needed, f"{needed} refusals need more than {len(unread)} unread tools")
    rows: list[SpeedRow] = []
    async with host_client(plain.mcp, mode="legacy") as p, \
            host_client(ours.mcp, mode="legacy") as o:  # as the tests select an era
        rows.append(await _granted("granted call, legacy", p, o, ours, target, arguments,
                                   budget))
        first, *rest = unread
        _expect(_refused(await o.call_tool_mcp(*first)), "ours did not refuse an unread tool")
        _expect(not (await p.call_tool_mcp(*first)).is_error, "plain's call failed")
        rows.append(await compared_cpu("refused call vs plain's call, legacy", _each(p, rest),
                                       _each(o, rest), REFUSED_TARGET, budget))
    async with host_client(plain.mcp, mode="auto") as p, host_client(ours.mcp, mode="auto") as o:
        rows.append(await _granted("granted call, modern (anonymous: judged by arguments)",
                                   p, o, ours, target, arguments, budget))
    ours.close()
    return [*rows, await _principal(catalog, files, budget, target, unread[0])]


async def _principal(catalog: Catalog, files: Path, budget: SpeedBudget, target: str,
                     unread: tuple[str, dict[str, Any]]) -> SpeedRow:
    """The 2026-07-28 era's followable caller: a principal (a bearer token) over streamable
    HTTP on 127.0.0.1, server and client in this process (in memory no token is presented,
    so no modern caller keeps grants there): ``unread`` is refused to it, ``target`` runs."""
    transport = TRANSPORTS["http+auth"]
    plain = build_server(catalog, "plain", auth=transport.verifier())
    ours = build_server(catalog, DEFAULT, descriptions_dir=files, auth=transport.verifier())
    arguments = sample_arguments(catalog.tool(target))
    async with connect(plain, transport) as p, connect(ours, transport) as o:
        row = await _granted("granted call, modern principal (HTTP, bearer token)", p, o, ours,
                             target, arguments, budget)
        _expect(_refused(await o.call_tool_mcp(*unread)), "ours did not gate the principal")
    ours.close()
    return row


async def _budget_split(ours: ReplayServer, catalog: Catalog) -> tuple[str, str]:
    """A tool the one-line default's budget lists for a generic host, and one it does not."""
    async with host_client(ours.mcp) as generic:
        listed = {t.name for t in (await generic.list_tools_mcp()).tools}
    inside = next((n for n in catalog.names if n in listed), None)
    outside = next((n for n in reversed(catalog.names) if n not in listed), None)
    _expect(inside is not None and outside is not None,
            f"the budget listed {len(listed)} of {len(catalog.names)} tools: no split")
    assert inside is not None and outside is not None
    return inside, outside


async def _judged(catalog: Catalog, files: Path, budget: SpeedBudget) -> list[SpeedRow]:
    """FastMCP's default client (``fastmcp``) on the budgeted default, 2026-07-28."""
    plain = build_server(catalog, "plain")
    ours = build_server(catalog, DEFAULT, descriptions_dir=files, listing=ListingSettings())
    rows: list[SpeedRow] = []
    inside, outside = await _budget_split(ours, catalog)
    async with Client(plain.mcp) as p, Client(ours.mcp) as o:
        for client in (p, o):
            await client.list_tools()
        await ours.settle()
        for label, name in (("lists", inside), ("leaves out", outside)):
            arguments = sample_arguments(catalog.tool(name))
            for client in (p, o):
                result = await client.call_tool(name, arguments, raise_on_error=False)
                _expect(not result.is_error, f"FastMCP's client's call of {name} failed")
            rows.append(await compared_cpu(
                f"judged by arguments (FastMCP's Client), a tool the budget {label}",
                partial(p.call_tool, name, arguments, raise_on_error=False),
                partial(o.call_tool, name, arguments, raise_on_error=False),
                JUDGED_TARGET, budget))
    ours.close()
    return rows


def render_table(rows: list[SpeedRow]) -> str:
    """The rows as a plain-text table (what the section prints)."""
    lines = [f"{'case':<70} {'ours µs':>9} {'plain µs':>9} {'ratio':>6} {'rounds':>11} "
             f"{'target':>6}  met"]
    for r in rows:
        lines.append(f"{r.case:<70} {r.ours_us:>9.1f} {r.plain_us:>9.1f} {r.ratio:>5.2f}x "
                     f"{r.low:>4.2f}-{r.high:<4.2f}x {r.target:>5.2f}x  "
                     f"{'yes' if r.met else 'NO'}")
    return "\n".join(lines)


async def measure(budget: SpeedBudget = FULL) -> list[dict[str, Any]]:
    """Every case as a dict (``SpeedRow`` plus ``met``), the table printed to stderr."""
    catalog = synthetic_catalog(budget.tools)
    rows: list[SpeedRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as tmp:
        files = write_descriptions(catalog, Path(tmp))
        for part in (_reads, _gated, _judged):
            rows += await part(catalog, files, budget)
    print(render_table(rows), file=sys.stderr, flush=True)
    return [{**asdict(r), "met": r.met} for r in rows]


if __name__ == "__main__":  # python -m benchmarks.measure.speed [rounds]: print, record nothing
    import asyncio

    from .servers import quiet_logs

    quiet_logs()
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else FULL.rounds
    measured = asyncio.run(measure(SpeedBudget(FULL.tools, rounds, FULL.repetitions)))
    print(json.dumps(measured, indent=1))
