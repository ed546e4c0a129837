"""The gate: whether one ``tools/call`` runs, and where each caller's grants are kept.

Every rule about a call lives here, in the order it is applied; the middleware's
``on_call_tool`` asks once and acts on the verdict. The tool the call names is looked up
(as FastMCP's ``AuthMiddleware`` does: the plain name, then a ``<hash>_<tool>`` backend
name) only when a rule needs it: FastMCP's lookup scans its catalog (about 0.1 ms per name
at 1,000 tools), and FastMCP's own call path looks the tool up again anyway. Rules 1 to 5,
whose verdicts hand the call on to FastMCP, may use the tool as last found for the name
while it provably still is (``Recall``); a refusal, and rule 6, rest on a fresh lookup.

0. a call with no request in flight (``await mcp.call_tool(...)`` from code) runs; a
   followable caller (rule 6) calling a tool it was granted runs without a lookup:
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
    call = GateCall(caller, "refund_order", arguments, find=lambda: known(tool))
    verdict = await gate.decide(call, ServerFacts(state_store=lambda: kv))
    if verdict.outcome == "refuse":
        ...  # verdict.definition, verdict.problem
    ```
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args

from cachetools import LRUCache
from fastmcp import FastMCP
from fastmcp.server.middleware import CallNext
from fastmcp.server.transforms.search.base import BaseSearchTransform
from fastmcp.tools.base import Tool

from fastmcp_progressive.access.arguments import ArgumentChecker
from fastmcp_progressive.access.caller import Caller, note_bridge_call, opened_with_call
from fastmcp_progressive.access.grants import GrantStore, GrantStoreUnavailable, ServerStore
from fastmcp_progressive.access.modes import ModePolicy
from fastmcp_progressive.fastmcp_internals import is_nested_tool_call, local_component
from fastmcp_progressive.files.store import Definitions, is_pinned
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.settings import AnonymousPolicy

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


async def known(tool: Tool | None, name: str | None = None) -> Found:
    """A lookup's answer when the tool is already at hand (tests, examples)."""
    return Found(tool, name if name is not None else tool.name if tool else "")


@dataclass
class GateCall:
    """The call being judged, built once by ``on_call_tool``.

    ``name`` is the name the client sent; ``find`` looks the tool up (FastMCP's lookup),
    awaited through ``lookup()`` at most once, and only when a rule needs the tool;
    ``recall`` gives the tool as last found for this name while that provably still holds
    (``Recall``), for verdicts that hand the call on to FastMCP. ``nested``: an inner call
    of a call an outer gate let through.
    """

    caller: Caller
    name: str
    arguments: dict[str, Any] | None = None
    find: Callable[[], Awaitable[Found]] | None = None
    recall: Callable[[], Found | None] | None = None
    nested: bool = False
    found: Found | None = field(default=None, init=False)
    """What FastMCP's lookup found; None while no rule needed it."""

    async def lookup(self, *, recalled: bool = False) -> Found:
        """The tool this call names, looked up once; with ``recalled``, the tool as last
        found for this name when that still holds (no lookup): only for a verdict that
        hands the call on to FastMCP, never for one that answers with a definition."""
        if recalled and self.found is None and self.recall is not None:
            kept = self.recall()
            if kept is not None:
                return kept
        if self.found is None:
            self.found = (await self.find() if self.find is not None
                          else Found(None, self.name))
        return self.found

    @property
    def counted(self) -> bool:
        """Whether a run of this call is the client's own, of a tool FastMCP found or a
        read granted (not nested, not ours): what the tool cap counts."""
        return not self.nested and (self.found is None or (
            self.found.tool is not None and self.found.bridge is None))


_Kept = tuple["weakref.ref[Any]", Found, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]


class Recall:
    """The tool each name was last found as, per server, while it provably still is.

    FastMCP's lookup scans its catalog (``LocalProvider``: about 0.1 ms per name at 1,000
    tools) and offers no signal when the catalog changes. A caller judged by its arguments
    needs the tool only to check them, and FastMCP's own call path looks it up again
    anyway. So a name is kept when the lookup found the very component the server's
    ``local_provider`` holds under the tool's key (not one of our bridges, not a hashed
    name), and trusted while that is still so and the server's providers and transforms
    (the server's and the local provider's) are the same objects: O(1), no scan. A tool
    removed or replaced, a provider or transform added, and the name is looked up again.

    What is recalled only ever lets a call go on to FastMCP, which resolves the name
    itself (visibility, component auth, an unknown tool: its own answer); a refusal, which
    hands the definition over, always rests on a fresh lookup. A second version of a tool
    added beside the kept one is not noticed: FastMCP runs the highest version and checks
    its arguments itself. At most ``RECALLED`` names are kept (least recently used go).
    """

    RECALLED = 4096

    def __init__(self) -> None:
        self._kept: LRUCache[tuple[int, str], _Kept] = LRUCache(self.RECALLED)

    def get(self, server: FastMCP[Any], name: str) -> Found | None:
        """The tool ``name`` was last found as on ``server``, if that provably still holds."""
        kept = self._kept.get((id(server), name))
        if kept is None:
            return None
        ref, found, providers, transforms, local = kept
        provider = server.local_provider
        if (ref() is not server or not _same(providers, server.providers)
                or not _same(transforms, server.transforms)
                or not _same(local, provider.transforms) or found.tool is None
                or local_component(provider, found.tool.key) is not found.tool):
            return None
        return found

    def keep(self, server: FastMCP[Any], name: str, found: Found) -> None:
        """Remember what the lookup of ``name`` found, when it is the server's own component."""
        tool, provider = found.tool, server.local_provider
        if (tool is None or found.bridge is not None or found.hashed or found.name != name
                or local_component(provider, tool.key) is not tool):
            return
        self._kept[(id(server), name)] = (weakref.ref(server), found, tuple(server.providers),
                                          tuple(server.transforms), tuple(provider.transforms))


def _same(kept: tuple[Any, ...], current: Any) -> bool:
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


# -- the tools FastMCP's gateway transforms generate ---------------------------------------------
async def _gateway_names(transform: Any) -> tuple[str, ...]:
    """The tools one of FastMCP's own gateway transforms generates, by its type (a search
    transform: what its public ``list_tools`` of no tools lists, its search and call tools
    under the names it was given)."""
    from fastmcp.server.transforms import PromptsAsTools, ResourcesAsTools

    if isinstance(transform, BaseSearchTransform):
        return tuple(tool.name for tool in await transform.list_tools([]))
    try:
        from fastmcp.experimental.transforms.code_mode import CodeMode
    except ImportError:  # pragma: no cover - an optional part of FastMCP
        CodeMode = None  # type: ignore[assignment,misc]
    if CodeMode is not None and isinstance(transform, CodeMode):
        return (transform.execute_tool_name,)
    if isinstance(transform, ResourcesAsTools):
        return ("list_resources", "read_resource")
    if isinstance(transform, PromptsAsTools):
        return ("list_prompts", "get_prompt")
    return ()


async def gateway_tools(server: FastMCP) -> frozenset[str]:
    """Tools a server-level transform of FastMCP's generates to reach other components.

    A search transform's ``search_tools``/``call_tool`` and ``ResourcesAsTools``'
    ``list_resources``/``read_resource`` are how a client finds and reaches the real tools;
    gating them would make the model fetch a description to be allowed to search. Only
    FastMCP's own gateway transform types count (a renamed search tool included); any other
    transform, such as a user's rename, un-gates nothing.
    """
    names: set[str] = set()
    for transform in server.transforms:
        names.update(await _gateway_names(transform))
    return frozenset(names)


_Seen = tuple[tuple[Any, ...], frozenset[str]]
_gateways: weakref.WeakKeyDictionary[FastMCP[Any], _Seen] = weakref.WeakKeyDictionary()
"""Per server: its transforms when last looked at (held, so their ids stay theirs), and
the gateway tools they generate."""


async def gateways_of(server: FastMCP[Any]) -> frozenset[str]:
    """``gateway_tools(server)``, recomputed only when the server's transforms change.

    A transform added, removed or replaced changes the identities looked at, so the answer
    is never stale; what is skipped is walking (and type-checking) each transform per call.
    """
    transforms = server.transforms
    if not transforms:
        return frozenset()
    known = _gateways.get(server)
    if known is not None and _same(known[0], transforms):
        return known[1]
    names = await gateway_tools(server)
    _gateways[server] = (tuple(transforms), names)
    return names


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
        checker: ArgumentChecker | None = None,
    ) -> None:
        if anonymous not in ANONYMOUS_POLICIES:
            raise ValueError(f"anonymous must be one of {ANONYMOUS_POLICIES}, not {anonymous!r}")
        self.grants = grants
        self.modes = modes
        self.definitions = definitions
        self.anonymous: AnonymousPolicy = anonymous
        self.exempt_tools = frozenset(exempt_tools)
        self.checker = checker if checker is not None else ArgumentChecker()
        self._noted_unfollowable = False

    # -- who is gated -----------------------------------------------------------------
    def keeps_grants(self, caller: Caller) -> bool:
        """Whether grants can be kept for ``caller`` (an anonymous one only when shared)."""
        if caller.kind == "anonymous":
            return self.anonymous == "shared"
        return caller.kind != "internal"

    async def decide(self, call: GateCall, server: ServerFacts | None) -> Verdict:
        """What happens to ``call`` (the rules of the module docstring, in order); ``server``
        is None only when no request is in flight."""
        if server is None:
            return RUN  # no request in flight: nothing to gate
        caller = call.caller
        if call.name not in server.ours and self._holds(caller, call.name, server):
            return RUN  # rule 6, before any lookup: FastMCP's call path resolves the name
        found = await call.lookup(recalled=True)  # a recalled tool is never one of ours
        if found.bridge == "bridge":
            note_bridge_call(caller)
            return ANSWER_BRIDGE
        if found.bridge == "dispatch":
            # not noted as engagement: a host with a session per call stays unfollowable
            return ANSWER_DISPATCH
        name, tool = found.name, found.tool
        if call.nested or name in self.exempt_tools or name in server.gateways:
            return RUN
        if caller.kind == "internal" or self.modes.level(caller) == "full":
            return RUN
        if (caller.kind == "anonymous" or self.modes.judged_by_arguments(caller)
                or opened_with_call(caller)):
            # a caller no grant can follow to its next call: decided by this call alone
            self._note_unfollowable_once()
            if self.anonymous == "full":
                return RUN
            if self.anonymous == "validate":
                return await self._checked(call, server, found)
            caller = dataclasses.replace(caller, kind="anonymous", key=None, anchor=None)
        if found is not await call.lookup():  # it was recalled: rule 6 rests on what
            return await self.decide(call, server)  # FastMCP finds now (kept for the call)
        if tool is None:
            return UNKNOWN  # FastMCP answers it; no grant-store key is made from its name
        try:
            if await self.grants.has(caller, name, server_store=server.state_store):
                return RUN
        except GrantStoreUnavailable:
            return STORE_UNAVAILABLE
        if self.pinned(tool):
            return RUN
        if server.shown is not None and not await server.shown(tool):
            return UNKNOWN  # hidden from this caller: never taught
        definition, _ = self.definitions.for_tool(tool)
        if not await self.grants.add(caller, [name], server_store=server.state_store):
            # the refusal would promise a grant the store did not keep (a read-only
            # replica, ``noeviction``): a refusal loop; the store's policy answers instead
            return RUN if self.grants.on_store_error == "open" else STORE_UNAVAILABLE
        return Verdict("refuse", definition=definition)  # it teaches: the grant is kept

    def _holds(self, caller: Caller, name: str, server: ServerFacts) -> bool:
        """Whether ``caller`` is followable (rule 6's callers) and this process already
        knows it was granted ``name``, without asking a grant store (``GrantStore.held``):
        the call runs as rule 6 would run it, with no lookup. Any other case goes through
        the rules in order (a store is asked only about a tool FastMCP found)."""
        return (caller.kind in ("session", "principal")
                and self.grants.held(caller, name, server_store=server.state_store)
                and self.modes.level(caller) != "full"
                and not self.modes.judged_by_arguments(caller)
                and not opened_with_call(caller))

    async def _checked(self, call: GateCall, server: ServerFacts, found: Found) -> Verdict:
        """An unfollowable caller's call: it runs when FastMCP's own validation would accept
        its arguments (``arguments.py``); otherwise the teaching refusal says what does not
        fit. ``found`` may be recalled: arguments that fit it go on to FastMCP; anything
        else is judged again on what FastMCP's lookup finds now."""
        tool = found.tool
        if tool is None:
            return UNKNOWN
        problem = await self.checker.problem(tool, call.arguments)
        if problem is None:
            return RUN_CHECKED  # pinned or not, it runs: the pin is asked only to refuse
        if self.pinned(tool):
            return RUN
        fresh = await call.lookup()
        if fresh is not found:  # it was recalled: judge what FastMCP finds now
            return await self._checked(call, server, fresh)
        if server.shown is not None and not await server.shown(tool):
            return UNKNOWN
        definition, _ = self.definitions.for_tool(tool)
        return Verdict("refuse", definition=definition, problem=problem)

    def pinned(self, tool: Tool) -> bool:
        """Whether ``tool`` is pinned "always load" (its file, tag or meta): never gated."""
        return is_pinned(tool, self.definitions.store.lookup(tool.name))

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
            "over stdio) "
            "called a tool; its calls are handled by ClientSettings(anonymous=%r). Add "
            "auth to gate such clients per principal.",
            self.anonymous,
        )
