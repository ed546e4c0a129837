"""The gate as one table: who the caller is and what the server knows -> what happens.

Each row starts from a plain case (a session caller at the ``minimal`` level calling a known,
ungranted, unpinned, non-exempt tool with arguments that fit, the default ``validate``
policy, a working store) and names only what differs. The gate runs without a server: the
call's facts come in a ``CallFacts`` (the tool already found, #35: ``decide`` looks nothing
up), the server's answers in a ``ServerFacts`` built per row, the grants from a real
``GrantStore``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pytest
from fastmcp.tools.base import Tool

from fastmcp_progressive import ClientSettings, GrantSettings
from fastmcp_progressive.access.caller import Caller, CallerKind, note_request
from fastmcp_progressive.access.gate import (
    AnonymousPolicy,
    CallFacts,
    Found,
    Gate,
    Outcome,
    ServerFacts,
)
from fastmcp_progressive.files.store import Definitions
from tests.waiting import PATIENCE

TOOL = "refund"
FULL_HOST = "full-host"
FIT = {"order": 7}


def refund(order: int) -> str:
    """Refund one order."""
    return f"refunded {order}"


class Anchor:
    """A live connection: weakly referable, with the scratch ``state`` dict."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}


class BrokenStore:
    """A key-value store that fails every operation."""

    async def get(self, key: str, *, collection: str | None = None) -> Any:
        raise ConnectionError("down")

    async def put_many(self, keys: Any, values: Any, *, collection: Any = None,
                       ttl: Any = None) -> None:
        raise ConnectionError("down")


class MemoryKV:
    """The smallest working key-value store."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    async def get(self, key: str, *, collection: str | None = None) -> Any:
        return self.data.get(key)

    async def put_many(self, keys: Any, values: Any, *, collection: Any = None,
                       ttl: Any = None) -> None:
        self.data.update(zip(keys, values, strict=True))


class Server:
    """The server's answers, fixed per row, as the gate gets them; records what was asked."""

    def __init__(self, *, known: bool, pinned: bool, gateway: bool, kv: Any) -> None:
        self.tool = (Tool.from_function(refund, tags={"always_load"} if pinned else None)
                     if known else None)
        self.asked: list[str] = []
        self.facts = ServerFacts(gateways=frozenset({TOOL} if gateway else ()),
                                 state_store=self._state_store, shown=self._shown)
        self._kv = kv

    def _state_store(self) -> Any:
        self.asked.append("state_store")
        return self._kv

    async def _shown(self, tool: Tool) -> bool:
        self.asked.append("shown")
        return True

    def call(self, gate: Gate, caller: Caller, arguments: dict[str, Any], *,
             nested: bool = False) -> CallFacts:
        """The call's facts, gathered as the middleware gathers them: the tool found
        unless rule 0 runs the call on a grant this process holds."""
        held = gate.runs_unlooked(caller, TOOL, self.facts)
        return CallFacts(caller, TOOL, None if held else Found(self.tool, TOOL), arguments,
                         self.facts, nested=nested, held=held)


@dataclass(frozen=True)
class Row:
    kind: CallerKind = "session"
    policy: AnonymousPolicy = "validate"
    level: Literal["full", "minimal"] = "minimal"
    granted: bool = False
    exempt: Literal["no", "configured", "gateway"] = "no"
    pinned: bool = False
    per_call: bool = False  # the session's first real request is this call
    nested: bool = False
    store: Literal["ok", "down-open", "down-closed"] = "ok"
    known: bool = True
    fits: bool = True
    expect: Outcome = "run"


ROWS = [
    # followable callers: the spec's gate
    Row("session", expect="refuse"),
    Row("session", granted=True),
    Row("session", expect="refuse"),
    Row("session", granted=True),
    Row("principal", expect="refuse"),
    Row("principal", granted=True),
    Row("session", fits=False, expect="refuse"),
    Row("session", granted=True, fits=False),  # a granted call's arguments are FastMCP's
    # what is never gated
    Row("session", level="full"),
    Row("principal", level="full"),
    Row("session", level="full", per_call=True),
    Row("session", exempt="configured"),
    Row("principal", exempt="gateway"),
    Row("session", exempt="gateway", per_call=True),
    Row("session", pinned=True),
    Row("principal", pinned=True),
    Row("session", nested=True),
    Row("principal", nested=True, store="down-closed"),
    Row("internal"),
    Row("internal", policy="shared"),
    # unknown tools: FastMCP answers, and no store key is made for them
    Row("session", known=False, expect="unknown"),
    Row("principal", known=False, expect="unknown"),
    Row("principal", known=False, store="down-closed", expect="unknown"),
    Row("anonymous", known=False, expect="unknown"),
    Row("session", granted=True, known=False),  # a grant held runs unlooked (FastMCP answers)
    # a grant store that fails
    Row("principal", store="down-open"),
    Row("principal", store="down-closed", expect="store_unavailable"),
    Row("principal", granted=True, store="down-closed", expect="store_unavailable"),
    Row("session", store="down-closed", expect="refuse"),  # memory grants: no store asked
    # 2026-07-28 without auth is anonymous on every transport (caller.py): no "stream" kind
    # callers the server cannot follow: the anonymous policy decides
    Row("anonymous", expect="run_checked"),
    Row("anonymous", fits=False, expect="refuse"),
    Row("anonymous", pinned=True, fits=False),
    Row("anonymous", pinned=True, expect="run_checked"),
    Row("anonymous", policy="full", fits=False),
    Row("anonymous", policy="full", level="full", fits=False),
    Row("anonymous", policy="shared", expect="refuse"),
    Row("anonymous", policy="shared", granted=True),
    Row("anonymous", policy="shared", granted=True, fits=False),
    Row("anonymous", exempt="configured", fits=False),
    Row("anonymous", nested=True, fits=False),
    Row("session", per_call=True, expect="run_checked"),
    Row("session", per_call=True, fits=False, expect="refuse"),
    Row("session", per_call=True, policy="full", fits=False),
    Row("session", per_call=True, policy="shared", expect="refuse"),
    Row("session", per_call=True, policy="shared", granted=True, expect="refuse"),  # not shared
        Row("session", per_call=True, granted=True, fits=False, expect="refuse"),
    Row("principal", per_call=True, expect="refuse"),  # a principal is always followable
    Row("anonymous", store="down-closed", expect="run_checked"),
]


def _caller(row: Row, anchor: Anchor) -> Caller:
    name = FULL_HOST if row.level == "full" else "some-host"
    keys = {"session": "s1", "principal": "user:alice"}
    return Caller(kind=row.kind, era="legacy" if row.kind == "session" else "modern",
                  key=keys.get(row.kind), client_name=name,
                  anchor=anchor if row.kind == "session" else None)


def _gate(row: Row, kv: Any) -> Gate:
    on_error: Literal["open", "closed"] = "closed" if row.store == "down-closed" else "open"
    return Gate(
        definitions=Definitions(None),
        grants=GrantSettings(store=kv, on_store_error=on_error, store_timeout=PATIENCE),
        clients=ClientSettings(full_clients=[FULL_HOST], host_profiles=(), anonymous=row.policy),
        exempt_tools=[TOOL] if row.exempt == "configured" else [],
    )


@pytest.mark.parametrize("row", ROWS, ids=[f"{i:02d}-{r.kind}-{r.expect}" for i, r in
                                           enumerate(ROWS)])
async def test_gate_table(row: Row) -> None:
    anchor = Anchor()
    kv: Any = BrokenStore() if row.store != "ok" else MemoryKV()
    gate = _gate(row, kv)
    server = Server(known=row.known, pinned=row.pinned, gateway=row.exempt == "gateway", kv=kv)
    caller = _caller(row, anchor)
    if not row.per_call:
        note_request(caller, "tools/list")  # a host that keeps its session
    if row.granted:  # granted earlier, by a read (an unfollowable one's grant is its own)
        if row.store != "ok":
            gate.grants.store = MemoryKV()
        await gate.grant(caller, [TOOL], server._state_store)
        gate.grants.store = kv
    server.asked.clear()
    call = server.call(gate, caller, FIT if row.fits else {}, nested=row.nested)

    verdict = await gate.decide(call)

    assert verdict.outcome == row.expect
    assert verdict.proceeds == (row.expect in ("run", "run_checked", "unknown"))
    if row.expect == "refuse":
        assert verdict.definition is not None and verdict.definition["name"] == TOOL
        assert (verdict.problem is not None) == (not row.fits and row.policy == "validate"
                                                 and (row.kind == "anonymous" or row.per_call))
    else:
        assert verdict.definition is None and verdict.problem is None
    if not row.known:
        assert "state_store" not in server.asked  # no store key from an unknown name
    if verdict.outcome != "refuse":
        assert "shown" not in server.asked  # visibility is asked only before teaching


async def test_a_refusal_grants_its_tool_to_a_followable_caller() -> None:
    row = Row("principal")
    kv = MemoryKV()
    gate, anchor = _gate(row, kv), Anchor()
    server = Server(known=True, pinned=False, gateway=False, kv=kv)
    caller = _caller(row, anchor)
    assert (await gate.decide(server.call(gate, caller, {}))).outcome == "refuse"
    assert (await gate.decide(server.call(gate, caller, {}))).outcome == "run"
    assert list(kv.data) == ["user:alice|refund"]


async def test_reads_grant_only_callers_that_keep_grants() -> None:
    for policy, kept in (("validate", False), ("full", False), ("shared", True)):
        gate = _gate(Row("anonymous", policy=policy), MemoryKV())  # type: ignore[arg-type]
        anonymous = Caller(kind="anonymous", era="modern")
        await gate.grant(anonymous, [TOOL], lambda: None)
        assert await gate.grants.has(anonymous, TOOL) is kept
    internal = Caller(kind="internal", era="legacy")
    assert not gate.keeps_grants(internal)
