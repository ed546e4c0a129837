"""Deciding, per client, its listing level: ``full`` (compatibility mode) or a progressive one.

A client at ``"full"`` gets the listing exactly as registered and is never gated; the
descriptions resource still answers it. A progressive client gets ``"typed"``,
``"skeleton"`` or ``"minimal"`` schemas (``listed_schema.py``) and the gate. The decision
is made per request from that request's own client, so one client's level never leaks to
another. In order:

0. A caller the server cannot follow (``anonymous``) under ``ClientSettings(anonymous="full")``
   is served in full.
1. ``resolver``: a callable the server passes; it sees a ``ClientInfo`` and returns a
   ``Level`` (``"full"``, ``"typed"``, ``"minimal"``, ``"skeleton"``) or ``None`` (no
   opinion). The operator's final say. It runs once per
   request, before the request is served (``prepare``), in a worker thread (an ``async
   def`` one on the loop) within ``ClientSettings.level_resolver_timeout``: a blocking
   resolver never blocks other clients. One that fails (raises anything, ``SystemExit``
   included; times out; answers something else) gets the server's progressive level for
   that request: never ``full`` on a failure, whatever the client asks for (fail closed),
   and logged.
2. The client extension ``EXTENSION_ID`` with settings ``{"mode": ...}`` taking a level or
   ``"progressive"`` (the server's level) (both protocol eras; the wire's word).
3. A FastMCP proxy (``is_fastmcp_proxy``) is served in full: this server cannot see
   what the proxy hides (its ``disable``, visibility, auth), so no route of ours may name a
   tool to it; the proxy's own hiding then governs, as for a client in ``full_clients``.
   Logged once per server, with the fix (the middleware on the proxy). The level header
   below is not asked: a proxy forwards its own clients' headers.
4. An HTTP header (``X-Progressive-Disclosure: full`` by default), for gateways.
5. Glob patterns on the client's ``name`` or ``name/version`` (``full_clients``).
6. The host profiles table (``hosts.py``): known hosts by client name/version.
7. Otherwise the server's progressive level (``ListingSettings.level``).

The host profile a client matches also says whether its calls are judged by their arguments
(``judged_by_arguments``) and how many tools it gets (``toolcap.py``). All of it is decided
once per request, at its first use (or by ``prepare``), and held by that request's caller
(``Caller.decided``; a caller is identified per request). The table's rows are matched here,
a few ``fnmatchcase`` calls on a name: cheaper than bounding an answer kept per client would
be (client names are the client's to choose).

Example:
    ```python
    clients = ClientSettings(full_clients=["legacy-host*"],
                             level_resolver=lambda c: "full" if c.principal else None)
    ModePolicy(clients, default_level="skeleton")
    ```
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.hooks import HookFailed, call_hook, hook_limiter
from fastmcp_progressive.hosts import (
    PROXY_CAPABILITIES,
    PROXY_CLIENT_NAMES,
    HostProfile,
    Level,
)
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.payloads import EXTENSION_ID
from fastmcp_progressive.settings import ClientInfo, ClientSettings, ListingSettings

logger = get_logger("compat")

PROGRESSIVE = "progressive"
"""What the client extension or the header may send for the server's own level."""
REQUESTABLE: frozenset[str] = frozenset({*get_args(Level), PROGRESSIVE})
"""What a resolver, the client extension or the header may ask for."""
PROXY_WARNING = (
    "a FastMCP proxy connected (FastMCP's ProxyClient: client name 'fastmcp', or 'mcp' "
    "before FastMCP 4.2, with sampling, elicitation and roots). This server cannot see "
    "what the proxy hides (its disable, Visibility, auth), so the proxy is served the "
    "full listing, with no describe_tools, run_tool or gate, and its clients get no "
    "saving from this server. To give them the progressive listing, put "
    "ProgressiveDisclosure on the proxy, the server clients talk to: "
    "proxy.add_middleware(ProgressiveDisclosure()) (docs/deployment.md). A proxy that "
    "has it already needs nothing more: it is served in full, as it should be")
"""Logged once per server (``ModePolicy``), at the first request of a FastMCP proxy."""
Decided = tuple[Level, HostProfile | None]
"""One request's decision: its listing level and the host profile its client matches."""


class ModePolicy:
    """Chooses the listing level for one request's client (see module docs)."""

    def __init__(self, settings: ClientSettings | None = None, *,
                 default_level: Level = ListingSettings.level) -> None:
        settings = settings or ClientSettings()  # checked when it was built
        self.anonymous_full = settings.anonymous == "full"
        self.full_clients = tuple(settings.full_clients)
        self.level_header = settings.level_header.lower() if settings.level_header else None
        self.resolver = settings.level_resolver
        self.resolver_timeout = settings.level_resolver_timeout
        self._resolver_threads = hook_limiter()
        self.host_profiles = tuple(settings.host_profiles or ())
        self.default_level: Level = default_level
        self._proxy_warned = False

    def level(self, caller: Caller) -> Level:
        """The listing level for ``caller``; never raises (a failing resolver is logged)."""
        return self._decided(caller)[0]

    def profile(self, caller: Caller) -> HostProfile | None:
        """The first host profile ``caller`` matches, or None."""
        return self._decided(caller)[1]

    def judged_by_arguments(self, caller: Caller) -> bool:
        """Whether the host table says ``caller``'s calls are judged by their arguments
        (a host no grant can follow, or one with no step to spare for a refusal): the
        first matching row decides, as it does the level."""
        profile = self._decided(caller)[1]
        return profile is not None and profile.judged_by_arguments

    async def prepare(self, caller: Caller) -> None:
        """Ask the resolver about ``caller`` once, bounded and off the event loop, before
        its request is served, and decide its request with the answer."""
        if self.resolver is None or self in caller.decided:
            return
        try:
            out = await call_hook(self.resolver, self._description(caller),
                                  timeout=self.resolver_timeout, limiter=self._resolver_threads)
        except HookFailed as failed:
            self._decide(caller, self._failed(str(failed), failed.__cause__), asked=True)
            return
        self._decide(caller, self._checked(out), asked=True)

    def _decided(self, caller: Caller) -> Decided:
        """This request's decision, made at its first use."""
        kept: Decided | None = caller.decided.get(self)
        return kept if kept is not None else self._decide(caller)

    def _decide(self, caller: Caller, resolved: str | None = None, *,
                asked: bool = False) -> Decided:
        """The module docs' rules, in order, for ``caller``, held for the request;
        ``resolved`` is the resolver's answer when ``asked`` (a caller never prepared asks
        it here)."""
        profile = profile_for(self.host_profiles, caller)
        level: str | None = "full"
        if not (self.anonymous_full and caller.kind == "anonymous"):
            if self.resolver is not None and not asked:
                resolved = self._resolve_inline(caller)
            level = resolved or self._chosen(caller) or self._named(caller, profile)
            if level is None or level == PROGRESSIVE:
                level = self.default_level
        decided: Decided = (level, profile)  # type: ignore[assignment]  # one of REQUESTABLE
        if caller.kind != "internal":  # one object for every call made outside a request
            caller.decided[self] = decided
        return decided

    def _chosen(self, caller: Caller) -> str | None:
        """What the client itself asks for, if anything, or ``full`` for a FastMCP proxy
        (rules 2 to 4 of the module docs)."""
        settings = caller.extensions.get(EXTENSION_ID)
        requested = settings.get("mode") if isinstance(settings, Mapping) else None
        if isinstance(requested, str) and requested in REQUESTABLE:  # a list is unhashable
            return requested
        if is_fastmcp_proxy(caller):  # the header would be its clients'
            if not self._proxy_warned:  # once per server, when it decides a level
                self._proxy_warned = True
                logger.warning(PROXY_WARNING)
            return "full"
        if self.level_header is not None:
            value = caller.headers.get(self.level_header, "").strip().lower()
            if value in REQUESTABLE:
                return value
        return None

    def _named(self, caller: Caller, profile: HostProfile | None) -> str | None:
        """What ``full_clients`` (rule 5) and else the host table (rule 6) say of the
        client's name and version."""
        name, version = caller.client_name, caller.client_version
        if name is None:
            return None
        labels = (name, f"{name}/{version}") if version else (name,)
        if any(fnmatch.fnmatchcase(label, pattern)
               for pattern in self.full_clients for label in labels):
            return "full"
        return profile.level if profile is not None else None

    def _resolve_inline(self, caller: Caller) -> str | None:
        """A caller never prepared (no request of its own went through the middleware):
        the resolver runs here, failing closed as in ``prepare``."""
        assert self.resolver is not None
        try:
            out = self.resolver(self._description(caller))
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # never stop the server
            return self._failed(f"raised {type(exc).__name__}", exc)
        if inspect.isawaitable(out):
            close = getattr(out, "close", None)
            if close is not None:
                close()  # an async resolver needs ``prepare``; never left unawaited
            return self._failed("is async but was called outside a request", None)
        return self._checked(out)

    def _description(self, caller: Caller) -> ClientInfo:
        settings = caller.extensions.get(EXTENSION_ID)
        return ClientInfo(name=caller.client_name, version=caller.client_version,
                          era=caller.era, principal=caller.principal, headers=caller.headers,
                          extension_settings=settings if isinstance(settings, Mapping) else None)

    def _checked(self, chosen: Any) -> str | None:
        if chosen is None or (isinstance(chosen, str) and chosen in REQUESTABLE):
            return chosen
        return self._failed(
            f"returned {chosen!r:.80}; expected one of {get_args(Level)} or None", None)

    @staticmethod
    def _failed(reason: str, cause: BaseException | None) -> str:
        logger.error("level resolver %s; this request gets the server's progressive level",
                     reason, exc_info=cause)
        return PROGRESSIVE


def matches(profile: HostProfile, caller: Caller) -> bool:
    """Whether ``caller`` is a client ``profile`` describes (its name, version, era,
    capability and transport, each only where the row says)."""
    if caller.client_name is None or not fnmatch.fnmatchcase(caller.client_name, profile.name):
        return False
    if profile.version is not None and not fnmatch.fnmatchcase(caller.client_version or "",
                                                                profile.version):
        return False
    if profile.era is not None and caller.era != profile.era:
        return False
    if profile.capability is not None and profile.capability not in caller.capabilities:
        return False
    if profile.transport == "stdio":
        return caller.channel == "stdio"
    return profile.transport is None or caller.transport == profile.transport


def profile_for(profiles: Iterable[HostProfile], caller: Caller) -> HostProfile | None:
    """The first profile ``caller`` matches, or None when none does (a caller that sent no
    client name matches none)."""
    return next((profile for profile in profiles if matches(profile, caller)), None)


def is_fastmcp_proxy(caller: Caller) -> bool:
    """Whether ``caller`` is a FastMCP proxy's backend client (``create_proxy(target)``,
    ``fastmcp run <URL>``, MCP config files): one of ``PROXY_CLIENT_NAMES`` with all three of
    ``PROXY_CAPABILITIES``. The proxy's own ``disable``, visibility and auth are out of
    sight from behind it, so no route may name a tool to it (served in full, rule 3). A
    client that advertises all three itself is served in full too: it loses the saving,
    never a tool's protection. A proxy built on a plain ``Client``
    (``create_proxy(Client(url))``) advertises nothing and cannot be told apart."""
    return (caller.client_name in PROXY_CLIENT_NAMES
            and caller.capabilities >= PROXY_CAPABILITIES)
