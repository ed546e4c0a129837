"""``ProgressiveDisclosure``'s settings: six small objects, each default written once here.

The middleware takes ``descriptions_dir``, ``exempt_tools`` and one object per concern,
each fed whole to the part that uses it:

- ``ListingSettings``: what a reduced ``tools/list`` shows (``listing.Lister``);
- ``GrantSettings``: how long grants live and where (``grants.GrantStore``);
- ``ClientSettings``: which clients are gated and at what ``Level`` (``access/modes.py``),
  the host profiles, and what callers no grant can follow get (``anonymous``);
- ``CacheSettings``: the two cache sizes a server may set;
- ``AddedComponents``: what the middleware adds to the server (the bridge tools, the
  guidance prompt, the instructions paragraph) and the size of one read;
- ``ResolutionSettings``: ``tools/resolve`` and its Python hooks.

Each object checks its values when built (``options.py`` holds the rules), so a bad value
fails at construction naming the setting as ``<group>.<field>``; allowed values come from
the ``Literal`` types below via ``typing.get_args``.

Example:
    ```python
    ProgressiveDisclosure(
        "tool_descriptions",
        listing=ListingSettings(level="skeleton"),
        grants=GrantSettings(ttl=600, store=RedisStore(url="redis://cache:6379")),
        clients=ClientSettings(full_clients=["legacy-host*"]),
    )
    ```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol, TypeVar, get_args

from fastmcp_progressive.hosts import (
    AUTO,
    HOST_PROFILES,
    MAX_CAP,
    MIN_CAP,
    HostProfile,
    Level,
    ToolBudget,
    check_profiles,
)
from fastmcp_progressive.options import (
    MAX_CACHE_SIZE,
    MAX_GRANT_TTL,
    MAX_HOOK_TIMEOUT,
    MAX_SESSIONS,
    MAX_STORE_OPERATIONS,
    MAX_STORE_TIMEOUT,
    MAX_TOOLS_PER_READ,
    MIN_GRANT_TTL,
    MIN_STORE_TIMEOUT,
    SECRET_HEADERS,
    SUMMARY_CHARS,
    choice,
    count,
    fail,
    flag,
    header_name,
    instance_with,
    names,
    seconds,
    tool_name,
)
from fastmcp_progressive.payloads import BRIDGE_TOOL_NAME, DISPATCH_TOOL_NAME

AnonymousPolicy = Literal["validate", "full", "shared"]
"""What callers no grant can follow get (see ``ClientSettings.anonymous``)."""
StoreErrorPolicy = Literal["open", "closed"]
"""What a call gets while the grant store fails (see ``GrantSettings.on_store_error``)."""
PROGRESSIVE_LEVELS: tuple[Level, ...] = tuple(
    level for level in get_args(Level) if level != "full")
"""The levels a server's progressive listing may take (``ListingSettings.level``)."""


# -- the hooks a server author plugs in (their types live here, below every wing using them) --
class GrantStoreProtocol(Protocol):
    """What ``GrantSettings.store`` takes: the subset of py-key-value's ``AsyncKeyValue``
    the grants use (``RedisStore`` and every other py-key-value store has it)."""

    async def get(self, key: str, *, collection: str | None = None) -> Any: ...

    async def put_many(self, keys: Sequence[str], values: Sequence[Mapping[str, Any]], *,
                       collection: str | None = None, ttl: Any = None) -> None: ...


@dataclass(frozen=True)
class ClientInfo:
    """What a ``level_resolver`` may look at to choose a client's level."""

    name: str | None
    version: str | None
    era: Literal["legacy", "modern"]
    principal: str | None
    headers: Mapping[str, str]
    extension_settings: Mapping[str, Any] | None


LevelResolver = Callable[[ClientInfo], "Level | Awaitable[Level | None] | None"]
"""The operator's per-client decision (``ClientSettings.level_resolver``), run bounded: a
``Level``, or None for no opinion (the rules after it decide)."""

ResolverHook = Callable[[dict[str, Any]], "object | Awaitable[object]"]
"""A per-tool Python resolver (``ResolutionSettings.resolvers``): gets the arguments as sent,
returns some of the four hints (``files.rules.Hints`` or a wire-named dict of booleans), or
None to defer to the file's rules and static hints; sync or async. It may read what it needs
to classify but must not change anything. A synchronous hook runs in a worker thread; each
gets ``ResolutionSettings.hook_timeout``. What it returns is checked when it returns."""


@dataclass(frozen=True)
class ListingSettings:
    """What a progressive ``tools/list`` shows.

    Attributes:
        level: the progressive ``Level`` for clients no rule of ``ClientSettings`` gives
            another: ``"typed"`` (every argument with a plain JSON type, and
            ``required``), ``"skeleton"`` (also enums and nested objects) or
            ``"minimal"`` (no properties: only for clients known to pass undeclared
            arguments) (``listed_schema.py``). ``"full"`` is a client's level, not the
            server's (``ClientSettings.full_clients``).
        summary_max_chars: longest one-line description derived from a tool's own text.
        strip_noise: drop a name-derived ``title`` and empty ``_meta.fastmcp.tags``.
        max_tools: how many tools a progressive listing holds. ``"auto"`` (default): every
            tool while the caller may see at most ``BUDGET_THRESHOLD`` (50), else at most
            ``BUDGET`` (20) entries; an int: at most that many entries whenever the caller
            may see more; ``None``: every tool. A capped listing holds the pinned tools,
            the two bridges (``describe_tools`` naming every group, ``run_tool``), then the
            tools the caller described or this server's callers call most; the rest are
            reached through the bridges (``toolcap.py``). A host profile's ``max_tools``
            chooses for its clients instead of ``"auto"`` (its own cap, or None: every
            tool); with an int here, the lower cap applies.
        tag_groups: a tool's FastMCP tags are groups (``groups.py``) too.
        preload: read the description files on the watcher thread from the first request
            on, so a listing after it does not parse them (requests never wait for it).
    """

    level: Level = "typed"
    summary_max_chars: int = 100
    strip_noise: bool = True
    max_tools: ToolBudget = AUTO
    tag_groups: bool = True
    preload: bool = True

    def __post_init__(self) -> None:
        choice("listing.level", self.level, PROGRESSIVE_LEVELS)
        count("listing.summary_max_chars", self.summary_max_chars, *SUMMARY_CHARS)
        flag("listing.strip_noise", self.strip_noise)
        if isinstance(self.max_tools, str) and self.max_tools != AUTO:
            fail("listing.max_tools", f"{AUTO!r}, a whole number from {MIN_CAP} to "
                 f"{MAX_CAP} or None", self.max_tools)
        if self.max_tools is not None and self.max_tools != AUTO:
            count("listing.max_tools", self.max_tools, MIN_CAP, MAX_CAP)
        flag("listing.tag_groups", self.tag_groups)
        flag("listing.preload", self.preload)


@dataclass(frozen=True)
class GrantSettings:
    """How long grants live and where (see ``grants.py`` for each kind of caller).

    Attributes:
        ttl: seconds a grant lives without use (sessions slide; principals per grant); at
            least ``MIN_GRANT_TTL``, so a grant outlives a model's read-then-call turn.
        max_sessions: most handshake-era sessions whose grants are kept in memory.
        store: key-value store (py-key-value ``AsyncKeyValue``, e.g. ``RedisStore``) for
            principal grants; ``None``: the server's ``session_state_store``.
        shared_sessions: keep handshake-era session grants in that store too (replicas).
        store_timeout: seconds a store operation may take before it counts as failed
            (waiting for one of ``store_operations`` included); at least
            ``MIN_STORE_TIMEOUT`` (10 ms), which a store can meet.
        store_operations: most store operations this process runs at once; the rest wait
            their turn (within ``store_timeout``). Keep it below the store's connection cap
            shared by every replica (Redis ``maxclients``): a connection the store refuses
            would count as a failed operation, and one caller's burst would decide other
            callers' answers.
        on_store_error: ``"open"`` (a failing store lets calls through, logged) or
            ``"closed"`` (calls answer ``GRANT_STORE_UNAVAILABLE``).
    """

    ttl: float = 3600.0
    max_sessions: int = 100_000
    store: GrantStoreProtocol | None = None
    shared_sessions: bool = False
    store_timeout: float = 2.0
    store_operations: int = 8
    on_store_error: StoreErrorPolicy = "open"

    def __post_init__(self) -> None:
        seconds("grants.ttl", self.ttl, MAX_GRANT_TTL, minimum=MIN_GRANT_TTL)
        count("grants.max_sessions", self.max_sessions, 1, MAX_SESSIONS)
        if self.store is not None:  # a class, or no async get/put_many: the gate would be off
            instance_with("grants.store", self.store, ("get", "put_many"),
                          "a py-key-value AsyncKeyValue store instance or None")
        flag("grants.shared_sessions", self.shared_sessions)
        seconds("grants.store_timeout", self.store_timeout, MAX_STORE_TIMEOUT,
                minimum=MIN_STORE_TIMEOUT)
        count("grants.store_operations", self.store_operations, 1, MAX_STORE_OPERATIONS)
        choice("grants.on_store_error", self.on_store_error, get_args(StoreErrorPolicy))


@dataclass(frozen=True)
class ClientSettings:
    """Which clients are gated, at what level (rules in order: see ``access/modes.py``).

    Attributes:
        anonymous: what callers the server cannot follow get (2026-07-28 HTTP without
            auth, legacy ``stateless_http=True``, a session opened for one tool call):
            ``"validate"`` (a call runs when its arguments fit the tool's full input
            schema, else the teaching refusal), ``"full"`` (compatibility mode, no gating)
            or ``"shared"`` (one grant set for all of them; NOT isolated, for
            single-tenant deployments).
        full_clients: client name (or ``name/version``) globs served in full.
        level_header: HTTP header a gateway may set to choose the level (``None``: off);
            not one the server drops before reading (``Authorization``, ``Cookie``...).
        level_resolver: the operator's per-client decision (``LevelResolver``). Run
            in a worker thread (an ``async def`` one on the loop) within
            ``level_resolver_timeout``; one that raises (anything, ``SystemExit`` included),
            times out or answers something else gets the server's progressive level for
            that request, never ``full`` (fail closed), and is logged.
        level_resolver_timeout: seconds ``level_resolver`` may take per request.
        host_profiles: known hosts, the level each gets and its tool cap
            (``hosts.HOST_PROFILES``); extend it, replace it, or pass ``()`` to turn it off.
    """

    anonymous: AnonymousPolicy = "validate"
    full_clients: Collection[str] = ()
    level_header: str | None = "x-progressive-disclosure"
    level_resolver: LevelResolver | None = None
    level_resolver_timeout: float = 1.0
    host_profiles: Collection[HostProfile] | None = HOST_PROFILES

    def __post_init__(self) -> None:
        choice("clients.anonymous", self.anonymous, get_args(AnonymousPolicy))
        object.__setattr__(self, "full_clients", names("clients.full_clients", self.full_clients))
        header_name("clients.level_header", self.level_header)
        if self.level_header is not None and self.level_header.lower() in SECRET_HEADERS:
            fail("clients.level_header", "a header the server reads (it drops "
                 f"{', '.join(sorted(SECRET_HEADERS))} before reading any) or None",
                 self.level_header)
        if self.level_resolver is not None and not callable(self.level_resolver):
            fail("clients.level_resolver", "a callable or None", self.level_resolver)
        seconds("clients.level_resolver_timeout", self.level_resolver_timeout,
                MAX_HOOK_TIMEOUT)
        object.__setattr__(self, "host_profiles", check_profiles(self.host_profiles))


@dataclass(frozen=True)
class CacheSettings:
    """The two cache sizes a server may set (least recently used dropped first); every
    other cache has a fixed bound (``docs/architecture.md`` lists them all).

    Attributes:
        listing: tools whose listing entry is kept (reduced tool, content key, the file's
            listing line, marks): a whole 10,000-tool gateway, twice over; a listing of
            more tools than this rebuilds the rest on each request.
        definitions: full definitions and parsed description files kept for reads (about
            5 KB each): reads name at most 32 tools, so this is a working set of many
            reads, not the catalog.
    """

    listing: int = 20_000
    definitions: int = 2_048

    def __post_init__(self) -> None:
        count("caches.listing", self.listing, 1, MAX_CACHE_SIZE)
        count("caches.definitions", self.definitions, 1, MAX_CACHE_SIZE)


@dataclass(frozen=True)
class AddedComponents:
    """What the middleware adds to the server, and how much one read may ask for.

    Attributes:
        bridge_tool: name of the ``describe_tools`` bridge for hosts that cannot read
            resources (``None``: no bridge); a server tool of that name is refused at the
            first request, as is one of ``dispatch_tool``'s.
        guidance_prompt: serve the agent guidance as the prompt
            ``progressive_disclosure_guide``.
        instructions: append the workflow paragraph to the server instructions.
        max_tools_per_read: most tool names one read (or bridge call) may select.
        dispatch_tool: name of the dispatch bridge (``run_tool``) a capped listing holds
            (``None``: none; callers then reach unlisted tools only by their own names).
    """

    bridge_tool: str | None = BRIDGE_TOOL_NAME
    guidance_prompt: bool = True
    instructions: bool = True
    max_tools_per_read: int = 32
    dispatch_tool: str | None = DISPATCH_TOOL_NAME

    def __post_init__(self) -> None:
        tool_name("added.bridge_tool", self.bridge_tool)
        tool_name("added.dispatch_tool", self.dispatch_tool)
        if self.bridge_tool is not None and self.bridge_tool == self.dispatch_tool:
            fail("added.dispatch_tool", "a name other than added.bridge_tool's (or None)",
                 self.dispatch_tool)
        flag("added.guidance_prompt", self.guidance_prompt)
        flag("added.instructions", self.instructions)
        count("added.max_tools_per_read", self.max_tools_per_read, 1, MAX_TOOLS_PER_READ)


@dataclass(frozen=True)
class ResolutionSettings:
    """``tools/resolve`` (extension ``io.modelcontextprotocol/tool-resolution``).

    Attributes:
        enabled: serve it, mark resolvable tools and advertise the extension.
        resolvers: per-tool Python hooks giving argument-dependent hints where a
            description file's ``resolution`` rules cannot express them. A synchronous
            hook runs in a worker thread, an ``async def`` one on the loop, each within
            ``hook_timeout``; one that raises (anything, ``SystemExit`` included) or
            times out is logged and answered ``-32603`` (no hints: fail closed).
        hook_timeout: seconds one resolver hook may take.
    """

    enabled: bool = True
    resolvers: Mapping[str, ResolverHook] | None = field(default=None)
    hook_timeout: float = 1.0

    def __post_init__(self) -> None:
        flag("resolution.enabled", self.enabled)
        seconds("resolution.hook_timeout", self.hook_timeout, MAX_HOOK_TIMEOUT)
        if self.resolvers is not None and not isinstance(self.resolvers, Mapping):
            fail("resolution.resolvers", "a mapping of tool name to hook, or None",
                 self.resolvers)
        for name, hook in (self.resolvers or {}).items():
            if not isinstance(name, str) or not name:
                fail("resolution.resolvers", "keyed by tool names (non-empty strings)", name)
            if not callable(hook):
                fail(f"resolution.resolvers[{name!r}]", "callable", hook)
        if self.resolvers and not self.enabled:
            fail("resolution.resolvers", "None while resolution.enabled is False (the hooks "
                 "would never run)", dict(self.resolvers))


GROUPS: dict[str, type] = {
    "listing": ListingSettings, "grants": GrantSettings, "clients": ClientSettings,
    "caches": CacheSettings, "added": AddedComponents, "resolution": ResolutionSettings}
"""Each settings parameter of ``ProgressiveDisclosure`` and the class it takes."""


S = TypeVar("S")


def unknown_options(options: Mapping[str, Any]) -> str:
    """Why ``ProgressiveDisclosure(**options)`` takes none of ``options``, and where each
    belongs: ``max_tools=20`` is ``listing=ListingSettings(max_tools=20)``."""
    said = []
    for option, value in options.items():
        group = next((g for g, cls in GROUPS.items()
                      if option in {f.name for f in fields(cls)}), None)
        if group is None:
            said.append(f"{option!r} is no option (the options: descriptions_dir, "
                        f"{', '.join(GROUPS)}, exempt_tools)")
        else:
            said.append(f"{option!r} is a field of {GROUPS[group].__name__}: pass "
                        f"{group}={GROUPS[group].__name__}({option}={value!r})")
    got = "an unexpected keyword argument" if len(said) == 1 else "unexpected keyword arguments"
    return f"ProgressiveDisclosure() got {got}: {'; '.join(said)}"


def given(group: str, value: S | None, cls: type[S]) -> S:
    """``value`` for the settings parameter ``group``, or its defaults when ``None``."""
    if value is None:
        return cls()
    if not isinstance(value, cls):
        raise TypeError(f"{group} takes a {cls.__name__}, not {type(value).__name__}")
    return value
