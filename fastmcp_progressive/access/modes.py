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
3. A FastMCP proxy (``hosts.is_fastmcp_proxy``) is served in full: this server cannot see
   what the proxy hides (its ``disable``, visibility, auth), so no route of ours may name a
   tool to it; the proxy's own hiding then governs, as for a client in ``full_clients``.
   Logged once per server, with the fix (the middleware on the proxy). The level header
   below is not asked: a proxy forwards its own clients' headers.
4. An HTTP header (``X-Progressive-Disclosure: full`` by default), for gateways.
5. Glob patterns on the client's ``name`` or ``name/version`` (``full_clients``).
6. The host profiles table (``hosts.py``): known hosts by client name/version.
7. Otherwise the server's progressive level (``ListingSettings.level``).

The host profile a client matches also says whether its calls are judged by their arguments
(``judged_by_arguments``) and how many tools it gets (``toolcap.py``): all of it is the same
for every request of that client, so the profile is matched once per client (name, version,
era, transport, channel, capabilities) and kept, bounded.

Example:
    ```python
    clients = ClientSettings(full_clients=["legacy-host*"],
                             level_resolver=lambda c: "full" if c.principal else None)
    ModePolicy(clients, default_level="skeleton")
    ```
"""

from __future__ import annotations

import fnmatch
import hashlib
import inspect
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, get_args

from cachetools import LRUCache

from fastmcp_progressive.access.caller import Caller
from fastmcp_progressive.access.hooks import HookFailed, call_hook, hook_limiter
from fastmcp_progressive.hosts import HostProfile, Level, is_fastmcp_proxy, profile_for
from fastmcp_progressive.log import get_logger
from fastmcp_progressive.payloads import EXTENSION_ID
from fastmcp_progressive.settings import ClientInfo, ClientSettings, ListingSettings

logger = get_logger("compat")

PROGRESSIVE = "progressive"
"""What the client extension or the header may send for the server's own level."""
REQUESTABLE: frozenset[str] = frozenset({*get_args(Level), PROGRESSIVE})
"""What a resolver, the client extension or the header may ask for."""
MAX_CLIENTS_KEPT = 1024
"""Client name/version/era/transport combinations whose name-rule answer is kept."""
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
MAX_KEPT_CHARS = 128
"""Longest client name or version kept as sent in that memo; a longer one is kept as its
SHA-256 (64 characters), so the memo holds at most about 400 KB whatever clients send
(clientInfo is the client's to choose, unauthenticated, and outlives its session here)."""
Matched = tuple[str | None, HostProfile | None, bool]
"""What a client's fields say (``ModePolicy._client``): the name rules' level, the host
profile it matches, and whether it is a FastMCP proxy."""
_prepared: ContextVar[tuple[ModePolicy, Caller, str | None] | None] = ContextVar(
    "fastmcp_progressive_prepared_level", default=None)
"""The resolver's answer for this request's caller (and the policy that asked), set by
``prepare`` in ``on_message`` and read by ``level`` in the hooks it calls on (the same
task): held for the request alone, so nothing to bound or expire."""


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
        # client (name, version, era, transport, channel, capabilities) -> what the name
        # rules say, the host profile it matches and whether it is a FastMCP proxy; least
        # recently used dropped beyond MAX_CLIENTS_KEPT (names are the client's to choose)
        self._by_client: LRUCache[tuple[Any, ...], Matched] = LRUCache(MAX_CLIENTS_KEPT)
        self._proxy_warned = False

    def level(self, caller: Caller) -> Level:
        """The listing level for ``caller``; never raises (a failing resolver is logged)."""
        if self.anonymous_full and caller.kind == "anonymous":
            return "full"
        chosen = self._chosen(caller)
        if chosen is None:
            chosen = self._client(caller)[0]  # what full_clients and the host table say
        if chosen is None or chosen == PROGRESSIVE:
            return self.default_level
        return chosen  # type: ignore[return-value]  # one of REQUESTABLE

    def _chosen(self, caller: Caller) -> str | None:
        """What the operator's rules or the client itself ask for, if anything, or ``full``
        for a FastMCP proxy (rule 3 of the module docs)."""
        if self.resolver is not None:
            prepared = self._prepared_for(caller)
            chosen = prepared[0] if prepared is not None else self._resolve_inline(caller)
            if chosen is not None:
                return chosen
        settings = caller.extensions.get(EXTENSION_ID)
        requested = settings.get("mode") if isinstance(settings, Mapping) else None
        if isinstance(requested, str) and requested in REQUESTABLE:  # a list is unhashable
            return requested
        if self._client(caller)[2]:  # a FastMCP proxy; the header would be its clients'
            if not self._proxy_warned:  # once per server, when it decides a level
                self._proxy_warned = True
                logger.warning(PROXY_WARNING)
            return "full"
        if self.level_header is not None:
            value = caller.headers.get(self.level_header, "").strip().lower()
            if value in REQUESTABLE:
                return value
        return None

    def profile(self, caller: Caller) -> HostProfile | None:
        """The first host profile ``caller`` matches, or None."""
        return self._client(caller)[1]

    def judged_by_arguments(self, caller: Caller) -> bool:
        """Whether the host table says ``caller``'s calls are judged by their arguments
        (a host no grant can follow, or one with no step to spare for a refusal): the
        first matching row decides, as it does the level."""
        profile = self._client(caller)[1]
        return profile is not None and profile.judged_by_arguments

    def _client(self, caller: Caller) -> Matched:
        """What the name rules say of ``caller``'s client, the host profile it matches and
        whether it is a FastMCP proxy: the same for every request of that client, so kept
        (bounded) by its fields (a warm request then never enters ``hosts.py``)."""
        if caller.client_name is None:
            return None, None, False
        key = (_kept(caller.client_name), _kept(caller.client_version), caller.era,
               caller.transport, caller.channel, caller.capabilities)
        known = self._by_client.get(key)
        if known is not None:
            return known
        profile = profile_for(self.host_profiles, caller)
        chosen: str | None = profile.level if profile is not None else None
        name, version = caller.client_name, caller.client_version
        labels = (name, f"{name}/{version}") if version else (name,)
        if any(fnmatch.fnmatchcase(label, pattern)
               for pattern in self.full_clients for label in labels):
            chosen = "full"
        self._by_client[key] = matched = (chosen, profile, is_fastmcp_proxy(caller))
        return matched

    async def prepare(self, caller: Caller) -> None:
        """Ask the resolver about ``caller`` once, bounded and off the event loop, before
        its request is served (``level`` then reads the answer)."""
        if self.resolver is None or self._prepared_for(caller) is not None:
            return
        try:
            out = await call_hook(self.resolver, self._description(caller),
                                  timeout=self.resolver_timeout, limiter=self._resolver_threads)
        except HookFailed as failed:
            _prepared.set((self, caller, self._failed(str(failed), failed.__cause__)))
            return
        _prepared.set((self, caller, self._checked(out)))

    def _prepared_for(self, caller: Caller) -> tuple[str | None] | None:
        """This policy's prepared answer for this very caller (in a 1-tuple), or None."""
        prepared = _prepared.get()
        if prepared is None or prepared[0] is not self or prepared[1] is not caller:
            return None
        return (prepared[2],)

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


def _kept(text: str | None) -> str | None:
    """``text`` as the client memo keeps it: as sent when short, else its SHA-256."""
    if text is None or len(text) <= MAX_KEPT_CHARS:
        return text
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
