"""The gate: whether one ``tools/call`` runs, and where each caller's grants are kept.

Every rule about a call lives here, in the order it is applied; the middleware builds the
call once (``request.py``), asks once and acts on the verdict:

0. a call with no request in flight (``await mcp.call_tool(...)`` from code) runs; a call of
   our bridge (``describe_tools``) or dispatch bridge (``run_tool``) is answered by us, and
   a bridge call counts as engaging with the workflow (``engagement.py``);
1. a call nested inside a call an outer gate already let through runs;
2. an exempt tool (configured, or a gateway FastMCP's own transforms generate) runs;
3. a call with no client behind it (``internal``) runs;
4. a client at the ``full`` level (compatibility mode) runs;
5. a caller the server cannot follow from one call to the next (no identity, a session
   whose first real request is this call, or a host the host table marks ``per_call``,
   e.g. FastMCP's CLI over stdio) is handled by the ``anonymous`` policy:
   ``"full"`` runs it, ``"validate"`` runs it when its arguments fit the tool (as FastMCP's
   own validation judges them) and otherwise answers the teaching refusal with the problem found,
   ``"shared"`` gates it under one grant set common to all such callers;
6. everyone else runs a tool they were granted; a tool not granted answers the teaching
   refusal (which grants it); an unknown tool is left to FastMCP's own answer, a pinned
   one runs, and a grant store that fails closed answers ``GRANT_STORE_UNAVAILABLE``. A
   tool our lookup does not know is asked of FastMCP once more (a proxy's cache that
   refreshes on this very call): a tool FastMCP would run is gated like any other.

What only the server can tell (does a tool exist, is it visible, pinned, a gateway; where
its session state lives) is asked through a ``CallSite``, and only when a rule needs it, so
a granted call asks for as little as possible and the gate can be tested without a server.

Example:
    ```python
    verdict = await gate.decide(GateCall(caller, "refund_order"), site)
    if verdict.outcome == "refuse":
        ...  # verdict.definition, verdict.problem
    ```
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from fastmcp.tools.base import Tool

from fastmcp_progressive.access.arguments import ArgumentChecker
from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.engagement import Engagement
from fastmcp_progressive.access.grants import GrantStore, GrantStoreUnavailable
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.files.definitions import Definitions
from fastmcp_progressive.hosts import Level
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.settings import AnonymousPolicy, GrantStoreProtocol

logger = get_logger()

ANONYMOUS_POLICIES: tuple[AnonymousPolicy, ...] = get_args(AnonymousPolicy)

Outcome = Literal["run", "run_checked", "refuse", "store_unavailable", "unknown", "bridge",
                  "dispatch"]
"""``run``: the call goes on; ``run_checked``: it goes on because FastMCP's own validation
accepts its arguments (an unfollowable caller); ``refuse``: the teaching refusal;
``store_unavailable``: the grant store failed and fails closed; ``unknown``: FastMCP
answers the unknown tool; ``bridge`` / ``dispatch``: the middleware answers the call of its
own bridge tool itself."""

Bridge = Literal["bridge", "dispatch"]
"""Which of our own tools a call names: ``describe_tools`` or the dispatch ``run_tool``."""

PROCEEDS: frozenset[Outcome] = frozenset({"run", "run_checked", "unknown"})
"""Outcomes after which the call is handed on to FastMCP."""


@dataclass(frozen=True)
class GateCall:
    """The call being judged.

    ``name`` is the tool FastMCP will run (for a ``<hash>_<tool>`` name, the tool the hash
    resolves to, given as ``hashed``); ``nested``: an inner call of a call an outer gate
    let through; ``bridge``: the call names one of our own tools; ``served``: a client
    request is in flight. Built once per call by ``request.Request.call``.
    """

    caller: Caller
    name: str
    arguments: dict[str, Any] | None = None
    hashed: Tool | None = None
    nested: bool = False
    bridge: Bridge | None = None
    served: bool = True

    @property
    def counted(self) -> bool:
        """Whether a run of this call is the client's own (not nested, not from code)."""
        return self.served and not self.nested and self.bridge is None


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
RUN_CHECKED = Verdict("run_checked")
UNKNOWN = Verdict("unknown")
STORE_UNAVAILABLE = Verdict("store_unavailable")
ANSWER_BRIDGE = Verdict("bridge")
ANSWER_DISPATCH = Verdict("dispatch")


class CallSite(Protocol):
    """What the server serving the call knows; each asked only when a rule needs it."""

    def is_gateway(self, name: str) -> bool:
        """Whether ``name`` is a tool one of FastMCP's gateway transforms generates."""
        ...

    async def exists(self, name: str) -> bool:
        """Whether FastMCP finds a tool ``name`` (before any store key is made from it)."""
        ...

    async def tool(self, name: str) -> Tool | None:
        """The tool ``name`` as this caller may see it, or None."""
        ...

    def pinned(self, tool: Tool) -> bool:
        """Whether ``tool`` is pinned "always load" (never gated)."""
        ...

    def state_store(self) -> GrantStoreProtocol:
        """The server's session-state store (principal grants by default live there)."""
        ...

    async def refreshed(self, name: str) -> CallSite | None:
        """After the lookup found no ``name``: a site that knows the tool as FastMCP itself
        resolves it now, when the caller may see it; else None."""
        ...


class Gate:
    """Owns the gating decision and the grants it rests on (see the module docstring)."""

    def __init__(
        self,
        *,
        grants: GrantStore,
        modes: ModePolicy,
        definitions: Definitions,
        anonymous: AnonymousPolicy = "validate",
        exempt_tools: Iterable[str] = (),
        engagement: Engagement | None = None,
        checker: ArgumentChecker | None = None,
    ) -> None:
        if anonymous not in ANONYMOUS_POLICIES:
            raise ValueError(f"anonymous must be one of {ANONYMOUS_POLICIES}, not {anonymous!r}")
        self.grants = grants
        self.modes = modes
        self.definitions = definitions
        self.anonymous: AnonymousPolicy = anonymous
        self.exempt_tools = frozenset(exempt_tools)
        self.engagement = engagement if engagement is not None else Engagement()
        self.checker = checker if checker is not None else ArgumentChecker()
        self._noted_unfollowable = False

    # -- who is gated -----------------------------------------------------------------
    def level(self, caller: Caller) -> Level:
        """What ``caller``'s listing shows: ``full`` (never gated) or a progressive level."""
        if caller.kind == "anonymous" and self.anonymous == "full":
            return "full"
        return self.modes.level(caller)

    def keeps_grants(self, caller: Caller) -> bool:
        """Whether grants can be kept for ``caller`` (an anonymous one only when shared)."""
        if caller.kind == "anonymous":
            return self.anonymous == "shared"
        return caller.kind != "internal"

    async def decide(self, call: GateCall, site: CallSite | None) -> Verdict:
        """What happens to ``call`` (see the module docstring for the rules); ``site`` is
        None only when no request is in flight."""
        if not call.served or site is None:
            return RUN  # no request in flight: nothing to gate
        if call.bridge == "bridge":
            self.engagement.note_bridge_call(call.caller)
            return ANSWER_BRIDGE
        if call.bridge == "dispatch":
            # not noted as engagement: a host with a session per call stays unfollowable
            return ANSWER_DISPATCH
        verdict = await self._decide(call, site)
        if verdict.outcome == "unknown" and call.hashed is None:
            # Unknown to our lookup, yet FastMCP may still find it (a proxy's cache that
            # refreshes on this very call, an upstream that added the tool mid-session):
            # a tool FastMCP would run is gated like any other, never run unread.
            found = await site.refreshed(call.name)
            if found is not None:
                verdict = await self._decide(call, found)
        return verdict

    async def _decide(self, call: GateCall, site: CallSite) -> Verdict:
        caller, name = call.caller, call.name
        if call.nested or name in self.exempt_tools or site.is_gateway(name):
            return RUN
        if caller.kind == "internal" or self.level(caller) == "full":
            return RUN
        if (caller.kind == "anonymous" or self.modes.per_call(caller)
                or self.engagement.opened_with_call(caller)):
            # a caller no grant can follow to its next call: decided by this call alone
            self._note_unfollowable_once()
            if self.anonymous == "full":
                return RUN
            if self.anonymous == "validate":
                return await self._checked(call, site)
            caller = dataclasses.replace(caller, kind="anonymous", key=None, anchor=None)
        in_store = self.grants.uses_store(caller)
        if in_store and call.hashed is None and not await site.exists(name):
            return UNKNOWN  # a store key is made only from a real tool
        try:
            if await self.grants.has(caller, name, server_store=site.state_store):
                return RUN
        except GrantStoreUnavailable:
            return STORE_UNAVAILABLE
        tool = call.hashed if call.hashed is not None else await site.tool(name)
        if tool is None:
            return UNKNOWN
        if site.pinned(tool):
            return RUN
        definition, _ = self.definitions.for_tool(tool)
        await self.grants.add(caller, [name], server_store=site.state_store)  # it teaches
        return Verdict("refuse", definition=definition)

    async def _checked(self, call: GateCall, site: CallSite) -> Verdict:
        """An unfollowable caller's call: it runs when FastMCP's own validation would accept
        its arguments (``arguments.py``); otherwise the teaching refusal says what does not
        fit."""
        tool = call.hashed if call.hashed is not None else await site.tool(call.name)
        if tool is None:
            return UNKNOWN
        problem = await self.checker.problem(tool, call.arguments)
        if problem is None:
            return RUN_CHECKED  # pinned or not, it runs: the pin is asked only to refuse
        if site.pinned(tool):
            return RUN
        definition, _ = self.definitions.for_tool(tool)
        return Verdict("refuse", definition=definition, problem=problem)

    # -- grants -----------------------------------------------------------------------
    async def grant(self, caller: Caller, names: list[str], site: CallSite) -> None:
        """Record a read of ``names``' descriptions by ``caller`` (when it keeps grants)."""
        if names and self.keeps_grants(caller):
            await self.grants.add(caller, names, server_store=site.state_store)

    def _note_unfollowable_once(self) -> None:
        if self._noted_unfollowable:
            return
        self._noted_unfollowable = True
        logger.info(
            "progressive disclosure: a caller the server cannot follow between calls "
            "(2026-07-28 HTTP without auth, stateless_http=True, a new session per tool "
            "call, or a host table row marked per_call such as FastMCP's CLI over stdio) "
            "called a tool; its calls are handled by ClientSettings(anonymous=%r). Add "
            "auth to gate such clients per principal.",
            self.anonymous,
        )
