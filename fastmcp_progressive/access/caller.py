"""Who is asking: the identity grants are kept under, found once per request.

Grants must follow "the caller", and what a caller is depends on the protocol era:
a handshake-era (legacy) connection has a real MCP session; a 2026-07-28 (modern)
request has no session, and the protocol forbids relying on earlier requests over the same
connection (its tool list "MUST NOT vary per-connection or as a side effect of other
requests on the connection"; it MAY vary by the authorization presented). So a modern
caller is what the request itself presents: its authenticated principal, or nobody
(``anonymous``: its calls are judged by themselves, ``ClientSettings.anonymous``), on
every transport, stdio and in-memory included. Legacy HTTP with ``stateless_http=True``
has no identity either. The era comes from FastMCP's public request context; the one
private fact this needs (the connection behind a session) is read in
``fastmcp_internals.py``, like every other one.

The caller is identified once per request and kept in one place: ``serving(ctx)``, entered
by the middleware's ``on_message``, holds the request's caller in this module's context
variable for the whole pass (``on_request``, the typed hook, the gate, our components),
as Starlette's ``AuthenticationMiddleware`` keeps ``scope["user"]``; ``caller_of(ctx)``
reads it back. One HTTP request may still make two passes: with FastMCP < 4.2 on
2026-07-28 streamable HTTP, the MCP SDK checks a ``tools/call``'s ``Mcp-Param-*`` headers
by first running the server's own ``tools/list`` for the caller, through every middleware,
with a fresh ``Context`` over the same Starlette request
(``mcp.server._streamable_http_modern._tool_input_schema``). So a 2026-07-28 HTTP caller is
also kept in that request's ASGI scope with the JSON-RPC id, and the second pass reuses it.

Sessions opened for one tool call are recognised here too: some hosts (LangChain's
``MultiServerMCPClient.get_tools()``, LlamaIndex's ``BasicMCPClient``) open a new session
for every call, so a grant made in one is gone by the next. Their session's first real
request is the ``tools/call`` itself, while a host that keeps its session lists tools,
reads a description or calls the bridge first (``note_request``, ``opened_with_call``).
The mark lives on the connection's own scratch state and goes with it. 2026-07-28
callers are never judged this way (their era forbids relying on earlier requests).

Example:
    ```python
    with serving(context.fastmcp_context) as caller:   # on_message: identified once
        ...
    caller = caller_of(ctx)                            # any hook of that request
    if caller.kind == "session":
        ...  # caller.key is the MCP session id, caller.anchor the connection
    ```
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

import fastmcp
from fastmcp.server.context import Context
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from fastmcp_progressive.fastmcp_internals import (
    connection_state,
    request_connection,
    wire_param,
)
from fastmcp_progressive.options import SECRET_HEADERS

CallerKind = Literal["session", "principal", "anonymous", "internal"]
Era = Literal["legacy", "modern"]


@dataclass(frozen=True)
class Caller:
    """The identity grants are kept under, plus what a mode decision may look at.

    ``kind`` says how the identity was found; ``key`` is unique within the kind (None for
    ``anonymous`` and ``internal``); ``anchor`` is the live object whose lifetime bounds
    the identity (the legacy connection), when there is one.
    """

    kind: CallerKind
    era: Era
    key: str | None = None
    anchor: Any = field(default=None, compare=False, repr=False)
    transport: Literal["http", "duplex"] = "duplex"
    channel: str | None = None
    """FastMCP's name for the transport (``ctx.transport``): ``"stdio"``,
    ``"streamable-http"``, ``"sse"``, or None in memory."""
    client_name: str | None = None
    client_version: str | None = None
    principal: str | None = None
    extensions: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    capabilities: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    """The client capabilities it advertised (``"elicitation"``, ``"sampling"``, ...)."""
    headers: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    decided: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)
    """What each mode policy decided for this request (``access/modes.py``): a caller is
    identified per request, so the decision goes with the request."""


INTERNAL = Caller(kind="internal", era="legacy")
"""A call made with no client request in flight (e.g. ``await mcp.call_tool(...)``)."""


_serving: ContextVar[tuple[Context, Caller] | None] = ContextVar(
    "fastmcp_progressive_caller", default=None)
"""The request being served and its caller, set by ``serving`` for one pass."""


def _release(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a version string such as ``"4.2.3"`` (``(0, 0)``: unreadable)."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) if found else (0, 0)


_SCOPE_KEY = "fastmcp_progressive.caller"
"""The ASGI scope key a 2026-07-28 HTTP request's caller is kept under, with its JSON-RPC id."""
SECOND_PASS = _release(fastmcp.__version__) < (4, 2)
"""Whether the MCP SDK may run a hidden ``tools/list`` pass before a 2026-07-28 call: only
with FastMCP < 4.2 (4.2 serves the SDK's ``get_tool_input_schema`` from its schema cache)."""


@contextmanager
def serving(ctx: Context | None) -> Iterator[Caller]:
    """Identify the caller of the request ``ctx`` belongs to and hold it for the block."""
    caller = caller_of(ctx)
    if ctx is None:
        yield caller
        return
    token = _serving.set((ctx, caller))
    try:
        yield caller
    finally:
        _serving.reset(token)


def caller_of(ctx: Context | None) -> Caller:
    """The caller of the request ``ctx`` belongs to: the one ``serving`` holds, else the
    one its HTTP request keeps (the SDK's second pass), else identified now.

    A path that skips the middleware (a component answering for ``run_middleware=False``)
    identifies its caller here, once. ASGI makes a new scope per HTTP request and the id
    must match too, so no other request reads a kept caller. Only a 2026-07-28 caller is
    kept: no handshake-era request makes a second pass, and a handshake-era scope can
    outlive its session for a while (its connection's, not ours), which would keep the
    caller and its headers alive with it (``test_load``). A kept caller is taken out of
    the scope by the pass that reuses it, and none is kept where no second pass comes
    (FastMCP 4.2): uvicorn holds a connection's last scopes for a while after its client
    left, and with them a client's name of any size (#27: 2 MB names, 10 MiB held)."""
    if ctx is None:
        return INTERNAL
    held = _serving.get()
    if held is not None and held[0] is ctx:
        return held[1]
    rc = ctx.request_context
    scope = getattr(getattr(rc, "request", None), "scope", None)
    request_id = getattr(rc, "request_id", None)
    if not isinstance(scope, dict) or request_id is None:
        return identify(ctx)
    kept = scope.pop(_SCOPE_KEY, None)  # read once: the scope may outlive the request
    if isinstance(kept, tuple) and kept[0] == request_id and isinstance(kept[1], Caller):
        return kept[1]
    caller = identify(ctx)
    if SECOND_PASS and _first_of_two(caller, ctx):
        scope[_SCOPE_KEY] = (request_id, caller)
    return caller


def _first_of_two(caller: Caller, ctx: Context) -> bool:
    """Whether this pass is the SDK's hidden listing before a 2026-07-28 ``tools/call``
    (its HTTP request says ``Mcp-Method: tools/call``, its own params name no tool), whose
    call comes next: a caller kept for any other pass would stay in the scope unread."""
    return (caller.era == "modern" and caller.headers.get("mcp-method") == "tools/call"
            and wire_param(ctx, "name") is None)


def is_modern(protocol_version: str | None) -> bool:
    """Whether a negotiated protocol version is of the 2026-07-28 era (sessionless).

    The public form of FastMCP's own check (``Context._is_modern_protocol``): the
    request context's ``protocol_version`` against ``mcp_types``' list of modern versions.
    """
    return protocol_version in MODERN_PROTOCOL_VERSIONS


def identify(ctx: Context | None) -> Caller:
    """Describe the client behind the request ``ctx`` belongs to (``caller_of`` keeps it)."""
    from fastmcp.server.sessions import current_principal

    if ctx is None or ctx.request_context is None:
        return INTERNAL
    rc = ctx.request_context
    modern = is_modern(rc.protocol_version)
    http = rc.request is not None
    session = rc.session
    connection = request_connection(session)
    principal = current_principal()
    info = getattr(getattr(session, "client_params", None), "client_info", None)
    caps = getattr(session, "client_capabilities", None)
    extensions = getattr(caps, "extensions", None)
    base: dict[str, Any] = {
        "era": "modern" if modern else "legacy",
        "transport": "http" if http else "duplex",
        "channel": ctx.transport,
        "principal": principal,
        "headers": _headers(rc.request),
        "extensions": dict(extensions) if isinstance(extensions, Mapping) else {},
        "capabilities": frozenset(
            name for name in _CAPABILITIES if getattr(caps, name, None) is not None),
        "client_name": getattr(info, "name", None),
        "client_version": getattr(info, "version", None),
    }
    if not modern:
        if http and getattr(connection, "session_id", None) is None and ctx.transport != "sse":
            # legacy HTTP with stateless_http=True: a new "session" per request. An SSE
            # connection has no Mcp-Session-Id either, but it is one live session.
            return Caller(kind="anonymous", **base)
        return Caller(kind="session", key=ctx.session_id, anchor=connection, **base)
    if principal is not None:
        return Caller(kind="principal", key=principal_key(principal), **base)
    # no authorization presented: nothing of the connection (its stream, its earlier
    # requests) may stand in for one on 2026-07-28, on stdio and in memory as on HTTP
    return Caller(kind="anonymous", **base)


def principal_key(principal: str) -> str:
    """A principal as its grants are keyed (``user:`` and its SHA-256), and whose turn its
    store operations take (``grants.py``), with all of its sessions."""
    return "user:" + hashlib.sha256(principal.encode("utf-8", "surrogatepass")).hexdigest()


def _headers(request: Any) -> Mapping[str, str]:
    if request is None:
        return {}
    return {k.lower(): v for k, v in request.headers.items() if k.lower() not in SECRET_HEADERS}


_CAPABILITIES = ("sampling", "elicitation", "roots", "tasks", "experimental")
"""The client capabilities a ``Caller`` records, when advertised."""


# -- sessions opened for one tool call --------------------------------------------------------
First = Literal["call", "other"]
_FIRST_REQUEST_KEY = "fastmcp_progressive.first_request"
IGNORED_METHODS = frozenset({"initialize", "ping", "server/discover", "logging/setLevel",
                             "tools/resolve"})
"""Requests that say nothing about the host: every client sends them whatever it does next,
or (``tools/resolve``) right before the call they advise, in the call's own session."""


def note_request(caller: Caller, method: str) -> None:
    """Record a request other than a tool call (no-op once the first one is known)."""
    if method in IGNORED_METHODS or method == "tools/call":
        return
    _settle(caller, "other")


def note_bridge_call(caller: Caller) -> None:
    """A call of the bridge tool engages with the workflow like a read does."""
    _settle(caller, "other")


def opened_with_call(caller: Caller) -> bool:
    """Whether ``caller``'s session opened with a tool call (this one, if nothing came
    before): a host that opens a session per call. Only handshake-era sessions are
    judged; other callers answer False."""
    return _settle(caller, "call") == "call"


def _settle(caller: Caller, first: First) -> First | None:
    """Record ``first`` unless something came before; return what came first."""
    state = connection_state(caller.anchor) if caller.kind == "session" else None
    return None if state is None else state.setdefault(_FIRST_REQUEST_KEY, first)
