"""The gate: whether one ``tools/call`` runs, and where each caller's grants are kept.

Every rule about a call lives here, in the order it is applied; the middleware's
``on_call_tool`` gathers the call's facts once (``CallFacts``: the caller, the name, the
tool FastMCP's lookup found, the arguments, the server's facts) and asks once; ``decide``
only decides, it never looks anything up. The tool is found before the gate is asked
(``find_tool``, as FastMCP's ``AuthMiddleware`` finds it), except when rule 0 runs the call
on a grant this process already holds (``Gate.runs_unlooked``): FastMCP's lookup scans its
catalog (about 0.1 ms per name at 1,000 tools), and FastMCP's own call path looks the tool
up again anyway. Rules 1 to 5, whose verdicts hand the call on to FastMCP, may rest on the
tool the server's own provider holds under the name (``registered``, read without a scan); a
refusal, and rule 6, rest on a fresh lookup: given such a tool they answer ``look_again``,
and the middleware looks the tool up and asks once more.

0. a call with no request in flight (``await mcp.call_tool(...)`` from code) runs (the
   middleware lets it through: there is no caller to judge); a followable caller (rule 6)
   calling a tool it was granted runs without a lookup:
   grants name tools a read or a refusal found and described, never our bridges, and
   FastMCP's own call path still resolves the name, applies visibility and auth, and
   answers a tool gone since; a call of our bridge (``describe_tools``) or dispatch bridge
   (``run_tool``) is answered by us, and a bridge call counts as engaging with the
   workflow (``caller.note_bridge_call``);
1. a call nested inside a call an outer gate already let through runs;
2. an exempt tool (configured, or a gateway FastMCP's own transforms generate, found by
   ``gateways_of``: a search transform's ``search_tools``/``call_tool``, ``ResourcesAsTools``,
   CodeMode's ``execute``) runs;
3. a call with no client behind it (``internal``) runs;
4. a client at the ``full`` level (compatibility mode) runs;
5. a caller the server cannot follow from one call to the next (no identity, a session
   whose first real request is this call, or a host the host table marks ``judged_by_arguments``,
   e.g. FastMCP's CLI over stdio) is handled by the ``anonymous`` policy:
   ``"full"`` runs it, ``"validate"`` runs it when its arguments fit the tool (as FastMCP's
   own validation judges them) and otherwise answers the teaching refusal with the problem found,
   ``"shared"`` gates it under one grant set common to all such callers;
6. everyone else runs a tool they were granted; a tool not granted answers the teaching
   refusal (which grants it); an unknown tool is left to FastMCP's own answer, a pinned
   one runs, and a grant store that fails closed answers ``GRANT_STORE_UNAVAILABLE``. A
   grant the store fails to write is never promised by a refusal: that call is answered
   by ``on_store_error`` (``"open"`` runs it).

What the server tells the gate comes in one small ``ServerFacts``: its gateway tools,
where its session state lives, the names of our bridges, and whether the other
middleware's listing filters show a tool to this caller (asked only before a definition
is handed over), so the gate runs without a server in tests.

A call that passes here marks everything it runs as having passed (``let_through``): a
tool body may call other tools of its server (a search transform's ``call_tool``,
CodeMode's ``execute``), and a parent server runs a mounted child's tool by calling the
child. The mark is shared by every ``ProgressiveDisclosure`` on purpose: a child's
middleware learns that its parent's gate already passed the call, while a child under a
parent without the middleware keeps gating its own tools.

Example:
    ```python
    facts = CallFacts(caller, "refund_order", Found(tool, "refund_order"), arguments,
                      ServerFacts(state_store=lambda: kv))
    verdict = await gate.decide(facts)
    if verdict.outcome == "refuse":
        ...  # verdict.definition, verdict.problem
    ```
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from fastmcp import FastMCP
from fastmcp.server.middleware import CallNext
from fastmcp.server.providers import LocalProvider
from fastmcp.server.providers.addressing import parse_hashed_backend_name
from fastmcp.tools.base import Tool

from fastmcp_progressive.access.arguments import ArgumentChecker
from fastmcp_progressive.access.caller import Caller, note_bridge_call, opened_with_call
from fastmcp_progressive.access.gateways import gateway_tools
from fastmcp_progressive.access.grants import GrantStore, GrantStoreUnavailable, ServerStore
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.caches import per_server, server_slots
from fastmcp_progressive.fastmcp_internals import is_nested_tool_call, local_component
from fastmcp_progressive.files.store import Definitions, is_pinned
from fastmcp_progressive.hosts import Level
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.settings import (
    AnonymousPolicy,
    ClientSettings,
    GrantSettings,
    ListingSettings,
)

logger = get_logger()

Outcome = Literal["run", "run_checked", "refuse", "store_unavailable", "unknown", "bridge",
                  "dispatch", "look_again"]
"""``run``: the call goes on; ``run_checked``: it goes on because FastMCP's own validation
accepts its arguments (an unfollowable caller); ``refuse``: the teaching refusal;
``store_unavailable``: the grant store failed and fails closed; ``unknown``: FastMCP
answers the unknown tool; ``bridge`` / ``dispatch``: the middleware answers the call of its
own bridge tool itself; ``look_again``: the tool as registered (``CallFacts.recalled``)
cannot settle the call: the middleware looks it up and asks once more."""

PROCEEDS: frozenset[Outcome] = frozenset({"run", "run_checked", "unknown"})
"""Outcomes after which the call is handed on to FastMCP."""


# -- the tool one call names, found once per request, or read as registered ----------------------
Bridge = Literal["bridge", "dispatch"]
"""Which of our own tools a call names: ``describe_tools`` or the dispatch ``run_tool``."""


@dataclass(frozen=True)
class Found:
    """What FastMCP's lookup found for a call.

    ``name`` is the tool FastMCP will run and ``tool`` what FastMCP's ``get_tool`` finds
    under it (None: an unknown tool); for a ``<hash>_<tool>`` backend name, the tool the
    hash names (``hashed``). ``bridge``: the tool is one of our own.
    """

    tool: Tool | None
    name: str
    hashed: bool = False
    bridge: Bridge | None = None


def bridge_of(tool: Tool | None, kinds: Mapping[Any, Bridge]) -> Bridge | None:
    """Which of our bridges ``tool`` is, by the function it runs (``kinds``: our tools'
    functions, ``DisclosureComponents.kinds``), or None: a tool of the user's."""
    try:
        return kinds.get(getattr(tool, "fn", None))
    except TypeError:  # an unhashable callable is never one of ours
        return None


async def find_tool(server: FastMCP[Any], name: str, kinds: Mapping[Any, Bridge]) -> Found:
    """The tool FastMCP runs for ``name``, found as FastMCP's AuthMiddleware finds it: the
    plain name, then the app-visible tool a ``<hash>_<tool>`` backend name names.

    A miss is asked once more only when a provider other than a ``LocalProvider`` serves
    the server (a proxy refreshes its cache on a miss, and FastMCP's own call path asks
    again: a tool it runs is gated); a plain server's miss is final, so an unknown name
    costs one lookup of ours, not two.
    """
    tool = await server.get_tool(name)
    hashed = parse_hashed_backend_name(name) if tool is None else None
    if hashed is not None:
        tool = await server.get_tool_by_hash(*hashed)
    elif tool is None and not all(isinstance(p, LocalProvider) for p in server.providers):
        tool = await server.get_tool(name)
    return Found(tool, tool.name if hashed and tool else name,
                 hashed=hashed is not None and tool is not None, bridge=bridge_of(tool, kinds))


def registered(server: FastMCP[Any], name: str, kinds: Mapping[Any, Bridge]) -> Found | None:
    """The tool the server's own ``local_provider`` holds under ``name`` (unversioned, not
    one of our bridges), read by its key: O(1), where FastMCP's lookup scans its catalog
    (``LocalProvider``: about 0.1 ms per name at 1,000 tools). None: look it up.

    A caller judged by its arguments needs the tool only to check them, and FastMCP's own
    call path looks it up again anyway. So what this finds only ever lets a call go on to
    FastMCP, which resolves the name itself (transforms, visibility, component auth,
    another provider's or a higher version: its own tool, its own validation, its own
    answer); a refusal, which hands the definition over, always rests on a fresh lookup
    (the gate answers ``look_again``). It replaced a memo of each name's last lookup
    (#35): the registered component is the same answer, kept by FastMCP itself.
    """
    tool = local_component(server.local_provider, f"{Tool.make_key(name)}@")
    if not isinstance(tool, Tool) or tool.name != name or bridge_of(tool, kinds) is not None:
        return None
    return Found(tool, name)


def same(kept: tuple[Any, ...], current: Any) -> bool:
    """Whether ``current`` holds the very objects ``kept`` does, in order (a server's
    providers or transforms unchanged: no FastMCP signal says when they change)."""
    return len(kept) == len(current) and all(a is b for a, b in zip(kept, current, strict=True))


@dataclass(frozen=True)
class ServerFacts:
    """What the server serving one call tells the gate.

    ``gateways``: the tools FastMCP's gateway transforms generate (never gated);
    ``state_store``: the server's session-state store (principal grants live there by
    default); ``shown``: whether the other middleware's listing filters show a tool to
    this caller, asked only before its definition is handed over (None: no other
    middleware filters listings); ``ours``: the names of our bridge tools (a call of one
    is always looked up).
    """

    gateways: frozenset[str] = frozenset()
    state_store: ServerStore | None = None
    shown: Callable[[Tool], Awaitable[bool]] | None = None
    ours: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CallFacts:
    """One ``tools/call`` as the middleware found it, once, before asking the gate.

    ``caller``: who calls (identified once for the request); ``name``: the name the client
    sent; ``found``: what FastMCP's lookup found for it (``find_tool``),
    None when it was not looked up because this process already holds the caller's grant
    (``held``, rule 0: ``Gate.runs_unlooked``); ``recalled``: ``found`` is the tool the
    server's own provider holds (``registered``), not a fresh lookup, so it may only let the call go
    on (anything else answers ``look_again``); ``nested``: an inner call of a call an outer
    gate let through; ``server``: what the server tells the gate.
    """

    caller: Caller
    name: str
    found: Found | None = None
    arguments: dict[str, Any] | None = None
    server: ServerFacts = ServerFacts()
    nested: bool = False
    held: bool = False
    recalled: bool = False

    @property
    def counted(self) -> bool:
        """Whether a run of this call is the client's own, of a tool FastMCP found or a
        read granted (not nested, not ours): what the tool cap counts."""
        return not self.nested and (self.found is None or (
            self.found.tool is not None and self.found.bridge is None))


@dataclass(frozen=True)
class Verdict:
    """What the gate decided; a refusal carries the definition (and, for an unfollowable
    caller whose arguments did not fit, the problem found)."""

    outcome: Outcome
    definition: dict[str, Any] | None = None
    problem: str | None = None

    @property
    def proceeds(self) -> bool:
        """Whether the call is handed on to FastMCP."""
        return self.outcome in PROCEEDS


RUN = Verdict("run")
UNKNOWN = Verdict("unknown")
STORE_UNAVAILABLE = Verdict("store_unavailable")
LOOK_AGAIN = Verdict("look_again")

T = TypeVar("T")
R = TypeVar("R")

_passed: ContextVar[bool] = ContextVar("fastmcp_progressive_passed_gate", default=False)


def nested_call() -> bool:
    """True inside a tool call an outer gate let through (a tool calling another tool)."""
    return _passed.get() and is_nested_tool_call()  # the cheaper read first


def let_through(call_next: CallNext[T, R]) -> CallNext[T, R]:
    """``call_next`` that marks everything it runs as having passed the gate."""

    async def passed(context: Any) -> R:
        token = _passed.set(True)
        try:
            return await call_next(context)
        finally:
            _passed.reset(token)

    return passed


# -- the tools FastMCP's gateway transforms generate (``access/gateways.py``) --------------------
_GATEWAYS = "access.gate.gateways_of"
"""The ``caches.py:per_server`` slot of a server's transforms when last looked at (held,
so their ids stay theirs), and the gateway tools they generate."""


async def gateways_of(server: FastMCP[Any]) -> frozenset[str]:
    """``gateway_tools(server)``, recomputed only when the server's transforms change.

    A transform added, removed or replaced changes the identities looked at, so the answer
    is never stale; what is skipped is walking (and type-checking) each transform per call.
    """
    transforms = server.transforms
    if not transforms:
        return frozenset()
    known: tuple[tuple[Any, ...], frozenset[str]] | None = (
        server_slots(server) or {}).get(_GATEWAYS)
    if known is not None and same(known[0], transforms):
        return known[1]
    names = await gateway_tools(server)
    per_server(server)[_GATEWAYS] = (tuple(transforms), names)
    return names


class Gate:
    """Owns the gating decision and what it rests on, built here from their settings: the
    grants (``GrantStore``), each client's level (``ModePolicy``, from ``clients`` and the
    server's ``level``) and the argument checks; the definitions a refusal hands over are
    shared with the describe path (see the module docstring)."""

    def __init__(self, *, definitions: Definitions, grants: GrantSettings | None = None,
                 clients: ClientSettings | None = None, level: Level = ListingSettings.level,
                 exempt_tools: Iterable[str] = ()) -> None:
        clients = clients or ClientSettings()  # each group checked its values when built
        self.grants = GrantStore(grants)
        self.modes = ModePolicy(clients, default_level=level)
        self.definitions = definitions
        self.anonymous: AnonymousPolicy = clients.anonymous
        self.exempt_tools = frozenset(exempt_tools)
        self.checker = ArgumentChecker()
        self._noted_unfollowable = False

    # -- who is gated -----------------------------------------------------------------
    def keeps_grants(self, caller: Caller) -> bool:
        """Whether grants can be kept for ``caller`` (an anonymous one only when shared)."""
        if caller.kind == "anonymous":
            return self.anonymous == "shared"
        return caller.kind != "internal"

    def runs_unlooked(self, caller: Caller, name: str, server: ServerFacts) -> bool:
        """Rule 0, asked by the middleware before it looks the tool up: ``caller`` is
        followable (rule 6's callers) and this process already knows it was granted
        ``name``, without asking a grant store (``GrantStore.held``), so the call runs with
        no lookup (FastMCP's own call path resolves the name). Grants name tools a read or a
        refusal found and described, never our bridges."""
        return (name not in server.ours and caller.kind in ("session", "principal")
                and self.grants.held(caller, name, server_store=server.state_store)
                and self.follows(caller, name, server))

    def follows(self, caller: Caller, name: str, server: ServerFacts) -> bool:
        """Whether rule 6 decides ``caller``'s call of ``name`` (a session or principal
        below ``full``, not judged by its arguments, the tool not exempt): it rests on a
        fresh lookup, so the tool as registered (``registered``) is not read for it.
        Whether a session opened with this call is asked last: asking records it
        (``opened_with_call``), as ``decide`` does after the rules that run a call anyway;
        a call of our bridge engages instead, so the middleware asks only once
        ``registered`` found a tool of the user's."""
        return (caller.kind in ("session", "principal") and self.modes.level(caller) != "full"
                and not self.modes.judged_by_arguments(caller)
                and name not in self.exempt_tools and name not in server.gateways
                and not opened_with_call(caller))

    async def decide(self, call: CallFacts) -> Verdict:
        """What happens to ``call`` (the rules of the module docstring, in order), from the
        facts alone: nothing is looked up here."""
        if call.held:
            return RUN  # rule 0: FastMCP's call path resolves the name
        caller, server = call.caller, call.server
        found = call.found if call.found is not None else Found(None, call.name)
        # a bridge call engages; a dispatch does not (a session per call stays unfollowable)
        if found.bridge == "bridge":
            note_bridge_call(caller)
        if found.bridge is not None:
            return Verdict(found.bridge)
        name, tool = found.name, found.tool
        if (call.nested or name in self.exempt_tools or name in server.gateways
                or caller.kind == "internal" or self.modes.level(caller) == "full"):
            return RUN  # rules 1 to 4
        if (caller.kind == "anonymous" or self.modes.judged_by_arguments(caller)
                or opened_with_call(caller)):
            # a caller no grant can follow to its next call: decided by this call alone
            self._note_unfollowable_once()
            if self.anonymous == "full":
                return RUN
            if self.anonymous == "validate":
                return await self._checked(call, found)
            caller = dataclasses.replace(caller, kind="anonymous", key=None, anchor=None)
        if call.recalled:  # rule 6 rests on what FastMCP finds now
            return LOOK_AGAIN
        if tool is None:
            return UNKNOWN  # FastMCP answers it; no grant-store key is made from its name
        try:
            if await self.grants.has(caller, name, server_store=server.state_store):
                return RUN
        except GrantStoreUnavailable:
            return STORE_UNAVAILABLE
        verdict = await self._teaching(call, tool)
        if verdict.outcome == "refuse" and not await self.grants.add(
                caller, [name], server_store=server.state_store):
            # the refusal would promise a grant the store did not keep (a read-only
            # replica, ``noeviction``): a refusal loop; the store's policy answers instead
            return RUN if self.grants.on_store_error == "open" else STORE_UNAVAILABLE
        return verdict  # a refusal teaches: the grant is kept

    async def _checked(self, call: CallFacts, found: Found) -> Verdict:
        """An unfollowable caller's call: it runs when FastMCP's own validation would accept
        its arguments (``arguments.py``); otherwise the teaching refusal says what does not
        fit. ``found`` may be the tool as registered (``registered``): arguments that fit
        it go on to FastMCP; anything else is judged again on what FastMCP's lookup finds
        now (``look_again``)."""
        if found.tool is None:
            return UNKNOWN
        problem = await self.checker.problem(found.tool, call.arguments)
        if problem is None:
            return Verdict("run_checked")  # pinned or not, it runs: the pin is asked only to refuse
        return await self._teaching(call, found.tool, problem)

    async def _teaching(self, call: CallFacts, tool: Tool, problem: str | None = None
                        ) -> Verdict:
        """The teaching refusal of ``tool`` (with the ``problem`` its arguments have), unless
        it is pinned "always load" (its file, tag or meta: never gated, it runs), rests on
        the tool as registered (``look_again``) or is hidden from this caller (``unknown``:
        never taught)."""
        sig = self.definitions.store.signature(tool.name)  # one stat: pin and definition
        if is_pinned(tool, self.definitions.store.lookup_at(tool.name, sig)):
            return RUN
        if call.recalled:
            return LOOK_AGAIN
        if call.server.shown is not None and not await call.server.shown(tool):
            return UNKNOWN
        return Verdict("refuse", definition=self.definitions.definition(tool, sig),
                       problem=problem)

    # -- grants -----------------------------------------------------------------------
    async def grant(self, caller: Caller, names: list[str], state_store: ServerStore) -> None:
        """Record a read of ``names``' descriptions by ``caller`` (when it keeps grants)."""
        if names and self.keeps_grants(caller):
            await self.grants.add(caller, names, server_store=state_store)

    def _note_unfollowable_once(self) -> None:
        if self._noted_unfollowable:
            return
        self._noted_unfollowable = True
        logger.info(
            "progressive disclosure: a caller the server cannot follow between calls "
            "(2026-07-28 HTTP without auth, stateless_http=True, a new session per tool "
            "call, or a host table row marked judged_by_arguments such as FastMCP's CLI "
            "over stdio) called a tool; its calls are handled by "
            "ClientSettings(anonymous=%r). Add auth to gate such clients per principal.",
            self.anonymous)
