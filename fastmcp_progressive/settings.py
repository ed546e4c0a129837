"""``ProgressiveDisclosure``'s settings: six small objects, each default written once here.

The middleware takes ``descriptions_dir``, ``exempt_tools`` and one object per concern,
each fed whole to the part that uses it:

- ``ListingSettings``: what a reduced ``tools/list`` shows (``listing.Lister``);
- ``GrantSettings``: how long grants live and where (``grants.GrantStore``);
- ``ClientSettings``: which clients are gated and at what level (``compat.ModePolicy``),
  and what callers no grant can follow get (``anonymous``);
- ``CacheSettings``: the bounded memos and the start-up preload;
- ``SurfaceSettings``: what the middleware adds to the server (the bridge tool, the
  guidance prompt, the instructions paragraph) and the size of one read;
- ``ResolutionSettings``: ``tools/resolve`` and its Python hooks.

Each object checks its values when built (``options.py`` holds the rules), so a bad value
fails at construction naming the setting as ``<group>.<field>``; allowed values come from
the ``Literal`` types below via ``typing.get_args``. The flat keywords of earlier versions
raise a ``TypeError`` naming their new spelling (``MOVED``).

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

import functools
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, Protocol, TypeVar, get_args

from fastmcp_progressive.hosts import (
    HOST_PROFILES,
    HOST_TOOL_CAPS,
    MAX_CAP,
    MIN_CAP,
    HostCap,
    HostProfile,
    check_caps,
    check_profiles,
)
from fastmcp_progressive.options import (
    MAX_CACHE_SIZE,
    MAX_GRANT_TTL,
    MAX_HOOK_TIMEOUT,
    MAX_SESSIONS,
    MAX_STORE_TIMEOUT,
    MAX_TOOLS_PER_READ,
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

ListingLevel = Literal["typed", "minimal", "skeleton"]
"""How much of a tool a progressive listing shows (see ``listing.py``)."""
AnonymousPolicy = Literal["validate", "full", "shared"]
"""What callers no grant can follow get (see ``ClientSettings.anonymous``)."""
StoreErrorPolicy = Literal["open", "closed"]
"""What a call gets while the grant store fails (see ``GrantSettings.on_store_error``)."""


# -- the hooks a server author plugs in (their types live here, below every wing using them) --
class KeyValue(Protocol):
    """The subset of py-key-value's ``AsyncKeyValue`` the grants use (``GrantSettings.store``)."""

    async def get(self, key: str, *, collection: str | None = None) -> Any: ...

    async def put_many(
        self,
        keys: Sequence[str],
        values: Sequence[Mapping[str, Any]],
        *,
        collection: str | None = None,
        ttl: Any = None,
    ) -> None: ...


Choice = Literal["progressive", "full", "typed", "minimal", "skeleton"]
"""What a mode resolver, the client extension or the header may ask for."""


@dataclass(frozen=True)
class ClientDescription:
    """What a ``mode_resolver`` may look at to choose a client's mode."""

    name: str | None
    version: str | None
    era: Literal["legacy", "modern"]
    principal: str | None
    headers: Mapping[str, str]
    extension_settings: Mapping[str, Any] | None


ModeResolver = Callable[[ClientDescription], "Choice | None"]
"""The operator's per-client decision (``ClientSettings.mode_resolver``), run bounded."""

ResolverHook = Callable[[dict[str, Any]], "object | Awaitable[object]"]
"""A per-tool Python resolver (``ResolutionSettings.resolvers``): gets the arguments as sent,
returns some of the four hints (``files.rules.Hints`` or a wire-named dict of booleans), or
None to defer to the file's rules and static hints; sync or async. It may read what it needs
to classify but must not change anything. A synchronous hook runs in a worker thread; each
gets ``ResolutionSettings.hook_timeout``. What it returns is checked when it returns."""

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class ListingSettings:
    """What a progressive ``tools/list`` shows.

    Attributes:
        level: ``"typed"`` (every argument with a plain JSON type, and ``required``),
            ``"skeleton"`` (also enums and nested objects) or ``"minimal"`` (no
            properties: only for clients known to pass undeclared arguments), for
            clients no rule below gives another level (``listed_schema.py``).
        summary_max_chars: longest one-line description derived from a tool's own text.
        strip_noise: drop a name-derived ``title`` and empty ``_meta.fastmcp.tags``.
        max_tools: the most tools a progressive listing holds (``None``: no cap); a
            caller that would see more gets pinned tools, the two bridges and the tools
            it uses most, and reaches the rest through the bridges (``toolcap.py``).
        host_caps: hosts with a known tool cap, matched on their client name
            (``hosts.HOST_TOOL_CAPS``: Cursor 40, VS Code 128); the lower of the two
            caps applies. Pass ``()`` to turn host caps off.
        tag_groups: a tool's FastMCP tags are groups (``groups.py``) too.
    """

    level: ListingLevel = "typed"
    summary_max_chars: int = 100
    strip_noise: bool = True
    max_tools: int | None = None
    host_caps: Collection[HostCap] = HOST_TOOL_CAPS
    tag_groups: bool = True

    def __post_init__(self) -> None:
        choice("listing.level", self.level, get_args(ListingLevel))
        count("listing.summary_max_chars", self.summary_max_chars, *SUMMARY_CHARS)
        flag("listing.strip_noise", self.strip_noise)
        if self.max_tools is not None:
            count("listing.max_tools", self.max_tools, MIN_CAP, MAX_CAP)
        object.__setattr__(self, "host_caps", check_caps(self.host_caps))
        flag("listing.tag_groups", self.tag_groups)


@dataclass(frozen=True)
class GrantSettings:
    """How long grants live and where (see ``grants.py`` for each kind of caller).

    Attributes:
        ttl: seconds a grant lives without use (sessions slide; principals per grant).
        max_sessions: most handshake-era sessions whose grants are kept in memory.
        store: key-value store (py-key-value ``AsyncKeyValue``, e.g. ``RedisStore``) for
            principal grants; ``None``: the server's ``session_state_store``.
        shared_sessions: keep handshake-era session grants in that store too (replicas).
        store_timeout: seconds a store operation may take before it counts as failed.
        on_store_error: ``"open"`` (a failing store lets calls through, logged) or
            ``"closed"`` (calls answer ``GRANT_STORE_UNAVAILABLE``).
    """

    ttl: float = 3600.0
    max_sessions: int = 100_000
    store: KeyValue | None = None
    shared_sessions: bool = False
    store_timeout: float = 2.0
    on_store_error: StoreErrorPolicy = "open"

    def __post_init__(self) -> None:
        seconds("grants.ttl", self.ttl, MAX_GRANT_TTL)
        count("grants.max_sessions", self.max_sessions, 1, MAX_SESSIONS)
        if self.store is not None:  # a class, or no async get/put_many: the gate would be off
            instance_with("grants.store", self.store, ("get", "put_many"),
                          "a py-key-value AsyncKeyValue store instance or None")
        flag("grants.shared_sessions", self.shared_sessions)
        seconds("grants.store_timeout", self.store_timeout, MAX_STORE_TIMEOUT)
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
        mode_header: HTTP header a gateway may set to choose the level (``None``: off).
        mode_resolver: the operator's per-client decision (``compat.ModeResolver``). Run
            in a worker thread (an ``async def`` one on the loop) within
            ``mode_resolver_timeout``; one that raises (anything, ``SystemExit`` included),
            times out or answers something else gets the server's progressive level for
            that request, never ``full`` (fail closed), and is logged.
        mode_resolver_timeout: seconds ``mode_resolver`` may take per request.
        host_profiles: known hosts and the level each gets (``hosts.HOST_PROFILES``);
            extend it, replace it, or pass ``()`` to turn it off.
    """

    anonymous: AnonymousPolicy = "validate"
    full_clients: Collection[str] = ()
    mode_header: str | None = "x-progressive-disclosure"
    mode_resolver: ModeResolver | None = None
    mode_resolver_timeout: float = 1.0
    host_profiles: Collection[HostProfile] | None = HOST_PROFILES

    def __post_init__(self) -> None:
        if str(self.anonymous) == "open":  # removed: say what replaces it
            raise ValueError(
                "anonymous='open' was removed: it left callers without an identity ungated. "
                "Use anonymous='validate' (the default: their calls run when the arguments "
                "fit the tool's schema), or 'full' for no gating and full listings."
            )
        choice("clients.anonymous", self.anonymous, get_args(AnonymousPolicy))
        object.__setattr__(self, "full_clients", names("clients.full_clients", self.full_clients))
        header_name("clients.mode_header", self.mode_header)
        if self.mode_resolver is not None and not callable(self.mode_resolver):
            fail("clients.mode_resolver", "a callable or None", self.mode_resolver)
        seconds("clients.mode_resolver_timeout", self.mode_resolver_timeout, MAX_HOOK_TIMEOUT)
        object.__setattr__(self, "host_profiles", check_profiles(self.host_profiles))


@dataclass(frozen=True)
class CacheSettings:
    """The bounded memos (least recently used dropped first) and the start-up preload.

    Attributes:
        files: parsed description files kept.
        listing: reduced tools (and files' listing lines) kept: a whole 10,000-tool
            gateway, twice over; a listing of more tools than this rebuilds the rest.
        definitions: full definitions kept for reads (about 5 KB each): reads name at
            most 32 tools, so this is a working set of many reads, not the catalog.
        preload: read the description files in a background thread from construction
            on, so the first listing does not parse them (requests never wait for it).
    """

    files: int = 256
    listing: int = 20_000
    definitions: int = 2_048
    preload: bool = True

    def __post_init__(self) -> None:
        count("caches.files", self.files, 1, MAX_CACHE_SIZE)
        count("caches.listing", self.listing, 1, MAX_CACHE_SIZE)
        count("caches.definitions", self.definitions, 1, MAX_CACHE_SIZE)
        flag("caches.preload", self.preload)


@dataclass(frozen=True)
class SurfaceSettings:
    """What the middleware adds to the server, and how much one read may ask for.

    Attributes:
        bridge_tool: name of the ``describe_tools`` bridge for hosts that cannot read
            resources (``None``: no bridge).
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
        tool_name("surface.bridge_tool", self.bridge_tool)
        tool_name("surface.dispatch_tool", self.dispatch_tool)
        if self.bridge_tool is not None and self.bridge_tool == self.dispatch_tool:
            fail("surface.dispatch_tool", "a name other than surface.bridge_tool's (or None)",
                 self.dispatch_tool)
        flag("surface.guidance_prompt", self.guidance_prompt)
        flag("surface.instructions", self.instructions)
        count("surface.max_tools_per_read", self.max_tools_per_read, 1, MAX_TOOLS_PER_READ)


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
    "listing": ListingSettings,
    "grants": GrantSettings,
    "clients": ClientSettings,
    "caches": CacheSettings,
    "surface": SurfaceSettings,
    "resolution": ResolutionSettings,
}
"""Each settings parameter of ``ProgressiveDisclosure`` and the class it takes."""

MOVED: dict[str, tuple[str, str]] = {
    "summary_max_chars": ("listing", "summary_max_chars"),
    "strip_noise": ("listing", "strip_noise"),
    "grant_ttl": ("grants", "ttl"),
    "max_sessions": ("grants", "max_sessions"),
    "grant_store": ("grants", "store"),
    "shared_sessions": ("grants", "shared_sessions"),
    "store_timeout": ("grants", "store_timeout"),
    "on_store_error": ("grants", "on_store_error"),
    "anonymous": ("clients", "anonymous"),
    "full_clients": ("clients", "full_clients"),
    "mode_header": ("clients", "mode_header"),
    "mode_resolver": ("clients", "mode_resolver"),
    "host_profiles": ("clients", "host_profiles"),
    "cache_size": ("caches", "files"),
    "listing_cache_size": ("caches", "listing"),
    "definition_cache_size": ("caches", "definitions"),
    "preload": ("caches", "preload"),
    "bridge_tool": ("surface", "bridge_tool"),
    "guidance_prompt": ("surface", "guidance_prompt"),
    "instructions": ("surface", "instructions"),
    "max_tools_per_read": ("surface", "max_tools_per_read"),
    "tool_resolution": ("resolution", "enabled"),
    "resolvers": ("resolution", "resolvers"),
}
"""The flat keywords of earlier versions: old name -> (settings parameter, field)."""
_MOVED_LISTING = ("listing", "level")  # ``listing="skeleton"``: same name, new type


def migration(old: Mapping[str, Any]) -> str:
    """How to spell ``old`` (flat keywords and their values) today, as one sentence."""
    grouped: dict[str, list[str]] = {}
    for keyword, value in old.items():
        group, name = MOVED.get(keyword, _MOVED_LISTING)
        shown = repr(value)
        grouped.setdefault(group, []).append(f"{name}={shown if len(shown) <= 40 else '...'}")
    spelled = ", ".join(
        f"{group}={GROUPS[group].__name__}({', '.join(args)})" for group, args in grouped.items()
    )
    return f"{', '.join(old)} moved: {spelled}"


def refuse_flat_keywords(init: Callable[P, R]) -> Callable[P, R]:
    """Wrap a constructor so a flat keyword of earlier versions raises a ``TypeError``
    naming its new spelling, not Python's bare "unexpected keyword argument"."""

    @functools.wraps(init)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        old = {k: v for k, v in kwargs.items() if k in MOVED}
        if old:
            raise TypeError(migration(old))
        return init(*args, **kwargs)

    return checked


S = TypeVar("S")


def given(group: str, value: S | None, cls: type[S]) -> S:
    """``value`` for the settings parameter ``group``, or its defaults when ``None``."""
    if value is None:
        return cls()
    if not isinstance(value, cls):
        if group == "listing" and isinstance(value, str):
            raise TypeError(migration({"listing": value}))
        raise TypeError(f"{group} takes a {cls.__name__}, not {type(value).__name__}")
    return value
